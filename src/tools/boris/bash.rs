//! `bash`, `boris` profile (seeds 000 D1–D8, 001, 003; DESIGN §6): the working directory
//! persists across calls through the nonce sentinel, output is cut to the first 30,000
//! characters of each stream, a non-zero exit is data, and `run_in_background` starts a
//! task that `task_output` and `task_stop` follow.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::{self, Limits, Running, TERM_GRACE, tasks::Deadline};
use crate::text::{sentinel, truncate};
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, runs_commands};
use crate::tools::engine::shell::{
    Outcome, effective_timeout_ms, render_streams, sandbox_hint, start_shell, supervise,
    with_spill_links,
};
use crate::tools::{Call, Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashArgs {
    /// The command (bash, else sh).
    pub command: String,
    /// Milliseconds (default 120000, at most 600000); then the process group is killed.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Return a task_id at once; follow it with task_output, stop it with task_stop.
    #[serde(default)]
    pub run_in_background: Option<bool>,
    /// What the command does, for logs.
    #[serde(default)]
    pub description: Option<String>,
}

pub fn tool() -> Tool {
    define::<BashArgs>(
        ToolName::Bash,
        "Run a shell command",
        "Run a shell command. The working directory persists between calls (cd sticks); \
         environment changes do not. stdin is /dev/null, so interactive commands fail rather \
         than hang. Answers with exit_code (non-zero is not a tool error) and stdout and \
         stderr, each cut to its first 30000 characters (the whole output is saved to a file \
         the notice names). Jobs started with & outlive the call, until the session ends; for \
         servers and other long jobs use run_in_background.",
        runs_commands("Run a shell command"),
    )
}

/// Limits for one stream of the `boris` profile: the first 30,000 *clean* characters
/// are kept as output arrives; the raw head only has to hold a stream small enough not
/// to spill; the spill file starts once the stream may no longer fit the shown part;
/// the tail holds the sentinel.
fn limits(ctx: &Ctx, name: &str) -> Limits {
    Limits {
        head_bytes: truncate::HEAD_CHARS,
        tail_bytes: 64 * 1024,
        spill_after: truncate::HEAD_CHARS,
        spill_path: ctx.spill_file(&format!("{name}.log")),
        spill_max: 4 << 30,
        clean_chars: Some(truncate::HEAD_CHARS),
    }
}

pub async fn run(ctx: &Ctx, args: BashArgs, call: &Call) -> ToolResult<CallToolResult> {
    if args.command.trim().is_empty() {
        return Err(ToolError::new(
            ErrorCode::BashEmptyCommand,
            "command is empty; give the shell command to run",
        ));
    }
    let (cwd, moved) = usable_cwd(ctx);
    if args.run_in_background.unwrap_or(false) {
        // A timeout the call gives holds in the background too (issue 29 §5): the
        // task is killed at it, or at the server's background-task timeout if sooner.
        let asked = args
            .timeout
            .map(|t| effective_timeout_ms(ctx, Some(t)))
            .map(|ms| Deadline::call(ms, Duration::from_millis(ms)));
        let deadline = Deadline::earliest(
            asked,
            Deadline::server(ctx.shared.config.background_task_timeout),
        );
        return start_background(ctx, &args.command, &cwd, moved.as_deref(), deadline);
    }
    let timeout_ms = effective_timeout_ms(ctx, args.timeout);
    let timeout = Duration::from_millis(timeout_ms);
    let running = spawn(ctx, &args.command, &cwd, false)?;
    // Only when there is room for one more task: otherwise the call waits as usual.
    let hand_off = ctx
        .shared
        .config
        .hand_off_after
        .filter(|_| !call.in_task && ctx.ws.tasks.check_room().is_ok());
    let mut outcome = supervise(&running, timeout, hand_off, call).await;
    if outcome == Outcome::HandOff {
        if ctx.ws.tasks.check_room().is_ok() {
            return Ok(hand_off_to_task(
                ctx,
                &args.command,
                running,
                timeout,
                moved,
            ));
        }
        let left = timeout.saturating_sub(running.started.elapsed());
        outcome = supervise(&running, left, None, call).await;
    }
    let exit = match outcome {
        Outcome::Exited(exit) => exit,
        Outcome::TimedOut | Outcome::HandOff => running.terminate(TERM_GRACE).await,
        Outcome::Cancelled => running.terminate(Duration::from_millis(500)).await,
    };
    match outcome {
        // What it started in the background may outlive the call (issue 25 §7, S4).
        Outcome::Exited(_) => running.release(&ctx.ws.leftovers).await,
        _ => running.finish().await,
    }

    let cwd = exec::lock(&running.stdout).strip_sentinel(&ctx.ws.nonce);
    // A command that timed out or was cancelled leaves the cwd where it was before it,
    // however it died: with SIGTERM the shell's EXIT trap still reports where it got
    // to, with SIGKILL it cannot, and the next call must not depend on which.
    if let (Some(cwd), Outcome::Exited(_)) = (cwd, outcome) {
        let cwd = PathBuf::from(cwd);
        if cwd.is_dir() {
            ctx.ws.set_cwd(cwd);
        }
    }
    let mut text = moved.unwrap_or_default();
    if matches!(outcome, Outcome::TimedOut) {
        text.push_str(&format!("Command timed out after {timeout_ms}ms\n"));
    }
    text.push_str(&format!("exit_code: {}\n", exit.code));
    text.push_str(&render_streams(&running));
    if let Some(line) = sandbox_hint(ctx, &text) {
        text.push_str(&line);
        text.push('\n');
    }
    Ok(with_spill_links(
        ctx,
        &running,
        text_result(text.trim_end_matches('\n').to_string()),
    ))
}

/// Sends each stream's output (so far and from now on) to its spill file; the
/// `stdout: PATH`, `stderr: PATH` entries an answer names.
fn output_to_files(running: &Running) -> Vec<String> {
    let mut files = Vec::new();
    for (name, capture) in [("stdout", &running.stdout), ("stderr", &running.stderr)] {
        let mut c = exec::lock(capture);
        c.force_spill();
        if let Some(p) = c.spill_path() {
            files.push(format!("{name}: {}", p.display()));
        }
    }
    files
}

/// Turns a foreground command that is still running at `--hand-off-after` into a
/// background task (issue 12 §2): the call answers with the output so far and no
/// `exit_code`, the task keeps the rest of the call's timeout, and the whole output goes
/// on into files whose paths the answer names. The cwd stays as it was, as after any
/// command that did not finish in the call.
fn hand_off_to_task(
    ctx: &Ctx,
    command: &str,
    running: Running,
    timeout: Duration,
    moved: Option<String>,
) -> CallToolResult {
    let elapsed = running.started.elapsed();
    // Rendered before the files start: what the answer shows is what ran so far.
    let so_far = render_streams(&running);
    let files = output_to_files(&running);
    let id = ctx.ws.tasks.next_id();
    tracing::info!(task = %id, pid = running.pid, "foreground command handed off to the background");
    let left = timeout.saturating_sub(elapsed);
    ctx.ws.tasks.adopt(
        id.clone(),
        command.to_string(),
        running,
        Some(Deadline::call(timeout.as_millis() as u64, left)),
    );
    let mut text = moved.unwrap_or_default();
    let config = &ctx.shared.config;
    text.push_str(&format!(
        "Still running after {}s: handed off to background task {id} (its timeout ends in \
         {}s). Follow it with {} (task_id \"{id}\", block: true to wait), stop it \
         with {}.\ntask_id: {id}\nstatus: running\n",
        elapsed.as_secs(),
        left.as_secs(),
        crate::tools::tool_name(config, ToolName::TaskOutput),
        crate::tools::tool_name(config, ToolName::TaskStop),
    ));
    if !files.is_empty() {
        text.push_str(&format!("output files: {}\n", files.join(", ")));
    }
    text.push_str(&so_far);
    let result = text_result(text.trim_end_matches('\n').to_string());
    match ctx.ws.tasks.get(&id) {
        Some(task) => with_spill_links(ctx, &task.running, result),
        None => result,
    }
}

/// The workspace cwd, or — when it was removed since — its nearest existing ancestor
/// (else the start directory), which becomes the cwd; with a note saying so.
fn usable_cwd(ctx: &Ctx) -> (PathBuf, Option<String>) {
    let cwd = ctx.ws.cwd();
    if cwd.is_dir() {
        return (cwd, None);
    }
    let fallback = cwd
        .ancestors()
        .find(|p| p.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| ctx.shared.config.workdir.clone());
    ctx.ws.set_cwd(fallback.clone());
    let note = format!(
        "[The working directory {} no longer exists; the command ran in {}]\n",
        cwd.display(),
        fallback.display()
    );
    (fallback, Some(note))
}

/// Starts the shell for `command` in `cwd`; a foreground command gets the sentinel trap
/// in front of it (its final cwd moves the workspace), a background one does not (its
/// cwd never does, and its output files are read as they are: Claude Code's clients
/// `Read` them, so no marker may land in them).
fn spawn(ctx: &Ctx, command: &str, cwd: &Path, background: bool) -> ToolResult<Running> {
    let script = if background {
        format!("{command}\n")
    } else {
        sentinel::wrap(command, &ctx.ws.nonce, ctx.shared.shell.ends_with("bash"))
    };
    let name = ctx.shared.spill.next("bash");
    start_shell(
        ctx,
        &script,
        cwd,
        limits(ctx, &format!("{name}-stdout")),
        limits(ctx, &format!("{name}-stderr")),
    )
}

/// `run_in_background`: starts the command and returns its task id at once. A
/// background `cd` does not move the workspace.
fn start_background(
    ctx: &Ctx,
    command: &str,
    cwd: &Path,
    moved: Option<&str>,
    deadline: Option<Deadline>,
) -> ToolResult<CallToolResult> {
    ctx.ws.tasks.check_room().map_err(|_| {
        ToolError::new(
            ErrorCode::BashTaskLimit,
            format!(
                "{} background tasks are already running or finished and unread ({}); read \
                 finished ones with {} or stop one with {}",
                exec::tasks::MAX_LIVE_TASKS,
                ctx.ws.tasks.ids().join(", "),
                crate::tools::tool_name(&ctx.shared.config, ToolName::TaskOutput),
                crate::tools::tool_name(&ctx.shared.config, ToolName::TaskStop),
            ),
        )
    })?;
    let running = spawn(ctx, command, cwd, true)?;
    let config = &ctx.shared.config;
    // Claude Code's clients read a task's output from its file: name the files (the
    // output goes to them from the start).
    let files = if config.tool_profile == crate::config::ToolProfile::ClaudeCode {
        output_to_files(&running)
    } else {
        Vec::new()
    };
    let id = ctx.ws.tasks.next_id();
    tracing::info!(task = %id, pid = running.pid, "background task started");
    ctx.ws
        .tasks
        .adopt(id.clone(), command.to_string(), running, deadline);
    let files = if files.is_empty() {
        String::new()
    } else {
        format!("\noutput files: {}", files.join(", "))
    };
    Ok(text_result(format!(
        "{}task_id: {id}\nstatus: running\nFollow it with {} (task_id \"{id}\"), stop it with {}.{files}",
        moved.unwrap_or_default(),
        crate::tools::tool_name(config, ToolName::TaskOutput),
        crate::tools::tool_name(config, ToolName::TaskStop),
    )))
}
