//! Runs one tool call through its row of the table ([`super::registry`]): async tools on
//! the async workers, blocking ones on the blocking pool, each outcome in the row's words
//! and every panic a result the client can read.

use super::context::{Call, Ctx};
use super::registry::{Args, Handler, row};
use crate::error::ToolResult;
use crate::tool_name::ToolName;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};

/// Runs the tool `name`, or returns `None` when this server does not register it.
/// Every outcome, including a panic inside the tool, is a result the client can read.
pub async fn dispatch(
    ctx: &Ctx,
    name: &str,
    args: JsonObject,
    mut call: Call,
) -> Option<CallToolResult> {
    if !ctx.shared.tools.iter().any(|t| t.name == name) {
        return None;
    }
    let tool = ToolName::lookup(ctx.shared.config.tool_profile.family(), name)?;
    // The call stops on its own cancellation or on server shutdown, whichever comes
    // first.
    let request_ct = std::mem::replace(&mut call.ct, crate::exec::shutdown_token().child_token());
    let linked = call.ct.clone();
    let link = tokio::spawn(async move {
        request_ct.cancelled().await;
        linked.cancel();
    });
    let _unlink = AbortOnDrop(link.abort_handle());
    let row = row(tool);
    let args = Args::new(tool, args);
    let outcome = match row.handler {
        Handler::Async(run) => guarded(name, run(ctx, args, &call)).await,
        Handler::Blocking(run) => {
            // Blocking filesystem work stays off the async workers; a panic surfaces as
            // a JoinError.
            let (ctx, ct) = (ctx.clone(), call.ct.clone());
            match tokio::task::spawn_blocking(move || run(&ctx, args, &ct)).await {
                Ok(outcome) => outcome,
                Err(join_error) => {
                    return Some(panic_result(name, join_error.try_into_panic().ok()));
                }
            }
        }
    };
    let outcome = row.wording.apply(&ctx.shared.config, tool, outcome);
    Some(outcome.unwrap_or_else(|e| e.to_result()))
}

/// Aborts a helper task when the call that spawned it ends.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs an async tool body, turning a panic into a result.
pub async fn guarded<F>(tool: &str, fut: F) -> ToolResult<CallToolResult>
where
    F: std::future::Future<Output = ToolResult<CallToolResult>>,
{
    use futures::FutureExt as _;
    match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(payload) => Ok(panic_result(tool, Some(payload))),
    }
}

/// The result a panicking tool call returns.
pub fn panic_result(tool: &str, payload: Option<Box<dyn std::any::Any + Send>>) -> CallToolResult {
    let detail = payload
        .as_ref()
        .and_then(|p| {
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
        })
        .unwrap_or_else(|| "unknown panic".to_string());
    // A library's panic message may quote an argument whole (globset quotes the regex it
    // built from a pattern): cut it (issue 28 §7).
    let detail = crate::text::quote::cut_long_quotes(&detail);
    let detail =
        crate::text::quote::head_with_ellipsis(&detail, 4 * crate::text::quote::QUOTE_MAX_BYTES);
    tracing::error!(tool, %detail, "tool call panicked");
    CallToolResult::error(vec![ContentBlock::text(format!(
        "[INTERNAL_ERROR] the {tool} tool failed unexpectedly ({detail}). Files are written \
         atomically, so none was left half-written. This is a bug in Boris; please report it."
    ))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_call_becomes_an_error_result() {
        let err = tokio::task::spawn_blocking(|| panic!("boom"))
            .await
            .unwrap_err();
        let r = panic_result("view", err.try_into_panic().ok());
        assert_eq!(r.is_error, Some(true));
        let text = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(
            text.starts_with("[INTERNAL_ERROR] the view tool failed unexpectedly (boom)"),
            "{text}"
        );
        let r = guarded("bash", async { panic!("async boom") })
            .await
            .unwrap();
        let text = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.contains("(async boom)"), "{text}");
    }
}
