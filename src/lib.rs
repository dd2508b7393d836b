//! Boris: coding tools for AI agents over MCP.
//!
//! The crate is a library so that the pure pieces (truncation, range clamping, path
//! resolution, the spec harness) can be property-tested and fuzzed on their own; the
//! `boris` binary is a thin `main` over [`config`] and [`transport`]. See ARCHITECTURE.md
//! for the code map and the invariants.

pub mod access;
pub mod beneath;
pub mod call_log;
pub mod config;
pub mod drain;
pub mod edit_history;
pub mod error;
pub mod exec;
pub mod fsutil;
pub mod journal;
pub mod logfmt;
pub mod lsp;
pub mod mcp_tasks;
pub mod metrics;
pub mod sandbox;
pub mod scope;
pub mod search;
pub mod secret_env;
pub mod server;
pub mod spec;
pub mod terminal;
pub mod text;
pub mod token_out;
pub mod tool_name;
pub mod tools;
pub mod transport;
pub mod workspace;
