//! Pure: the one line a failed command's result ends with when the sandbox blocked a
//! path it names (issue 18 §2), so a model knows it met the sandbox, not a bug, and which
//! flag a person could give.

use super::Policy;
use crate::scope::{LinkReader, Scope};
use std::path::{Component, Path, PathBuf};

/// Error texts that follow a path when a write or read was refused.
const REFUSALS: &[&str] = &[
    "Permission denied",
    "permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Device or resource busy",
];

/// The hint for `output` (a command's stdout and stderr), or `None` when no path it
/// names as refused is one the sandbox blocks. A path is judged where it leads (`fs`
/// resolves its symlinks), and the hint names both when they differ (issue 25 §7, S6).
/// `home` shortens the suggested directory of a write under it to its first component
/// (`~/.npm`, not `~/.npm/_cacache/tmp`).
pub fn denial_hint(
    output: &str,
    cwd: &Path,
    tmp: &Path,
    policy: &Policy,
    deny: &Scope,
    home: Option<&Path>,
    fs: &dyn LinkReader,
) -> Option<String> {
    for line in output
        .lines()
        .filter(|l| REFUSALS.iter().any(|r| l.contains(r)))
    {
        for candidate in paths_in(line) {
            let path = crate::scope::normalize(cwd, Path::new(&candidate));
            let real = crate::scope::resolve_links(fs, &path).unwrap_or_else(|_| path.clone());
            let named = if real == path {
                path.display().to_string()
            } else {
                format!("{} (a link to {})", path.display(), real.display())
            };
            if let Some(pattern) = deny.denied_by(&path).or_else(|| deny.denied_by(&real)) {
                return Some(format!(
                    "sandbox: {named} is denied by the pattern {pattern:?} (--deny-dir); \
                     commands cannot read it, as view cannot"
                ));
            }
            let writable =
                |p: &Path| policy.write.iter().any(|w| p.starts_with(w)) || p.starts_with(tmp);
            if writable(&real)
                && policy.protect_git
                && (super::paths::is_git_protected(&path) || super::paths::is_git_protected(&real))
            {
                return Some(format!(
                    "sandbox: {named} is git metadata, read-only in the sandbox (git would run it \
                     outside it later); --sandbox-allow-git-config would allow writing it"
                ));
            }
            // The kernel's own files: no --sandbox-write gives another process's
            // `/proc/<pid>/environ` (refused for reading, by ptrace rules) or `/sys`.
            let kernel = real.starts_with("/proc") || real.starts_with("/sys");
            if !writable(&real) && !kernel && real.is_absolute() && real != Path::new("/") {
                return Some(format!(
                    "sandbox: {named} is outside the writable directories; --sandbox-write {} \
                     would allow writing there",
                    suggest_dir(&real, home).display()
                ));
            }
        }
    }
    None
}

/// What a refused POSIX semaphore or shared-memory segment prints: no path (Python's
/// `SemLock`, `sem_open: Permission denied`), so [`denial_hint`] cannot name one.
const SHARED_MEMORY: &[&str] = &["SemLock", "sem_open", "shm_open"];

/// The hint for `output` when it shows a semaphore or shared-memory segment refused and
/// `/dev/shm` is not writable: the host's, without user namespaces (DEC-120). Only when
/// [`denial_hint`] found no path.
pub fn shared_memory_hint(output: &str, shm_writable: bool) -> Option<String> {
    if shm_writable {
        return None;
    }
    let refused = output
        .lines()
        .any(|l| REFUSALS.iter().any(|r| l.contains(r)));
    let shared = output
        .lines()
        .any(|l| SHARED_MEMORY.iter().any(|m| l.contains(m)));
    (refused && shared).then(|| {
        "sandbox: POSIX semaphores and shared memory live in /dev/shm, the host's without user \
         namespaces and outside the writable directories; --sandbox-write /dev/shm would allow \
         them (and every program's shared memory there)"
            .to_string()
    })
}

/// The directory to suggest for a refused write to `path`: under the home directory its
/// first component (`~/.cache`), elsewhere the parent.
fn suggest_dir(path: &Path, home: Option<&Path>) -> PathBuf {
    if let Some(home) = home
        && let Ok(rel) = path.strip_prefix(home)
        && let Some(Component::Normal(first)) = rel.components().next()
    {
        return home.join(first);
    }
    path.parent().unwrap_or(path).to_path_buf()
}

/// The paths a refusal line names: quoted ones ('…', `…`, "…", ‘…’) first, then the word
/// before a refusal after the last `: ` (`cat: .env: Permission denied`, `tee: out:
/// Permission denied`), then any word with a `/` after the program's own prefix
/// (`/bin/bash: line 4: `), which names the program, not what it was refused.
fn paths_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('`', '`'), ('"', '"'), ('‘', '’')] {
        let mut rest = line;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            let Some(b) = after.find(close) else { break };
            let inner = &after[..b];
            if looks_like_path_or_name(inner) {
                out.push(inner.to_string());
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    let body = without_program(line);
    for refusal in REFUSALS {
        if let Some(at) = body.find(&format!(": {refusal}")) {
            let head = &body[..at];
            let last = head.rsplit(": ").next().unwrap_or(head).trim();
            // `cannot touch 'x'` was taken above; a bare path is one word.
            if !last.is_empty() && !last.contains(' ') && looks_like_path_or_name(last) {
                out.push(last.to_string());
            }
        }
    }
    for word in body.split(|c: char| c.is_whitespace() || c == ',' || c == '\'' || c == '"') {
        let word = word.trim_end_matches(':');
        if word.starts_with('/') && looks_like_path(word) {
            out.push(word.to_string());
        }
    }
    out
}

/// `line` without a leading `program: ` and a shell's `line N: `.
fn without_program(line: &str) -> &str {
    let Some((first, rest)) = line.split_once(": ") else {
        return line;
    };
    if first.contains(' ') {
        return line;
    }
    match rest.split_once(": ") {
        Some((n, after))
            if n.strip_prefix("line ")
                .is_some_and(|d| d.parse::<u64>().is_ok()) =>
        {
            after
        }
        _ => rest,
    }
}

/// A file name alone (`link`, `out.txt`) counts too where a refusal follows it.
fn looks_like_path_or_name(s: &str) -> bool {
    looks_like_path(s)
        || (!s.is_empty() && s.len() < 256 && !s.contains([' ', '\n', '(', ')', '[', ']', '=']))
}

fn looks_like_path(s: &str) -> bool {
    !s.is_empty() && s.len() < 4096 && !s.contains('\n') && (s.contains('/') || s.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy() -> Policy {
        Policy {
            write: vec![PathBuf::from("/w")],
            read: Vec::new(),
            deny_patterns: vec![".env".into()],
            network: true,
            protect_git: true,
        }
    }

    fn hint(output: &str) -> Option<String> {
        let p = policy();
        let deny = Scope::new(Vec::new(), p.deny_patterns.clone()).unwrap();
        denial_hint(
            output,
            Path::new("/w/sub"),
            Path::new("/tmp"),
            &p,
            &deny,
            Some(Path::new("/root")),
            &Links,
        )
    }

    /// A model filesystem: `/w/sub/out` and `/w/sub/bash-link` are symlinks leading out.
    struct Links;

    impl LinkReader for Links {
        fn read_link(&self, path: &Path) -> Option<PathBuf> {
            match path.to_str()? {
                "/w/sub/out" => Some(PathBuf::from("/srv/data/f.txt")),
                "/w/sub/secret" => Some(PathBuf::from("/w/.env")),
                _ => None,
            }
        }
    }

    #[test]
    fn no_flag_is_suggested_for_the_kernels_own_files() {
        assert_eq!(hint("cat: /proc/28670/environ: Permission denied"), None);
        assert_eq!(
            hint("sh: /sys/kernel/uevent_helper: Permission denied"),
            None
        );
        assert!(hint("tee: /opt/x: Permission denied").is_some());
    }

    #[test]
    fn a_refused_semaphore_names_dev_shm_only_where_it_is_not_writable() {
        let python = "  File \"synchronize.py\", line 57, in __init__\n    sl = self._semlock = \
                      _multiprocessing.SemLock(\nPermissionError: [Errno 13] Permission denied";
        let hint = shared_memory_hint(python, false).unwrap_or_default();
        assert!(hint.contains("--sandbox-write /dev/shm"), "{hint}");
        assert!(shared_memory_hint("sem_open: Permission denied", false).is_some());
        assert_eq!(shared_memory_hint(python, true), None);
        assert_eq!(shared_memory_hint("sem_open: done", false), None);
        assert_eq!(shared_memory_hint("cat: x: Permission denied", false), None);
    }

    #[test]
    fn names_the_path_and_the_flag() {
        assert_eq!(
            hint("cat: .env: Permission denied").as_deref(),
            Some(
                "sandbox: /w/sub/.env is denied by the pattern \".env\" (--deny-dir); commands cannot read it, as view cannot"
            )
        );
        assert_eq!(
            hint("/bin/bash: line 4: /etc/x: Permission denied").as_deref(),
            Some(
                "sandbox: /etc/x is outside the writable directories; --sandbox-write /etc would allow writing there"
            )
        );
        assert_eq!(
            hint("touch: cannot touch '/root/.npm/_cacache/x': Permission denied").as_deref(),
            Some(
                "sandbox: /root/.npm/_cacache/x is outside the writable directories; --sandbox-write /root/.npm would allow writing there"
            )
        );
        assert_eq!(
            hint("PermissionError: [Errno 13] Permission denied: '/opt/x'").as_deref(),
            Some(
                "sandbox: /opt/x is outside the writable directories; --sandbox-write /opt would allow writing there"
            )
        );
        assert!(
            hint("error: could not write config file /w/.git/config: Device or resource busy")
                .unwrap()
                .contains("--sandbox-allow-git-config")
        );
        assert!(
            hint("/bin/bash: line 1: ../.git/hooks/pre-commit: Read-only file system")
                .unwrap()
                .contains("git metadata")
        );
        // Issue 25 §7, S6: a write through an outward symlink names the link and where it
        // leads, whatever the program (never the shell's own path).
        let out = "sandbox: /w/sub/out (a link to /srv/data/f.txt) is outside the writable \
                   directories; --sandbox-write /srv/data would allow writing there";
        for line in [
            "/bin/bash: line 4: out: Permission denied",
            "bash: out: Permission denied",
            "cp: cannot create regular file 'out': Permission denied",
            "tee: out: Permission denied",
            "/usr/bin/tee: out: Permission denied",
        ] {
            assert_eq!(hint(line).as_deref(), Some(out), "{line}");
        }
        assert!(
            hint("cat: secret: Permission denied")
                .unwrap()
                .contains("/w/sub/secret (a link to /w/.env) is denied by the pattern \".env\"")
        );
        // Inside the writable trees and not protected: not the sandbox's doing.
        assert_eq!(
            hint("cp: cannot create regular file '/w/a': Permission denied"),
            None
        );
        assert_eq!(hint("all good"), None);
        assert_eq!(hint("/bin/bash: line 1: ./run.sh: Permission denied"), None);
    }

    proptest! {
        #[test]
        fn never_panics(output in ".{0,200}") {
            let _ = hint(&output);
        }

        /// Whatever program prefix a refusal line has, the hint never names the program.
        #[test]
        fn never_names_the_program(prog in "/(usr/)?bin/[a-z]{1,8}", line in 1u32..500) {
            let h = hint(&format!("{prog}: line {line}: out: Permission denied")).unwrap();
            prop_assert!(!h.contains(&prog), "{}", h);
            prop_assert!(h.contains("/w/sub/out (a link to /srv/data/f.txt)"), "{}", h);
        }
    }
}
