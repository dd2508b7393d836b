//! Gemini CLI's file tools over Boris's engines: `read_file` and `read_many_files`
//! (`view`, lines shown plain), `list_directory`, `write_file` (`create_file`) and
//! `replace` (`str_replace`).

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::scope::ScopedPath;
use crate::text::lines::{MAX_LINE_CHARS, truncate_line};
use crate::text::quote::quoted;
use crate::tools::engine::view::{self, MoreNotice, Svg, ViewArgs, ViewStyle, Viewed};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ReadFileArgs")]
pub struct ReadFileArgs {
    /// The path to the file to read: absolute, or relative to the working directory.
    pub file_path: String,
    /// Optional: The 1-based line number to start reading from.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// Optional: The 1-based line number to end reading at (inclusive).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u64>,
}

/// Whether ignore files apply (Gemini CLI's `file_filtering_options`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct FileFiltering {
    /// Optional: Whether to respect .gitignore patterns when listing files. Defaults to
    /// true.
    #[serde(default)]
    pub respect_git_ignore: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ReadManyFilesArgs")]
#[allow(non_snake_case)]
pub struct ReadManyFilesArgs {
    /// An array of glob patterns or paths, relative to the working directory. Examples:
    /// ["src/**/*.ts"], ["README.md", "docs/"]
    #[schemars(length(min = 1))]
    pub include: Vec<String>,
    /// Optional. Glob patterns for files/directories to exclude. Example: "**/*.log",
    /// "temp/"
    #[serde(default)]
    pub exclude: Option<Vec<String>>,
    /// Optional. Whether to search recursively (primarily controlled by `**` in glob
    /// patterns). Defaults to true.
    #[serde(default)]
    pub recursive: Option<bool>,
    /// Optional. Whether to skip what the ignore files (.gitignore, .ignore) list.
    /// Defaults to true.
    #[serde(default)]
    pub useDefaultExcludes: Option<bool>,
    /// Whether to respect ignore patterns from .gitignore
    #[serde(default)]
    pub file_filtering_options: Option<FileFiltering>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ListDirectoryArgs")]
pub struct ListDirectoryArgs {
    /// The path to the directory to list: absolute, or relative to the working directory.
    pub dir_path: String,
    /// List of glob patterns to ignore (matched against entry names, e.g. "*.log").
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
    /// Optional: Whether to respect ignore patterns from .gitignore
    #[serde(default)]
    pub file_filtering_options: Option<FileFiltering>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "WriteFileArgs")]
pub struct WriteFileArgs {
    /// The path to the file to write to: absolute, or relative to the working directory.
    pub file_path: String,
    /// The complete content to write. Provide the full file; do not use placeholders
    /// like '// ... rest of code'.
    pub content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ReplaceArgs")]
pub struct ReplaceArgs {
    /// The path to the file to modify: absolute, or relative to the working directory.
    pub file_path: String,
    /// A clear, semantic instruction for the code change: why, where and what. Optional
    /// here (no model rewrites a failed edit); it is recorded nowhere and changes nothing.
    #[serde(default)]
    pub instruction: Option<String>,
    /// The exact literal text to replace, unescaped, including whitespace and
    /// indentation. If this string is not the exact literal text or does not match
    /// exactly, the tool will fail.
    pub old_string: String,
    /// The exact literal text to replace `old_string` with, unescaped. Provide the EXACT
    /// text; do not use omission placeholders like '...'.
    pub new_string: String,
    /// If true, the tool will replace all occurrences of `old_string`. If false
    /// (default), it will only succeed if exactly one occurrence is found.
    #[serde(default)]
    pub allow_multiple: Option<bool>,
    /// Optional (earlier Gemini CLI versions): the exact number of occurrences to
    /// replace; the edit fails, changing nothing, if the file has another number.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub expected_replacements: Option<u64>,
}

/// One line as Gemini CLI's `read_file` shows it: the text alone, cut at 2000
/// characters.
fn plain_line(out: &mut String, _number: usize, kept: &[u8], total_chars: usize) {
    if total_chars <= MAX_LINE_CHARS
        && let Ok(text) = std::str::from_utf8(kept)
    {
        out.push_str(text);
    } else {
        let text = String::from_utf8_lossy(kept);
        out.push_str(&truncate_line(&text, total_chars, MAX_LINE_CHARS));
    }
    out.push('\n');
}

/// `read_file`: `view` with the lines plain, the cut notice in Gemini CLI's words.
pub fn read_file(ctx: &Ctx, args: ReadFileArgs) -> ToolResult<CallToolResult> {
    if args.file_path.trim().is_empty() {
        return Err(ToolError::invalid(
            "The 'file_path' parameter must be non-empty.",
        ));
    }
    if args.start_line == Some(0) || args.end_line == Some(0) {
        return Err(ToolError::invalid(
            "start_line and end_line are 1-based line numbers: both must be at least 1",
        ));
    }
    if let (Some(s), Some(e)) = (args.start_line, args.end_line)
        && s > e
    {
        return Err(ToolError::invalid(
            "start_line cannot be greater than end_line",
        ));
    }
    refuse_directory(ctx, &args.file_path)?;
    let clamp = |n: u64| n.min(i64::MAX as u64) as i64;
    let view_range = match (args.start_line, args.end_line) {
        (None, None) => None,
        (Some(s), None) => Some(vec![clamp(s), -1]),
        (None, Some(e)) => Some(vec![1, clamp(e)]),
        (Some(s), Some(e)) => Some(vec![clamp(s), clamp(e)]),
    };
    let viewed = view::read(
        ctx,
        ViewArgs {
            path: args.file_path,
            view_range,
        },
        PLAIN,
    )?;
    Ok(viewed.into_result(truncation_header))
}

/// How Gemini CLI's readers show a file: plain lines, SVG as text.
const PLAIN: ViewStyle = ViewStyle {
    svg: Svg::AsText,
    line: plain_line,
};

/// A directory is not read (Gemini CLI: "Path is a directory, not a file"); `view`
/// would list it.
fn refuse_directory(ctx: &Ctx, file_path: &str) -> ToolResult<()> {
    let path = ctx.resolve_read(file_path)?;
    if path.real.is_dir() {
        return Err(ToolError::invalid(format!(
            "{} is a directory, not a file; list it with list_directory",
            path.shown.display()
        )));
    }
    Ok(())
}

/// `view`'s closing notice of a cut read → Gemini CLI's header above the content.
pub fn truncation_header(text: String, more: Option<MoreNotice>) -> String {
    match more {
        None => text,
        Some(n) => format!(
            "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines {}-{} \
             of {} total lines.\nAction: To read more of the file, you can use the \
             'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For \
             example, to read the next section of the file, use start_line: {}.\n\n--- FILE \
             CONTENT (truncated) ---\n{text}",
            n.start, n.end, n.total, n.next
        ),
    }
}

/// One file's text in `read_many_files`' result, under its name; `cut`: its read stopped
/// at the line cap.
fn push_file(text: &mut String, shown: &str, body: &str, cut: bool) {
    text.push_str(&format!("--- {shown} ---\n\n"));
    if cut {
        text.push_str(
            "[WARNING: This file was truncated. To view the full content, use the \
             'read_file' tool on this specific file.]\n\n",
        );
    }
    text.push_str(body);
    text.push_str("\n\n");
}

/// Characters of file text one `read_many_files` call shows at most; files past it are
/// named, not shown.
const READ_MANY_BUDGET: usize = 200_000;

/// `read_many_files`: the files the paths and globs name, each read as `read_file`
/// reads it (a view: it counts for view-before-edit).
pub fn read_many_files(
    ctx: &Ctx,
    args: ReadManyFilesArgs,
    ct: &tokio_util::sync::CancellationToken,
) -> ToolResult<CallToolResult> {
    if args.include.is_empty() || args.include.iter().any(|p| p.trim().is_empty()) {
        return Err(ToolError::invalid(
            "include must list at least one path or glob pattern, none of them empty",
        ));
    }
    let respect_ignore = args.useDefaultExcludes.unwrap_or(true)
        && args
            .file_filtering_options
            .as_ref()
            .and_then(|f| f.respect_git_ignore)
            .unwrap_or(true);
    let found = super::search::files_for_patterns(
        ctx,
        &args.include,
        args.exclude.as_deref().unwrap_or_default(),
        args.recursive.unwrap_or(true),
        respect_ignore,
        ct,
    )?;
    let mut content = Vec::new();
    let mut text = String::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut unread: Vec<String> = Vec::new();
    for file in &found {
        let shown = file.path.shown.display().to_string();
        if text.len() >= READ_MANY_BUDGET {
            unread.push(shown);
            continue;
        }
        let read = view::read(
            ctx,
            ViewArgs {
                path: file.path.real.to_string_lossy().into_owned(),
                view_range: None,
            },
            PLAIN,
        );
        match read {
            Err(e) => skipped.push(format!("{shown} ({})", e.message)),
            Ok(Viewed::Binary(_)) => skipped.push(format!("{shown} (binary file)")),
            Ok(Viewed::Lines { text: body, more }) => {
                push_file(&mut text, &shown, &body, more.is_some());
            }
            Ok(Viewed::Note(body)) => push_file(&mut text, &shown, &body, false),
            Ok(Viewed::Image { data, mime }) if file.named => {
                content.push(ContentBlock::image(data, mime));
            }
            Ok(Viewed::Image { .. }) => {
                skipped.push(format!("{shown} (an image; name it to include it)"));
            }
        }
    }
    if text.is_empty() && content.is_empty() {
        text.push_str("No files matching the criteria were found or all were skipped.");
    } else {
        text.push_str("--- End of content ---");
    }
    if !unread.is_empty() {
        text.push_str(&format!(
            "\n[{} more matching file(s) not read: the result holds about {READ_MANY_BUDGET} \
             characters. Read them in another call: {}]",
            unread.len(),
            unread.join(", ")
        ));
    }
    if !skipped.is_empty() {
        text.push_str(&format!("\n[Skipped: {}]", skipped.join("; ")));
    }
    content.insert(0, ContentBlock::text(text));
    Ok(CallToolResult::success(content))
}

/// Entries one `list_directory` call shows at most.
const MAX_LISTED: usize = 1000;

/// `list_directory`: one level, directories first, files with their sizes.
pub fn list_directory(ctx: &Ctx, args: ListDirectoryArgs) -> ToolResult<CallToolResult> {
    if args.dir_path.trim().is_empty() {
        return Err(ToolError::invalid(
            "The 'dir_path' parameter must be non-empty.",
        ));
    }
    let path = ctx.resolve_read(&args.dir_path)?;
    let meta =
        crate::beneath::metadata(&path.real).map_err(|e| e.into_tool(&path.shown, "list"))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid(format!(
            "Path is not a directory: {}",
            path.shown.display()
        )));
    }
    let ignore = name_globs(args.ignore.as_deref().unwrap_or_default())?;
    let respect = args
        .file_filtering_options
        .as_ref()
        .and_then(|f| f.respect_git_ignore)
        .unwrap_or(true);
    let listing = super::search::one_level(ctx, &path, respect)
        .map_err(|e| ToolError::io(&path.shown, "list", &e))?;
    if listing.total == 0 {
        return Ok(text_result(format!(
            "Directory {} is empty.",
            path.shown.display()
        )));
    }
    let mut entries: Vec<&super::search::Entry> = listing
        .entries
        .iter()
        .filter(|e| !ignore.iter().any(|g| g.is_match(&e.name)))
        .collect();
    entries.sort_by(|a, b| {
        b.is_dir
            .cmp(&a.is_dir)
            .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut out = format!("Directory listing for {}:", path.shown.display());
    for e in entries.iter().take(MAX_LISTED) {
        if e.is_dir {
            out.push_str(&format!("\n[DIR] {}", e.name));
        } else {
            out.push_str(&format!("\n{} ({} bytes)", e.name, e.size));
        }
    }
    if entries.len() > MAX_LISTED {
        out.push_str(&format!(
            "\n[{} more entries not listed; list a narrower directory or use glob]",
            entries.len() - MAX_LISTED
        ));
    }
    if listing.ignored > 0 {
        out.push_str(&format!("\n\n({} ignored)", listing.ignored));
    }
    Ok(text_result(out))
}

/// Gemini CLI's `ignore` patterns: globs on an entry's name.
fn name_globs(patterns: &[String]) -> ToolResult<Vec<globset::GlobMatcher>> {
    patterns
        .iter()
        .map(|p| {
            crate::search::pattern::compile(p, |_| {}).map_err(|e| {
                ToolError::new(
                    ErrorCode::GlobInvalidPattern,
                    format!("ignore pattern {} is not a valid glob: {e}", quoted(p)),
                )
            })
        })
        .collect()
}

/// `write_file`: `create_file`, answered in Gemini CLI's words.
pub fn write_file(ctx: &Ctx, args: WriteFileArgs) -> ToolResult<CallToolResult> {
    let path = ctx.resolve(&args.file_path)?;
    let existed = std::fs::symlink_metadata(&path.real).is_ok();
    let result =
        crate::tools::boris::create::write_whole_file(ctx, &path, args.content.as_bytes(), false)?;
    Ok(text_result(written(&path, existed, &result)))
}

/// `Created PATH (5 bytes, 1 lines)…` → Gemini CLI's sentence, keeping the details.
fn written(path: &ScopedPath, existed: bool, result: &CallToolResult) -> String {
    let shown = path.shown.display().to_string();
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or_default();
    let details = text
        .find(&format!("{shown} ("))
        .map(|at| text[at + shown.len()..].trim())
        .unwrap_or_default();
    let sep = if details.is_empty() { "" } else { " " };
    if existed {
        format!("Successfully overwrote file: {shown}{sep}{details}.")
    } else {
        format!("Successfully created and wrote to new file: {shown}{sep}{details}.")
    }
}

/// `replace`: `str_replace` (or, with an empty `old_string`, a new file), answered as
/// Gemini CLI answers: the count and the updated code around the change.
pub fn replace(ctx: &Ctx, args: ReplaceArgs) -> ToolResult<CallToolResult> {
    let path = ctx.resolve(&args.file_path)?;
    if args.old_string.is_empty() {
        return create_with_replace(ctx, &path, &args.new_string);
    }
    let expected = args.expected_replacements;
    if expected == Some(0) {
        return Err(ToolError::invalid(
            "expected_replacements must be at least 1",
        ));
    }
    let replace_all = args.allow_multiple.unwrap_or(false) || expected.is_some_and(|n| n > 1);
    let changes = [crate::tools::engine::edit::EditSpec {
        old_str: args.old_string,
        new_str: Some(args.new_string),
        replace_all: Some(replace_all),
    }];
    let check = |applied: &crate::text::replace::Applied| -> ToolResult<()> {
        let found = applied.steps.first().map_or(0, |s| s.count) as u64;
        match expected {
            Some(n) if n != found => Err(ToolError::new(
                ErrorCode::StrReplaceCountMismatch,
                format!(
                    "Failed to edit, expected {n} {} but found {found} for old_string in file: \
                     {}. Nothing was written.",
                    if n == 1 { "occurrence" } else { "occurrences" },
                    path.shown.display()
                ),
            )),
            _ => Ok(()),
        }
    };
    let change =
        crate::tools::engine::edit::change_file(ctx, &path, &changes, false, true, &check)?;
    let count = change.steps.first().map_or(0, |s| s.count);
    let snippet = crate::text::snippet::context_snippet(
        &lf_text(&change.before),
        &lf_text(&change.after),
        SNIPPET_CONTEXT,
    );
    let crlf = if change.steps.first().is_some_and(|s| s.crlf) {
        " The match used the file's CRLF line endings, which were kept."
    } else {
        ""
    };
    let text = format!(
        "Successfully modified file: {} ({count} replacements).{crlf} Here is the updated \
         code:\n{snippet}",
        path.shown.display()
    );
    let crate::tools::engine::edit::Change {
        before,
        after,
        lock,
        ..
    } = change;
    ctx.ws
        .record_write(&path.real, Some(before.clone()), &after);
    drop(lock);
    let note = crate::tools::engine::code::after_write(ctx, &path, Some(&before), &after);
    Ok(crate::tools::engine::code::with_diagnostics(
        text_result(text),
        note,
    ))
}

/// Lines of the new text shown each side of a change (Gemini CLI's).
const SNIPPET_CONTEXT: usize = 5;

/// A file's text as a model reads it: UTF-8 (lossy), line breaks as `\n`.
fn lf_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&crate::text::replace::to_lf(bytes)).into_owned()
}

/// `replace` with an empty `old_string`: Gemini CLI's way to create a file; refused for
/// a file that exists.
fn create_with_replace(ctx: &Ctx, path: &ScopedPath, content: &str) -> ToolResult<CallToolResult> {
    if std::fs::symlink_metadata(&path.real).is_ok() {
        return Err(ToolError::invalid(format!(
            "File already exists, cannot create: {}. An empty old_string creates a new file; \
             to change this one, give the exact text to replace (read it with read_file \
             first).",
            path.shown.display()
        )));
    }
    crate::tools::boris::create::write_whole_file(ctx, path, content.as_bytes(), false)?;
    Ok(text_result(format!(
        "Created new file: {} with provided content.",
        path.shown.display()
    )))
}
