//! `str_replace`: replace an exact string in a file (seed 000 D14, DESIGN §7).

use super::{Ctx, define, text_result, writes};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fsutil;
use crate::scope::ScopedPath;
use crate::text::line_index::FileStamp;
use crate::text::lines::{hash_bytes, line_of_offset, numbered_excerpt};
use crate::text::replace::{self, ReplaceError};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StrReplaceArgs {
    /// The file to edit: absolute, or relative to the working directory.
    pub path: String,
    /// The exact text to replace, including whitespace and indentation. It must occur
    /// exactly once unless replace_all is true.
    pub old_str: String,
    /// The replacement text. Empty or omitted deletes old_str.
    #[serde(default)]
    pub new_str: Option<String>,
    /// Replace every occurrence instead of requiring a unique match.
    #[serde(default)]
    pub replace_all: Option<bool>,
}

pub fn tool() -> Tool {
    define::<StrReplaceArgs>(
        "str_replace",
        "Replace text in a file",
        "Replace an exact string in a file. old_str must match the file byte for byte \
         (whitespace included) and occur exactly once, unless replace_all is true. new_str \
         empty or omitted deletes the text. The file must have been viewed in this session and \
         not changed on disk since. Line endings, encoding and file mode are preserved.",
        writes("Replace text in a file", false),
    )
}

/// Lines of context around an edit in the success snippet.
const SNIPPET_CONTEXT: usize = 4;

pub fn run(ctx: &Ctx, args: StrReplaceArgs) -> ToolResult<CallToolResult> {
    if args.old_str.is_empty() {
        return Err(ToolError::invalid(
            "old_str must not be empty; to write a whole file use create_file",
        ));
    }
    let new_str = args.new_str.unwrap_or_default();
    if new_str == args.old_str {
        return Err(ToolError::invalid(
            "old_str and new_str are identical; there is nothing to change",
        ));
    }
    let path = ctx.resolve(&args.path)?;
    let _edit = ctx.shared.edit_locks.lock(&path.real);
    let (content, meta) = read_for_edit(ctx, &path, "edit")?;

    let done = replace::replace(
        &content,
        args.old_str.as_bytes(),
        new_str.as_bytes(),
        args.replace_all.unwrap_or(false),
    )
    .map_err(|e| miss_error(&path, &content, &args.old_str, e))?;

    fsutil::atomic_write_over(&path.real, &path.shown, &done.content, Some(&meta))?;
    ctx.ws.record_view(&path.real, hash_bytes(&done.content));

    if args.replace_all.unwrap_or(false) {
        let noun = if done.count == 1 {
            "occurrence"
        } else {
            "occurrences"
        };
        return Ok(text_result(format!(
            "Replaced {} {noun} in {}",
            done.count,
            path.shown.display()
        )));
    }
    let first = line_of_offset(&done.content, done.first_at);
    let last = line_of_offset(
        &done.content,
        done.first_at + done.new_len.saturating_sub(1),
    );
    let excerpt = numbered_excerpt(
        &done.content,
        first.saturating_sub(SNIPPET_CONTEXT).max(1),
        last + SNIPPET_CONTEXT,
    );
    let crlf = if done.crlf {
        " (matched with the file's CRLF line endings)"
    } else {
        ""
    };
    Ok(text_result(format!(
        "Edited {}: replaced 1 occurrence at line {first}{crlf}. The lines around it now read:\n{excerpt}",
        path.shown.display()
    )))
}

/// Reads an existing regular file for an edit, after the size limit and the
/// view-before-edit rule; with the metadata the read went by, for the write.
pub fn read_for_edit(
    ctx: &Ctx,
    path: &ScopedPath,
    verb: &str,
) -> ToolResult<(Vec<u8>, std::fs::Metadata)> {
    let meta = fsutil::regular_file_meta(&path.real, &path.shown)?;
    fsutil::check_size(
        meta.len(),
        ctx.max_file_size(),
        &path.shown,
        "editing",
        "edit it with a shell tool, or raise --max-file-size",
    )?;
    let content = fsutil::read_file(&path.real, &path.shown, meta.len())?;
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
        ReplaceError::NotFound => {
            let text = String::from_utf8_lossy(content);
            let hint = match replace::closest_region(&text, old) {
                Some(c) => {
                    let how = if c.whitespace_only {
                        "matches except for leading/trailing whitespace (indentation)".to_string()
                    } else if c.matching_lines > 0 {
                        format!(
                            "has {} of old_str's {} lines",
                            c.matching_lines, c.old_lines
                        )
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
                None => " No similar region was found; view the file to check its current content."
                    .to_string(),
            };
            ToolError::new(
                ErrorCode::StrReplaceNotFound,
                format!(
                    "old_str was not found in {}; it must match exactly, whitespace included.{hint}",
                    path.shown.display()
                ),
            )
        }
    }
}
