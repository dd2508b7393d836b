//! The edit engine every profile's edit tools share (`str_replace`, `multi_edit`,
//! Claude Code's `Edit`, Gemini CLI's `replace`, `apply_patch`, `create_file`, …): one
//! replacement or an edit list, checked, applied in memory, written once; the diff and
//! the closest-text hint of a miss.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fsutil;
use crate::scope::ScopedPath;
use crate::text::line_index::FileStamp;
use crate::text::lines::{line_of_offset, numbered_excerpt};
use crate::text::replace::{self, ReplaceError};
use crate::tools::{Ctx, text_result};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;

// One edit of an edit list; inlined in the schema (no `$ref`), which every client reads.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct EditSpec {
    /// The exact text to replace; it must occur once (after the edits before it) unless
    /// replace_all.
    #[serde(alias = "old_string")]
    pub old_str: String,
    /// The replacement (empty or omitted: delete old_str).
    #[serde(default, alias = "new_string")]
    pub new_str: Option<String>,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// The longest diff a result shows; past it the diff is cut at a line and says so.
const MAX_DIFF_CHARS: usize = 30_000;

/// The one edit engine (also for other profiles' edit tools): a single replacement
/// (`list` false) or an edit list, checked, applied in memory, then written once (or,
/// for a dry run, shown as a diff).
pub fn edit_file(
    ctx: &Ctx,
    path: &ScopedPath,
    changes: &[EditSpec],
    list: bool,
    dry_run: bool,
) -> ToolResult<CallToolResult> {
    let n = changes.len();
    let change = change_file(ctx, path, changes, list, !dry_run, &|_| Ok(()))?;
    let Change {
        before: content,
        after: new_content,
        steps: done,
        lock,
    } = change;
    if dry_run {
        let diff = diff_text(ctx, path, Some(&content), &new_content);
        return Ok(text_result(format!(
            "Dry run: nothing was written. {} would change {} as follows:\n{diff}",
            if n == 1 { "The edit" } else { "The edits" },
            path.shown.display()
        )));
    }
    let result = if list {
        let diff = diff_text(ctx, path, Some(&content), &new_content);
        let crlf: Vec<String> = done
            .iter()
            .enumerate()
            .filter(|(_, d)| d.crlf)
            .map(|(i, _)| (i + 1).to_string())
            .collect();
        let crlf = if crlf.is_empty() {
            String::new()
        } else {
            format!(
                " (edit {} matched with the file's CRLF line endings)",
                crlf.join(", ")
            )
        };
        format!(
            "Edited {}: applied {n} edit{}{crlf}.\n{diff}",
            path.shown.display(),
            if n == 1 { "" } else { "s" }
        )
    } else {
        single_result(
            ctx,
            path,
            &done[0],
            &content,
            &new_content,
            changes[0].replace_all.unwrap_or(false),
        )
    };
    // The old bytes move into the undo history; a copy is kept only when a language
    // server will compare them (a second copy of a 20 MB file was issue 28 §8's 3.0×).
    let checked_before = crate::tools::engine::code::covered(ctx, path).then(|| content.clone());
    ctx.ws.record_write(&path.real, Some(content), &new_content);
    // The language server's answer is waited for without the file's lock: another edit
    // of the file need not wait for it.
    drop(lock);
    let note = match checked_before {
        Some(before) => {
            crate::tools::engine::code::after_write(ctx, path, Some(&before), &new_content)
        }
        None => None,
    };
    Ok(crate::tools::engine::code::with_diagnostics(
        text_result(result),
        note,
    ))
}

/// What an edit did to a file: its bytes before and after, and each edit's record. The
/// file's edit lock is held until it is dropped, so the caller records the write (the
/// undo step, the new view record) before anyone else edits the file.
pub struct Change<'a> {
    pub before: Vec<u8>,
    pub after: Vec<u8>,
    pub steps: Vec<replace::Replaced>,
    /// The file's edit lock: drop it (after recording the write) before anything slow,
    /// such as waiting for a language server.
    pub lock: std::sync::MutexGuard<'a, ()>,
}

/// The checks of an edit (empty or identical strings, scope, size, view-before-edit,
/// matching), then `check` on the applied result (another profile's own rule, such as a
/// replacement count), then — when `write` — the atomic write. Nothing is recorded in
/// the workspace: the caller does that (`ctx.ws.record_write`) with what it got.
pub fn change_file<'a>(
    ctx: &'a Ctx,
    path: &ScopedPath,
    changes: &[EditSpec],
    list: bool,
    write: bool,
    check: &dyn Fn(&replace::Applied) -> ToolResult<()>,
) -> ToolResult<Change<'a>> {
    let n = changes.len();
    if n == 0 {
        return Err(ToolError::invalid(
            "edits is empty; give at least one {old_str, new_str} edit",
        ));
    }
    let which = |i: usize| {
        if list {
            format!("edit {} of {n}: ", i + 1)
        } else {
            String::new()
        }
    };
    for (i, c) in changes.iter().enumerate() {
        if c.old_str.is_empty() {
            return Err(ToolError::invalid(format!(
                "{}old_str must not be empty; to write a whole file use create_file",
                which(i)
            )));
        }
        if c.new_str.as_deref().unwrap_or_default() == c.old_str {
            return Err(ToolError::invalid(format!(
                "{}old_str and new_str are identical; there is nothing to change",
                which(i)
            )));
        }
    }
    let edits: Vec<replace::Edit<'_>> = changes
        .iter()
        .map(|c| replace::Edit {
            old: c.old_str.as_bytes(),
            new: c.new_str.as_deref().unwrap_or_default().as_bytes(),
            replace_all: c.replace_all.unwrap_or(false),
        })
        .collect();

    let lock = ctx.shared.edit_locks.lock(&path.real);
    let (content, meta) = read_for_edit(ctx, path, "edit")?;
    let applied = replace::apply_edits(&content, &edits).map_err(|f| {
        let against = f.against.as_deref().unwrap_or(&content);
        let e = miss_error(path, against, &changes[f.index].old_str, f.error);
        if !list {
            return e;
        }
        // Line numbers in the hint are those of the text the earlier edits produced.
        let which_text = match f.index {
            0 => String::new(),
            1 => " (against the file as edit 1 left it)".to_string(),
            k => format!(" (against the file as edits 1-{k} left it)"),
        };
        let sep = if e.message.ends_with('\n') { "" } else { " " };
        ToolError::new(
            e.code,
            format!(
                "edit {} of {n}{which_text}: {}{sep}Nothing was written: {} is unchanged.",
                f.index + 1,
                e.message,
                path.shown.display()
            ),
        )
    })?;
    check(&applied)?;
    if write {
        fsutil::atomic_write_over(&path.real, &path.shown, &applied.content, Some(&meta))?;
    }
    Ok(Change {
        before: content,
        after: applied.content,
        steps: applied.steps,
        lock,
    })
}

/// The result of one successful replacement: the count for replace_all, else the line
/// and the unified diff of the change. The diff replaced the numbered snippet of the
/// lines around the edit (issue 15 §3): on the real-edit replay (`bench/edit_replay.py`,
/// BENCHMARKS.md) it costs 11% fewer characters per edit and is shorter for 77% of edits.
fn single_result(
    ctx: &Ctx,
    path: &ScopedPath,
    done: &replace::Replaced,
    before: &[u8],
    content: &[u8],
    replace_all: bool,
) -> String {
    if replace_all {
        let noun = if done.count == 1 {
            "occurrence"
        } else {
            "occurrences"
        };
        return format!("Replaced {} {noun} in {}", done.count, path.shown.display());
    }
    let first = line_of_offset(content, done.first_at);
    let crlf = if done.crlf {
        " (matched with the file's CRLF line endings)"
    } else {
        ""
    };
    format!(
        "Edited {}: replaced 1 occurrence at line {first}{crlf}.\n{}",
        path.shown.display(),
        diff_text(ctx, path, Some(before), content)
    )
}

/// The unified diff of a change to `path`, as results show it: labelled by the path
/// relative to the working directory (or the absolute path without its leading `/`),
/// cut at a line past [`MAX_DIFF_CHARS`].
pub fn diff_text(ctx: &Ctx, path: &ScopedPath, old: Option<&[u8]>, new: &[u8]) -> String {
    let diff = crate::text::diff::unified(old, new, &diff_label(ctx, &path.shown));
    if diff.is_empty() {
        return "(no change)\n".to_string();
    }
    bound_diff(diff)
}

/// How a diff names a file: relative to the working directory, or the absolute path
/// without its leading `/`.
pub fn diff_label(ctx: &Ctx, shown: &std::path::Path) -> String {
    let cwd = ctx.ws.cwd();
    shown
        .strip_prefix(&cwd)
        .unwrap_or_else(|_| shown.strip_prefix("/").unwrap_or(shown))
        .display()
        .to_string()
}

/// A diff cut at a line past [`MAX_DIFF_CHARS`], saying so.
pub fn bound_diff(diff: String) -> String {
    if diff.len() <= MAX_DIFF_CHARS {
        return diff;
    }
    let mut end = MAX_DIFF_CHARS;
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    let cut = diff[..end].rfind('\n').map_or(0, |i| i + 1);
    let mut out = diff[..cut].to_string();
    out.push_str(&format!(
        "[diff cut at {cut} of {} bytes; view the file for the rest]\n",
        diff.len()
    ));
    out
}

/// Reads an existing regular file for an edit, after the size limit and the
/// view-before-edit rule; with the metadata the read went by, for the write.
pub fn read_for_edit(
    ctx: &Ctx,
    path: &ScopedPath,
    verb: &str,
) -> ToolResult<(Vec<u8>, std::fs::Metadata)> {
    let (file, meta) = fsutil::open_regular(&path.real, &path.shown)?;
    fsutil::check_size(
        meta.len(),
        ctx.max_file_size(),
        &path.shown,
        "editing",
        "edit it with a shell tool, or raise --max-file-size",
    )?;
    let content = fsutil::read_open(file, &path.shown, meta.len())?;
    if ctx.shared.require_view {
        ctx.ws.check_viewed(
            &path.real,
            &path.shown,
            FileStamp::of(&meta),
            &content,
            verb,
        )?;
    }
    Ok((content, meta))
}

fn miss_error(path: &ScopedPath, content: &[u8], old: &str, e: ReplaceError) -> ToolError {
    match e {
        ReplaceError::Ambiguous { count, lines } => {
            let listed = lines
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let more = if count > lines.len() { ", …" } else { "" };
            ToolError::new(
                ErrorCode::StrReplaceAmbiguous,
                format!(
                    "old_str occurs {count} times in {} (at lines {listed}{more}); include more \
                     surrounding lines to make it unique, or set replace_all to true",
                    path.shown.display()
                ),
            )
        }
        ReplaceError::NotFound => ToolError::new(
            ErrorCode::StrReplaceNotFound,
            format!(
                "old_str was not found in {}; it must match exactly, whitespace included.{}",
                path.shown.display(),
                closest_hint(content, old, "old_str")
            ),
        ),
    }
}

/// Where `old` (what was looked for, called `what`) most nearly is in `content`: " The
/// closest region, lines 3-5, has 2 of old_str's 3 lines:" and those lines, numbered;
/// or that nothing similar was found.
pub fn closest_hint(content: &[u8], old: &str, what: &str) -> String {
    let text = String::from_utf8_lossy(content);
    let Some(c) = replace::closest_region(&text, old) else {
        return " No similar region was found; view the file to check its current content."
            .to_string();
    };
    let how = if c.whitespace_only {
        "matches except for leading/trailing whitespace (indentation)".to_string()
    } else if c.matching_lines > 0 {
        format!("has {} of {what}'s {} lines", c.matching_lines, c.old_lines)
    } else {
        "is the most similar".to_string()
    };
    let last = c.last_line.min(c.first_line + 9);
    let span = if c.first_line == c.last_line {
        format!("line {}", c.first_line)
    } else {
        format!("lines {}-{}", c.first_line, c.last_line)
    };
    format!(
        " The closest region, {span}, {how}:\n{}",
        numbered_excerpt(content, c.first_line, last)
    )
}
