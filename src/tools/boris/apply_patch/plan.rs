//! A patch applied in memory, section by section, to the files as they are on disk (read
//! once, under the view-before-edit rule) and as the sections before left them: a file
//! added then updated, updated twice, moved then moved again. Nothing here writes.

use super::patch_error;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::scope::ScopedPath;
use crate::text::patch::{self, FileOp, Fuzz, HunkFailure, HunkMiss, Line, Patch};
use crate::tools::Ctx;
use crate::tools::engine::edit::{closest_hint, read_for_edit};
use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::path::PathBuf;

/// A file as it was on disk when the patch first touched it.
pub struct Disk {
    pub content: Vec<u8>,
    pub meta: Metadata,
}

/// What a file holds as the patch goes.
pub enum Now {
    AsOnDisk,
    Gone,
    Bytes(Vec<u8>),
}

pub struct FileState {
    pub path: ScopedPath,
    /// `None`: nothing was there.
    pub disk: Option<Disk>,
    pub now: Now,
    /// The file a move brought here (its index), whose mode it keeps.
    pub moved_from: Option<usize>,
}

impl FileState {
    pub fn now(&self) -> Option<&[u8]> {
        match &self.now {
            Now::AsOnDisk => self.disk.as_ref().map(|d| d.content.as_slice()),
            Now::Gone => None,
            Now::Bytes(b) => Some(b),
        }
    }

    pub fn changed(&self) -> bool {
        self.now() != self.disk.as_ref().map(|d| d.content.as_slice())
    }

    /// Whether an earlier section of this patch changed it.
    fn touched(&self) -> bool {
        !matches!(self.now, Now::AsOnDisk)
    }
}

/// What one section did, for the result's lines.
pub enum Summary {
    Added {
        file: usize,
        lines: usize,
        replaced: bool,
    },
    Updated {
        file: usize,
        hunks: usize,
        added: usize,
        removed: usize,
    },
    Moved {
        from: usize,
        to: usize,
        hunks: usize,
        added: usize,
        removed: usize,
        replaced: bool,
    },
    Deleted {
        file: usize,
        lines: usize,
    },
}

pub struct Plan {
    pub files: Vec<FileState>,
    pub summaries: Vec<Summary>,
    /// (file, hunk 0-based, hunks of its section, how) for hunks that matched loosely.
    pub fuzz: Vec<(usize, usize, usize, Fuzz)>,
}

/// The resolved paths of one section: its file, and where it moves.
pub type Paths = (ScopedPath, Option<ScopedPath>);

pub fn build(ctx: &Ctx, patch: &Patch, paths: &[Paths]) -> ToolResult<Plan> {
    let mut plan = Plan {
        files: Vec::new(),
        summaries: Vec::new(),
        fuzz: Vec::new(),
    };
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for (op, (path, move_to)) in patch.files.iter().zip(paths) {
        let file = plan.state(ctx, &mut index, path, verb(op))?;
        match op {
            FileOp::Add { lines, no_eol, .. } => {
                let replaced = plan.files[file].now().is_some();
                let content = added_content(lines, *no_eol, op.ending_aware());
                let content = match (plan.files[file].now(), op.ending_aware()) {
                    (Some(old), false) => crate::tools::boris::create::keep_crlf(old, &content)
                        .0
                        .into_owned(),
                    _ => content,
                };
                plan.files[file].now = Now::Bytes(content);
                plan.summaries.push(Summary::Added {
                    file,
                    lines: lines.len(),
                    replaced,
                });
            }
            FileOp::Delete { .. } => {
                refuse_symlink(path, "delete")?;
                let lines = match plan.files[file].now() {
                    Some(c) => count_lines(c),
                    None => return Err(missing(path, "delete")),
                };
                plan.files[file].now = Now::Gone;
                plan.summaries.push(Summary::Deleted { file, lines });
            }
            FileOp::Update { chunks, .. } => {
                let st = &plan.files[file];
                let Some(content) = st.now() else {
                    return Err(missing(path, "update"));
                };
                let edit = patch::apply_chunks(content, chunks, op.ending_aware())
                    .map_err(|f| hunk_error(op, path, content, st.touched(), &f))?;
                let n = chunks.len();
                plan.fuzz
                    .extend(edit.fuzz.iter().map(|&(h, how)| (file, h, n, how)));
                let (added, removed) = (edit.added, edit.removed);
                let to = move_to.as_ref().filter(|to| to.real != path.real);
                match to {
                    None => {
                        plan.files[file].now = Now::Bytes(edit.content);
                        plan.summaries.push(Summary::Updated {
                            file,
                            hunks: n,
                            added,
                            removed,
                        });
                    }
                    Some(to) => {
                        refuse_symlink(path, "move")?;
                        let dest = plan.state(ctx, &mut index, to, "overwrite")?;
                        let replaced = plan.files[dest].now().is_some();
                        plan.files[dest].now = Now::Bytes(edit.content);
                        plan.files[dest].moved_from = Some(file);
                        plan.files[file].now = Now::Gone;
                        plan.summaries.push(Summary::Moved {
                            from: file,
                            to: dest,
                            hunks: n,
                            added,
                            removed,
                            replaced,
                        });
                    }
                }
            }
        }
    }
    Ok(plan)
}

impl Plan {
    /// The state of `path`, read from disk at its first use (after the size limit and
    /// the view-before-edit rule, for a file that exists).
    fn state(
        &mut self,
        ctx: &Ctx,
        index: &mut HashMap<PathBuf, usize>,
        path: &ScopedPath,
        verb: &str,
    ) -> ToolResult<usize> {
        if let Some(&i) = index.get(&path.real) {
            return Ok(i);
        }
        let disk = match crate::beneath::metadata(&path.real) {
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e.into_tool(&path.shown, "read")),
            Ok(_) => {
                let (content, meta) = read_for_edit(ctx, path, verb)?;
                Some(Disk { content, meta })
            }
        };
        self.files.push(FileState {
            path: path.clone(),
            disk,
            now: Now::AsOnDisk,
            moved_from: None,
        });
        index.insert(path.real.clone(), self.files.len() - 1);
        Ok(self.files.len() - 1)
    }

    /// The mode a write of file `i` keeps: a moved file's own, else what was there.
    pub fn mode_of(&self, i: usize) -> Option<&Metadata> {
        let from = self.files[i].moved_from.unwrap_or(i);
        self.files[from]
            .disk
            .as_ref()
            .or(self.files[i].disk.as_ref())
            .map(|d| &d.meta)
    }
}

fn verb(op: &FileOp) -> &'static str {
    match op {
        FileOp::Add { .. } => "overwrite",
        FileOp::Delete { .. } => "delete",
        FileOp::Update { .. } => "update",
    }
}

/// An added file's bytes: each line and its line break (`\r\n` where the patch gave a
/// CR, when it gives line endings at all).
fn added_content(lines: &[Line], no_eol: bool, aware: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        out.extend_from_slice(l.text.as_bytes());
        if k + 1 < lines.len() || !no_eol {
            out.extend_from_slice(if aware && l.cr { b"\r\n" } else { b"\n" });
        }
    }
    out
}

pub fn count_lines(content: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', content).count()
        + usize::from(!content.is_empty() && !content.ends_with(b"\n"))
}

fn missing(path: &ScopedPath, verb: &str) -> ToolError {
    let fix = if verb == "update" {
        "; to create it, use '*** Add File:'"
    } else {
        ""
    };
    ToolError::new(
        ErrorCode::PathNotFound,
        format!(
            "{} does not exist, so the patch cannot {verb} it{fix}. Nothing was written: no \
             file was changed.",
            path.shown.display()
        ),
    )
}

/// Deleting or moving a symlink would act on the file it points to, not the link.
fn refuse_symlink(path: &ScopedPath, verb: &str) -> ToolResult<()> {
    if fs::symlink_metadata(&path.shown).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ToolError::invalid(format!(
            "{} is a symlink; apply_patch does not {verb} links (the file it points to is \
             {}). Use a shell command for the link. Nothing was written.",
            path.shown.display(),
            path.real.display()
        )));
    }
    Ok(())
}

/// `[PATCH_HUNK_NOT_FOUND]`: which hunk of which file, why, and where the file comes
/// closest.
fn hunk_error(
    op: &FileOp,
    path: &ScopedPath,
    content: &[u8],
    touched: bool,
    f: &HunkFailure,
) -> ToolError {
    let FileOp::Update { chunks, .. } = op else {
        return ToolError::new(ErrorCode::Internal, "a hunk error outside an update");
    };
    let n = chunks.len();
    let hunk = &chunks[f.index];
    let which = if n == 1 {
        "the hunk".to_string()
    } else {
        format!("hunk {} of {n}", f.index + 1)
    };
    let after = if f.from_line > 1 {
        format!(" after line {}", f.from_line - 1)
    } else {
        String::new()
    };
    let as_left = if touched {
        " (line numbers of the file as the patch's earlier sections left it)"
    } else {
        ""
    };
    let (why, looked_for, what) = match &f.miss {
        HunkMiss::Anchor(a) => (
            format!("its @@ line '{a}' was not found{after}"),
            a.clone(),
            "the @@ line",
        ),
        HunkMiss::Lines { old, at_end } => (
            format!(
                "its context and removed lines were not found{}{after}, in order",
                if *at_end {
                    " at the end of the file"
                } else {
                    ""
                }
            ),
            old.clone(),
            "the hunk",
        ),
    };
    let hint = closest_hint(content, &looked_for, what);
    patch_error(
        ErrorCode::PatchHunkNotFound,
        format!(
            "{which} for {} (line {} of the patch) does not match: {why}{as_left}.{hint}{}",
            path.shown.display(),
            hunk.source_line,
            if hint.ends_with('\n') { "" } else { " " },
        ),
    )
}
