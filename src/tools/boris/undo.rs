//! `undo_edit` (and `str_replace_editor undo_edit`): puts back what a file held before
//! Boris's last write of it in this session (issue 15 §3), step by step. It never
//! destroys someone else's change: the file must still be exactly what Boris wrote.

use crate::beneath;
use crate::edit_history::{MAX_BYTES, MAX_STEPS_PER_FILE};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fsutil;
use crate::scope::ScopedPath;
use crate::text::lines::hash_bytes;
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, writes};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UndoEditArgs {
    /// The file whose last edit to undo: absolute, or relative to the working directory.
    pub path: String,
}

pub fn tool() -> Tool {
    define::<UndoEditArgs>(
        ToolName::UndoEdit,
        "Undo the last edit of a file",
        "Undo the last edit Boris made to a file in this session (str_replace, multi_edit, \
         create_file, insert, apply_patch): the file gets back the content it had before, \
         or, if that edit created it, is removed (if it removed the file, it comes back). Repeat to go further back (up to 10 steps per file). \
         Refused if the file changed on disk since Boris wrote it, so nobody else's change \
         is lost.",
        writes("Undo the last edit of a file", false),
    )
}

pub fn run(ctx: &Ctx, args: UndoEditArgs) -> ToolResult<CallToolResult> {
    let path = ctx.resolve(&args.path)?;
    undo(ctx, &path)
}

pub fn undo(ctx: &Ctx, path: &ScopedPath) -> ToolResult<CallToolResult> {
    let group = ctx.ws.history().last(&path.real).and_then(|s| s.group);
    if let Some(group) = group {
        return undo_group(ctx, group);
    }
    let shown = path.shown.display();
    let _edit = ctx.shared.edit_locks.lock(&path.real);
    let (after_hash, removed, before) = {
        let history = ctx.ws.history();
        match history.last(&path.real) {
            Some(step) => (step.after_hash, step.removed, step.before.clone()),
            None => {
                let dropped = history.dropped(&path.real);
                let why = if dropped > 0 {
                    format!(
                        "; {dropped} older edit{} of it {} dropped from the history, which \
                         keeps at most {MAX_STEPS_PER_FILE} steps per file and {} MiB per \
                         session",
                        plural(dropped),
                        if dropped == 1 { "was" } else { "were" },
                        MAX_BYTES / (1024 * 1024)
                    )
                } else {
                    String::new()
                };
                return Err(ToolError::invalid(format!(
                    "there is no edit of {shown} to undo in this session{why}"
                )));
            }
        }
    };
    // The file must hold exactly what Boris last wrote there.
    let changed = |what: &str| {
        ToolError::new(
            ErrorCode::FileChanged,
            format!(
                "{shown} {what} since Boris last wrote it, so undoing would lose that change; \
                 nothing was undone. View the file and edit it instead."
            ),
        )
    };
    if removed {
        // Boris removed it (apply_patch): nothing may be there again.
        return match beneath::metadata(&path.real) {
            Err(e) if e.is_not_found() => {
                let old = before.unwrap_or_default();
                if let Some(parent) = path.real.parent() {
                    beneath::create_dir_all(parent).map_err(|e| {
                        e.into_tool(&path.shown, "create the parent directories of")
                    })?;
                }
                fsutil::atomic_write(&path.real, &path.shown, &old)?;
                ctx.ws.record_view(&path.real, hash_bytes(&old));
                finish(
                    ctx,
                    path,
                    format!(
                        "restored {shown}, which that edit had removed ({} bytes)",
                        old.len()
                    ),
                )
            }
            Ok(_) => Err(changed("was created again")),
            Err(e) => Err(e.into_tool(&path.shown, "read")),
        };
    }
    let (file, meta) = match beneath::open_read(&path.real) {
        Ok(opened) => opened,
        Err(e) if e.is_not_found() => {
            return Err(changed("was deleted"));
        }
        Err(e) => return Err(e.into_tool(&path.shown, "read")),
    };
    fsutil::ensure_regular(&meta, &path.shown)?;
    let current = fsutil::read_open(file, &path.shown, meta.len())?;
    if hash_bytes(&current) != after_hash {
        return Err(changed("changed on disk"));
    }
    let restored = match &before {
        Some(old) => {
            fsutil::atomic_write_over(&path.real, &path.shown, old, Some(&meta))?;
            ctx.ws.record_view(&path.real, hash_bytes(old));
            format!(
                "restored {shown} to its content before that edit ({} bytes)",
                old.len()
            )
        }
        None => {
            beneath::remove_file(&path.real).map_err(|e| e.into_tool(&path.shown, "remove"))?;
            ctx.ws.forget_view(&path.real);
            format!("removed {shown}, which that edit had created")
        }
    };
    finish(ctx, path, restored)
}

/// Pops the undone step and says what is left to undo.
fn finish(ctx: &Ctx, path: &ScopedPath, restored: String) -> ToolResult<CallToolResult> {
    let mut history = ctx.ws.history();
    history.pop(&path.real);
    let left = history.depth(&path.real);
    let dropped = history.dropped(&path.real);
    let mut text = format!("Undid the last edit: {restored}. ");
    text.push_str(&match left {
        0 => "No earlier edit of it can be undone".to_string(),
        n => format!("{n} earlier edit{} of it can still be undone", plural(n)),
    });
    if dropped > 0 {
        text.push_str(&format!(
            "; {dropped} older edit{} {} dropped from the history (at most \
             {MAX_STEPS_PER_FILE} steps per file and {} MiB per session are kept)",
            plural(dropped),
            if dropped == 1 { "was" } else { "were" },
            MAX_BYTES / (1024 * 1024)
        ));
    }
    text.push('.');
    Ok(text_result(text))
}

/// Undoes a multi-file change (a rename, issue 20) as a whole: every file it wrote must
/// still hold what Boris wrote, or nothing is undone; then each gets its content back.
fn undo_group(ctx: &Ctx, group: u64) -> ToolResult<CallToolResult> {
    let files = ctx.ws.history().group_files(group);
    // By stripe, each once (fsutil::PathLocks::lock_many): files on one stripe would
    // otherwise lock it twice and wait forever.
    let _locks = ctx
        .shared
        .edit_locks
        .lock_many(files.iter().map(|f| f.as_path()));
    let mut plan = Vec::new();
    for real in &files {
        let Some((after_hash, before)) = ctx
            .ws
            .history()
            .last(real)
            .filter(|s| s.group == Some(group))
            .map(|s| (s.after_hash, s.before.clone()))
        else {
            continue;
        };
        let current = fsutil::read_file(real, real, 0).map_err(|_| {
            ToolError::new(
                ErrorCode::FileChanged,
                format!(
                    "{} was deleted since the rename wrote it; nothing was undone",
                    real.display()
                ),
            )
        })?;
        if hash_bytes(&current) != after_hash {
            return Err(ToolError::new(
                ErrorCode::FileChanged,
                format!(
                    "{} changed on disk since the rename wrote it, so undoing would lose that                      change; nothing was undone (the rename's files are undone together)",
                    real.display()
                ),
            ));
        }
        plan.push((real.clone(), before));
    }
    let mut restored = Vec::new();
    for (real, before) in &plan {
        let meta = beneath::metadata(real).ok();
        match before {
            Some(old) => {
                fsutil::atomic_write_over(real, real, old, meta.as_ref())?;
                ctx.ws.record_view(real, hash_bytes(old));
            }
            None => {
                beneath::remove_file(real).map_err(|e| e.into_tool(real, "remove"))?;
                ctx.ws.forget_view(real);
            }
        }
        ctx.ws.history().pop(real);
        restored.push(real.display().to_string());
    }
    Ok(text_result(format!(
        "Undid the rename across {} file{}: restored {} to their content before it.",
        restored.len(),
        plural(restored.len()),
        restored.join(", ")
    )))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
