//! The tools, one module each, and the table that registers and runs them.
//!
//! Every tool is a plain function `fn(&Ctx, Args) -> ToolResult<CallToolResult>` (async
//! where it waits on processes); the server deserialises arguments before it runs, so that
//! a wrong type or a missing field is an `[INVALID_INPUT]` tool result (DESIGN §5) rather
//! than rmcp's untagged message. What a call works with is in [`context`]; one row per tool
//! (its profiles, schema, handler and words) in [`registry`]; what a server lists in
//! [`catalogue`]; how a call runs in [`dispatch`].

// The house: the tool table and what runs a call.
pub mod catalogue;
pub mod context;
pub mod dispatch;
pub mod listing;
pub mod registry;
pub mod words;

// The engines, and the faces over them: Boris's own tools, then one folder per outside
// contract (each laid out alike: mod.rs the tools' definitions and words, a file per kind
// of tool).
pub mod anthropic;
pub mod boris;
pub mod claude_code;
pub mod codex;
pub mod engine;
pub mod gemini_cli;

pub use context::{Call, Ctx, Progress, Shared, text_result, tool_name};
