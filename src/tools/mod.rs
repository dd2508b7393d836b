//! The tools, one module each, and the table that registers and runs them.
//!
//! Every tool is a plain function `fn(&Ctx, Args) -> ToolResult<CallToolResult>` (async
//! where it waits on processes); the server deserialises arguments before it runs, so that
//! a wrong type or a missing field is an `[INVALID_INPUT]` tool result (DESIGN §5) rather
//! than rmcp's untagged message. What a call works with is in [`context`]; one row per tool
//! (its profiles, schema, handler and words) in [`registry`]; what a server lists in
//! [`catalogue`]; how a call runs in [`dispatch`].

pub mod apply_patch;
pub mod bash;
pub mod catalogue;
pub mod claude_code;
pub mod claude_code_lsp;
pub mod code;
pub mod codex;
pub mod codex_exec;
pub mod context;
pub mod create;
pub mod diagnostics;
pub mod dispatch;
pub mod edit;
pub mod editor;
pub mod gemini_cli;
pub mod glob;
pub mod grep;
pub mod insert;
pub mod listing;
pub mod navigate;
pub mod pipe;
pub mod registry;
pub mod rename;
pub mod schema;
pub mod shell;
pub mod tasks;
pub mod terminal;
pub mod undo;
pub mod view;
pub mod words;

pub use catalogue::{TASK_SUPPORT_META_KEY, may_become_task};
pub use context::{Call, Ctx, Progress, Shared, text_result, tool_name};
pub use dispatch::dispatch;
pub use schema::{define, portable_schema, read_only, runs_commands, writes};
