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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Every denied path and every piece of protected git metadata under `roots`. Symlinks
/// are not followed (a link's target is checked where it lies); a denied directory is not
/// descended into.
pub fn find_protected(
    roots: &[PathBuf],
    deny: &Scope,
    protect_git: bool,
) -> Vec<(PathBuf, Protect)> {
    let mut out = Vec::new();
    let mut seen_git_dirs = Vec::new();
    for root in roots {
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if deny.is_denied(&path) {
                    out.push((path, Protect::Deny));
                    continue;
                }
                let name = entry.file_name();
                if protect_git && name == ".git" {
                    if kind.is_dir() {
                        git_dir(&path, &mut out, &mut seen_git_dirs);
                    } else if kind.is_file() {
                        linked_worktree(&path, roots, &mut out, &mut seen_git_dirs);
                    }
                    if !kind.is_dir() {
                        continue;
                    }
                }
                if kind.is_dir() {
                    stack.push(path);
                }
            }
        }
    }
    out
}

/// A git directory's protected files, and those of its submodules (`modules/*`).
fn git_dir(dir: &Path, out: &mut Vec<(PathBuf, Protect)>, seen: &mut Vec<PathBuf>) {
    if seen.iter().any(|s| s == dir) {
        return;
    }
    seen.push(dir.to_path_buf());
    for name in GIT_PROTECTED {
        let p = dir.join(name);
        if p.symlink_metadata().is_ok() {
            out.push((p, Protect::ReadOnly));
        }
    }
    if let Ok(modules) = std::fs::read_dir(dir.join("modules")) {
        for m in modules.flatten() {
            if m.file_type().is_ok_and(|t| t.is_dir()) {
                git_dir(&m.path(), out, seen);
            }
        }
    }
}

/// A linked worktree's `.git` file (`gitdir: <common>/worktrees/<name>`): its own
/// `config.worktree`, and the common directory's metadata when it lies in the writable
/// trees (outside them it is read-only anyway).
fn linked_worktree(
    dotgit: &Path,
    roots: &[PathBuf],
    out: &mut Vec<(PathBuf, Protect)>,
    seen: &mut Vec<PathBuf>,
) {
    let Ok(text) = std::fs::read_to_string(dotgit) else {
        return;
    };
    let Some(gitdir) = text.lines().find_map(|l| l.strip_prefix("gitdir:")) else {
        return;
    };
    let base = dotgit.parent().unwrap_or(Path::new("/"));
    let gitdir = base.join(gitdir.trim());
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    if inside(&gitdir) {
        git_dir(&gitdir, out, seen);
    }
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .map(|c| gitdir.join(c.trim()))
        .ok()
        .and_then(|c| c.canonicalize().ok());
    if let Some(common) = common
        && inside(&common)
    {
        git_dir(&common, out, seen);
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
