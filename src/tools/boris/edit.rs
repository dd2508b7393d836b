//! `str_replace` and `multi_edit`, Boris's edit tools (seed 000 D14, DESIGN §7; issue 15
//! §2): their arguments and tools/list entries over the edit engine (`engine::edit`).

use crate::error::{ToolError, ToolResult};
use crate::tool_name::ToolName;
use crate::tools::Ctx;
use crate::tools::engine::edit::{EditSpec, edit_file};
use crate::tools::engine::schema::{define, writes};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct StrReplaceArgs {
    /// The file to edit: absolute, or relative to the working directory.
    pub path: String,
    /// The exact text to replace, whitespace included; it must occur once unless
    /// replace_all.
    #[serde(default)]
    pub old_str: Option<String>,
    /// The replacement (empty or omitted: delete old_str).
    #[serde(default)]
    pub new_str: Option<String>,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// Instead of old_str/new_str: several edits, applied in order, all or nothing.
    #[serde(default)]
    pub edits: Option<Vec<EditSpec>>,
    /// Write nothing; return the diff.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub fn tool() -> Tool {
    define::<StrReplaceArgs>(
        ToolName::StrReplace,
        "Replace text in a file",
        "Replace an exact string in a file; answers with the unified diff. old_str must \
         match byte for byte and occur once, unless replace_all. View the file first (and \
         again if it changed on disk). Line endings, encoding and mode are preserved.",
        writes("Replace text in a file", false),
    )
}

pub fn run(ctx: &Ctx, args: StrReplaceArgs) -> ToolResult<CallToolResult> {
    let dry_run = args.dry_run.unwrap_or(false);
    let (changes, list) = match (args.old_str, args.edits) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid(
                "give either old_str (with new_str and replace_all) or edits, not both",
            ));
        }
        (None, None) => {
            return Err(ToolError::invalid(
                "give old_str, the exact text to replace (or edits, a list of \
                 {old_str, new_str, replace_all})",
            ));
        }
        (Some(old), None) => (
            vec![EditSpec {
                old_str: old,
                new_str: args.new_str,
                replace_all: args.replace_all,
            }],
            false,
        ),
        (None, Some(edits)) => {
            if args.new_str.is_some() || args.replace_all.is_some() {
                return Err(ToolError::invalid(
                    "new_str and replace_all go inside each entry of edits, not beside it",
                ));
            }
            (edits, true)
        }
    };
    let path = ctx.resolve(&args.path)?;
    edit_file(ctx, &path, &changes, list, dry_run)
}

// `multi_edit`: several edits of one file, all or nothing (issue 15 §2).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MultiEditArgs {
    /// The file to edit: absolute, or relative to the working directory.
    pub path: String,
    /// Applied in order, each to the result of the ones before it.
    pub edits: Vec<EditSpec>,
    /// Write nothing; return the diff.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub fn multi_tool() -> Tool {
    define::<MultiEditArgs>(
        ToolName::MultiEdit,
        "Make several edits to one file",
        "Several exact-string replacements in one file, all or nothing, in one write; \
         answers with the unified diff. If an edit fails, nothing is written and the error \
         names it and the closest text. View the file first (and again if it changed on \
         disk). Line endings, encoding and mode are preserved.",
        writes("Make several edits to one file", false),
    )
}

pub fn run_multi(ctx: &Ctx, args: MultiEditArgs) -> ToolResult<CallToolResult> {
    let path = ctx.resolve(&args.path)?;
    edit_file(ctx, &path, &args.edits, true, args.dry_run.unwrap_or(false))
}
