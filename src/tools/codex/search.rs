//! Codex's `grep_files` over Boris's grep engine: the files with a match, newest first.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::search::grep::{self as engine, Mode, Query};
use crate::search::output::Page;
use crate::search::pattern::PathGlob;
use crate::text::quote::quoted;
use crate::tools::{Ctx, text_result};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "GrepFilesArgs")]
pub struct GrepFilesArgs {
    /// Regular expression pattern to search for.
    pub pattern: String,
    /// Optional glob that limits which files are searched (e.g. "*.rs" or "*.{ts,tsx}").
    #[serde(default)]
    pub include: Option<String>,
    /// Directory or file path to search. Defaults to the session's working directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Maximum number of file paths to return (defaults to 100).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
}

/// Codex's defaults and limits.
const GREP_DEFAULT_LIMIT: u64 = 100;
const GREP_MAX_LIMIT: u64 = 2000;

/// `grep_files`: the files with a match, newest first, at most `limit` (Codex: `rg
/// --files-with-matches --sortr=modified`).
pub fn grep_files(
    ctx: &Ctx,
    args: GrepFilesArgs,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    let pattern = args.pattern.trim();
    if pattern.is_empty() {
        return Err(ToolError::invalid("pattern must not be empty"));
    }
    let limit = args.limit.unwrap_or(GREP_DEFAULT_LIMIT);
    if limit == 0 {
        return Err(ToolError::invalid("limit must be greater than zero"));
    }
    let limit = usize::try_from(limit.min(GREP_MAX_LIMIT)).unwrap_or(usize::MAX);
    let include = match args.include.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(g) => Some(PathGlob::new(g).map_err(|e| {
            ToolError::new(
                ErrorCode::GlobInvalidPattern,
                format!("include {} is not a valid glob: {e}", quoted(g)),
            )
        })?),
    };
    let matcher = crate::tools::engine::search::build_matcher(pattern, false, false)?;
    let root = crate::tools::engine::search::open_root(ctx, args.path.as_deref())?;
    let query = Query {
        matcher,
        pattern: pattern.to_string(),
        mode: Mode::Files,
        include,
        types: None,
        multiline: false,
        before: 0,
        after: 0,
        line_numbers: false,
        page: Page::default(),
        respect_ignore: true,
    };
    let Ok(found) =
        engine::files_by_mtime(&query, &root, &ctx.shared.scope, ctx.max_file_size(), ct)
    else {
        return Ok(text_result("grep_files was cancelled."));
    };
    if found.is_empty() {
        return Ok(text_result("No matches found."));
    }
    let lines: Vec<String> = found
        .iter()
        .take(limit)
        .map(|p| root.display(p).to_string_lossy().into_owned())
        .collect();
    Ok(text_result(lines.join("\n")))
}
