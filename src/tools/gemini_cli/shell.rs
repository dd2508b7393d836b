//! Gemini CLI's `run_shell_command` over Boris's shell engine: one-shot, as Gemini CLI
//! runs it (each command starts in the working directory or `dir_path`; a `cd` does
//! not carry over), stdout and stderr combined in order, an inactivity timeout, and the
//! result in Gemini CLI's shape (`Output: …`, `Exit Code: N` when non-zero; a non-zero
//! exit is not a tool error). Output over 40,000 characters shows its first 8,000 and
//! last 32,000 characters and names the file that holds all of it, as Gemini CLI's
//! truncation does. Every rule of the engine holds: the sandbox, the process group
//! killed when the command ends, bounded memory, the non-interactive environment.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::{self, Capture, Limits, Running, TERM_GRACE};
use crate::text::sanitize::sanitize;
use crate::tools::engine::shell::{
    Outcome, sandbox_hint, start_shell, supervise, with_spill_links,
};
use crate::tools::{Call, Ctx, text_result};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ShellArgs")]
pub struct ShellArgs {
    /// Exact bash command to execute as `bash -c <command>`
    pub command: String,
    /// Brief description of the command for the user. Be specific and concise. Ideally a
    /// single sentence. No line breaks.
    #[serde(default)]
    pub description: Option<String>,
    /// (OPTIONAL) The path of the directory to run the command in. If not provided, the
    /// working directory is used. Must be a directory within the workspace and must
    /// already exist.
    #[serde(default)]
    pub dir_path: Option<String>,
}

/// Characters of output shown whole; past it the head and tail below are shown.
pub const SHOWN_CHARS: usize = 40_000;
const HEAD_CHARS: usize = 8_000;
const TAIL_CHARS: usize = 32_000;

/// The combined stream: the raw head holds any output small enough to show whole (4
/// bytes a character at most), the tail the last 32,000 characters, the spill file all
/// of it once it may be too long.
fn limits(ctx: &Ctx, name: &str) -> Limits {
    Limits {
        head_bytes: SHOWN_CHARS * 4,
        tail_bytes: TAIL_CHARS * 4,
        spill_after: SHOWN_CHARS,
        spill_path: ctx.spill_file(&format!("{name}.log")),
        spill_max: 4 << 30,
        clean_chars: Some(HEAD_CHARS),
    }
}

pub async fn run(ctx: &Ctx, args: ShellArgs, call: &Call) -> ToolResult<CallToolResult> {
    if args.command.trim().is_empty() {
        return Err(ToolError::new(
            ErrorCode::BashEmptyCommand,
            "command is empty; give the shell command to run",
        ));
    }
    let cwd = match args.dir_path.as_deref().map(str::trim) {
        None | Some("") => ctx.ws.cwd(),
        Some(dir) => {
            let path = ctx.shared.scope.resolve(&ctx.ws.cwd(), dir)?;
            match std::fs::metadata(&path.real) {
                Ok(m) if m.is_dir() => path.real,
                Ok(_) => {
                    return Err(ToolError::invalid(format!(
                        "dir_path {} is not a directory",
                        path.shown.display()
                    )));
                }
                Err(e) => return Err(ToolError::io(&path.shown, "run a command in", &e)),
            }
        }
    };
    let name = ctx.shared.spill.next("gemini-shell");
    // One stream, in the order the command wrote it: stderr goes where stdout goes.
    let script = format!("exec 2>&1\n{}\n", args.command);
    let running = start_shell(
        ctx,
        &script,
        &cwd,
        limits(ctx, &format!("{name}-output")),
        limits(ctx, &format!("{name}-stderr")),
    )?;
    let window = ctx
        .shared
        .config
        .default_timeout
        .max(Duration::from_millis(1));
    let outcome = supervise_inactivity(&running, window, call).await;
    let exit = match outcome {
        Outcome::Exited(exit) => exit,
        Outcome::TimedOut | Outcome::HandOff => running.terminate(TERM_GRACE).await,
        Outcome::Cancelled => running.terminate(Duration::from_millis(500)).await,
    };
    running.finish().await;
    let (output, cut) = {
        let mut c = exec::lock(&running.stdout);
        render_output(&mut c)
    };
    let mut text = String::new();
    if let Some(notice) = cut {
        text.push_str(&notice);
        text.push('\n');
    }
    match outcome {
        Outcome::TimedOut | Outcome::HandOff => {
            text.push_str(&format!(
                "Command was automatically cancelled because it exceeded the timeout of {} \
                 without output.",
                minutes(window)
            ));
            push_partial(&mut text, &output);
        }
        Outcome::Cancelled => {
            text.push_str("Command was cancelled before it could complete.");
            push_partial(&mut text, &output);
        }
        Outcome::Exited(_) => {
            text.push_str("Output: ");
            text.push_str(if output.is_empty() {
                "(empty)"
            } else {
                &output
            });
            if exit.code != 0 {
                text.push_str(&format!("\nExit Code: {}", exit.code));
            }
        }
    }
    if let Some(line) = sandbox_hint(ctx, &text) {
        text.push('\n');
        text.push_str(line.trim_end());
    }
    Ok(with_spill_links(ctx, &running, text_result(text)))
}

/// `2.0 minutes` as Gemini CLI says it; under a minute, in seconds (`--timeout 5`).
fn minutes(d: Duration) -> String {
    if d < Duration::from_secs(60) {
        format!("{} seconds", d.as_secs_f64())
    } else {
        format!("{:.1} minutes", d.as_secs_f64() / 60.0)
    }
}

fn push_partial(text: &mut String, output: &str) {
    if output.trim().is_empty() {
        text.push_str(" There was no output before it was cancelled.");
    } else {
        text.push_str(" Below is the output before it was cancelled:\n");
        text.push_str(output);
    }
}

/// Waits for the command, which is timed out only after `window` without any output
/// (Gemini CLI's inactivity timeout; Boris's `--timeout` sets the window), and never
/// after more than the longest timeout any call may have (10 minutes).
async fn supervise_inactivity(running: &Running, window: Duration, call: &Call) -> Outcome {
    let hard = Duration::from_millis(crate::tools::engine::shell::MAX_TIMEOUT_MS);
    loop {
        let seen = running.activity.load(Ordering::Relaxed);
        let left = hard.saturating_sub(running.started.elapsed());
        if left.is_zero() {
            return Outcome::TimedOut;
        }
        match supervise(running, window.min(left), None, call).await {
            Outcome::TimedOut if running.activity.load(Ordering::Relaxed) != seen => continue,
            other => return other,
        }
    }
}

/// The cleaned output (without its final line breaks) and, when it is over
/// [`SHOWN_CHARS`], Gemini CLI's notice naming the file with all of it; the output is
/// then its first 8,000 and last 32,000 characters around an omission marker.
fn render_output(c: &mut Capture) -> (String, Option<String>) {
    if c.complete() {
        let all = sanitize(c.head());
        let chars = all.chars().count();
        if chars <= SHOWN_CHARS {
            c.discard_spill();
            return (all.trim_end_matches('\n').to_string(), None);
        }
        let head: String = all.chars().take(HEAD_CHARS).collect();
        let tail: String = all.chars().skip(chars - TAIL_CHARS).collect();
        return cut(c, head, tail, chars - HEAD_CHARS - TAIL_CHARS);
    }
    let tail_text = sanitize(c.tail());
    let tail_chars = tail_text.chars().count();
    let tail: String = tail_text
        .chars()
        .skip(tail_chars.saturating_sub(TAIL_CHARS))
        .collect();
    let (head, total) = match c.cleaned() {
        Some(clean) => (clean.text().to_string(), clean.total_chars() as usize),
        None => (String::new(), c.chars() as usize),
    };
    let omitted = total.saturating_sub(head.chars().count() + tail.chars().count());
    cut(c, head, tail, omitted)
}

fn cut(c: &Capture, head: String, tail: String, omitted: usize) -> (String, Option<String>) {
    let file = match (c.spill_path(), c.spill_error()) {
        (Some(p), None) => p.display().to_string(),
        (Some(p), Some(e)) => format!("{} (may be incomplete: {e})", p.display()),
        (None, Some(e)) => format!("(the full output could not be saved: {e})"),
        (None, None) => "(not saved)".to_string(),
    };
    let notice = format!(
        "Output too large. Showing first {} and last {} characters. For full output see: {file}",
        thousands(HEAD_CHARS),
        thousands(TAIL_CHARS)
    );
    let text = format!(
        "{head}\n\n... [{} characters omitted] ...\n\n{}",
        thousands(omitted),
        tail.trim_end_matches('\n')
    );
    (text, Some(notice))
}

fn thousands(n: usize) -> String {
    crate::search::output::thousands(n)
}
