//! Every integration test but the spec suite, in one test binary (issue 28 §5, DEC-117).
//!
//! Each `tests/<name>.rs` is a module here, so `cargo test` compiles and links one
//! binary instead of 29, and runs their tests side by side instead of one file after
//! another (most of them wait on a server, not the CPU). A file's tests are named
//! `<name>::…`: `cargo test --test integration sandbox::` runs `tests/sandbox.rs`.
//! `tests/spec.rs` stays its own binary: its own harness (libtest-mimic, one trial per
//! case).
//!
//! A new test file is a new `mod` line below.

mod common;

mod auth_providers;
mod big_command;
mod cli_and_http;
mod crash_atomicity;
mod docs;
mod drain;
mod file_tool_races;
mod fleet;
mod function_length;
mod hostile_input;
mod http_hostile;
mod layers;
mod lsp_edits;
mod malformed_jsonrpc;
mod oversized_arguments;
mod patch_atomicity;
mod profile_help;
mod readme_configs;
mod refusal_keepalive;
mod rename_locks;
mod resources;
mod sandbox;
mod sandbox_sessions;
mod spec_bench;
mod spec_harness;
mod spec_outside_checkout;
mod spec_teardown;
mod spill_dirs;
mod stdio_pipes;
mod tool_budget;
