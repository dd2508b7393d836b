//! The directory walk `grep` and `glob` share: ripgrep's `ignore` crate, in parallel,
//! with the rules of seed 002 decisions 2, 6, 14 and 15 and DESIGN §8:
//!
//! - `.gitignore` (nested, negations, directory-only patterns), `.ignore` and
//!   `.git/info/exclude` apply whether or not the tree is a git repository
//!   (`require_git(false)`); `.gitignore` files of parent directories apply as ripgrep
//!   reads them. The user's global git excludes file does not (results must not depend
//!   on the machine's home directory).
//! - `.git` and `node_modules` are never entered (below the root); hidden files are
//!   searched.
//! - Symlinks are followed; a link back to an ancestor is a loop and is skipped (the
//!   walker detects it). A link whose target lies outside the allowed directories (and
//!   outside the search root) is skipped.
//! - Denied paths (`--deny-dir`) are skipped silently: checked on the path as walked, the
//!   path as the agent named it, and the real path behind a symlink.

use crate::error::{ToolError, ToolResult};
use crate::scope::{Scope, ScopedPath};
use ignore::{DirEntry, WalkBuilder, WalkState};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;

/// Directory names never entered below the search root (seed 002 decision 2).
pub const SKIPPED_NAMES: &[&str] = &[".git", "node_modules"];

/// The search root: a directory or a single file, already checked against the scope.
#[derive(Debug, Clone)]
pub struct Root {
    /// Absolute, as the agent named it: results are shown under it.
    pub shown: PathBuf,
    /// Every symlink resolved: what is walked.
    pub real: PathBuf,
    pub is_dir: bool,
}

impl Root {
    /// Opens a root the caller resolved and checked against the scope. One that is
    /// missing or cannot be read is an error (seed 002 decision 6); `action` names what
    /// failed in its message.
    pub fn open(p: ScopedPath, action: &str) -> ToolResult<Root> {
        // Opened beneath its allowed root (issue 25 §2): readable, and what was checked.
        let (_, meta) =
            crate::beneath::open_read(&p.real).map_err(|e| e.into_tool(&p.shown, action))?;
        if !meta.is_dir() && !meta.is_file() {
            return Err(ToolError::invalid(format!(
                "{} is not a regular file or a directory",
                p.shown.display()
            )));
        }
        Ok(Root {
            shown: p.shown,
            real: p.real,
            is_dir: meta.is_dir(),
        })
    }

    /// The path relative to the root of an entry the walk found (empty for the root).
    pub fn relative<'a>(&self, walked: &'a Path) -> &'a Path {
        walked.strip_prefix(&self.real).unwrap_or(walked)
    }

    /// How an entry the walk found is shown: under the root as the agent named it.
    pub fn display(&self, walked: &Path) -> PathBuf {
        let rel = self.relative(walked);
        if rel.as_os_str().is_empty() {
            self.shown.clone()
        } else {
            self.shown.join(rel)
        }
    }
}

/// Walks `root` in parallel with every rule above, handing each entry found (the root
/// included) to a visitor; `make` makes one visitor per walker thread. Stops early when
/// `ct` is cancelled.
pub fn run<'s, M, V>(root: &Root, scope: &Scope, ct: &'s CancellationToken, make: M)
where
    M: FnMut() -> V,
    V: FnMut(DirEntry) + Send + 's,
{
    run_with(root, scope, ct, true, make)
}

/// [`run`], with the ignore files (`.gitignore`, `.ignore`, `.git/info/exclude`) applied
/// or not (`respect_ignore_files`: Gemini CLI's `no_ignore`, `respect_git_ignore`).
/// `.git` and `node_modules`, the scope and the denied paths apply either way.
pub fn run_with<'s, M, V>(
    root: &Root,
    scope: &Scope,
    ct: &'s CancellationToken,
    respect_ignore_files: bool,
    mut make: M,
) where
    M: FnMut() -> V,
    V: FnMut(DirEntry) + Send + 's,
{
    let mut wb = WalkBuilder::new(&root.real);
    wb.standard_filters(respect_ignore_files)
        .hidden(false)
        .git_global(false)
        .require_git(false)
        .follow_links(true);
    // The filter runs before a directory is read; it must own what it checks.
    let guard = Guard::new(scope.clone(), root);
    wb.filter_entry(move |ent| guard.admit(ent));
    wb.build_parallel().run(|| {
        let mut visit = make();
        Box::new(move |entry| {
            if ct.is_cancelled() {
                return WalkState::Quit;
            }
            if let Ok(ent) = entry {
                visit(ent);
            }
            WalkState::Continue
        })
    });
}

/// Decides, for every entry below the root, whether the walk may see it.
struct Guard {
    scope: Scope,
    root_real: PathBuf,
    root_shown: PathBuf,
    /// Deny patterns exist (otherwise no path needs matching).
    deny: bool,
    /// Symlinked directories followed so far: (path as walked, real path). Only kept
    /// when there are deny patterns, to check what lies behind them.
    links: RwLock<Vec<(PathBuf, PathBuf)>>,
    has_links: AtomicBool,
}

impl Guard {
    fn new(scope: Scope, root: &Root) -> Self {
        let deny = !scope.deny_patterns().is_empty();
        Guard {
            scope,
            root_real: root.real.clone(),
            root_shown: root.shown.clone(),
            deny,
            links: RwLock::new(Vec::new()),
            has_links: AtomicBool::new(false),
        }
    }

    fn admit(&self, ent: &DirEntry) -> bool {
        let name = ent.file_name();
        if SKIPPED_NAMES.iter().any(|s| name == *s) {
            return false;
        }
        let scope = &self.scope;
        let path = ent.path();
        if crate::beneath::is_private(path, &self.root_real) {
            return false;
        }
        if self.deny {
            if scope.is_denied(path) {
                return false;
            }
            if self.root_shown != self.root_real
                && let Ok(rel) = path.strip_prefix(&self.root_real)
                && scope.is_denied(&self.root_shown.join(rel))
            {
                return false;
            }
        }
        if ent.path_is_symlink() {
            let Ok(real) = fs::canonicalize(path) else {
                return false;
            };
            if !(scope.is_allowed(&real) || real.starts_with(&self.root_real)) {
                return false;
            }
            if self.deny {
                if scope.is_denied(&real) {
                    return false;
                }
                if ent.file_type().is_some_and(|t| t.is_dir()) {
                    let mut links = self.links.write().unwrap_or_else(|e| e.into_inner());
                    links.push((path.to_path_buf(), real));
                    self.has_links.store(true, Ordering::Release);
                }
            }
        } else if self.deny
            && self.has_links.load(Ordering::Acquire)
            && let Some(real) = self.real_behind_link(path)
            && scope.is_denied(&real)
        {
            return false;
        }
        true
    }

    /// The real path of an entry below a followed symlinked directory (the deepest one).
    fn real_behind_link(&self, path: &Path) -> Option<PathBuf> {
        let links = self.links.read().unwrap_or_else(|e| e.into_inner());
        links
            .iter()
            .filter(|(link, _)| path.starts_with(link))
            .max_by_key(|(link, _)| link.components().count())
            .and_then(|(link, real)| path.strip_prefix(link).ok().map(|rest| real.join(rest)))
    }
}
