//! `bash`, `boris` profile (seeds 000 D1–D8, 001, 003; DESIGN §6): the working directory
//! persists across calls through the nonce sentinel, output is cut to the first 30,000
//! characters of each stream, a non-zero exit is data, and `run_in_background` starts a
//! task that `task_output` and `task_stop` follow.

use super::{Call, Ctx, Progress, define, runs_commands, text_result};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::{self, Capture, Limits, Running, Spawn, TERM_GRACE};
use crate::text::{sanitize::sanitize, sentinel, truncate};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Longest timeout a call may ask for (seed 000 D2).
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Progress notifications per second, at most (DESIGN §3: coalesced).
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashArgs {
    /// The command to run. It runs in bash (or sh where bash is missing) in the
    /// session's working directory, which persists across calls (`cd` sticks).
    pub command: String,
    /// Timeout in milliseconds (default: the server's --timeout, 120000 unless set; at
    /// most 600000). On timeout the command's process group gets SIGTERM, then SIGKILL
    /// after 5 seconds.
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Run in the background and return a task_id at once; follow it with task_output
    /// and stop it with task_stop.
    #[serde(default)]
    pub run_in_background: Option<bool>,
    /// A short description of what the command does (for logs; optional).
    #[serde(default)]
    pub description: Option<String>,
}

pub fn tool() -> Tool {
    define::<BashArgs>(
        "bash",
        "Run a shell command",
        "Run a shell command in bash. The working directory persists between calls (cd \
         sticks); environment changes do not. stdin is /dev/null, so interactive commands \
         fail rather than hang. The result gives exit_code (a non-zero exit is not a tool \
         error) and the stdout and stderr sections, each cut to its first 30000 characters; \
         the full output is then saved to a file named in the notice, readable with view or \
         grep. timeout is in milliseconds (default 120000, max 600000). Processes left \
         running when the command ends are killed: for servers and other long jobs use \
         run_in_background, then task_output and task_stop.",
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
        return start_background(ctx, &args.command, &cwd, moved.as_deref());
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
    running.finish().await;

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
    ctx.ws
        .tasks
        .adopt(id.clone(), command.to_string(), running, Some(left));
    let mut text = moved.unwrap_or_default();
    let config = &ctx.shared.config;
    text.push_str(&format!(
        "Still running after {}s: handed off to background task {id} (its timeout ends in \
         {}s). Follow it with {} (task_id \"{id}\", block: true to wait), stop it \
         with {}.\ntask_id: {id}\nstatus: running\n",
        elapsed.as_secs(),
        left.as_secs(),
        super::tool_name(config, "task_output"),
        super::tool_name(config, "task_stop"),
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

/// Adds a `resource_link` for each stream whose whole output is in a spill file (the
/// output was cut, or the command went on in the background), so clients that render
/// links can open it; `resources/read` of its URI works in this session (issue 12 §5).
pub fn with_spill_links(
    ctx: &Ctx,
    running: &Running,
    mut result: CallToolResult,
) -> CallToolResult {
    for capture in [&running.stdout, &running.stderr] {
        let c = exec::lock(capture);
        let Some(path) = c.spill_path() else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut link = rmcp::model::Resource::new(crate::text::file_uri(path), name);
        link.mime_type = Some("text/plain".into());
        link.size = Some(meta.len());
        link.description = Some("The command's whole output on this stream".into());
        ctx.ws.offer(path);
        result
            .content
            .push(rmcp::model::ContentBlock::resource_link(link));
    }
    result
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

/// The timeout of a call: the argument, or `--timeout`, clamped to [1, 600000] ms.
pub fn effective_timeout_ms(ctx: &Ctx, requested: Option<u64>) -> u64 {
    let default = ctx.shared.config.default_timeout.as_millis() as u64;
    requested.unwrap_or(default).clamp(1, MAX_TIMEOUT_MS)
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

/// Starts the shell on `script`; a failure to start is `[BASH_START_FAILED]`.
pub fn start_shell(
    ctx: &Ctx,
    script: &str,
    cwd: &Path,
    stdout: Limits,
    stderr: Limits,
) -> ToolResult<Running> {
    let jail = session_jail(ctx)?;
    Running::spawn(Spawn {
        shell: &ctx.shared.shell,
        script,
        cwd,
        stdout,
        stderr,
        env: &ctx.shared.command_env,
        scratch: jail
            .as_ref()
            .map_or(ctx.shared.spill.path(), |j| j.host_tmp()),
        jail: jail.as_deref(),
    })
    .map_err(|e| {
        ToolError::new(
            ErrorCode::BashStartFailed,
            format!(
                "could not start {} in {}: {}",
                ctx.shared.shell.display(),
                cwd.display(),
                e
            ),
        )
    })
}

/// The session's jail when the sandbox is on, started at its first command. A jail that
/// cannot be set up fails the call, never runs the command unconfined.
fn session_jail(ctx: &Ctx) -> ToolResult<Option<std::sync::Arc<crate::sandbox::client::Jail>>> {
    let Some(sandbox) = &ctx.shared.config.sandbox else {
        return Ok(None);
    };
    let mut slot = ctx.ws.jail.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(jail) = &*slot {
        return Ok(Some(jail.clone()));
    }
    let dir = ctx.ws.session_dir(&ctx.shared.spill).to_path_buf();
    let hidden = vec![ctx.shared.spill.path().to_path_buf()];
    match crate::sandbox::client::Jail::start(sandbox, &dir, hidden) {
        Ok(jail) => {
            for note in &jail.notes {
                tracing::warn!("sandbox: {note}");
            }
            let jail = std::sync::Arc::new(jail);
            *slot = Some(jail.clone());
            Ok(Some(jail))
        }
        Err(e) => Err(ToolError::new(
            ErrorCode::SandboxFailed,
            format!(
                "the command was not run: its sandbox could not be set up ({e}). This is a \
                 fault of the server's setup, not of the command; --sandbox off runs commands \
                 unconfined"
            ),
        )),
    }
}

/// The line that ends a result whose output names a path the sandbox refused
/// (issue 18 §2), if any.
pub fn sandbox_hint(ctx: &Ctx, output: &str) -> Option<String> {
    let sandbox = ctx.shared.config.sandbox.as_ref()?;
    let tmp = ctx
        .ws
        .jail
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|j| j.tmpdir())?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    crate::sandbox::hint::denial_hint(
        output,
        &ctx.ws.cwd(),
        &tmp,
        &sandbox.policy,
        &ctx.shared.scope,
        home.as_deref(),
    )
}

/// How a foreground wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Exited(exec::Exit),
    TimedOut,
    Cancelled,
    /// Still running when the hand-off time came (`--hand-off-after`).
    HandOff,
}

/// Waits for the shell, the deadline or the call's cancellation, sending coalesced
/// progress notifications (at most ten a second) while output arrives.
pub async fn supervise(
    running: &Running,
    timeout: Duration,
    hand_off: Option<Duration>,
    call: &Call,
) -> Outcome {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let hand_off_at = async {
        match hand_off {
            Some(after) if after < timeout => tokio::time::sleep(after).await,
            _ => std::future::pending().await,
        }
    };
    tokio::pin!(hand_off_at);
    let mut tick = tokio::time::interval(PROGRESS_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut reporter = call.progress.as_ref().map(ProgressReporter::new);
    loop {
        tokio::select! {
            exit = running.wait() => return Outcome::Exited(exit),
            _ = &mut deadline => return Outcome::TimedOut,
            _ = call.ct.cancelled() => return Outcome::Cancelled,
            _ = &mut hand_off_at => return Outcome::HandOff,
            _ = tick.tick(), if reporter.is_some() => {
                if let Some(r) = reporter.as_mut() {
                    r.maybe_send(running).await;
                }
            }
        }
    }
}

/// Turns output activity into progress notifications: one when new output arrived since
/// the last, or every second as a heartbeat; `progress` strictly increases.
struct ProgressReporter<'a> {
    sink: &'a Progress,
    sent: u64,
    last_activity: u64,
    last_sent: std::time::Instant,
}

impl<'a> ProgressReporter<'a> {
    fn new(sink: &'a Progress) -> Self {
        ProgressReporter {
            sink,
            sent: 0,
            last_activity: 0,
            last_sent: std::time::Instant::now(),
        }
    }

    async fn maybe_send(&mut self, running: &Running) {
        let activity = running.activity.load(Ordering::Relaxed);
        let heartbeat = self.last_sent.elapsed() >= Duration::from_secs(1);
        if activity == self.last_activity && !heartbeat {
            return;
        }
        self.last_activity = activity;
        self.last_sent = std::time::Instant::now();
        self.sent += 1;
        let message = recent_line(&running.stdout).or_else(|| recent_line(&running.stderr));
        let elapsed = running.started.elapsed().as_secs_f64();
        let message = Some(match message {
            Some(line) => line,
            None => format!("running for {elapsed:.1}s"),
        });
        self.sink.notify(self.sent as f64, message).await;
    }
}

/// The last non-empty line of a stream's recent output, cleaned and cut to 200
/// characters.
fn recent_line(capture: &std::sync::Mutex<Capture>) -> Option<String> {
    let tail = {
        let c = exec::lock(capture);
        let t = c.tail();
        t[t.len().saturating_sub(1024)..].to_vec()
    };
    let clean = sanitize(&tail);
    let line = clean.lines().rev().find(|l| !l.trim().is_empty())?;
    Some(truncate::head(line, 200).0.to_string())
}

/// The `stdout:` and `stderr:` sections that are non-empty, each cut to its first
/// 30,000 characters with the seed's notice and the spill file's path.
pub fn render_streams(running: &Running) -> String {
    let mut out = String::new();
    for (name, capture) in [("stdout", &running.stdout), ("stderr", &running.stderr)] {
        let mut c = exec::lock(capture);
        let section = render_head(&mut c);
        if !section.is_empty() {
            out.push_str(name);
            out.push_str(":\n");
            out.push_str(&section);
            if !section.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

fn render_head(c: &mut Capture) -> String {
    let Some(clean) = c.cleaned() else {
        return String::new();
    };
    let (shown, truncated, total) = (
        clean.text().to_string(),
        clean.truncated(),
        clean.total_chars(),
    );
    if !truncated {
        c.discard_spill();
        return shown;
    }
    let path = c.spill_path().map(|p| p.display().to_string());
    let mut text = shown;
    text.push_str(&truncate::head_notice(
        total as usize,
        truncate::HEAD_CHARS,
        path.as_deref(),
    ));
    if let Some(err) = c.spill_error() {
        text.push_str(&format!("\n[The full output could not be saved: {err}]"));
    }
    text
}

/// `run_in_background`: starts the command and returns its task id at once. A
/// background `cd` does not move the workspace.
fn start_background(
    ctx: &Ctx,
    command: &str,
    cwd: &Path,
    moved: Option<&str>,
) -> ToolResult<CallToolResult> {
    ctx.ws.tasks.check_room().map_err(|_| {
        ToolError::new(
            ErrorCode::BashTaskLimit,
            format!(
                "{} background tasks are already running or finished and unread ({}); read \
                 finished ones with {} or stop one with {}",
                exec::tasks::MAX_LIVE_TASKS,
                ctx.ws.tasks.ids().join(", "),
                super::tool_name(&ctx.shared.config, "task_output"),
                super::tool_name(&ctx.shared.config, "task_stop"),
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
    ctx.ws.tasks.adopt(
        id.clone(),
        command.to_string(),
        running,
        config.background_task_timeout,
    );
    let files = if files.is_empty() {
        String::new()
    } else {
        format!("\noutput files: {}", files.join(", "))
    };
    Ok(text_result(format!(
        "{}task_id: {id}\nstatus: running\nFollow it with {} (task_id \"{id}\"), stop it with {}.{files}",
        moved.unwrap_or_default(),
        super::tool_name(config, "task_output"),
        super::tool_name(config, "task_stop"),
    )))
}
