//! Codex's `exec_command` and `write_stdin` (issue 19 §3; `--tool-profile codex`): a
//! command that may stay alive across calls, as Codex's unified exec runs it, over
//! Boris's terminal engine (`crate::terminal`, shared with `terminal_start`): pipes by
//! default (stdout and stderr one stream, stdin closed, as Codex spawns them), a
//! pseudo-terminal with `tty: true`; the session's sandbox, its task registry (so
//! `task_stop`, the session's end and shutdown kill what is left), its bounds. The
//! numbers and the answer's text are `text::unified_exec`'s.
//!
//! Codex's session ids are numbers: session `term_N` of the engine is Codex's `N`.
//! Unlike Codex, a call also answers as soon as the program waits for input (a REPL at
//! its prompt), not only when it exits or the yield time passes: the answer is the same,
//! sooner.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::terminal::{self, Report, Session, Status, keys};
use crate::text::unified_exec::{self as ux, Answer, State};
use crate::tool_name::ToolName;
use crate::tools::boris::terminal::{self as engine_tools, Open};
use crate::tools::engine::schema::{define, runs_commands};
use crate::tools::{Call, Ctx};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The characters a model sends to interrupt (Ctrl-C); on pipes Boris signals the group.
const INTERRUPT: &str = "\u{3}";
/// What the terminal engine may put in one answer before Codex's token cut (its own
/// memory keeps about this much of what scrolled by).
const ENGINE_BUDGET: usize = 400_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ExecCommandArgs", deny_unknown_fields)]
pub struct ExecCommandArgs {
    /// Shell command to execute.
    pub cmd: String,
    /// Optional working directory to run the command in; defaults to the turn cwd.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Shell binary to launch. Defaults to the user's default shell.
    #[serde(default)]
    pub shell: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Whether to allocate a TTY for the command. Defaults to false (plain \
                       pipes); set to true to open a PTY and access TTY process."
    )]
    pub tty: Option<bool>,
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(schema_with = "yield_schema")]
    pub yield_time_ms: Option<u64>,
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(schema_with = "tokens_schema")]
    pub max_output_tokens: Option<u64>,
    /// Whether to run the shell with -l/-i semantics. Defaults to true.
    #[serde(default)]
    pub login: Option<bool>,
    #[serde(default)]
    #[schemars(
        description = "Sandbox permissions for the command. Set to \"require_escalated\" to \
                       request running without sandbox restrictions; defaults to \
                       \"use_default\". (Here the server's sandbox holds for every command: \
                       the value is accepted and changes nothing.)"
    )]
    pub sandbox_permissions: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Only set if sandbox_permissions is \"require_escalated\": why the \
                       command needs to run outside the sandbox. (Accepted and ignored here.)"
    )]
    pub justification: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Only specify when sandbox_permissions is \"require_escalated\": a \
                       prefix command pattern for similar requests, e.g. [\"git\", \"pull\"]. \
                       (Accepted and ignored here.)"
    )]
    pub prefix_rule: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "WriteStdinArgs", deny_unknown_fields)]
pub struct WriteStdinArgs {
    #[serde(deserialize_with = "required_whole_number")]
    #[schemars(schema_with = "session_schema")]
    pub session_id: u64,
    /// Bytes to write to stdin (may be empty to poll).
    #[serde(default)]
    pub chars: Option<String>,
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(schema_with = "yield_schema")]
    pub yield_time_ms: Option<u64>,
    #[serde(default, deserialize_with = "whole_number")]
    #[schemars(schema_with = "tokens_schema")]
    pub max_output_tokens: Option<u64>,
}

fn number(description: &str) -> schemars::Schema {
    schemars::json_schema!({"type": "number", "description": description})
}

fn yield_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    number("How long to wait (in milliseconds) for output before yielding.")
}

fn tokens_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    number("Maximum number of tokens to return. Excess output will be truncated.")
}

fn session_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    number("Identifier of the running unified exec session.")
}

/// Codex declares these as JSON numbers: a whole number, also when written `1000.0`.
fn whole_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let Some(value) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    if let Some(n) = value.as_u64() {
        return Ok(Some(n));
    }
    match value.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => Ok(Some(f as u64)),
        _ => Err(serde::de::Error::custom(format!(
            "expected a whole number of at least 0, got {value}"
        ))),
    }
}

fn required_whole_number<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    whole_number(d)?.ok_or_else(|| serde::de::Error::custom("expected a number, got null"))
}

/// `CxExecCommand`'s `tools/list` entry.
pub fn exec_command_tool() -> Tool {
    define::<ExecCommandArgs>(
        ToolName::CxExecCommand,
        "exec_command",
        "Runs a command in a PTY, returning output or a session ID for ongoing interaction.",
        runs_commands("exec_command"),
    )
}

/// `CxWriteStdin`'s `tools/list` entry.
pub fn write_stdin_tool() -> Tool {
    define::<WriteStdinArgs>(
        ToolName::CxWriteStdin,
        "write_stdin",
        "Writes characters to an existing unified exec session and returns recent output.",
        runs_commands("write_stdin"),
    )
}

/// `exec_command`: starts the command and answers when it exits, waits for input, or
/// the yield time (250 ms to 30 s, 10 s by default) passes.
pub async fn exec_command(
    ctx: &Ctx,
    args: ExecCommandArgs,
    call: &Call,
) -> ToolResult<CallToolResult> {
    let began = Instant::now();
    if args.cmd.trim().is_empty() {
        return Err(ToolError::invalid(
            "exec_command failed: cmd must not be empty",
        ));
    }
    let shell = args.shell.as_deref().map(find_shell).transpose()?;
    let tty = args.tty.unwrap_or(false);
    let session = engine_tools::open(
        ctx,
        Open {
            command: args.cmd,
            cwd: args.workdir.as_deref().filter(|w| !w.is_empty()),
            tty,
            shell,
            login: args.login.unwrap_or(true),
            rows: terminal::DEFAULT_ROWS,
            cols: terminal::DEFAULT_COLS,
            end_hint: "end one first: write_stdin with chars \"\\u0003\" interrupts it, or \
                       \"exit\\n\" ends a shell",
        },
    )
    .map_err(|e| e.map_message(|m| format!("exec_command failed: {m}")))?;
    if !tty {
        // Codex gives a command on pipes no stdin: one that reads it sees its end at once
        // instead of hanging until the yield time.
        session.task.running.close_input();
    }
    let report = session
        .read(
            ux::exec_yield(args.yield_time_ms),
            ENGINE_BUDGET,
            false,
            &call.ct,
        )
        .await;
    Ok(answer(
        ctx,
        &session,
        report,
        began,
        ux::output_tokens(args.max_output_tokens),
    ))
}

/// `write_stdin`: writes `chars` (a PTY session; on pipes only Ctrl-C, which interrupts
/// the command) or, with none, polls; answers as `exec_command` does.
pub async fn write_stdin(
    ctx: &Ctx,
    args: WriteStdinArgs,
    call: &Call,
) -> ToolResult<CallToolResult> {
    let began = Instant::now();
    let session = find(ctx, args.session_id)?;
    let chars = args.chars.unwrap_or_default();
    let poll = chars.is_empty();
    let wait = ux::write_yield(args.yield_time_ms, poll);
    let max_tokens = ux::output_tokens(args.max_output_tokens);
    let input = if poll {
        Vec::new()
    } else if session.tty {
        vec![keys::Input::Text(chars)]
    } else if chars == INTERRUPT {
        keys::parse_keys(&["C-c".to_string()]).map_err(|e| ToolError::invalid(e.to_string()))?
    } else {
        return Err(ToolError::invalid(
            "write_stdin failed: stdin is closed for this session; rerun exec_command with \
             tty=true to keep stdin open (on pipes only \"\\u0003\", Ctrl-C, is taken: it \
             interrupts the command)",
        ));
    };
    let report = if input.is_empty() {
        session.read(wait, ENGINE_BUDGET, false, &call.ct).await
    } else {
        session
            .write(&input, wait, ENGINE_BUDGET, &call.ct)
            .await
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::IoError,
                    format!("write_stdin failed: failed to write to stdin: {e}"),
                )
            })?
    };
    Ok(answer(ctx, &session, report, began, max_tokens))
}

/// The engine's session behind Codex's session id.
fn find(ctx: &Ctx, id: u64) -> ToolResult<Arc<Session>> {
    ctx.ws.terminals.get(&format!("term_{id}")).ok_or_else(|| {
        let open: Vec<String> = ctx
            .ws
            .terminals
            .ids()
            .iter()
            .filter_map(|t| t.strip_prefix("term_").map(str::to_string))
            .collect();
        ToolError::new(
            ErrorCode::TerminalNotFound,
            format!(
                "write_stdin failed: Unknown process id {id} (a process is forgotten once an \
                     answer reported its exit); running sessions: {}",
                if open.is_empty() {
                    "none".to_string()
                } else {
                    open.join(", ")
                }
            ),
        )
    })
}

/// A shell named by `exec_command`'s `shell`: an absolute path, or a name on PATH.
fn find_shell(name: &str) -> ToolResult<PathBuf> {
    let path = Path::new(name);
    let found = if path.is_absolute() {
        path.is_file().then(|| path.to_path_buf())
    } else if name.contains('/') || name.is_empty() {
        None
    } else {
        std::env::var_os("PATH").and_then(|dirs| {
            std::env::split_paths(&dirs)
                .map(|d| d.join(name))
                .find(|c| c.is_file())
        })
    };
    found.ok_or_else(|| {
        ToolError::invalid(format!(
            "exec_command failed: shell {name:?} was not found (give an absolute path or a \
             program on PATH, or leave shell out for the default)"
        ))
    })
}

/// The engine's report as Codex's answer text.
fn answer(
    ctx: &Ctx,
    session: &Session,
    report: Report,
    began: Instant,
    max_tokens: usize,
) -> CallToolResult {
    let output = output_of(&report);
    let state = match report.status {
        Status::Exited { code, .. } => State::Exited(code),
        _ => State::Running(codex_id(&report.id)),
    };
    let chunk = ux::chunk_id(rand::random());
    let text = ux::render(&Answer {
        chunk_id: &chunk,
        wall_time: began.elapsed(),
        state,
        output: &output,
        max_tokens,
    });
    engine_tools::finish(ctx, session, &report, text)
}

fn codex_id(id: &str) -> u64 {
    id.strip_prefix("term_")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// What the program printed since the last answer: the engine's lines (a full-screen
/// program's screen after them), with its notes where Boris has something to say.
fn output_of(report: &Report) -> String {
    let u = &report.update;
    let mut out = String::new();
    if report.unwritten > 0 {
        out.push_str(&format!(
            "[{} bytes of input were not written: the program is not reading its input]\n",
            report.unwritten
        ));
    }
    if let Status::Exited {
        reason: Some(reason),
        ..
    } = &report.status
    {
        out.push_str(&format!("[killed: {reason}]\n"));
    }
    let mut lines = u.lines.clone();
    if u.omitted > 0 {
        let file = report
            .output_file
            .as_ref()
            .map(|p| format!("; the whole raw output is in {}", p.display()))
            .unwrap_or_default();
        let at = u.omitted_at.min(lines.len());
        lines.insert_str(at, &format!("[… {} lines omitted{file} …]\n", u.omitted));
    }
    out.push_str(&lines);
    if let Some(screen) = u.screen.as_ref().filter(|_| !u.screen_unchanged) {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(screen);
    }
    out
}
