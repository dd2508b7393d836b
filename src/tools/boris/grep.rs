//! `grep`: regex search of file contents on ripgrep's engine (seed 002, DESIGN §8).
//!
//! The tool reads and validates its arguments (both name sets, seed 002 decision 11),
//! resolves the root in the caller's workspace and scope, and hands a
//! [`Query`](crate::search::grep::Query) to the engine in `search::grep`.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::search::Cancelled;
use crate::search::grep::{self as engine, Mode, Query};
use crate::search::output::Page;
use crate::search::pattern::{self, PathGlob};
use crate::text::quote::quoted;
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, read_only};
use crate::tools::engine::search::{build_matcher, open_root};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// The arguments as received: both name sets (seed 002 decision 11) are accepted in
/// either mode and merged.
#[derive(Debug, Deserialize)]
pub struct GrepArgs {
    pub pattern: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub include: Option<String>,
    #[serde(default)]
    pub glob: Option<String>,
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    #[serde(default)]
    pub output_mode: Option<String>,
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    #[serde(default, rename = "-i")]
    pub dash_i: Option<bool>,
    #[serde(default)]
    pub line_numbers: Option<bool>,
    #[serde(default, rename = "-n")]
    pub dash_n: Option<bool>,
    #[serde(default)]
    pub context_before: Option<usize>,
    #[serde(default, rename = "-B")]
    pub dash_b: Option<usize>,
    #[serde(default)]
    pub context_after: Option<usize>,
    #[serde(default, rename = "-A")]
    pub dash_a: Option<usize>,
    #[serde(default)]
    pub context: Option<usize>,
    #[serde(default, rename = "-C")]
    pub dash_c: Option<usize>,
    #[serde(default)]
    pub multiline: Option<bool>,
    #[serde(default)]
    pub head_limit: Option<usize>,
    #[serde(default)]
    pub offset: Option<usize>,
}

fn output_mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["files_with_matches", "content", "count"],
        "description": "files_with_matches (default): paths, newest first. content: \
            `path:line:text` lines (context `path-line-text`). count: `path:count`."
    })
}

fn compat_output_mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["content", "files_with_matches", "count"],
        "description": "Output mode: \"content\" shows matching lines, \"files_with_matches\" \
            shows file paths (default), \"count\" shows match counts."
    })
}

// The schema of the default mode (no doc comment: it would become the schema's description).
#[derive(Debug, JsonSchema)]
#[schemars(rename = "GrepArgs")]
#[allow(dead_code)]
struct GrepSchema {
    /// Rust regex syntax, as ripgrep (`fn\s+\w+`); escape literal braces: `interface\{\}`.
    pattern: String,
    /// File or directory to search (default: the working directory).
    path: Option<String>,
    /// A glob on the path relative to `path`, or on the file name: `*.{ts,tsx}`, `src/**/*.py`.
    include: Option<String>,
    /// A ripgrep file type: `rust`, `py`, `ts`, `go`, `c`, `md`, ...
    #[schemars(rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    #[schemars(schema_with = "output_mode_schema")]
    output_mode: Option<String>,
    /// Case-insensitive search.
    case_insensitive: Option<bool>,
    /// Line numbers in content mode (default true).
    line_numbers: Option<bool>,
    /// Context lines before each match (content mode).
    context_before: Option<usize>,
    /// Context lines after each match (content mode).
    context_after: Option<usize>,
    /// Context lines before and after each match (content mode).
    context: Option<usize>,
    /// `.` matches newlines; patterns may span lines.
    multiline: Option<bool>,
    /// At most this many entries: lines in content mode, else files (0: all).
    head_limit: Option<usize>,
    /// Skip this many entries first, to page.
    offset: Option<usize>,
}

// The schema with Claude Code's names (`--anthropic-compat`).
#[derive(Debug, JsonSchema)]
#[schemars(rename = "GrepArgs")]
#[allow(dead_code)]
struct CompatGrepSchema {
    /// The regular expression pattern to search for in file contents.
    pattern: String,
    /// File or directory to search in. Defaults to the current working directory.
    path: Option<String>,
    /// Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}").
    glob: Option<String>,
    /// File type to search (rg --type). Common types: js, py, rust, go, java, etc. More
    /// efficient than glob for standard file types.
    #[schemars(rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    #[schemars(schema_with = "compat_output_mode_schema")]
    output_mode: Option<String>,
    /// Case insensitive search (rg -i).
    #[schemars(rename = "-i")]
    dash_i: Option<bool>,
    /// Show line numbers in output (rg -n). Requires output_mode "content". Defaults to
    /// true.
    #[schemars(rename = "-n")]
    dash_n: Option<bool>,
    /// Number of lines to show before each match (rg -B). Requires output_mode "content".
    #[schemars(rename = "-B")]
    dash_b: Option<usize>,
    /// Number of lines to show after each match (rg -A). Requires output_mode "content".
    #[schemars(rename = "-A")]
    dash_a: Option<usize>,
    /// Number of lines to show before and after each match (rg -C). Requires output_mode
    /// "content".
    #[schemars(rename = "-C")]
    dash_c: Option<usize>,
    /// Alias for -C.
    context: Option<usize>,
    /// Enable multiline mode where . matches newlines and patterns can span lines (rg -U
    /// --multiline-dotall). Default: false.
    multiline: Option<bool>,
    /// Limit output to the first N lines/entries (head -N). Works across all output
    /// modes. 0 or absent: unlimited.
    head_limit: Option<usize>,
    /// Skip the first N lines/entries before applying head_limit (tail -n +N).
    offset: Option<usize>,
}

const DESCRIPTION: &str = "Search file contents with a regular expression (ripgrep's engine), \
    recursively. Honours .gitignore and .ignore; skips .git, node_modules and binary files; \
    searches hidden files. Results are capped at 30,000 characters: page with offset and \
    head_limit.";

const COMPAT_DESCRIPTION: &str = "A powerful search tool built on ripgrep's engine.\n\
    - Supports full regex syntax (e.g. \"log.*Error\", \"function\\s+\\w+\")\n\
    - Filter files with the glob parameter (e.g. \"*.js\", \"**/*.tsx\") or the type parameter \
    (e.g. \"js\", \"py\", \"rust\")\n\
    - Output modes: \"content\" shows matching lines, \"files_with_matches\" shows only file \
    paths (default), \"count\" shows match counts\n\
    - Pattern syntax: literal braces need escaping (use `interface\\{\\}` to find \
    `interface{}`)\n\
    - Multiline matching: by default patterns match within single lines only; for \
    cross-line patterns use multiline: true\n\
    - Page through results with offset and head_limit; output is capped at 30,000 characters";

pub fn tool(compat: bool) -> Tool {
    if compat {
        define::<CompatGrepSchema>(
            ToolName::Grep,
            "Search file contents",
            COMPAT_DESCRIPTION,
            read_only("Search file contents"),
        )
    } else {
        define::<GrepSchema>(
            ToolName::Grep,
            "Search file contents",
            DESCRIPTION,
            read_only("Search file contents"),
        )
    }
}

const MODES: &str = "files_with_matches, content, count";

/// One argument given under either of its names; both given must agree.
fn either<T: PartialEq + Copy + std::fmt::Debug>(
    a: (&str, Option<T>),
    b: (&str, Option<T>),
) -> ToolResult<Option<T>> {
    match (a.1, b.1) {
        (Some(x), Some(y)) if x != y => Err(ToolError::invalid(format!(
            "{} and {} are the same argument and were given different values ({x:?}, {y:?}); give one",
            a.0, b.0
        ))),
        (x, y) => Ok(x.or(y)),
    }
}

fn validate(args: GrepArgs) -> ToolResult<(Query, Option<String>)> {
    if args.pattern.is_empty() {
        return Err(ToolError::invalid(
            "pattern must not be empty; give a regular expression to search for",
        ));
    }
    let mode = match args.output_mode.as_deref() {
        None | Some("files_with_matches") => Mode::Files,
        Some("content") => Mode::Content,
        Some("count") => Mode::Count,
        Some(other) => {
            return Err(ToolError::new(
                ErrorCode::GrepInvalidOutputMode,
                format!("output_mode {} is not one of: {MODES}", quoted(other)),
            ));
        }
    };
    let case_insensitive = either(
        ("case_insensitive", args.case_insensitive),
        ("-i", args.dash_i),
    )?;
    let line_numbers = either(("line_numbers", args.line_numbers), ("-n", args.dash_n))?;
    let context = either(("context", args.context), ("-C", args.dash_c))?;
    let before = either(("context_before", args.context_before), ("-B", args.dash_b))?;
    let after = either(("context_after", args.context_after), ("-A", args.dash_a))?;
    let include = match (args.include, args.glob) {
        (Some(a), Some(b)) if a != b => {
            return Err(ToolError::invalid(
                "include and glob are the same argument and were given different values; give one",
            ));
        }
        (a, b) => a.or(b).filter(|g| !g.trim().is_empty()),
    };
    let include = include
        .map(|g| {
            PathGlob::new(&g).map_err(|e| {
                ToolError::invalid(format!("include {} is not a valid glob: {e}", quoted(&g)))
            })
        })
        .transpose()?;
    let types = match args.file_type.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(name) => Some(pattern::file_type(name).ok_or_else(|| {
            ToolError::invalid(format!(
                "type {} is not a known file type. Valid types: {}",
                quoted(name),
                pattern::type_names().join(", ")
            ))
        })?),
    };
    let multiline = args.multiline.unwrap_or(false);
    let matcher = build_matcher(&args.pattern, case_insensitive.unwrap_or(false), multiline)?;
    let query = Query {
        matcher,
        mode,
        include,
        types,
        multiline,
        before: before.or(context).unwrap_or(0),
        after: after.or(context).unwrap_or(0),
        line_numbers: line_numbers.unwrap_or(true),
        page: Page {
            offset: args.offset.unwrap_or(0),
            head_limit: args.head_limit.unwrap_or(0),
        },
        pattern: args.pattern,
        respect_ignore: true,
    };
    Ok((query, args.path))
}

pub fn run(ctx: &Ctx, args: GrepArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    let (query, path) = validate(args)?;
    let root = open_root(ctx, path.as_deref())?;
    match engine::search(&query, &root, &ctx.shared.scope, ctx.max_file_size(), ct) {
        Ok(text) => Ok(text_result(text)),
        Err(Cancelled) => Ok(text_result("grep was cancelled.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: serde_json::Value) -> GrepArgs {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn both_name_sets_merge() {
        let (r, _) = validate(args(
            serde_json::json!({"pattern": "x", "-i": true, "-C": 2, "-A": 1, "glob": "*.rs"}),
        ))
        .unwrap();
        assert_eq!((r.before, r.after), (2, 1));
        assert!(r.include.is_some());
        let err = validate(args(
            serde_json::json!({"pattern": "x", "context": 1, "-C": 2}),
        ))
        .err()
        .unwrap();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(
            validate(args(
                serde_json::json!({"pattern": "x", "context": 2, "-C": 2})
            ))
            .is_ok()
        );
    }

    #[test]
    fn errors_have_their_codes() {
        let e = |v| validate(args(v)).err().unwrap();
        assert_eq!(
            e(serde_json::json!({"pattern": ""})).code,
            ErrorCode::InvalidInput
        );
        let m = e(serde_json::json!({"pattern": "x", "output_mode": "lines"}));
        assert_eq!(m.code, ErrorCode::GrepInvalidOutputMode);
        assert!(m.message.contains(MODES));
        let p = e(serde_json::json!({"pattern": "a("}));
        assert_eq!(p.code, ErrorCode::GrepInvalidPattern);
        assert!(p.message.contains("unclosed group"), "{}", p.message);
        let n = e(serde_json::json!({"pattern": "a\\nb"}));
        assert!(n.message.contains("multiline"), "{}", n.message);
        let t = e(serde_json::json!({"pattern": "x", "type": "klingon"}));
        assert_eq!(t.code, ErrorCode::InvalidInput);
        assert!(
            t.message.contains("rust") && t.message.contains("python"),
            "{}",
            t.message
        );
    }
}
