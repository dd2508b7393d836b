//! `str_replace_editor` (`--anthropic-compat`, seed 000 D16 and seed 003): Claude's
//! combined editor schema. Each command runs the same code as the split tools, so the
//! results are identical.

use crate::tools::Ctx;
use crate::tools::boris::{create, edit, undo, view};
use crate::tools::engine::schema::{define, writes};

pub mod insert;
use crate::error::{ToolError, ToolResult};
use crate::tool_name::ToolName;
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditorArgs {
    /// The command to run: view, str_replace, create, insert or undo_edit.
    #[schemars(schema_with = "command_schema")]
    pub command: String,
    /// The file or directory: absolute, or relative to the working directory.
    pub path: String,
    /// view: optional [start, end] line range, 1-based and inclusive; end -1 = to the end.
    #[serde(default)]
    pub view_range: Option<Vec<i64>>,
    /// str_replace: the exact text to replace (must be unique unless replace_all).
    #[serde(default)]
    pub old_str: Option<String>,
    /// str_replace: the replacement (empty deletes). insert: the text to insert.
    #[serde(default)]
    pub new_str: Option<String>,
    /// str_replace: replace every occurrence.
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// create: the complete content of the file.
    #[serde(default)]
    pub file_text: Option<String>,
    /// insert: the line after which to insert (0 = at the beginning).
    #[serde(default)]
    pub insert_line: Option<i64>,
    /// insert: the text to insert (alternative to new_str).
    #[serde(default)]
    pub insert_text: Option<String>,
}

fn command_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": COMMANDS,
        "description": "The command to run: view, str_replace, create, insert or undo_edit."
    })
}

const COMMANDS: [&str; 5] = ["view", "str_replace", "create", "insert", "undo_edit"];

pub fn tool() -> Tool {
    define::<EditorArgs>(
        ToolName::StrReplaceEditor,
        "View, create and edit files",
        "View, create and edit files. Commands: `view` (a file with line numbers, an image, or a \
         directory listing; view_range [start, end] for part of a file), `str_replace` (replace \
         old_str, which must match exactly and be unique unless replace_all, by new_str), \
         `create` (write file_text to path, overwriting), `insert` (insert new_str or \
         insert_text after line insert_line), `undo_edit` (undo the last edit of path made in \
         this session; refused if the file changed since). Files must be viewed before they \
         are edited.",
        writes("View, create and edit files", false),
    )
}

pub fn run(ctx: &Ctx, args: EditorArgs) -> ToolResult<CallToolResult> {
    match args.command.as_str() {
        // Claude Code reads SVG as text, so compat mode does too (DESIGN §7).
        "view" => view::run(
            ctx,
            view::ViewArgs {
                path: args.path,
                view_range: args.view_range,
            },
            view::Svg::AsText,
        ),
        "str_replace" => edit::run(
            ctx,
            edit::StrReplaceArgs {
                path: args.path,
                old_str: Some(
                    args.old_str
                        .ok_or_else(|| missing("str_replace", "old_str"))?,
                ),
                new_str: args.new_str,
                replace_all: args.replace_all,
                ..Default::default()
            },
        ),
        "create" => create::run(
            ctx,
            create::CreateFileArgs {
                path: args.path,
                content: args
                    .file_text
                    .ok_or_else(|| missing("create", "file_text"))?,
                dry_run: None,
            },
        ),
        "insert" => {
            let line = args
                .insert_line
                .ok_or_else(|| missing("insert", "insert_line"))?;
            let text = args
                .insert_text
                .or(args.new_str)
                .ok_or_else(|| missing("insert", "insert_text (or new_str)"))?;
            let path = ctx.resolve(&args.path)?;
            insert::run(ctx, &path, line, &text)
        }
        "undo_edit" => {
            let path = ctx.resolve(&args.path)?;
            undo::undo(ctx, &path)
        }
        other => Err(ToolError::invalid(format!(
            "unknown command {other:?} for str_replace_editor; valid commands are {}",
            COMMANDS.join(", ")
        ))),
    }
}

fn missing(command: &str, field: &str) -> ToolError {
    ToolError::invalid(format!("the {command} command needs {field}"))
}
