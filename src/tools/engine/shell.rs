//! The shell engine the command tools share (`bash` in both profiles, Claude Code's
//! `Bash`, the task tools): starting the shell (inside the session's sandbox when it is
//! on), waiting for it with progress and hand-off, and rendering its streams.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::{self, Capture, Limits, Running, Spawn};
use crate::text::{sanitize::sanitize, truncate};
use crate::tools::{Call, Ctx, Progress};
use rmcp::model::CallToolResult;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Longest timeout a call may ask for (seed 000 D2).
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// Progress notifications per second, at most (DESIGN §3: coalesced).
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

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

/// The timeout of a call: the argument, or `--timeout`, clamped to [1, 600000] ms.
pub fn effective_timeout_ms(ctx: &Ctx, requested: Option<u64>) -> u64 {
    let default = ctx.shared.config.default_timeout.as_millis() as u64;
    requested.unwrap_or(default).clamp(1, MAX_TIMEOUT_MS)
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
        login: false,
        cwd,
        stdout,
        stderr,
        env: &ctx.shared.command_env,
        scratch: jail
            .as_ref()
            .map_or(ctx.shared.spill.path(), |j| j.host_tmp()),
        jail: jail.as_deref(),
        io: exec::Io::Captured,
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
pub fn session_jail(ctx: &Ctx) -> ToolResult<Option<std::sync::Arc<crate::sandbox::client::Jail>>> {
    let Some(sandbox) = &ctx.shared.config.sandbox else {
        return Ok(None);
    };
    let mut slot = ctx.ws.jail.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(jail) = &*slot {
        if !jail.has_ended() {
            return Ok(Some(jail.clone()));
        }
        tracing::warn!("the session's sandbox process ended; starting a new one");
    }
    let dir = ctx.ws.session_dir(&ctx.shared.spill).to_path_buf();
    let mut hidden = vec![ctx.shared.spill.path().to_path_buf()];
    hidden.extend(ctx.shared.spill.others());
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
        .map(|j| j.host_tmp().to_path_buf())?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    crate::sandbox::hint::denial_hint(
        output,
        &ctx.ws.cwd(),
        &tmp,
        &sandbox.policy,
        &ctx.shared.scope,
        home.as_deref(),
        &crate::scope::RealFs,
    )
    .or_else(|| {
        // The jail's own /dev/shm with namespaces; the host's, not granted, without.
        let shm_writable = sandbox.support.namespaces
            || sandbox
                .policy
                .write
                .iter()
                .any(|w| Path::new("/dev/shm").starts_with(w));
        crate::sandbox::hint::shared_memory_hint(output, shm_writable)
    })
    .inspect(|_| crate::metrics::global().record_sandbox_refusal())
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
