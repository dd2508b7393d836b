//! `bash`, `pipe` profile (seed 004, DESIGN §6): stateless commands in the session's
//! start directory, output cut to its last 2000 lines or 50 KB with the full output in a
//! file once it passes 50 KB, a timeout that backgrounds the command instead of killing
//! it, `check_pid`/`kill_pid` to follow it, and a non-zero exit reported as an error.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::{self, Capture, Limits, Running, tasks::Task};
use crate::text::{sanitize::sanitize, truncate};
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, runs_commands};
use crate::tools::engine::shell::{Outcome, effective_timeout_ms, start_shell, supervise};
use crate::tools::{Call, Ctx};
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PipeArgs {
    /// The bash command to execute
    #[serde(default)]
    pub command: Option<String>,
    /// Timeout in ms before auto-backgrounding (default: 120000)
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Check on a backgrounded process, return new output
    #[serde(default)]
    pub check_pid: Option<i64>,
    /// Kill a backgrounded process, return final output
    #[serde(default)]
    pub kill_pid: Option<i64>,
}

pub fn tool() -> Tool {
    define::<PipeArgs>(
        ToolName::Bash,
        "Run a shell command",
        "Execute a bash command. Output truncated to last 2000 lines or 50KB; if truncated, \
         full output saved to temp file. Commands exceeding timeout are auto-backgrounded.",
        runs_commands("Run a shell command"),
    )
}

/// The rolling buffer keeps 100 KB (twice the shown 50 KB); the file starts past 50 KB.
fn limits(ctx: &Ctx, name: &str) -> Limits {
    Limits {
        head_bytes: truncate::TAIL_BYTES + 1024,
        tail_bytes: 2 * truncate::TAIL_BYTES,
        spill_after: truncate::TAIL_BYTES,
        spill_path: ctx.spill_file(&format!("{name}.log")),
        spill_max: 4 << 30,
        clean_chars: None,
    }
}

pub async fn run(ctx: &Ctx, args: PipeArgs, call: &Call) -> ToolResult<CallToolResult> {
    match (&args.command, args.check_pid, args.kill_pid) {
        (Some(command), None, None) => run_command(ctx, command, args.timeout, call).await,
        (None, Some(pid), None) => check(ctx, pid).await,
        (None, None, Some(pid)) => kill(ctx, pid).await,
        _ => Err(ToolError::invalid(
            "give exactly one of command, check_pid or kill_pid",
        )),
    }
}

async fn run_command(
    ctx: &Ctx,
    command: &str,
    timeout: Option<u64>,
    call: &Call,
) -> ToolResult<CallToolResult> {
    if command.trim().is_empty() {
        return Err(ToolError::new(
            ErrorCode::BashEmptyCommand,
            "command is empty; give the shell command to run",
        ));
    }
    let timeout_ms = effective_timeout_ms(ctx, timeout);
    // Stateless: every command starts in the session's start directory.
    let cwd = &ctx.shared.config.workdir;
    let name = ctx.shared.spill.next("pipe-bash");
    let running = start_shell(
        ctx,
        &format!("{command}\n"),
        cwd,
        limits(ctx, &format!("{name}-stdout")),
        limits(ctx, &format!("{name}-stderr")),
    )?;
    match supervise(&running, Duration::from_millis(timeout_ms), None, call).await {
        Outcome::Exited(exit) => {
            // What it started in the background may outlive the call (issue 25 §7, S4).
            running.release(&ctx.ws.leftovers).await;
            Ok(completed(ctx, &running, exit.code))
        }
        Outcome::Cancelled => {
            let exit = running.terminate(Duration::from_millis(500)).await;
            running.finish().await;
            Ok(completed(ctx, &running, exit.code))
        }
        Outcome::TimedOut | Outcome::HandOff => background(ctx, running, command, timeout_ms),
    }
}

/// The seed's normal completion format; a non-zero exit is `isError`.
fn completed(ctx: &Ctx, running: &Running, code: i32) -> CallToolResult {
    let mut text = String::new();
    for (name, capture) in [("stdout", &running.stdout), ("stderr", &running.stderr)] {
        let c = exec::lock(capture);
        text.push_str(&format!("{name}:\n{}\n\n", render_tail(name, &c)));
    }
    text.push_str(&format!("exit code: {code}"));
    if let Some(line) = crate::tools::engine::shell::sandbox_hint(ctx, &text) {
        text.push('\n');
        text.push_str(&line);
    }
    result(text, code != 0)
}

fn result(text: String, is_error: bool) -> CallToolResult {
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// A stream's last 2000 lines or 50 KB, cleaned, with the seed's notice when cut.
fn render_tail(name: &str, c: &Capture) -> String {
    let raw = if c.complete() { c.head() } else { c.tail() };
    let clean = sanitize(raw);
    let tail = truncate::tail(&clean, truncate::TAIL_LINES, truncate::TAIL_BYTES);
    let mut text = tail.text.trim_end_matches('\n').to_string();
    let whole = c.complete() && tail.limit.is_none();
    if !whole {
        let total_lines = if c.complete() {
            tail.total_lines as u64
        } else {
            c.lines()
        };
        let mut notice = format!(
            "\n[{name}: Showing last {} of {total_lines} lines",
            tail.shown_lines
        );
        if tail.partial_first_line {
            notice.push_str(" (the first shown line is only the end of a longer line)");
        }
        notice.push_str(&full_output_note(c));
        notice.push(']');
        text.push_str(&notice);
    }
    text
}

fn full_output_note(c: &Capture) -> String {
    match (c.spill_path(), c.spill_error()) {
        (Some(path), None) => format!(". Full output: {}", path.display()),
        (Some(path), Some(err)) => {
            format!(
                ". Full output file may be incomplete: {} ({err})",
                path.display()
            )
        }
        (None, Some(err)) => format!(". The full output could not be saved: {err}"),
        (None, None) => String::new(),
    }
}

fn duration_words(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Timeout: the process keeps running, its output keeps going to its files, and the
/// agent gets what it printed so far and the pid to follow it by.
fn background(
    ctx: &Ctx,
    running: Running,
    command: &str,
    timeout_ms: u64,
) -> ToolResult<CallToolResult> {
    if ctx.ws.pipe_procs.check_room().is_err() {
        return Err(ToolError::new(
            ErrorCode::BashTaskLimit,
            format!(
                "the command timed out after {} and could not be backgrounded: {} background \
                 processes already exist (pids {}); it was killed. Use check_pid or kill_pid on them.",
                duration_words(timeout_ms),
                exec::tasks::MAX_LIVE_TASKS,
                ctx.ws.pipe_procs.ids().join(", ")
            ),
        ));
    }
    exec::lock(&running.stdout).force_spill();
    exec::lock(&running.stderr).force_spill();
    let pid = running.pid;
    let mut text = format!(
        "[Command backgrounded after {} timeout (pid {pid}). Partial output:\n\n",
        duration_words(timeout_ms)
    );
    let offsets = {
        let (out, err) = (exec::lock(&running.stdout), exec::lock(&running.stderr));
        text.push_str(&format!("stdout:\n{}\n\n", render_tail("stdout", &out)));
        text.push_str(&format!("stderr:\n{}\n\n", render_tail("stderr", &err)));
        text.push_str(&format!("Full output: {}\n", files(&out, &err)));
        (out.total(), err.total())
    };
    text.push_str("Use check_pid or kill_pid to manage.]");
    let task = ctx.ws.pipe_procs.adopt(
        pid.to_string(),
        command.to_string(),
        running,
        exec::tasks::Deadline::server(ctx.shared.config.background_task_timeout),
    );
    *task.reported.lock().unwrap_or_else(|p| p.into_inner()) = offsets;
    Ok(result(text, false))
}

fn files(out: &Capture, err: &Capture) -> String {
    [out.spill_path(), err.spill_path()]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn find(ctx: &Ctx, pid: i64) -> ToolResult<Arc<Task>> {
    ctx.ws.pipe_procs.get(&pid.to_string()).ok_or_else(|| {
        let known = ctx.ws.pipe_procs.ids();
        ToolError::new(
            ErrorCode::BashTaskNotFound,
            format!(
                "no backgrounded process with pid {pid} in this session (finished ones are \
                 forgotten once reported); current: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        )
    })
}

async fn check(ctx: &Ctx, pid: i64) -> ToolResult<CallToolResult> {
    let task = find(ctx, pid)?;
    if task.is_done() {
        ctx.ws.pipe_procs.remove(&task.id);
        return Ok(ended(&task, "exited with code"));
    }
    let mut text = format!("[Process {pid} still running.\n\n");
    let mut guard = task.reported.lock().unwrap_or_else(|p| p.into_inner());
    let reported = &mut *guard;
    let mut any = false;
    for (name, capture, offset) in [
        ("stdout", &task.running.stdout, &mut reported.0),
        ("stderr", &task.running.stderr, &mut reported.1),
    ] {
        let mut c = exec::lock(capture);
        let total = c.total();
        if total > *offset {
            let fresh = sanitize(&c.read_from(*offset, 2 * truncate::TAIL_BYTES));
            let tail = truncate::tail(&fresh, truncate::TAIL_LINES, truncate::TAIL_BYTES);
            let what = if name == "stdout" { "output" } else { "stderr" };
            let lines = if tail.shown_lines == 1 {
                "line"
            } else {
                "lines"
            };
            text.push_str(&format!(
                "New {what} since last check ({} {lines}):\n{}\n\n",
                tail.shown_lines,
                tail.text.trim_end_matches('\n')
            ));
            any = true;
        }
        *offset = total;
    }
    if !any {
        text.push_str("No new output since last check.\n\n");
    }
    let (out, err) = (
        exec::lock(&task.running.stdout),
        exec::lock(&task.running.stderr),
    );
    text.push_str(&format!("Full output: {}]", files(&out, &err)));
    Ok(result(text, false))
}

async fn kill(ctx: &Ctx, pid: i64) -> ToolResult<CallToolResult> {
    let task = find(ctx, pid)?;
    task.stop("killed with kill_pid").await;
    ctx.ws.pipe_procs.remove(&task.id);
    Ok(ended(&task, "killed; exit code"))
}

/// The final report of a backgrounded process (seed 004 "check_pid result").
fn ended(task: &Task, how: &str) -> CallToolResult {
    let code = task.running.exited().map(|e| e.code).unwrap_or(-1);
    let (out, err) = (
        exec::lock(&task.running.stdout),
        exec::lock(&task.running.stderr),
    );
    let text = format!(
        "[Process {} {how} {code}.\n\nstdout (last {} lines):\n{}\n\nstderr:\n{}\n\nFull output: {}]",
        task.id,
        truncate::TAIL_LINES,
        render_tail("stdout", &out),
        render_tail("stderr", &err),
        files(&out, &err)
    );
    result(text, code != 0 && how.starts_with("exited"))
}
