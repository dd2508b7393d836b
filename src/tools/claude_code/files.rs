//! Claude Code's file tools over Boris's engines: `Read` (a range of `view`, a notebook's
//! cells, a PDF's pages), `Edit`, `MultiEdit`, `Write` and `NotebookEdit`, with the
//! profile's words for the engine's errors.

use super::READ_DEFAULT_LIMIT;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fsutil;
use crate::text::lines::hash_bytes;
use crate::text::notebook::{EditMode, Notebook, NotebookError};
use crate::tools::engine::view::{self, MoreNotice, Svg, ViewStyle};
use crate::tools::words::Words;
use crate::tools::{Ctx, text_result};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ReadArgs")]
pub struct ReadArgs {
    /// The file to read: absolute, or relative to the working directory.
    pub file_path: String,
    /// The line number to start reading from (1-based). Only for files too long to read
    /// at once.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// The number of lines to read (default 2000). Only for files too long to read at
    /// once.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// PDF files only: the pages to read, e.g. "3", "1-5" or "1,3,7-9" (at most 20 per
    /// call; required for PDFs over 10 pages).
    #[serde(default)]
    pub pages: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "EditArgs")]
pub struct EditArgs {
    /// The file to modify: absolute, or relative to the working directory.
    pub file_path: String,
    /// The text to replace, exactly as it is in the file.
    pub old_string: String,
    /// The text to replace it with (must differ from old_string).
    pub new_string: String,
    /// Replace every occurrence of old_string (default false).
    #[serde(default)]
    pub replace_all: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "MultiEditArgs")]
pub struct MultiEditArgs {
    /// The file to modify: absolute, or relative to the working directory.
    pub file_path: String,
    /// The edits, applied in order, each to the result of the ones before it.
    pub edits: Vec<MultiEditOne>,
}

/// One edit of a `MultiEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MultiEditOne {
    /// The text to replace, exactly as it is in the file (after the edits before it).
    pub old_string: String,
    /// The text to replace it with.
    pub new_string: String,
    /// Replace every occurrence of old_string (default false).
    #[serde(default)]
    pub replace_all: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "WriteArgs")]
pub struct WriteArgs {
    /// The file to write: absolute, or relative to the working directory.
    pub file_path: String,
    /// The content to write to the file.
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "NotebookEditArgs")]
pub struct NotebookEditArgs {
    /// The Jupyter notebook (.ipynb) to edit: absolute, or relative to the working
    /// directory.
    pub notebook_path: String,
    /// The id of the cell to replace or delete, or to insert after (as Read shows it).
    #[serde(default)]
    pub cell_id: Option<String>,
    /// The new source of the cell.
    pub new_source: String,
    /// The cell's type: code or markdown. Required for insert.
    #[serde(default)]
    #[schemars(schema_with = "cell_type_schema")]
    pub cell_type: Option<String>,
    /// replace (default), insert or delete.
    #[serde(default)]
    #[schemars(schema_with = "edit_mode_schema")]
    pub edit_mode: Option<String>,
}

fn cell_type_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["code", "markdown"],
        "description": "The cell's type: code or markdown. Required for insert."
    })
}

fn edit_mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["replace", "insert", "delete"],
        "description": "replace (default), insert or delete."
    })
}

/// Boris's words in an error message → Claude Code's, so the message names the
/// parameters and tools the model has (`old_string`, `Read`), not the engine's.
pub static WORDS: Words = Words::new(&[
    (r"\bview_range start\b", "offset"),
    (r"\bview_range\b", "offset and limit"),
    (r"\bold_str\b", "old_string"),
    (r"\bnew_str\b", "new_string"),
    (r"\bcreate_file\b", "Write"),
    (r"\bstr_replace\b", "Edit"),
    (r"\bhas not been viewed\b", "has not been read"),
    (r"\bview it\b", "Read it"),
    (r"\bview the file\b", "Read the file"),
    (r"\bview\b", "Read"),
]);

/// `Read`: a range of `view`, or a notebook's cells.
pub fn read(ctx: &Ctx, args: ReadArgs) -> ToolResult<CallToolResult> {
    if args.file_path.to_ascii_lowercase().ends_with(".pdf") || args.pages.is_some() {
        return read_pdf(ctx, &args.file_path, args.pages.as_deref());
    }
    if args.file_path.ends_with(".ipynb") && args.offset.is_none() && args.limit.is_none() {
        return read_notebook(ctx, &args.file_path);
    }
    let start = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(READ_DEFAULT_LIMIT);
    if start == 0 || limit == 0 {
        return Err(ToolError::invalid(
            "offset is the 1-based line to start at and limit a number of lines: both must be \
             at least 1",
        ));
    }
    let view_range = (args.offset.is_some() || args.limit.is_some()).then(|| {
        let end = start.saturating_add(limit - 1).min(i64::MAX as u64);
        vec![start.min(i64::MAX as u64) as i64, end as i64]
    });
    let viewed = view::read(
        ctx,
        view::ViewArgs {
            path: args.file_path,
            view_range,
        },
        ViewStyle::cat_n(Svg::AsText),
    )?;
    Ok(viewed.into_result(|text, more| match more {
        Some(more) => text + &read_notice(&more),
        None => text,
    }))
}

/// `view`'s closing notice of a cut range (`[Showing lines 1-2000 of 2500. To see more,
/// view with view_range [2001, 2500].]`) in Read's parameters: a model that follows it
/// must get the next page, and Read has no view_range.
pub fn read_notice(more: &MoreNotice) -> String {
    format!(
        "\n[Showing lines {}-{} of {}. To see more, Read with offset {} and limit {}.]\n",
        more.start,
        more.end,
        more.total,
        more.next,
        more.next_end.saturating_sub(more.next) + 1
    )
}

/// Pages one `Read` of a PDF shows at most, and how many a PDF may have to be read
/// whole (Claude Code's limits).
pub const PDF_MAX_PAGES_PER_READ: usize = 20;
pub const PDF_WHOLE_MAX_PAGES: usize = 10;

/// A PDF's text, by page.
fn read_pdf(ctx: &Ctx, file_path: &str, pages: Option<&str>) -> ToolResult<CallToolResult> {
    let (path, bytes) = read_whole(ctx, file_path, "raise --max-file-size to read it")?;
    if !bytes.starts_with(b"%PDF-") {
        if pages.is_some() {
            return Err(ToolError::invalid(format!(
                "pages is for PDF files, and {} is not one",
                path.shown.display()
            )));
        }
        return Err(ToolError::invalid(format!(
            "{} is named .pdf but is not a PDF file; read it with offset and limit",
            path.shown.display()
        )));
    }
    // The PDF parser is third-party code fed untrusted bytes: a panic is a bad file, not
    // a crash of the call.
    let texts = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(&bytes))
        .map_err(|_| "the PDF parser failed on it".to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .map_err(|why| {
            ToolError::invalid(format!(
                "cannot read the text of {}: {why}",
                path.shown.display()
            ))
        })?;
    let total = texts.len();
    let wanted = match pages {
        Some(spec) => crate::text::ranges::parse_pages(spec, total, PDF_MAX_PAGES_PER_READ)
            .map_err(ToolError::invalid)?,
        None if total > PDF_WHOLE_MAX_PAGES => {
            return Err(ToolError::invalid(format!(
                "{} has {total} pages; give pages (e.g. \"1-5\"), at most \
                 {PDF_MAX_PAGES_PER_READ} per call",
                path.shown.display()
            )));
        }
        None => (1..=total).collect(),
    };
    ctx.ws.record_view(&path.real, hash_bytes(&bytes));
    let mut out = String::new();
    for page in wanted {
        let text = texts.get(page - 1).map(|t| t.trim()).unwrap_or_default();
        out.push_str(&format!("--- page {page} of {total} ---\n{text}\n"));
    }
    Ok(text_result(out))
}

/// A whole file for `Read` (a PDF, a notebook): resolved for reading, a regular file,
/// within --max-file-size (`hint` says what to do instead).
fn read_whole(
    ctx: &Ctx,
    file_path: &str,
    hint: &str,
) -> ToolResult<(crate::scope::ScopedPath, Vec<u8>)> {
    let path = ctx.resolve_read(file_path)?;
    let meta = fsutil::regular_file_meta(&path.real, &path.shown)?;
    fsutil::check_size(meta.len(), ctx.max_file_size(), &path.shown, "Read", hint)?;
    let bytes = fsutil::read_file(&path.real, &path.shown, meta.len())?;
    Ok((path, bytes))
}

fn read_notebook(ctx: &Ctx, file_path: &str) -> ToolResult<CallToolResult> {
    let (path, bytes) = read_whole(
        ctx,
        file_path,
        "read it with offset and limit, or raise --max-file-size",
    )?;
    let notebook = Notebook::parse(&bytes).map_err(|e| notebook_error(&path.shown, e))?;
    ctx.ws.record_view(&path.real, hash_bytes(&bytes));
    Ok(text_result(notebook.render()))
}

/// `Edit`: `str_replace` under Claude Code's names.
pub fn edit(ctx: &Ctx, args: EditArgs) -> ToolResult<CallToolResult> {
    crate::tools::boris::edit::run(
        ctx,
        crate::tools::boris::edit::StrReplaceArgs {
            path: args.file_path,
            old_str: Some(args.old_string),
            new_str: Some(args.new_string),
            replace_all: args.replace_all,
            edits: None,
            dry_run: None,
        },
    )
}

/// `MultiEdit`: `multi_edit` under Claude Code's names.
pub fn multi_edit(ctx: &Ctx, args: MultiEditArgs) -> ToolResult<CallToolResult> {
    let edits: Vec<crate::tools::engine::edit::EditSpec> = args
        .edits
        .into_iter()
        .map(|e| crate::tools::engine::edit::EditSpec {
            old_str: e.old_string,
            new_str: Some(e.new_string),
            replace_all: e.replace_all,
        })
        .collect();
    let path = ctx.resolve(&args.file_path)?;
    crate::tools::engine::edit::edit_file(ctx, &path, &edits, true, false)
}

/// `Write`: `create_file` under Claude Code's names.
pub fn write(ctx: &Ctx, args: WriteArgs) -> ToolResult<CallToolResult> {
    crate::tools::boris::create::run(
        ctx,
        crate::tools::boris::create::CreateFileArgs {
            path: args.file_path,
            content: args.content,
            dry_run: None,
        },
    )
}

/// `NotebookEdit`: one cell edit, after the same checks as any edit (scope, size,
/// read-before-edit and staleness), written atomically.
pub fn notebook_edit(ctx: &Ctx, args: NotebookEditArgs) -> ToolResult<CallToolResult> {
    let mode = match args.edit_mode.as_deref().unwrap_or("replace") {
        "replace" => EditMode::Replace,
        "insert" => EditMode::Insert,
        "delete" => EditMode::Delete,
        other => {
            return Err(ToolError::invalid(format!(
                "edit_mode must be replace, insert or delete, got {other:?}"
            )));
        }
    };
    let path = ctx.resolve(&args.notebook_path)?;
    let _edit = ctx.shared.edit_locks.lock(&path.real);
    let (content, meta) = crate::tools::engine::edit::read_for_edit(ctx, &path, "edit")?;
    let mut notebook = Notebook::parse(&content).map_err(|e| notebook_error(&path.shown, e))?;
    let cell = notebook
        .edit(
            mode,
            args.cell_id.as_deref(),
            &args.new_source,
            args.cell_type.as_deref(),
        )
        .map_err(|e| notebook_error(&path.shown, e))?;
    let bytes = notebook.to_bytes();
    fsutil::check_size(
        bytes.len() as u64,
        ctx.max_file_size(),
        &path.shown,
        "NotebookEdit",
        "raise --max-file-size",
    )?;
    fsutil::atomic_write_over(&path.real, &path.shown, &bytes, Some(&meta))?;
    ctx.ws.record_view(&path.real, hash_bytes(&bytes));
    let done = match mode {
        EditMode::Replace => "Replaced the source of",
        EditMode::Insert => "Inserted",
        EditMode::Delete => "Deleted",
    };
    Ok(text_result(format!(
        "{done} cell {cell} in {}",
        path.shown.display()
    )))
}

fn notebook_error(shown: &std::path::Path, e: NotebookError) -> ToolError {
    match e {
        NotebookError::Invalid(why) => ToolError::new(
            ErrorCode::NotebookInvalid,
            format!(
                "{} is not a Jupyter notebook: {why}. Read it as text with offset and limit, \
                 or fix it with Edit.",
                shown.display()
            ),
        ),
        NotebookError::CellNotFound { id, known } => ToolError::new(
            ErrorCode::NotebookCellNotFound,
            format!(
                "{} has no cell {id:?}; its cells are: {}. Read the notebook to see them.",
                shown.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        ),
        NotebookError::Input(why) => ToolError::invalid(why),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The notice names the page after the one shown: offset where view's notice
        /// went on, and as many lines as its range held.
        #[test]
        fn read_notice_names_the_next_page(a in 1u64..5000, len in 0u64..5000, extra in 1u64..5000) {
            let (b, next) = (a + len, a + len + 1);
            let last = next + extra - 1;
            let more = super::MoreNotice { start: a, end: b, total: last + 7, next, next_end: last };
            let expected = format!(
                "\n[Showing lines {a}-{b} of {}. To see more, Read with offset {next} and limit {extra}.]\n",
                last + 7
            );
            prop_assert_eq!(super::read_notice(&more), expected);
        }
    }

    #[test]
    fn a_cut_reads_notice_names_reads_parameters() {
        let more = super::MoreNotice {
            start: 1,
            end: 2000,
            total: 2500,
            next: 2001,
            next_end: 2500,
        };
        assert_eq!(
            super::read_notice(&more),
            "\n[Showing lines 1-2000 of 2500. To see more, Read with offset 2001 and limit 500.]\n"
        );
    }
    use super::*;

    #[test]
    fn messages_use_claude_code_words() {
        assert_eq!(
            WORDS.rephrase("view_range start 10 exceeds the file's 4 lines"),
            "offset 10 exceeds the file's 4 lines"
        );
        assert_eq!(
            WORDS.rephrase("old_str and new_str are identical; view it first with view"),
            "old_string and new_string are identical; Read it first with Read"
        );
        assert_eq!(WORDS.rephrase("new_string stays"), "new_string stays");
        assert_eq!(
            WORDS.rephrase("use create_file or str_replace"),
            "use Write or Edit"
        );
        assert_eq!(WORDS.rephrase("a review of viewers"), "a review of viewers");
        // Paths are never reworded.
        assert_eq!(
            WORDS.rephrase("/p/view/old_str.txt does not exist; view the file"),
            "/p/view/old_str.txt does not exist; Read the file"
        );
    }
}
