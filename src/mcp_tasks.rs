//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663; issue 12 §1): a
//! long `bash` or `grep` call of a client that declared the extension answers with a task
//! handle instead of its result, and the client follows it with `tasks/get` until the
//! result is there, or stops it with `tasks/cancel`.
//!
//! The server decides per call (the extension leaves it to the server). Boris starts the
//! call as usual and waits `--task-after` (1 s by default): a call that ends by then
//! answers plainly, so quick commands cost no polling; one still running becomes a task
//! and keeps running. Tasks live in the session's workspace (another session cannot see
//! them), at most [`MAX_RUNNING`] run at once per session (past that the call simply
//! waits, as without tasks), and each expires [`TTL`] after it was created.
//!
//! rmcp's [`TaskManager`] keeps the state and answers `tasks/get`; this module decides
//! which calls may become tasks and ties a task's end (cancel, expiry, the session
//! closing) to the command's process group.

use crate::tools::{self, Call, Ctx};
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, JsonObject};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Running tasks per session; the same bound as background tasks.
pub const MAX_RUNNING: usize = crate::exec::tasks::MAX_LIVE_TASKS;

/// How long a task lives: the longest command timeout (10 min) and five minutes more to
/// collect its result. A task still running after that is failed and its command killed;
/// a finished one is forgotten one TTL after it finished.
pub const TTL: Duration = Duration::from_secs(15 * 60);

/// The polling interval suggested to clients.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Runs a task-eligible call: its result if it ends within `grace` (or the request is
/// cancelled, or the session has no room for another task), else a task.
pub async fn call(
    ctx: Ctx,
    name: String,
    args: JsonObject,
    request_ct: CancellationToken,
    grace: Duration,
) -> Result<CallToolResponse, McpError> {
    let work_ct = CancellationToken::new();
    let status = status_message(&name, &args);
    let call = Call {
        ct: work_ct.clone(),
        // notifications/progress is not sent for tasks (SEP-2663), so not for a call
        // that may become one either.
        progress: None,
        in_task: true,
    };
    let manager: TaskManager = ctx.ws.mcp_tasks.clone();
    let mut work =
        tokio::spawn(async move { tools::dispatch::dispatch(&ctx, &name, args, call).await });
    let plain = |joined: Result<Option<CallToolResult>, tokio::task::JoinError>| {
        finished(joined)
            .map(CallToolResponse::Complete)
            .map_err(|e| match e {
                TaskExit::Error(e) => e,
                TaskExit::Cancelled => McpError::internal_error("the call was cancelled", None),
            })
    };
    // Wait `grace`, then (when the session has no room for a task) on to the end: the
    // call then goes on as a plain one, still bound by its own timeout.
    let mut limit = Some(grace);
    loop {
        // `--task-after 0`: a task at once, however far the call got before it is first
        // looked at (a quick command can end while its start blocks the thread).
        if limit == Some(Duration::ZERO) && manager.running_task_count() < MAX_RUNNING {
            break;
        }
        let give_up = async {
            match limit {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            joined = &mut work => return plain(joined),
            _ = request_ct.cancelled() => {
                work_ct.cancel();
                return plain(work.await);
            }
            _ = give_up => {}
        }
        if manager.running_task_count() < MAX_RUNNING {
            break;
        }
        limit = None;
    }
    let options = TaskOptions::new()
        .with_ttl_ms(TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64)
        .with_status_message(status);
    let task = manager.spawn(options, move |task_ctx| {
        Box::pin(async move {
            // Expiry and the session closing drop this future: the command goes too.
            let _stop_on_drop = work_ct.clone().drop_guard();
            tokio::select! {
                joined = &mut work => finished(joined),
                _ = task_ctx.cancelled() => {
                    work_ct.cancel();
                    let _ = work.await;
                    Err(TaskExit::Cancelled)
                }
            }
        })
    });
    Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
}

/// A finished call's result. A panic inside a tool is already a result (`dispatch`), so
/// a join error means the work was aborted.
fn finished(
    joined: Result<Option<CallToolResult>, tokio::task::JoinError>,
) -> Result<CallToolResult, TaskExit> {
    match joined {
        Ok(Some(result)) => Ok(result),
        Ok(None) => Err(TaskExit::Error(McpError::internal_error(
            "the tool is not registered",
            None,
        ))),
        Err(e) if e.is_cancelled() => Err(TaskExit::Cancelled),
        Err(e) => Err(TaskExit::Error(McpError::internal_error(
            format!("the call failed: {e}"),
            None,
        ))),
    }
}

/// The task's `statusMessage`: what it runs, on one short line.
pub fn status_message(tool: &str, args: &JsonObject) -> String {
    let what = match tool {
        "bash" | "terminal_start" => args.get("command"),
        "terminal_write" | "terminal_read" => args.get("session_id"),
        _ => args.get("pattern"),
    }
    .and_then(|v| v.as_str())
    .unwrap_or_default();
    let one_line = what.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown: String = one_line.chars().take(80).collect();
    let ellipsis = if one_line.chars().count() > 80 {
        "…"
    } else {
        ""
    };
    format!("{tool}: {shown}{ellipsis}")
}

/// Ends a session's tasks when its last handle goes: their commands are killed, as a
/// closed session's background tasks are.
pub struct SessionTasks(pub TaskManager);

impl std::fmt::Debug for SessionTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTasks").finish_non_exhaustive()
    }
}

impl Drop for SessionTasks {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: serde_json::Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn status_messages_are_one_short_line() {
        assert_eq!(
            status_message("bash", &obj(json!({"command": "cargo  test\n  --all"}))),
            "bash: cargo test --all"
        );
        let long = "x".repeat(200);
        let m = status_message("grep", &obj(json!({"pattern": long})));
        assert_eq!(m.chars().count(), "grep: ".len() + 80 + 1);
        assert!(m.ends_with('…'));
        assert_eq!(status_message("bash", &obj(json!({}))), "bash: ");
    }
}
