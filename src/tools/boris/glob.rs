//! `glob`: find files (or directories) by a glob on their path (DESIGN §8).
//!
//! The pattern matches the path relative to the search root or the base name, so `*.go`
//! finds Go files at any depth and `src/**/*.md` only under `src/`; braces and classes
//! work. The walk and its ignore rules are grep's (`search::walk`); the search itself is
//! `search::glob`. Results are absolute paths, newest first (ties by path), capped at
//! 30,000 characters.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::search::Cancelled;
use crate::search::glob as engine;
use crate::search::pattern::PathGlob;
use crate::text::quote::quoted;
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, read_only};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize)]
pub struct GlobArgs {
    pub pattern: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

fn kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["file", "directory"],
        "description": "What to list: `file` (default) or `directory`."
    })
}

#[derive(Debug, JsonSchema)]
#[schemars(rename = "GlobArgs")]
#[allow(dead_code)]
struct GlobSchema {
    /// The glob to match: `*.rs` (any depth: a pattern without `/` matches the name),
    /// `src/**/*.md` (the path relative to `path`), `*.{ts,tsx}`, `test_[ab].py`.
    pattern: String,
    /// The directory to search: absolute, or relative to the working directory. Default:
    /// the working directory.
    path: Option<String>,
    #[serde(default)]
    #[schemars(rename = "type", schema_with = "kind_schema")]
    kind: Option<String>,
}

#[derive(Debug, JsonSchema)]
#[schemars(rename = "GlobArgs")]
#[allow(dead_code)]
struct CompatGlobSchema {
    /// The glob pattern to match files against.
    pattern: String,
    /// The directory to search in. If not specified, the current working directory will
    /// be used. Omit this field to use the default directory.
    path: Option<String>,
}

const DESCRIPTION: &str = "Find files or directories by a glob pattern. A pattern matches the \
    path relative to `path` (default: the working directory) or the entry's name: `*.go` \
    finds Go files at any depth, `src/**/*.md` only under src, `*.{ts,tsx}` and `[ab].txt` \
    work. Honours .gitignore, .ignore and .git/info/exclude; .git and node_modules are \
    skipped; hidden files are included. Returns absolute paths, most recently modified \
    first, capped at 30,000 characters. type: file (default) or directory.";

const COMPAT_DESCRIPTION: &str = "- Fast file pattern matching tool that works with any codebase \
    size\n- Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\"\n- Returns matching \
    file paths sorted by modification time\n- Use this tool when you need to find files by \
    name patterns";

pub fn tool(compat: bool) -> Tool {
    if compat {
        define::<CompatGlobSchema>(
            ToolName::Glob,
            "Find files by pattern",
            COMPAT_DESCRIPTION,
            read_only("Find files by pattern"),
        )
    } else {
        define::<GlobSchema>(
            ToolName::Glob,
            "Find files by pattern",
            DESCRIPTION,
            read_only("Find files by pattern"),
        )
    }
}

pub fn run(
    ctx: &Ctx,
    args: GlobArgs,
    compat: bool,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    if args.pattern.trim().is_empty() {
        return Err(ToolError::invalid(
            "pattern must not be empty; give a glob such as *.rs or src/**/*.md",
        ));
    }
    // In --anthropic-compat glob lists files only (DESIGN §7).
    let dirs = match args.kind.as_deref().map(str::trim) {
        _ if compat => false,
        None | Some("") | Some("file") => false,
        Some("directory") => true,
        Some(other) => {
            return Err(ToolError::new(
                ErrorCode::GlobInvalidType,
                format!("type {} is not one of: file, directory", quoted(other)),
            ));
        }
    };
    let glob = PathGlob::new(&args.pattern).map_err(|e| {
        ToolError::new(
            ErrorCode::GlobInvalidPattern,
            format!("{} is not a valid glob: {e}", quoted(&args.pattern)),
        )
    })?;
    let root = crate::tools::engine::search::open_root(ctx, args.path.as_deref())?;
    if !root.is_dir {
        return Err(ToolError::invalid(format!(
            "{} is a file; glob searches a directory",
            root.shown.display()
        )));
    }
    match engine::find(&root, &ctx.shared.scope, &glob, dirs, ct) {
        Ok(text) => Ok(text_result(text)),
        Err(Cancelled) => Ok(text_result("glob was cancelled.")),
    }
}
