//! One log line per tool call (issue 31 §3): session, tool, duration and outcome, so an
//! operator can count, time and trace calls from the log alone (`--log-format json`
//! makes each field a JSON value). `subject` is the OAuth token's `sub` (`--auth oauth`),
//! `null` otherwise.

use crate::logfmt::Json;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult};
use std::time::Duration;

/// How a call ended, as logged: `ok`, `error` (with its code), `cancelled`, `panicked`
/// `shutting_down` (ended by the drain past --shutdown-grace) or `task` (it became an
/// MCP task, which goes on after the call's answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A tool error's `[CODE]`, or a JSON-RPC error's number as text.
    Error(String),
    Cancelled,
    Panicked,
    ShuttingDown,
    Task,
}

impl Outcome {
    /// A call's outcome from its result. `cancelled`: the client cancelled the request.
    pub fn of(result: &Result<CallToolResponse, McpError>, cancelled: bool) -> Self {
        if cancelled {
            return Outcome::Cancelled;
        }
        match result {
            Err(e) if e.message == crate::drain::SHUTTING_DOWN => Outcome::ShuttingDown,
            Err(e) => Outcome::Error(e.code.0.to_string()),
            Ok(CallToolResponse::Complete(r)) => Self::of_result(r),
            Ok(CallToolResponse::Task(_)) => Outcome::Task,
            // Non-exhaustive: whatever else a later rmcp adds is an answer, not an error.
            Ok(_) => Outcome::Ok,
        }
    }

    fn of_result(r: &CallToolResult) -> Self {
        match r.is_error {
            Some(true) => {
                let text = r
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .map_or("", |t| t.text.as_str());
                match error_code(text) {
                    Some("INTERNAL_ERROR") if text.contains("failed unexpectedly") => {
                        Outcome::Panicked
                    }
                    Some(code) => Outcome::Error(code.to_string()),
                    None => Outcome::Error("TOOL_ERROR".into()),
                }
            }
            _ => Outcome::Ok,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error(_) => "error",
            Outcome::Cancelled => "cancelled",
            Outcome::Panicked => "panicked",
            Outcome::ShuttingDown => "shutting_down",
            Outcome::Task => "task",
        }
    }

    pub fn code(&self) -> Option<&str> {
        match self {
            Outcome::Error(code) => Some(code),
            _ => None,
        }
    }
}

/// Bytes of text a call's result carries (its text blocks; a task or an error: none).
pub fn output_bytes(result: &Result<CallToolResponse, McpError>) -> u64 {
    match result {
        Ok(CallToolResponse::Complete(r)) => r
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.len() as u64)
            .sum(),
        _ => 0,
    }
}

/// The `CODE` of a tool error that starts `[CODE] …`.
fn error_code(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('[')?;
    let (code, _) = rest.split_once(']')?;
    (!code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')).then_some(code)
}

/// Logs the line for one call and counts it in the metrics (under `unknown` when the
/// tool is not one this server has: the name is the client's text).
pub fn log(
    session: Option<&str>,
    subject: Option<&str>,
    tool: &str,
    known: bool,
    took: Duration,
    outcome: &Outcome,
    output_bytes: u64,
) {
    let metrics = crate::metrics::global();
    let counted = if known { tool } else { "unknown" };
    metrics.record(counted, outcome.name(), took);
    metrics.record_output(counted, output_bytes);
    // An unknown name is the client's text: cut, so a call cannot flood the log.
    let tool = crate::text::quote::head_with_ellipsis(tool, 64);
    let duration_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
    tracing::info!(
        session = ?Json(session),
        subject = ?Json(subject.map(|s| crate::text::quote::head_with_ellipsis(s, 128))),
        tool = &*tool,
        duration_ms,
        outcome = outcome.name(),
        error_code = ?Json(outcome.code()),
        "tool call"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn tool_error(text: &str) -> Result<CallToolResponse, McpError> {
        Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
    }

    #[test]
    fn outcomes() {
        let ok = Ok(CallToolResult::success(vec![ContentBlock::text("fine")]).into());
        assert_eq!(Outcome::of(&ok, false), Outcome::Ok);
        assert_eq!(Outcome::of(&ok, true), Outcome::Cancelled);
        assert_eq!(
            Outcome::of(&tool_error("[NOT_FOUND] no such file"), false),
            Outcome::Error("NOT_FOUND".into())
        );
        assert_eq!(
            Outcome::of(
                &tool_error("[INTERNAL_ERROR] the view tool failed unexpectedly (x)."),
                false
            ),
            Outcome::Panicked
        );
        assert_eq!(
            Outcome::of(&tool_error("exit 1 [x]"), false),
            Outcome::Error("TOOL_ERROR".into())
        );
        let rpc = Err(McpError::invalid_params("bad", None));
        assert_eq!(Outcome::of(&rpc, false), Outcome::Error("-32602".into()));
        let ended = Err(McpError::internal_error(crate::drain::SHUTTING_DOWN, None));
        assert_eq!(Outcome::of(&ended, false), Outcome::ShuttingDown);
    }

    #[test]
    fn output_bytes_count_every_text_block() {
        let two =
            Ok(
                CallToolResult::success(vec![ContentBlock::text("four"), ContentBlock::text("é")])
                    .into(),
            );
        assert_eq!(output_bytes(&two), 6);
        assert_eq!(output_bytes(&Err(McpError::invalid_params("bad", None))), 0);
    }
}
