//! Which paths the sandbox grants, hides and protects: the read rules, the device files
//! every program needs, and the walk that finds denied files and git metadata under the
//! writable trees before each command.

use crate::scope::Scope;
use std::path::{Path, PathBuf};

/// Device files a command may read and write (and `ioctl`, for terminals).
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

/// What a narrowed read list (`--sandbox-read`) always adds, or no program would start.
pub const SYSTEM_READ: &[&str] = &[
    "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/dev",
    "/proc", "/sys",
];

/// The trees a command may read. `read` empty means everything, less `hidden`: since a
/// Landlock rule grants a whole tree, hiding a path means granting every sibling of it
/// and of each of its ancestors instead (those present now; an entry made later beside
/// them is not readable). With namespaces the hidden paths are covered by mounts, so the
/// whole root is granted. A hidden path is hidden where it leads too: the walk meets
/// only real paths (it follows no symlink), and Landlock checks a read where its path
/// leads, so `~/.ssh -> dotfiles/ssh` or a path under `/home -> var/home` must be hidden
/// at its target (DEC-119).
pub fn read_rules(read: &[PathBuf], hidden: &[PathBuf], namespaces: bool) -> Vec<PathBuf> {
    if !read.is_empty() {
        let mut out: Vec<PathBuf> = read.to_vec();
        out.extend(SYSTEM_READ.iter().map(PathBuf::from));
        return out;
    }
    if namespaces || hidden.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let mut real = hidden.to_vec();
    real.extend(
        hidden
            .iter()
            .filter_map(|h| std::fs::canonicalize(h).ok())
            .filter(|r| !hidden.contains(r)),
    );
    let mut out = Vec::new();
    grant_all_but(Path::new("/"), &real, &mut out);
    out
}

/// Grants `dir`'s entries, descending into those that lead to a hidden path. A symlink
/// is granted nothing: a rule is opened through its path, so it would grant the link's
/// target — a hidden directory beside it (`current -> private`), a tree above a hidden
/// path (`/home -> var/home`), or a pipe (`/dev/stdin`), which Landlock refuses, failing
/// every command. Reading through a link is checked at its target, which its own place
/// in these rules decides (DEC-119).
fn grant_all_but(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type();
        if hidden.iter().any(|h| h == &path) || kind.as_ref().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        let leads_to_hidden = hidden.iter().any(|h| h.starts_with(&path));
        let is_dir = kind.is_ok_and(|t| t.is_dir());
        if leads_to_hidden && is_dir {
            grant_all_but(&path, hidden, out);
        } else {
            out.push(path);
        }
    }
}

/// What absolute deny patterns (`/abs/private`, `~/.ssh` as the shell expands it,
/// `/srv/keys-*`) match outside the writable trees, which no walk of those trees finds
/// (issue 25 §4, X6): each pattern's literal head, then its remaining components
/// matched level by level (a `**` searches a bounded number of directories). A denied
/// directory is not looked into.
pub fn denied_outside(patterns: &[String], write: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut budget = 20_000usize;
    for pattern in patterns.iter().filter(|p| p.trim().starts_with('/')) {
        let Ok(deny) = Scope::new(Vec::new(), vec![pattern.clone()]) else {
            continue;
        };
        let pattern = Path::new(pattern.trim());
        let glob = |c: &std::ffi::OsStr| c.to_string_lossy().contains(['*', '?', '[', '{']);
        let head: PathBuf = pattern.iter().take_while(|c| !glob(c)).collect();
        let rest = pattern.iter().count() - head.iter().count();
        let depth = if pattern.iter().any(|c| c == "**") {
            usize::MAX
        } else {
            rest
        };
        let mut stack = vec![(head, 0usize)];
        while let Some((path, level)) = stack.pop() {
            if write.iter().any(|w| path.starts_with(w)) || budget == 0 {
                continue;
            }
            budget -= 1;
            if deny.is_denied(&path) {
                if path.symlink_metadata().is_ok() {
                    out.push(path);
                }
                continue;
            }
            if level >= depth {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&path) else {
                continue;
            };
            for e in entries.flatten() {
                // A file can match at the pattern's last level, which under a `**` is
                // every level.
                let last = depth == usize::MAX || level + 1 == depth;
                if last || e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push((e.path(), level + 1));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// How a found path is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protect {
    /// Denied by `--deny-dir`: nothing of it may be read.
    Deny,
    /// Git metadata that would run code outside the sandbox later: read-only.
    ReadOnly,
    /// A git directory (or a `.git` file): it stays where it is, so that nothing can be
    /// put in its place. A directory's contents stay writable (objects, refs, the
    /// index); a file is all content, so it is read-only too.
    Pin,
}

/// What a git directory holds that makes git read config or run programs, the user's
/// next `git status` included (issue 25 §3): `config` and `config.worktree`
/// (`core.fsmonitor`, `core.hooksPath`, `core.sshCommand`, filters, `include.path`),
/// `hooks/`, `commondir` (where the config and hooks are read from: X1) and `gitdir`
/// (a linked worktree's way back). Read-only, and never made anew.
pub const GIT_PROTECTED: &[&str] = &["config", "config.worktree", "hooks", "commondir", "gitdir"];

/// What a git directory holds other git directories in: submodules' (`modules/<name>`)
/// and linked worktrees' (`worktrees/<name>`), each a git directory of its own.
pub const GIT_NESTED: &[&str] = &["modules", "worktrees"];

/// The one rule for git metadata, by place alone, which the file tools
/// ([`is_git_protected`]) and the jail's mounts ([`scan_dir`]) both follow: a `.git`
/// itself is pinned; in a git directory (a `.git` directory, and recursively each of
/// its `modules/<name>` and `worktrees/<name>`) the [`GIT_PROTECTED`] names are
/// read-only and the [`GIT_NESTED`] directories and the git directories in them are
/// pinned.
pub fn git_protection(path: &Path) -> Option<Protect> {
    let parts: Vec<&std::ffi::OsStr> = path.iter().collect();
    parts
        .iter()
        .enumerate()
        .filter(|(_, part)| **part == ".git")
        .find_map(|(i, _)| inside_git_dir(&parts[i + 1..]))
}

/// What `rest` is to the git directory it lies in.
fn inside_git_dir(rest: &[&std::ffi::OsStr]) -> Option<Protect> {
    let is = |part: &std::ffi::OsStr, names: &[&str]| names.iter().any(|n| part == *n);
    match rest {
        [] => Some(Protect::Pin),
        [name] if is(name, GIT_PROTECTED) => Some(Protect::ReadOnly),
        [name] if is(name, GIT_NESTED) => Some(Protect::Pin),
        [first, ..] if *first == "hooks" => Some(Protect::ReadOnly),
        [first, _name, tail @ ..] if is(first, GIT_NESTED) => inside_git_dir(tail),
        _ => None,
    }
}

/// Whether a directory the rule pins is a git directory (not a `modules/` or
/// `worktrees/` that holds them): a protected name appearing in it later is refused.
pub fn is_git_dir_pin(path: &Path) -> bool {
    git_protection(path) == Some(Protect::Pin)
        && !path
            .file_name()
            .is_some_and(|n| GIT_NESTED.iter().any(|g| n == *g))
}

/// What one directory holds that must be protected, and its subdirectories to look in
/// next. Symlinks are not followed (a link's target is checked where it lies); a denied
/// directory is not descended into, and in a git directory only the git directories
/// nested in it are.
pub fn scan_dir(
    dir: &Path,
    roots: &[PathBuf],
    deny: &Scope,
    protect_git: bool,
    found: &mut Vec<(PathBuf, Protect)>,
    subdirs: &mut Vec<PathBuf>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let in_git = dir.iter().any(|c| c == ".git");
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if scan_entry(&path, kind, in_git, roots, deny, protect_git, found) {
            subdirs.push(path);
        }
    }
}

/// What one entry (in a git directory: `in_git`) needs, pushed to `found`; whether to
/// look inside it: an unprotected directory outside git metadata, or a pinned one (its
/// contents are protected one by one).
pub fn scan_entry(
    path: &Path,
    kind: std::fs::FileType,
    in_git: bool,
    roots: &[PathBuf],
    deny: &Scope,
    protect_git: bool,
    found: &mut Vec<(PathBuf, Protect)>,
) -> bool {
    match classify(path, deny, protect_git) {
        None => kind.is_dir() && !in_git,
        Some(Protect::Pin) => {
            found.push((path.to_path_buf(), Protect::Pin));
            if kind.is_file() && path.file_name().is_some_and(|n| n == ".git") {
                linked_worktree(path, roots, found);
            }
            kind.is_dir()
        }
        Some(other) => {
            found.push((path.to_path_buf(), other));
            false
        }
    }
}

/// How `path` must be protected, by its name alone.
pub fn classify(path: &Path, deny: &Scope, protect_git: bool) -> Option<Protect> {
    if deny.is_denied(path) {
        Some(Protect::Deny)
    } else if protect_git {
        git_protection(path)
    } else {
        None
    }
}

/// Every denied path and every piece of protected git metadata under `roots`.
pub fn find_protected(
    roots: &[PathBuf],
    deny: &Scope,
    protect_git: bool,
) -> Vec<(PathBuf, Protect)> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        scan_dir(&dir, roots, deny, protect_git, &mut found, &mut stack);
    }
    found
}

/// A linked worktree's or a submodule's `.git` file (`gitdir: <dir>`): the git
/// directory it names, and that directory's common directory, when they lie in the
/// writable trees (outside them they are read-only anyway) but not under a `.git` the
/// walk protects by the rule (a `--separate-git-dir`): pinned, with the
/// [`GIT_PROTECTED`] names in them read-only.
fn linked_worktree(dotgit: &Path, roots: &[PathBuf], found: &mut Vec<(PathBuf, Protect)>) {
    let Ok(text) = std::fs::read_to_string(dotgit) else {
        return;
    };
    let Some(gitdir) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return;
    };
    let base = dotgit.parent().unwrap_or(Path::new("/"));
    let Ok(gitdir) = base.join(gitdir.trim()).canonicalize() else {
        return;
    };
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .ok()
        .and_then(|c| gitdir.join(c.trim()).canonicalize().ok());
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    for dir in std::iter::once(gitdir).chain(common) {
        if !inside(&dir) || git_protection(&dir).is_some() {
            continue;
        }
        found.push((dir.clone(), Protect::Pin));
        for name in GIT_PROTECTED {
            let p = dir.join(name);
            if p.symlink_metadata().is_ok() {
                found.push((p, Protect::ReadOnly));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_denied_files_and_git_metadata() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in [".git/hooks", "sub/.git/hooks", "secrets", "src"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".git/config",
            ".env",
            "src/.env",
            "secrets/key",
            "src/main.rs",
            "sub/.git/config",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        let deny = Scope::new(Vec::new(), vec![".env".into(), "secrets".into()]).unwrap();
        let mut found = find_protected(std::slice::from_ref(&root), &deny, true);
        found.sort();
        let rel: Vec<(String, Protect)> = found
            .iter()
            .map(|(p, k)| (p.strip_prefix(&root).unwrap().display().to_string(), *k))
            .collect();
        assert_eq!(
            rel,
            vec![
                (".env".into(), Protect::Deny),
                (".git".into(), Protect::Pin),
                (".git/config".into(), Protect::ReadOnly),
                (".git/hooks".into(), Protect::ReadOnly),
                ("secrets".into(), Protect::Deny),
                ("src/.env".into(), Protect::Deny),
                ("sub/.git".into(), Protect::Pin),
                ("sub/.git/config".into(), Protect::ReadOnly),
                ("sub/.git/hooks".into(), Protect::ReadOnly),
            ]
        );
        assert!(
            find_protected(&[root], &deny, false)
                .iter()
                .all(|(_, k)| *k == Protect::Deny)
        );
    }

    /// Issue 25 §3: the file tools' rule and the jail's scan protect the same set. Every
    /// path of a tree holding each kind of git directory (a repository, its submodules'
    /// and linked worktrees' directories, nested ones, the `.git` files pointing at
    /// them, a nested repository) is protected by the scan (found, or inside a
    /// read-only tree found) exactly when `is_git_protected` says so; and in every git
    /// directory the scan pins, each protected name that is not there yet is refused by
    /// the rule too (the jail removes it when it appears).
    #[test]
    fn the_file_tools_and_the_scan_protect_the_same_set() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let files = [
            ".git/HEAD",
            ".git/config",
            ".git/index",
            ".git/hooks/pre-commit",
            ".git/objects/ab/cdef",
            ".git/refs/heads/main",
            ".git/modules/lib/HEAD",
            ".git/modules/lib/config",
            ".git/modules/lib/hooks/post-checkout",
            ".git/modules/lib/objects/pack/p.pack",
            ".git/modules/lib/modules/inner/config",
            ".git/modules/lib/modules/inner/commondir",
            ".git/worktrees/wt/commondir",
            ".git/worktrees/wt/gitdir",
            ".git/worktrees/wt/HEAD",
            ".git/worktrees/wt/index",
            ".git/worktrees/wt/config.worktree",
            ".git/worktrees/wt/logs/HEAD",
            "sub/.git/config",
            "sub/.git/hooks/x",
            "sub/.git/refs/heads/hooks",
            "src/config",
            "src/hooks/pre-commit",
            "src/commondir",
            "modules/lib/config",
        ];
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        std::fs::create_dir_all(root.join("wt")).unwrap();
        let gitdir = |d: &str| format!("gitdir: {}\n", root.join(d).display());
        std::fs::write(root.join("wt/.git"), gitdir(".git/worktrees/wt")).unwrap();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        std::fs::write(root.join("lib/.git"), gitdir(".git/modules/lib")).unwrap();
        let deny = Scope::new(Vec::new(), Vec::new()).unwrap();
        let found = find_protected(std::slice::from_ref(&root), &deny, true);
        let read_only_trees: Vec<&PathBuf> = found
            .iter()
            .filter(|(p, k)| *k == Protect::ReadOnly && p.is_dir())
            .map(|(p, _)| p)
            .collect();
        let by_scan = |p: &Path| {
            found.iter().any(|(f, _)| f == p) || read_only_trees.iter().any(|d| p.starts_with(d))
        };
        let mut all = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                }
                all.push(e.path());
            }
        }
        assert!(all.len() > 40, "{}", all.len());
        for p in &all {
            assert_eq!(
                by_scan(p),
                is_git_protected(p),
                "{}",
                p.strip_prefix(&root).unwrap().display()
            );
        }
        let git_dirs: Vec<&PathBuf> = found
            .iter()
            .filter(|(p, k)| *k == Protect::Pin && p.is_dir() && is_git_dir_pin(p))
            .map(|(p, _)| p)
            .collect();
        assert_eq!(git_dirs.len(), 5, "{git_dirs:?}");
        for dir in git_dirs {
            for name in GIT_PROTECTED {
                assert!(is_git_protected(&dir.join(name)), "{}", dir.display());
            }
        }
    }

    /// A canonical temporary root holding `dirs` and the files `files` (each "x").
    fn tree(dirs: &[&str], files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in dirs {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        (t, root)
    }

    #[test]
    fn absolute_deny_patterns_are_found_outside_the_writable_trees() {
        let (_t, root) = tree(
            &[],
            &[
                "private/key",
                "keys-a/id",
                "keys-b/id",
                "w/private/x",
                "pub/x",
                "d/e/f/.ssh/k",
            ],
        );
        let r = |p: &str| format!("{}/{p}", root.display());
        let patterns = vec![
            r("private"),
            r("keys-*"),
            r("w/private"),
            r("**/.ssh"),
            ".env".into(),
        ];
        let got = denied_outside(&patterns, &[root.join("w")]);
        assert_eq!(
            got,
            vec![
                root.join("d/e/f/.ssh"),
                root.join("keys-a"),
                root.join("keys-b"),
                root.join("private"),
            ]
        );
    }

    #[test]
    fn a_double_star_pattern_finds_files_outside() {
        let (_t, root) = tree(&[], &["a/b/id_key", "a/c/readme", "vault/x/y", "w/id_key"]);
        let r = |p: &str| format!("{}/{p}", root.display());
        let got = denied_outside(&[r("**/id_*"), r("vault/**")], &[root.join("w")]);
        assert_eq!(got, vec![root.join("a/b/id_key"), root.join("vault/x")]);
    }

    #[test]
    fn hiding_a_path_grants_its_siblings() {
        let (_t, root) = tree(&["a/hide/x", "a/keep", "b"], &[]);
        let mut out = Vec::new();
        grant_all_but(&root, &[root.join("a/hide")], &mut out);
        out.sort();
        assert_eq!(out, vec![root.join("a/keep"), root.join("b")]);
        assert_eq!(read_rules(&[], &[], false), vec![PathBuf::from("/")]);
    }

    #[test]
    fn a_hidden_path_named_through_a_symlink_is_hidden_where_it_leads() {
        // `private -> dotfiles/ssh` hidden by its link's name: the rules from `/` must
        // leave out `dotfiles/ssh` itself, and still grant its sibling.
        let (_t, root) = tree(&["dotfiles/ssh", "dotfiles/vim"], &[]);
        std::os::unix::fs::symlink("dotfiles/ssh", root.join("private")).unwrap();
        let rules = read_rules(&[], &[root.join("private")], false);
        assert!(rules.contains(&root.join("dotfiles/vim")), "{rules:?}");
        for granted in &rules {
            assert!(
                !root.join("dotfiles/ssh").starts_with(granted),
                "{} grants the hidden target",
                granted.display()
            );
        }
    }

    #[test]
    fn hiding_a_path_grants_no_symlink_around_it() {
        // A rule is opened through its path: a symlink granted would grant its target.
        let (_t, root) = tree(&["a/hide/x", "a/keep", "var/home/u"], &[]);
        let link =
            |target: &str, at: &str| std::os::unix::fs::symlink(target, root.join(at)).unwrap();
        link("hide", "a/current"); // an alias beside the hidden directory
        link("var/home", "home"); // a tree above a hidden path, by another name
        link("/proc/self/fd/0", "a/stdin"); // a pipe, which Landlock refuses
        link("keep", "a/k"); // a harmless alias: its target is granted on its own
        let mut out = Vec::new();
        grant_all_but(
            &root,
            &[root.join("a/hide"), root.join("var/home/u")],
            &mut out,
        );
        out.sort();
        assert_eq!(out, vec![root.join("a/keep")]);
    }
}

/// Whether the file tools must refuse to write, make, rename or remove `path`: git
/// metadata by [`git_protection`], the rule the jail's mounts follow too.
pub fn is_git_protected(path: &Path) -> bool {
    git_protection(path).is_some()
}

#[cfg(test)]
mod git_tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn git_config_and_hooks_are_protected() {
        for p in [
            "/w/.git/config",
            "/w/.git/hooks",
            "/w/.git/hooks/pre-commit",
            "/w/sub/.git/config.worktree",
            "/w/.git/modules/lib/config",
            "/w/.git/modules/lib/hooks/post-checkout",
            "/w/.git/modules/a/modules/b/config",
            "/w/.git/worktrees/wt/config.worktree",
            "/w/.git/commondir",
            "/w/.git/worktrees/wt/commondir",
            "/w/.git/worktrees/wt/gitdir",
            "/w/.git/worktrees/wt",
            "/w/.git/worktrees",
            "/w/.git/modules/lib/commondir",
            "/w/.git/modules/lib",
            "/w/.git",
            "/w/wt/.git",
        ] {
            assert!(is_git_protected(Path::new(p)), "{p}");
        }
        for p in [
            "/w/.git/worktrees/wt/index",
            "/w/.git/worktrees/wt/HEAD",
            "/w/.git/index",
            "/w/.git/objects/ab/cdef",
            "/w/.git/refs/heads/main",
            "/w/config",
            "/w/hooks/pre-commit",
            "/w/.git/modules/lib/index",
            "/w/.gitconfig",
        ] {
            assert!(!is_git_protected(Path::new(p)), "{p}");
        }
    }

    proptest! {
        /// Whatever precedes `.git`, its config and hooks are protected and its objects
        /// are not.
        #[test]
        fn protection_is_by_place(prefix in proptest::collection::vec("[a-z.]{1,6}", 0..4),
                                  hook in "[a-z-]{1,12}") {
            let base: PathBuf = std::iter::once("/".to_string()).chain(prefix).collect();
            prop_assert!(is_git_protected(&base.join(".git/config")));
            prop_assert!(is_git_protected(&base.join(".git/hooks").join(&hook)));
            prop_assert!(!is_git_protected(&base.join(".git/objects").join(&hook)));
        }
    }
}
