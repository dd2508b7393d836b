//! `create_file`: write a whole file, creating parent directories, overwriting an
//! existing file (seed 000 D15, DESIGN §7).

use crate::error::{ToolError, ToolResult};
use crate::fsutil;
use crate::scope::ScopedPath;
use crate::text::lines::hash_bytes;
use crate::text::replace::{Eol, to_crlf, uniform_eol};
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, writes};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::borrow::Cow;
use std::fs;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateFileArgs {
    /// The file to create or overwrite: absolute, or relative to the working directory.
    pub path: String,
    /// The complete content of the file.
    pub content: String,
    /// Write nothing; return the unified diff the write would make.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub fn tool() -> Tool {
    define::<CreateFileArgs>(
        ToolName::CreateFile,
        "Create or overwrite a file",
        "Create a file with the given content, or overwrite an existing one. Parent \
         directories are created. New files get mode 0644; an existing file keeps its mode. \
         Overwriting an existing file requires viewing it first in this session. The write \
         is atomic. dry_run: true writes nothing and returns the diff.",
        writes("Create or overwrite a file", true),
    )
}

pub fn run(ctx: &Ctx, args: CreateFileArgs) -> ToolResult<CallToolResult> {
    let path = ctx.resolve(&args.path)?;
    write_whole_file(
        ctx,
        &path,
        args.content.as_bytes(),
        args.dry_run.unwrap_or(false),
    )
}

/// The shared body of `create_file` and `str_replace_editor create`.
pub fn write_whole_file(
    ctx: &Ctx,
    path: &ScopedPath,
    content: &[u8],
    dry_run: bool,
) -> ToolResult<CallToolResult> {
    let check_size = |content: &[u8]| {
        fsutil::check_size(
            content.len() as u64,
            ctx.max_file_size(),
            &path.shown,
            "create_file",
            "write a smaller file, or raise --max-file-size",
        )
    };
    check_size(content)?;
    let _edit = ctx.shared.edit_locks.lock(&path.real);
    // What the file held before (`None`: it did not exist), for the undo history and
    // a dry run's diff.
    let before = match crate::beneath::metadata(&path.real) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::invalid(format!(
                "{} is a directory; give a file path",
                path.shown.display()
            )));
        }
        Ok(meta) => {
            if let Some(kind) = fsutil::describe_special(&meta) {
                return Err(ToolError::invalid(format!(
                    "{} is {kind}, not a regular file; it is never written",
                    path.shown.display()
                )));
            }
            // An existing file is read whole (for undo) only within the size limit;
            // a larger one is overwritten without an undo step.
            let current = if ctx.shared.require_view || meta.len() <= ctx.max_file_size() {
                Some(fsutil::read_file(&path.real, &path.shown, meta.len())?)
            } else {
                None
            };
            if ctx.shared.require_view
                && let Some(current) = &current
            {
                ctx.ws.check_viewed(
                    &path.real,
                    &path.shown,
                    crate::text::line_index::FileStamp::of(&meta),
                    current,
                    "overwrite",
                )?;
            }
            Some(current)
        }
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e.into_tool(&path.shown, "write")),
    };
    let existed = before.is_some();
    let (content, eol_note) = match &before {
        Some(Some(old)) => keep_crlf(old, content),
        _ => (Cow::Borrowed(content), ""),
    };
    let content: &[u8] = &content;
    if !eol_note.is_empty() {
        // A CRLF rewrite is longer than the content checked above.
        check_size(content)?;
    }
    if dry_run {
        let diff = match &before {
            Some(Some(old)) => crate::tools::engine::edit::diff_text(ctx, path, Some(old), content),
            None => crate::tools::engine::edit::diff_text(ctx, path, None, content),
            // Not read: over --max-file-size (and view-before-edit is off).
            Some(None) => "(no diff: the existing file is over --max-file-size, so it was not \
                           read)\n"
                .to_string(),
        };
        return Ok(text_result(format!(
            "Dry run: nothing was written. {} {} would change as follows{eol_note}:\n{diff}",
            if existed { "Overwriting" } else { "Creating" },
            path.shown.display()
        )));
    }
    if let Some(parent) = path.real.parent() {
        // Made beneath the allowed root, no symlink followed (issue 25 §2).
        crate::beneath::create_dir_all(parent)
            .map_err(|e| e.into_tool(&path.shown, "create the parent directories of"))?;
        // The directories exist now: check once more where they really are, so a
        // symlink swapped in since the first check cannot redirect the write (off with
        // the rest in a test build's control).
        if !crate::beneath::unchecked() {
            let canon =
                fs::canonicalize(parent).map_err(|e| ToolError::io(&path.shown, "write", &e))?;
            ctx.shared.scope.check(
                &path.shown,
                &canon.join(path.real.file_name().unwrap_or_default()),
            )?;
        }
    }
    fsutil::atomic_write(&path.real, &path.shown, content)?;
    match &before {
        Some(Some(old)) => ctx.ws.record_write(&path.real, Some(old.clone()), content),
        Some(None) => ctx.ws.record_view(&path.real, hash_bytes(content)),
        None => ctx.ws.record_write(&path.real, None, content),
    }
    // Recorded under the file's lock; the language server is waited for without it.
    drop(_edit);
    let note = match &before {
        Some(Some(old)) => crate::tools::engine::code::after_write(ctx, path, Some(old), content),
        Some(None) => None,
        None => crate::tools::engine::code::after_write(ctx, path, None, content),
    };
    let lines = content.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!content.is_empty() && !content.ends_with(b"\n"));
    let result = text_result(format!(
        "{} {} ({} bytes, {lines} lines){eol_note}",
        if existed { "Overwrote" } else { "Created" },
        path.shown.display(),
        content.len()
    ));
    Ok(crate::tools::engine::code::with_diagnostics(result, note))
}

/// Content written over an existing file whose line breaks are all CRLF, when the new
/// content's are all bare `\n`, takes CRLF: a model rewriting a file cannot see its
/// CRs, and a CRLF-only format (`.bat`, `.sln`) must stay one. Content with any `\r\n`
/// of its own, a new file, an LF or mixed file: written as sent.
pub(crate) fn keep_crlf<'a>(old: &[u8], content: &'a [u8]) -> (Cow<'a, [u8]>, &'static str) {
    if content.contains(&b'\n')
        && memchr::memmem::find(content, b"\r\n").is_none()
        && uniform_eol(old) == Some(Eol::Crlf)
    {
        (
            Cow::Owned(to_crlf(content)),
            ", with CRLF line endings as the file had",
        )
    } else {
        (Cow::Borrowed(content), "")
    }
}
