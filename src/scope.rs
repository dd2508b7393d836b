//! Which paths the file tools may touch (DESIGN §7).
//!
//! A path is made absolute against the workspace cwd and resolved as the kernel
//! resolves it: every symlink along it is followed before a `..` after it is applied
//! (so file tools and bash agree on `lnk/../f`) — including a dangling final link, whose
//! *target* is what gets checked — so that no link can carry a read or a write outside
//! the allowed directories. Deny patterns are checked against both the path as given and
//! the resolved path; deny beats allow. The resolver is written against the small
//! [`LinkReader`] trait so that properties and fuzz targets can drive it with a model
//! filesystem full of loops and escapes.

use crate::error::{ErrorCode, ToolError, ToolResult};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Linux's PATH_MAX: no longer path can be opened anyway.
pub const MAX_PATH_BYTES: usize = 4096;

/// Linux's own limit on symlinks followed while resolving one path (ELOOP).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// Answers "is this path a symlink, and to what?" without following it.
pub trait LinkReader {
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
}

/// The real filesystem.
pub struct RealFs;

impl LinkReader for RealFs {
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        // `read_link` fails with EINVAL on anything that is not a symlink, and with
        // ENOENT past the end of what exists: both mean "take the name literally".
        std::fs::read_link(path).ok()
    }
}

/// Makes `input` absolute against `cwd` and removes `.` and `..` lexically. `..` at the
/// root stays at the root, as the kernel does.
pub fn normalize(cwd: &Path, input: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let joined;
    let full = if input.is_absolute() {
        input
    } else {
        joined = cwd.join(input);
        &joined
    };
    for comp in full.components() {
        match comp {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// Where `input` (relative to `cwd`) really is, as the kernel resolves it: every
/// symlink followed first and `..` applied to what it led to, so that `lnk/../f` with
/// `lnk -> /x/deep` is `/x/f` — what `cat lnk/../f` in bash reads — and not the
/// lexical `cwd/f`. Returns `(shown, real)`: `shown` is the path for messages, lexically
/// normalised when that names the same file, else absolute with its `..` kept (so a
/// message never names a file other than the one the tool used).
fn locate(fs: &dyn LinkReader, cwd: &Path, input: &str) -> ToolResult<(PathBuf, PathBuf)> {
    let given = Path::new(input);
    let absolute = if given.is_absolute() {
        given.to_path_buf()
    } else {
        cwd.join(given)
    };
    let real = resolve_links(fs, &absolute).map_err(ToolError::invalid)?;
    let lexical = normalize(cwd, given);
    let has_dotdot = absolute
        .components()
        .any(|c| matches!(c, Component::ParentDir));
    if !has_dotdot || resolve_links(fs, &lexical).ok().as_ref() == Some(&real) {
        return Ok((lexical, real));
    }
    let mut shown = PathBuf::from("/");
    for c in absolute.components() {
        match c {
            Component::Normal(n) => shown.push(n),
            Component::ParentDir => shown.push(".."),
            _ => {}
        }
    }
    Ok((shown, real))
}

/// Resolves every symlink in the absolute, normalised `path`, like `realpath(3)`, except
/// that components that do not exist are kept literally instead of failing. A symlink
/// whose target does not exist resolves to that target.
pub fn resolve_links(fs: &dyn LinkReader, path: &Path) -> Result<PathBuf, String> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_front_components(&mut pending, path);
    let mut resolved = PathBuf::from("/");
    let mut hops = 0usize;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        if name == "." || name.is_empty() {
            continue;
        }
        let candidate = resolved.join(&name);
        match fs.read_link(&candidate) {
            Some(target) => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(format!(
                        "too many levels of symbolic links resolving {}",
                        path.display()
                    ));
                }
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                push_front_components(&mut pending, &target);
            }
            None => resolved = candidate,
        }
    }
    Ok(resolved)
}

fn push_front_components(pending: &mut VecDeque<OsString>, path: &Path) {
    let names: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    for name in names.into_iter().rev() {
        pending.push_front(name);
    }
}

/// A deny pattern as it is matched (DEC-121): a leading `~` is the home directory (a
/// shell leaves `--deny-dir=~/.ssh` and the later items of `BORIS_DENY_DIRS=~/.ssh,~/.aws`
/// unexpanded), and the path is written the one way a path being checked is — no empty
/// or `.` component, a `..` applied to the name before it, no trailing `/` — so that
/// `/home/u//.ssh`, `/srv/./keys` and `/srv/app/../keys` deny what they name. Matching
/// is by text, so a pattern written another way denied nothing. A `..` after a wildcard
/// or above the root, or in a pattern without a leading `/` (which matches at any
/// depth), names nothing certain and is refused.
pub fn normalize_deny_pattern(pattern: &str, home: Option<&Path>) -> Result<String, String> {
    let trimmed = pattern.trim();
    let expanded = match trimmed.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = home
                .filter(|h| h.is_absolute())
                .ok_or("`~` needs HOME set to an absolute path")?;
            format!("{}{rest}", home.display())
        }
        _ => trimmed.to_string(),
    };
    let absolute = expanded.starts_with('/');
    let is_glob = |c: &str| c.contains(['*', '?', '[', '{']);
    let mut parts: Vec<&str> = Vec::new();
    for part in expanded.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if !absolute {
                    return Err("`..` in a pattern without a leading `/`".into());
                }
                match parts.pop() {
                    Some(prev) if !is_glob(prev) => {}
                    _ => return Err("`..` after a wildcard or above the root".into()),
                }
            }
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    Ok(if absolute {
        format!("/{joined}")
    } else if joined.starts_with('~') {
        // A name that begins with `~` (`./~/x`): escaped, so it is never read as HOME.
        format!("\\{joined}")
    } else {
        joined
    })
}

/// Checks that a deny pattern compiles; used when validating the configuration.
pub fn validate_deny_pattern(pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err("the pattern is empty".to_string());
    }
    for glob in deny_globs(pattern) {
        build_glob(&glob)?;
    }
    Ok(())
}

/// A deny pattern without a leading `/` matches at any depth; either way a denied
/// directory denies everything below it.
fn deny_globs(pattern: &str) -> [String; 2] {
    let trimmed = pattern.trim().trim_end_matches('/');
    let base = if trimmed.starts_with('/') {
        trimmed.to_string()
    } else {
        format!("**/{trimmed}")
    };
    [base.clone(), format!("{base}/**")]
}

fn build_glob(glob: &str) -> Result<globset::Glob, String> {
    GlobBuilder::new(glob)
        .literal_separator(true)
        // Case variants must not slip past a deny rule on case-insensitive filesystems.
        .case_insensitive(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| e.kind().to_string())
}

/// A path that passed the scope check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedPath {
    /// Absolute, lexically normalised: what the agent asked for, for messages.
    pub shown: PathBuf,
    /// Every symlink resolved: what the tools operate on.
    pub real: PathBuf,
}

/// The allow/deny rules of one server.
#[derive(Debug, Clone)]
pub struct Scope {
    allow: Vec<PathBuf>,
    deny_patterns: Vec<String>,
    deny: GlobSet,
}

impl Scope {
    /// `allow` must be canonical directories; patterns must have passed
    /// [`validate_deny_pattern`].
    pub fn new(allow: Vec<PathBuf>, deny_patterns: Vec<String>) -> Result<Self, String> {
        let mut builder = GlobSetBuilder::new();
        for pattern in &deny_patterns {
            for glob in deny_globs(pattern) {
                builder.add(build_glob(&glob)?);
            }
        }
        let deny = builder.build().map_err(|e| e.to_string())?;
        Ok(Scope {
            allow,
            deny_patterns,
            deny,
        })
    }

    /// Like [`Scope::resolve`], for tools that only read: `read_only` (the calling
    /// session's own directory of command output) is allowed too.
    pub fn resolve_read(
        &self,
        cwd: &Path,
        input: &str,
        read_only: Option<&Path>,
    ) -> ToolResult<ScopedPath> {
        match self.resolve(cwd, input) {
            Err(e) if e.code == ErrorCode::AccessDenied => {
                match (locate(&RealFs, cwd, input), read_only) {
                    (Ok((shown, real)), Some(dir))
                        if real.starts_with(dir) && self.denied_by(&shown).is_none() =>
                    {
                        Ok(ScopedPath { shown, real })
                    }
                    _ => Err(e),
                }
            }
            other => other,
        }
    }

    pub fn allow_dirs(&self) -> &[PathBuf] {
        &self.allow
    }

    pub fn deny_patterns(&self) -> &[String] {
        &self.deny_patterns
    }

    /// Resolves a tool's `path` argument against `cwd` and checks it, on the real
    /// filesystem.
    pub fn resolve(&self, cwd: &Path, input: &str) -> ToolResult<ScopedPath> {
        self.resolve_with(&RealFs, cwd, input)
    }

    pub fn resolve_with(
        &self,
        fs: &dyn LinkReader,
        cwd: &Path,
        input: &str,
    ) -> ToolResult<ScopedPath> {
        if input.trim().is_empty() {
            return Err(ToolError::invalid("path must not be empty"));
        }
        if input.contains('\0') {
            return Err(ToolError::invalid("path must not contain a NUL byte"));
        }
        if input.len() > MAX_PATH_BYTES {
            // Echoing a huge path back would flood the agent's context.
            let head: String = input.chars().take(80).collect();
            return Err(ToolError::invalid(format!(
                "path is {} bytes long, over the {MAX_PATH_BYTES}-byte limit (PATH_MAX): {head}…",
                input.len()
            )));
        }
        let (shown, real) = locate(fs, cwd, input)?;
        self.check(&shown, &real)?;
        Ok(ScopedPath { shown, real })
    }

    /// The allow/deny decision for a path already resolved.
    pub fn check(&self, shown: &Path, real: &Path) -> ToolResult<()> {
        // One match when the path names itself (no symlink along it): the common case.
        let pattern = self
            .denied_by(shown)
            .or_else(|| (real != shown).then(|| self.denied_by(real)).flatten());
        if let Some(pattern) = pattern {
            return Err(ToolError::new(
                ErrorCode::AccessDenied,
                format!(
                    "{} is denied by the pattern {pattern:?} (--deny-dir)",
                    shown.display()
                ),
            ));
        }
        if !self.is_allowed(real) {
            let target = if shown == real {
                String::new()
            } else {
                format!(" (it resolves to {})", real.display())
            };
            return Err(ToolError::new(
                ErrorCode::AccessDenied,
                format!(
                    "{}{target} is outside the allowed directories: {}",
                    shown.display(),
                    self.allow
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(())
    }

    pub fn is_allowed(&self, real: &Path) -> bool {
        self.allow.iter().any(|root| real.starts_with(root))
    }

    /// The deny pattern that matches `path`, if any.
    pub fn denied_by(&self, path: &Path) -> Option<&str> {
        let hits = self.deny.matches(path);
        // Each pattern contributed two globs, in order.
        hits.first().map(|&i| self.deny_patterns[i / 2].as_str())
    }

    pub fn is_denied(&self, path: &Path) -> bool {
        self.deny.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deny_pattern_is_written_the_way_paths_are_checked() {
        let home = Some(Path::new("/home/u"));
        let n = |p: &str| normalize_deny_pattern(p, home);
        assert_eq!(n("~/.ssh").as_deref(), Ok("/home/u/.ssh"));
        assert_eq!(n("~").as_deref(), Ok("/home/u"));
        assert_eq!(n(" /home/u//.ssh/ ").as_deref(), Ok("/home/u/.ssh"));
        assert_eq!(n("/srv/./keys").as_deref(), Ok("/srv/keys"));
        assert_eq!(n("/srv/app/../keys-*").as_deref(), Ok("/srv/keys-*"));
        assert_eq!(n("/srv/keys/**").as_deref(), Ok("/srv/keys/**"));
        assert_eq!(n("secrets//key").as_deref(), Ok("secrets/key"));
        assert_eq!(n(".env").as_deref(), Ok(".env"));
        assert_eq!(n("~user/x").as_deref(), Ok("\\~user/x"));
        assert_eq!(n("./~/k").as_deref(), Ok("\\~/k"));
        assert!(n("/srv/*/../keys").is_err());
        assert!(n("/..").is_err());
        assert!(n("a/../b").is_err());
        assert!(normalize_deny_pattern("~/.ssh", None).is_err());
    }

    proptest::proptest! {
        /// Normalising twice is normalising once, and the result has no empty, `.` or
        /// `..` component.
        #[test]
        fn a_normalized_deny_pattern_is_a_fixed_point(p in "[~/.a*]{0,12}") {
            if let Ok(once) = normalize_deny_pattern(&p, Some(Path::new("/h"))) {
                let twice = normalize_deny_pattern(&once, Some(Path::new("/h")));
                proptest::prop_assert_eq!(twice.as_deref(), Ok(once.as_str()));
                let body = once.strip_prefix('/').unwrap_or(&once);
                proptest::prop_assert!(body.is_empty() || body.split('/').all(|c| !c.is_empty() && c != "." && c != ".."), "{}", once);
            }
        }
    }
    use std::collections::HashMap;

    /// A model filesystem: only symlinks exist, everything else is "a plain name".
    struct ModelFs(HashMap<PathBuf, PathBuf>);

    impl LinkReader for ModelFs {
        fn read_link(&self, path: &Path) -> Option<PathBuf> {
            self.0.get(path).cloned()
        }
    }

    fn model(links: &[(&str, &str)]) -> ModelFs {
        ModelFs(
            links
                .iter()
                .map(|(a, b)| (PathBuf::from(a), PathBuf::from(b)))
                .collect(),
        )
    }

    fn scope(allow: &[&str], deny: &[&str]) -> Scope {
        Scope::new(
            allow.iter().map(PathBuf::from).collect(),
            deny.iter().map(|s| s.to_string()).collect(),
        )
        .expect("valid scope")
    }

    #[test]
    fn normalize_handles_dots_and_root() {
        assert_eq!(
            normalize(Path::new("/w"), Path::new("a/./b/../c")),
            PathBuf::from("/w/a/c")
        );
        assert_eq!(
            normalize(Path::new("/w"), Path::new("../../..")),
            PathBuf::from("/")
        );
        assert_eq!(
            normalize(Path::new("/w"), Path::new("/etc/x")),
            PathBuf::from("/etc/x")
        );
    }

    #[test]
    fn dangling_link_resolves_to_its_target() {
        let fs = model(&[("/w/out", "/etc/passwd-new")]);
        assert_eq!(
            resolve_links(&fs, Path::new("/w/out")).unwrap(),
            PathBuf::from("/etc/passwd-new")
        );
        let s = scope(&["/w"], &[]);
        let err = s.resolve_with(&fs, Path::new("/w"), "out").unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied);
        assert!(
            err.message.contains("resolves to /etc/passwd-new"),
            "{}",
            err.message
        );
    }

    #[test]
    fn relative_links_and_dotdot_after_links_are_physical() {
        let fs = model(&[("/w/l", "sub/deeper"), ("/w/up", "../outside")]);
        assert_eq!(
            resolve_links(&fs, Path::new("/w/l/x")).unwrap(),
            PathBuf::from("/w/sub/deeper/x")
        );
        assert_eq!(
            resolve_links(&fs, Path::new("/w/up/f")).unwrap(),
            PathBuf::from("/outside/f")
        );
    }

    #[test]
    fn dotdot_applies_after_the_link_it_follows() {
        // lnk -> /x/deep: lnk/../f.txt is /x/f.txt, as the kernel resolves it.
        let fs = model(&[("/w/lnk", "/x/deep")]);
        let s = scope(&["/"], &[]);
        let p = s
            .resolve_with(&fs, Path::new("/w"), "lnk/../f.txt")
            .unwrap();
        assert_eq!(p.real, PathBuf::from("/x/f.txt"));
        assert_eq!(p.shown, PathBuf::from("/w/lnk/../f.txt"));
        // Outside the allowed root after the link: refused, naming where it leads.
        let s = scope(&["/w"], &[]);
        let err = s
            .resolve_with(&fs, Path::new("/w"), "lnk/../f.txt")
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied);
        assert!(err.message.contains("/x/f.txt"), "{}", err.message);
        // Without links in the way, the lexical form is shown.
        let p = s.resolve_with(&fs, Path::new("/w"), "a/../b.txt").unwrap();
        assert_eq!(
            (p.shown.clone(), p.real.clone()),
            (PathBuf::from("/w/b.txt"), PathBuf::from("/w/b.txt"))
        );
    }

    #[test]
    fn loops_are_an_error() {
        let fs = model(&[("/w/a", "b"), ("/w/b", "a")]);
        assert!(resolve_links(&fs, Path::new("/w/a")).is_err());
    }

    #[test]
    fn deny_patterns_match_at_any_depth_and_below() {
        let s = scope(&["/"], &[".env", "secrets/", "/abs/only", "*.{pem,key}"]);
        assert!(s.is_denied(Path::new("/w/.env")));
        assert!(s.is_denied(Path::new("/.env")));
        assert!(s.is_denied(Path::new("/w/a/b/.ENV")));
        assert!(s.is_denied(Path::new("/w/secrets/x/y")));
        assert!(s.is_denied(Path::new("/abs/only/f")));
        assert!(!s.is_denied(Path::new("/w/abs/only/f")));
        assert!(s.is_denied(Path::new("/w/k.pem")));
        assert!(!s.is_denied(Path::new("/w/.envrc")));
        assert_eq!(s.denied_by(Path::new("/w/a.key")), Some("*.{pem,key}"));
    }

    #[test]
    fn deny_beats_allow_and_allow_is_componentwise() {
        let s = scope(&["/w"], &["/w/private"]);
        assert!(s.check(Path::new("/w/a"), Path::new("/w/a")).is_ok());
        assert!(
            s.check(Path::new("/w/private/a"), Path::new("/w/private/a"))
                .is_err()
        );
        assert!(s.check(Path::new("/wx/a"), Path::new("/wx/a")).is_err());
    }

    #[test]
    fn bad_inputs_are_invalid_input() {
        let s = scope(&["/w"], &[]);
        assert_eq!(
            s.resolve(Path::new("/w"), "").unwrap_err().code,
            ErrorCode::InvalidInput
        );
        assert_eq!(
            s.resolve(Path::new("/w"), "a\0b").unwrap_err().code,
            ErrorCode::InvalidInput
        );
    }

    proptest::proptest! {
        /// No path that passes the check ever lies outside the allowed root, whatever
        /// the symlinks and `..` segments involved (issue 2, item 9).
        #[test]
        fn resolved_paths_never_escape(
            input in "(\\.\\.|\\.|a|b|l1|l2|/){0,12}",
            t1 in "(\\.\\.|a|b|/|/w|/etc){1,5}",
            t2 in "(\\.\\.|a|b|/|/w|/etc|l1){1,5}",
        ) {
            let fs = model(&[("/w/l1", t1.as_str()), ("/w/a/l2", t2.as_str())]);
            let s = scope(&["/w"], &[]);
            if let Ok(p) = s.resolve_with(&fs, Path::new("/w/a"), &input) {
                proptest::prop_assert!(p.real.starts_with("/w"), "{:?} escaped", p);
                proptest::prop_assert!(!p.real.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)));
                // Fully resolved: no prefix of the result is a link in the model.
                let mut prefix = PathBuf::from("/");
                for c in p.real.components().skip(1) {
                    prefix.push(c);
                    proptest::prop_assert!(fs.read_link(&prefix).is_none(), "{:?} still has link {:?}", p, prefix);
                }
            }
        }
    }
}
