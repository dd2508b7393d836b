//! `task_output` and `task_stop`: following the `boris` profile's background tasks (seed
//! 000 D7, DESIGN §6). A finished task is dropped once its output has been read.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::{self, tasks::Task};
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, read_only, writes};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// Default and longest wait of a blocking `task_output`, in milliseconds (as Claude
/// Code's TaskOutput).
const DEFAULT_BLOCK_MS: u64 = 30_000;
const MAX_BLOCK_MS: u64 = 600_000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskOutputArgs {
    /// The task_id that bash returned for a run_in_background command.
    pub task_id: String,
    /// Wait until the task has finished (or the timeout passes) before answering.
    #[serde(default)]
    pub block: Option<bool>,
    /// With block: how long to wait, in milliseconds (default 30000, max 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskStopArgs {
    /// The task_id of the background task to stop.
    pub task_id: String,
}

pub fn output_tool() -> Tool {
    output_tool_with(false)
}

/// task_output, saying that it reads terminal sessions too where the server has them.
pub fn output_tool_with(terminals: bool) -> Tool {
    define::<TaskOutputArgs>(
        ToolName::TaskOutput,
        "Read a background task's output",
        if terminals {
            "Read the output of a background bash task (run_in_background) or of a terminal \
             session (term_N: what is new in it). While it runs: \
             status: running and the output so far. Once finished: status: completed, its \
             exit_code and output; the task is then forgotten. With block: true, waits for the \
             task to finish (up to timeout ms, default 30000)."
        } else {
            "Read the output of a background bash task (run_in_background). While it runs: \
             status: running and the output so far. Once finished: status: completed, its \
             exit_code and output; the task is then forgotten. With block: true, waits for the \
             task to finish (up to timeout ms, default 30000)."
        },
        read_only("Read a background task's output"),
    )
}

pub fn stop_tool() -> Tool {
    define::<TaskStopArgs>(
        ToolName::TaskStop,
        "Stop a background task",
        "Stop a background bash task: its process group gets SIGTERM, then SIGKILL after 5 \
         seconds. Returns its final output; the task is then forgotten.",
        writes("Stop a background task", true),
    )
}

fn find(ctx: &Ctx, id: &str) -> ToolResult<Arc<Task>> {
    ctx.ws.tasks.get(id).ok_or_else(|| {
        let known = ctx.ws.tasks.ids();
        ToolError::new(
            ErrorCode::BashTaskNotFound,
            format!(
                "no background task {} in this session (finished tasks are forgotten once \
                 read); current tasks: {}",
                crate::text::quote::quoted(id),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        )
    })
}

pub async fn output(ctx: &Ctx, args: TaskOutputArgs) -> ToolResult<CallToolResult> {
    let task = find(ctx, &args.task_id)?;
    // A terminal session (issue 19 §1): what is new, as terminal_read shows it.
    if let Some(session) = ctx.ws.terminals.get(&task.id) {
        let block = args.block.unwrap_or(false).then(|| {
            Duration::from_millis(args.timeout.unwrap_or(DEFAULT_BLOCK_MS).min(MAX_BLOCK_MS))
        });
        let report = crate::tools::boris::terminal::task_output(&session, block).await;
        return Ok(crate::tools::boris::terminal::answer(
            ctx, &session, report, false,
        ));
    }
    if args.block.unwrap_or(false) && !task.is_done() {
        let wait = args.timeout.unwrap_or(DEFAULT_BLOCK_MS).min(MAX_BLOCK_MS);
        task.wait_done(Duration::from_millis(wait)).await;
    }
    if !task.is_done() {
        return Ok(text_result(render(&task, "running", None)));
    }
    ctx.ws.tasks.remove(&task.id);
    let result = text_result(finished(ctx, &task));
    Ok(crate::tools::engine::shell::with_spill_links(
        ctx,
        &task.running,
        result,
    ))
}

pub async fn stop(ctx: &Ctx, args: TaskStopArgs) -> ToolResult<CallToolResult> {
    let task = find(ctx, &args.task_id)?;
    if let Some(session) = ctx.ws.terminals.get(&task.id) {
        let report =
            crate::tools::boris::terminal::stop_session(&session, "stopped with task_stop").await;
        return Ok(crate::tools::boris::terminal::answer(
            ctx, &session, report, false,
        ));
    }
    task.stop("stopped with task_stop").await;
    ctx.ws.tasks.remove(&task.id);
    let result = text_result(finished(ctx, &task));
    Ok(crate::tools::engine::shell::with_spill_links(
        ctx,
        &task.running,
        result,
    ))
}

/// The final report of a task. A background command runs without the cwd sentinel; a
/// foreground one handed off (`--hand-off-after`) has it, and it is removed (from the
/// output file too): a task's cwd is never applied to the workspace.
fn finished(ctx: &Ctx, task: &Task) -> String {
    exec::lock(&task.running.stdout).strip_sentinel(&ctx.ws.nonce);
    let code = task.running.exited().map(|e| e.code).unwrap_or(-1);
    match task.stopped_reason() {
        Some(reason) => render(task, "killed", Some((code, Some(reason)))),
        None => render(task, "completed", Some((code, None))),
    }
}

fn render(task: &Task, status: &str, end: Option<(i32, Option<String>)>) -> String {
    let mut text = format!("task_id: {}\nstatus: {status}\n", task.id);
    if let Some((code, reason)) = end {
        if let Some(reason) = reason {
            text.push_str(&format!("reason: {reason}\n"));
        }
        text.push_str(&format!("exit_code: {code}\n"));
    }
    text.push_str(&crate::tools::engine::shell::render_streams(&task.running));
    text.trim_end_matches('\n').to_string()
}
