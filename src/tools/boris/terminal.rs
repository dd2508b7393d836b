//! The terminal session tools (issue 19 §1; default profile): `terminal_start`,
//! `terminal_write`, `terminal_read`, `terminal_resize`, `terminal_stop`, a thin layer
//! over the engine in `crate::terminal`. Each answer names the session, says whether its
//! program exited, waits for input or is still working, and shows what is new.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec;
use crate::terminal::{self, Report, Session, StartSpec, Status, Waiting, keys};
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, runs_commands, writes};
use crate::tools::{Call, Ctx, text_result};
use crate::workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// Default wait of a start or a write: long enough for most commands to finish or ask
/// for input (a call answers as soon as either happens).
const DEFAULT_YIELD_MS: u64 = 10_000;
/// The longest wait a call may ask for (as bash's longest timeout).
const MAX_YIELD_MS: u64 = 600_000;
/// Characters of output per answer, by default and at most (bash shows 30,000 per
/// stream).
const DEFAULT_OUTPUT: usize = 30_000;
const MAX_OUTPUT: usize = 100_000;
const MIN_OUTPUT: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StartArgs {
    /// The command (bash -c), e.g. "python3", "git rebase -i HEAD~3"; omitted: a shell.
    #[serde(default)]
    pub command: Option<String>,
    /// The directory to start in (default: the working directory).
    #[serde(default)]
    pub cwd: Option<String>,
    /// A pseudo-terminal (default true); false: plain pipes (stdout and stderr as one).
    #[serde(default)]
    pub tty: Option<bool>,
    /// A login shell (bash -l).
    #[serde(default)]
    pub login: Option<bool>,
    /// Terminal rows (default 24).
    #[serde(default)]
    #[schemars(range(min = terminal::MIN_ROWS, max = terminal::MAX_ROWS))]
    pub rows: Option<u16>,
    /// Terminal columns (default 80).
    #[serde(default)]
    #[schemars(range(min = terminal::MIN_COLS, max = terminal::MAX_COLS))]
    pub cols: Option<u16>,
    /// Milliseconds to wait while the program works (default 10000, at most 600000).
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    /// Most characters of output in the answer (default 30000).
    #[serde(default)]
    pub max_output_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// The session_id terminal_start returned.
    pub session_id: String,
    /// Text to type, sent exactly as given (a "\n" ends a line, as Enter does).
    #[serde(default)]
    pub text: Option<String>,
    /// Keys pressed after the text: Enter, Tab, Esc, Backspace, Up, Down, Left, Right,
    /// Home, End, PageUp, PageDown, Delete, F1-F12, Ctrl-A..Ctrl-Z, Alt-x. Another item is
    /// typed, with <Name> a key and <lt> a "<": ["ihello<Esc>:wq<Enter>"].
    #[serde(default)]
    pub keys: Option<Vec<String>>,
    /// Milliseconds to wait for the answer (default 10000, at most 600000).
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    /// Most characters of output in the answer (default 30000).
    #[serde(default)]
    pub max_output_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// The session_id terminal_start returned.
    pub session_id: String,
    /// Wait up to this many milliseconds for the program to exit or wait for input
    /// (default 0: answer at once).
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    /// Show the whole current screen instead of only what is new.
    #[serde(default)]
    pub screen: Option<bool>,
    /// Most characters of output in the answer (default 30000).
    #[serde(default)]
    pub max_output_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ResizeArgs {
    /// The session_id terminal_start returned.
    pub session_id: String,
    /// New number of rows.
    #[schemars(range(min = terminal::MIN_ROWS, max = terminal::MAX_ROWS))]
    pub rows: u16,
    /// New number of columns.
    #[schemars(range(min = terminal::MIN_COLS, max = terminal::MAX_COLS))]
    pub cols: u16,
    /// How long to wait for the program to redraw, in milliseconds (default 1000).
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    /// Most characters of output in the answer (default 30000).
    #[serde(default)]
    pub max_output_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StopArgs {
    /// The session_id of the session to stop.
    pub session_id: String,
}

/// `TerminalStart`'s `tools/list` entry.
pub fn start_tool() -> Tool {
    define::<StartArgs>(
        ToolName::TerminalStart,
        "Start an interactive terminal session",
        "Start a command in a terminal session that lives across calls: REPLs, prompts, \
         debuggers, editors, full-screen programs. Answers when the program exits, waits \
         for input, or yield_time_ms passes, with a session_id, a status and the output \
         (the screen, for full-screen programs). Continue with terminal_write; end with \
         terminal_stop. For one-shot commands use bash.",
        runs_commands("Start an interactive terminal session"),
    )
}

/// `TerminalWrite`'s `tools/list` entry.
pub fn write_tool() -> Tool {
    define::<WriteArgs>(
        ToolName::TerminalWrite,
        "Type into a terminal session",
        "Type text and press keys in a terminal session; answers with what is new once the \
         program waits for input, exits, or yield_time_ms passes. E.g. {text: \"x + 1\", \
         keys: [\"Enter\"]}; interrupt: {keys: [\"Ctrl-C\"]}.",
        runs_commands("Type into a terminal session"),
    )
}

/// `TerminalRead`'s `tools/list` entry.
pub fn read_tool() -> Tool {
    define::<ReadArgs>(
        ToolName::TerminalRead,
        "Read a terminal session",
        "Read what is new in a terminal session since the last answer (or, with screen: \
         true, its whole current screen), optionally waiting up to yield_time_ms for the \
         program to exit or wait for input.",
        crate::tools::engine::schema::read_only("Read a terminal session"),
    )
}

/// `TerminalResize`'s `tools/list` entry.
pub fn resize_tool() -> Tool {
    define::<ResizeArgs>(
        ToolName::TerminalResize,
        "Resize a terminal session",
        "Change a terminal session's size (rows and columns); the program is told \
         (SIGWINCH) and its redrawn output is returned.",
        writes("Resize a terminal session", true),
    )
}

/// `TerminalStop`'s `tools/list` entry.
pub fn stop_tool() -> Tool {
    define::<StopArgs>(
        ToolName::TerminalStop,
        "Stop a terminal session",
        "Stop a terminal session: every process in it gets a hangup, then SIGTERM, then \
         SIGKILL. Returns its last output; the session is then forgotten.",
        writes("Stop a terminal session", true),
    )
}

fn yield_for(requested: Option<u64>, default: u64) -> Duration {
    Duration::from_millis(requested.unwrap_or(default).min(MAX_YIELD_MS))
}

fn budget(requested: Option<usize>) -> usize {
    requested
        .unwrap_or(DEFAULT_OUTPUT)
        .clamp(MIN_OUTPUT, MAX_OUTPUT)
}

fn check_size(rows: u16, cols: u16) -> ToolResult<()> {
    use terminal::{MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS};
    if !(MIN_ROWS..=MAX_ROWS).contains(&rows) || !(MIN_COLS..=MAX_COLS).contains(&cols) {
        return Err(ToolError::invalid(format!(
            "a terminal is {MIN_ROWS} to {MAX_ROWS} rows and {MIN_COLS} to {MAX_COLS} columns; \
             got {rows} rows and {cols} columns"
        )));
    }
    Ok(())
}

pub async fn start(ctx: &Ctx, args: StartArgs, call: &Call) -> ToolResult<CallToolResult> {
    let rows = args.rows.unwrap_or(terminal::DEFAULT_ROWS);
    let cols = args.cols.unwrap_or(terminal::DEFAULT_COLS);
    check_size(rows, cols)?;
    let session = open(
        ctx,
        Open {
            command: args.command.unwrap_or_default(),
            cwd: args.cwd.as_deref(),
            tty: args.tty.unwrap_or(true),
            shell: None,
            login: args.login.unwrap_or(false),
            rows,
            cols,
            end_hint: "stop one with terminal_stop, or read an ended one",
        },
    )?;
    let report = session
        .read(
            yield_for(args.yield_time_ms, DEFAULT_YIELD_MS),
            budget(args.max_output_chars),
            false,
            &call.ct,
        )
        .await;
    Ok(answer(ctx, &session, report, true))
}

/// What [`open`] starts.
pub struct Open<'a> {
    /// Run by `shell -c`; empty: the shell itself.
    pub command: String,
    /// The directory to start in (default: the session's working directory).
    pub cwd: Option<&'a str>,
    pub tty: bool,
    /// Another shell than the server's (`exec_command`'s `shell`).
    pub shell: Option<std::path::PathBuf>,
    pub login: bool,
    pub rows: u16,
    pub cols: u16,
    /// How the limit's error tells the model to make room.
    pub end_hint: &'a str,
}

/// Starts a session in the workspace (within `--terminal-max-sessions`, in the session's
/// sandbox), registered in its task registry and stopped after `--terminal-idle-timeout`
/// without a call. The engine `exec_command` shares with `terminal_start`.
pub fn open(ctx: &Ctx, spec: Open<'_>) -> ToolResult<Arc<Session>> {
    let config = &ctx.shared.config;
    let live = ctx.ws.terminals.ids();
    if live.len() >= config.terminal_max_sessions {
        return Err(ToolError::new(
            ErrorCode::TerminalLimit,
            format!(
                "{} terminal sessions are open ({}), the most this server allows \
                 (--terminal-max-sessions); {}",
                live.len(),
                live.join(", "),
                spec.end_hint
            ),
        ));
    }
    let cwd = match spec.cwd {
        Some(dir) => {
            let dir = ctx.resolve_read(dir)?.real;
            if !dir.is_dir() {
                return Err(ToolError::new(
                    ErrorCode::PathNotFound,
                    format!("{} is not a directory", dir.display()),
                ));
            }
            dir
        }
        None => usable_cwd(ctx),
    };
    let jail = crate::tools::engine::shell::session_jail(ctx)?;
    let id = ctx.ws.tasks.next_terminal_id();
    let env = if spec.tty {
        terminal::terminal_env(&config.env, |k| std::env::var(k).ok())
    } else {
        ctx.shared.command_env.clone()
    };
    let output_file = ctx.spill_file(&format!("{}-output.log", ctx.shared.spill.next(&id)));
    let shell = spec.shell.as_deref().unwrap_or(&ctx.shared.shell);
    let command = spec.command;
    let session = terminal::start(
        StartSpec {
            command: &command,
            cwd: &cwd,
            tty: spec.tty,
            shell,
            login: spec.login,
            rows: spec.rows,
            cols: spec.cols,
            env: &env,
            scratch: jail
                .as_ref()
                .map_or(ctx.shared.spill.path(), |j| j.host_tmp()),
            jail: jail.as_deref(),
            output_file,
        },
        id.clone(),
        &ctx.ws.tasks,
    )
    .map_err(|e| {
        ToolError::new(
            ErrorCode::BashStartFailed,
            format!(
                "could not start {} in {}: {e}",
                if command.is_empty() {
                    shell.display().to_string()
                } else {
                    command.clone()
                },
                cwd.display()
            ),
        )
    })?;
    tracing::info!(session = %id, pid = session.task.running.pid, tty = spec.tty, "terminal session started");
    ctx.ws.terminals.insert(session.clone());
    let ws = Arc::downgrade(&ctx.ws);
    let forget_id = id.clone();
    session.watch_idle(config.terminal_idle_timeout, move || {
        if let Some(ws) = ws.upgrade() {
            forget(&ws, &forget_id);
        }
    });
    Ok(session)
}

pub async fn write(ctx: &Ctx, args: WriteArgs, call: &Call) -> ToolResult<CallToolResult> {
    let session = find(ctx, &args.session_id)?;
    let mut input = Vec::new();
    if let Some(text) = args.text.filter(|t| !t.is_empty()) {
        input.push(keys::Input::Text(text));
    }
    if let Some(items) = &args.keys {
        input.extend(keys::parse_keys(items).map_err(|e| ToolError::invalid(e.to_string()))?);
    }
    let report = session
        .write(
            &input,
            yield_for(args.yield_time_ms, DEFAULT_YIELD_MS),
            budget(args.max_output_chars),
            &call.ct,
        )
        .await
        .map_err(|e| {
            ToolError::new(
                ErrorCode::IoError,
                format!("could not write to {}: {e}", args.session_id),
            )
        })?;
    Ok(answer(ctx, &session, report, false))
}

pub async fn read(ctx: &Ctx, args: ReadArgs, call: &Call) -> ToolResult<CallToolResult> {
    let session = find(ctx, &args.session_id)?;
    let report = session
        .read(
            yield_for(args.yield_time_ms, 0),
            budget(args.max_output_chars),
            args.screen.unwrap_or(false),
            &call.ct,
        )
        .await;
    Ok(answer(ctx, &session, report, false))
}

pub async fn resize(ctx: &Ctx, args: ResizeArgs, call: &Call) -> ToolResult<CallToolResult> {
    check_size(args.rows, args.cols)?;
    let session = find(ctx, &args.session_id)?;
    let resized = session
        .resize(
            args.rows,
            args.cols,
            yield_for(args.yield_time_ms, 1000),
            budget(args.max_output_chars),
            &call.ct,
        )
        .await;
    let report = match resized {
        Some(Ok(report)) => report,
        Some(Err(e)) => {
            return Err(ToolError::new(
                ErrorCode::IoError,
                format!("could not resize {}: {e}", args.session_id),
            ));
        }
        None => {
            return Err(ToolError::invalid(format!(
                "{} runs on pipes (tty: false): it has no terminal to resize",
                args.session_id
            )));
        }
    };
    Ok(answer(ctx, &session, report, false))
}

pub async fn stop(ctx: &Ctx, args: StopArgs) -> ToolResult<CallToolResult> {
    let session = find(ctx, &args.session_id)?;
    let report = stop_session(&session, "stopped with terminal_stop").await;
    Ok(answer(ctx, &session, report, false))
}

/// Stops a session (terminal_stop, task_stop) and reports its last output.
pub async fn stop_session(session: &Session, reason: &str) -> Report {
    session.stop(reason, DEFAULT_OUTPUT).await
}

/// What is new in a session (task_output): at once, or once it ended with `block`.
pub async fn task_output(session: &Session, block: Option<Duration>) -> Report {
    if let Some(limit) = block {
        session.task.wait_done(limit).await;
    }
    session
        .read(Duration::ZERO, DEFAULT_OUTPUT, false, &Default::default())
        .await
}

fn find(ctx: &Ctx, id: &str) -> ToolResult<Arc<Session>> {
    ctx.ws.terminals.get(id).ok_or_else(|| {
        let known = ctx.ws.terminals.ids();
        ToolError::new(
            ErrorCode::TerminalNotFound,
            format!(
                "no terminal session {} in this session (an ended session is forgotten once \
                 its end was reported); open sessions: {}",
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

/// Drops an ended (or stopped) session from the workspace; its output file goes unless
/// an answer named it.
pub fn forget(ws: &Workspace, id: &str) {
    if let Some(session) = ws.terminals.remove(id) {
        ws.tasks.remove(id);
        if !session.named_output() {
            exec::lock(&session.task.running.stdout).discard_spill();
        }
    }
}

/// The session's working directory, or (when it was removed) its nearest ancestor.
fn usable_cwd(ctx: &Ctx) -> std::path::PathBuf {
    let cwd = ctx.ws.cwd();
    if cwd.is_dir() {
        return cwd;
    }
    cwd.ancestors()
        .find(|p| p.is_dir())
        .map(std::path::Path::to_path_buf)
        .unwrap_or_else(|| ctx.shared.config.workdir.clone())
}

/// Words a report, and forgets the session once its end is told.
pub fn answer(ctx: &Ctx, session: &Session, report: Report, started: bool) -> CallToolResult {
    let text = render(&report, started);
    finish(ctx, session, &report, text)
}

/// The result of a call on a session whose report is worded as `text`: the raw output
/// file offered (with its link) once an answer names it, and the session forgotten once
/// its end is told.
pub fn finish(ctx: &Ctx, session: &Session, report: &Report, text: String) -> CallToolResult {
    if let Some(path) = &report.output_file {
        session.name_output();
        ctx.ws.offer(path);
    }
    let ended = matches!(report.status, Status::Exited { .. });
    let mut result = text_result(text);
    if report.output_file.is_some() {
        result = crate::tools::engine::shell::with_spill_links(ctx, &session.task.running, result);
    }
    if ended {
        forget(&ctx.ws, &report.id);
    }
    result
}

/// The answer's text: the session, its status, then the output.
pub fn render(report: &Report, started: bool) -> String {
    let mut text = format!("session_id: {}\n", report.id);
    match &report.status {
        Status::Exited { code, reason } => {
            match reason {
                Some(reason) => text.push_str(&format!("status: killed\nreason: {reason}\n")),
                None => text.push_str("status: exited\n"),
            }
            text.push_str(&format!("exit_code: {code}\n"));
        }
        Status::Waiting(Waiting::Reading) => text.push_str("status: waiting for input\n"),
        Status::Waiting(Waiting::Prompt) => text.push_str(
            "status: waiting for input (a prompt-like last line and no output for a moment)\n",
        ),
        Status::Running => text.push_str("status: running\n"),
    }
    if report.unwritten > 0 {
        text.push_str(&format!(
            "note: {} bytes of input were not written: the program is not reading its input\n",
            report.unwritten
        ));
    }
    if report.input_closed {
        text.push_str("stdin: closed\n");
    }
    let u = &report.update;
    let mut lines = u.lines.clone();
    if u.omitted > 0 {
        let file = match &report.output_file {
            Some(p) => format!(
                "; the whole raw output (with terminal escapes) is in {}",
                p.display()
            ),
            None => String::new(),
        };
        let notice = format!("[… {} lines omitted{file} …]\n", u.omitted);
        let at = u.omitted_at.min(lines.len());
        lines.insert_str(at, &notice);
    }
    match &u.screen {
        Some(screen) => {
            if !lines.is_empty() {
                text.push_str("output:\n");
                text.push_str(&lines);
                if !lines.ends_with('\n') {
                    text.push('\n');
                }
            }
            let (rows, cols) = report.size;
            if u.screen_unchanged {
                text.push_str("screen: unchanged since the last answer\n");
            } else {
                text.push_str(&format!("screen ({rows}x{cols}, a full-screen program):\n"));
                text.push_str(screen);
                text.push('\n');
            }
        }
        None if lines.is_empty() => text.push_str("output: (nothing new)\n"),
        None => {
            text.push_str("output:\n");
            text.push_str(&lines);
        }
    }
    if started && !matches!(report.status, Status::Exited { .. }) {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[Type into it with terminal_write (session_id \"{}\"); end it with terminal_stop.]",
            report.id
        ));
    }
    text.trim_end_matches('\n').to_string()
}
