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
/// whole root is granted.
pub fn read_rules(read: &[PathBuf], hidden: &[PathBuf], namespaces: bool) -> Vec<PathBuf> {
    if !read.is_empty() {
        let mut out: Vec<PathBuf> = read.to_vec();
        out.extend(SYSTEM_READ.iter().map(PathBuf::from));
        return out;
    }
    if namespaces || hidden.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let mut out = Vec::new();
    grant_all_but(Path::new("/"), hidden, &mut out);
    out
}

/// Grants `dir`'s entries, descending into those that lead to a hidden path.
fn grant_all_but(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if hidden.iter().any(|h| h == &path) {
            continue;
        }
        let leads_to_hidden = hidden.iter().any(|h| h.starts_with(&path));
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if leads_to_hidden && is_dir {
            grant_all_but(&path, hidden, out);
        } else {
            out.push(path);
        }
    }
}

/// How a found path is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protect {
    /// Denied by `--deny-dir`: nothing of it may be read.
    Deny,
    /// Git metadata that would run code outside the sandbox later: read-only.
    ReadOnly,
}

/// Git files a command must not write: what `git` would run later, outside the sandbox
/// (`core.hooksPath`, `core.fsmonitor`, `core.sshCommand`, filters in `config`; scripts in
/// `hooks/`).
pub const GIT_PROTECTED: &[&str] = &["config", "config.worktree", "hooks"];

/// What one directory holds that must be protected, and its subdirectories to look in
/// next. Symlinks are not followed (a link's target is checked where it lies); a denied
/// directory is not descended into, nor a `.git` directory but for its submodules'.
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
        match classify(&path, deny, protect_git) {
            Some(Protect::Deny) => {
                found.push((path, Protect::Deny));
                continue;
            }
            Some(Protect::ReadOnly) => {
                found.push((path, Protect::ReadOnly));
                continue;
            }
            None => {}
        }
        if protect_git && entry.file_name() == ".git" && kind.is_file() {
            linked_worktree(&path, roots, found);
            continue;
        }
        // Inside a git directory only submodules' git directories matter.
        let worth_it = !in_git
            || entry.file_name() == "modules"
            || dir.file_name().is_some_and(|n| n == "modules");
        if kind.is_dir() && worth_it {
            subdirs.push(path);
        }
    }
}

/// How `path` must be protected, by its name alone.
pub fn classify(path: &Path, deny: &Scope, protect_git: bool) -> Option<Protect> {
    if deny.is_denied(path) {
        Some(Protect::Deny)
    } else if protect_git && is_git_protected(path) {
        Some(Protect::ReadOnly)
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

/// A linked worktree's `.git` file (`gitdir: <common>/worktrees/<name>`): that
/// directory's `config.worktree`, and the common directory's config and hooks, when they
/// lie in the writable trees (outside them they are read-only anyway).
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
        if !inside(&dir) {
            continue;
        }
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
                (".git/config".into(), Protect::ReadOnly),
                (".git/hooks".into(), Protect::ReadOnly),
                ("secrets".into(), Protect::Deny),
                ("src/.env".into(), Protect::Deny),
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

    #[test]
    fn hiding_a_path_grants_its_siblings() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["a/hide/x", "a/keep", "b"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let mut out = Vec::new();
        grant_all_but(&root, &[root.join("a/hide")], &mut out);
        out.sort();
        assert_eq!(out, vec![root.join("a/keep"), root.join("b")]);
        assert_eq!(read_rules(&[], &[], false), vec![PathBuf::from("/")]);
    }
}

/// Whether `path` is git metadata the sandbox keeps read-only: under a `.git` directory,
/// its `config`, `config.worktree` or anything in `hooks/`, and the same in a submodule's
/// (`modules/<name>/…`) or a linked worktree's (`worktrees/<name>/config.worktree`)
/// directory. Pure: the file tools refuse the same writes the sandbox's mounts do.
pub fn is_git_protected(path: &Path) -> bool {
    let parts: Vec<&std::ffi::OsStr> = path.iter().collect();
    parts
        .iter()
        .enumerate()
        .any(|(i, part)| *part == ".git" && protected_inside(&parts[i + 1..]))
}

fn protected_inside(rest: &[&std::ffi::OsStr]) -> bool {
    match rest {
        [] => false,
        [name] => *name == "config" || *name == "config.worktree" || *name == "hooks",
        [first, ..] if *first == "hooks" => true,
        // modules/<name>/… (nested submodules too).
        [first, _name, tail @ ..] if *first == "modules" => protected_inside(tail),
        [first, _name, tail @ ..] if *first == "worktrees" => protected_inside(tail),
        _ => false,
    }
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
        ] {
            assert!(is_git_protected(Path::new(p)), "{p}");
        }
        for p in [
            "/w/.git",
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
