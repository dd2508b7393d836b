//! The `glob` engine: files (or directories) whose path matches a glob, over the shared
//! walk (DESIGN §8). The tool (`tools::glob`) validates its arguments and calls [`find`].

use super::Cancelled;
use super::output::{self, ListStyle, MAX_RESULT_CHARS, Page};
use super::pattern::PathGlob;
use super::walk::{self, Root};
use crate::scope::Scope;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// Lists the files (`dirs`: the directories) below `root` matching `glob`, newest first
/// (ties by path), as absolute paths under the root as the agent named it, capped at
/// 30,000 characters.
pub fn find(
    root: &Root,
    scope: &Scope,
    glob: &PathGlob,
    dirs: bool,
    ct: &CancellationToken,
) -> Result<String, Cancelled> {
    let mut found = collect(root, scope, glob, dirs, true, ct)?;
    let (one, many) = if dirs {
        ("directory", "directories")
    } else {
        ("file", "files")
    };
    if found.is_empty() {
        return Ok(format!("No {many} found"));
    }
    // Newest first at full precision; ties by path (DESIGN §8).
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let entries: Vec<String> = found
        .iter()
        .map(|(p, _)| root.display(p).to_string_lossy().into_owned())
        .collect();
    let style = ListStyle {
        header: None,
        one,
        many,
        pageable: false,
        cap: MAX_RESULT_CHARS,
    };
    Ok(output::render_list(&entries, Page::default(), &style))
}

/// The files (`dirs`: the directories) below `root` matching `glob`, as walked (paths
/// under the root's real path; [`Root::display`] shows them) with their modification
/// times, in no particular order: for callers that order and show them their own way
/// (the gemini-cli profile's `glob`). `respect_ignore_files` as in [`walk::run_with`].
pub fn collect(
    root: &Root,
    scope: &Scope,
    glob: &PathGlob,
    dirs: bool,
    respect_ignore_files: bool,
    ct: &CancellationToken,
) -> Result<Vec<(PathBuf, SystemTime)>, Cancelled> {
    let (tx, rx) = std::sync::mpsc::channel::<(PathBuf, SystemTime)>();
    walk::run_with(root, scope, ct, respect_ignore_files, || {
        let tx = tx.clone();
        move |ent: ignore::DirEntry| {
            if ent.depth() == 0 {
                return;
            }
            let is_dir = ent.file_type().is_some_and(|t| t.is_dir());
            if is_dir != dirs {
                return;
            }
            let path = ent.path();
            let name = Path::new(ent.file_name());
            if glob.is_match(name, || root.relative(path), || root.display(path)) {
                let mtime = ent
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                let _ = tx.send((ent.into_path(), mtime));
            }
        }
    });
    drop(tx);
    let found: Vec<(PathBuf, SystemTime)> = rx.into_iter().collect();
    if ct.is_cancelled() {
        return Err(Cancelled);
    }
    Ok(found)
}
