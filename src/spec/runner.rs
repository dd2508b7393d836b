//! Runs one case: workdir and fixtures, the server process, the steps, teardown.
//!
//! The server is `/bin/sh -c '<server_cmd> <args…>'` in its own process group, with the
//! workdir as cwd. Three threads serve its pipes: a writer (so a server that stops
//! reading cannot block us: every write waits for an acknowledgement with a timeout),
//! a stdout reader (one JSON message per line, into a channel) and a stderr reader
//! (into a buffer). Every wait is bounded; the process group is SIGKILLed on every exit
//! path (the `Drop` of [`Server`]), so no case leaks a process.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Map, Value, json};

use super::http::{self as client, Response};
use super::matcher::check_http;
use super::matcher::{check_notifications, check_response, quote, show};
use super::model::{
    Action, Case, CaseTransport, DEFAULT_SESSION, DEFAULT_TIMEOUT_MS, Expect, ExpectExit,
    FileCheck, FileContent, FileSpec, HttpCallSpec, HttpInitSpec, HttpSpec, Placeholders, Step,
    decode_base64, parse_mode, session_placeholder,
};
use super::normalise::Normaliser;

/// Arguments added (before the case's `args`) for `transport: http` cases.
pub const DEFAULT_HTTP_ARGS: &str = "--transport http --port 0";

/// How the harness finds an HTTP server's address in its stderr: the first match, group
/// 1 if the regex has one. Boris logs `… bound=127.0.0.1:43210`.
pub const DEFAULT_HTTP_ADDR_REGEX: &str = r"bound=(\[[0-9A-Fa-f:.%]+\]:\d+|[^\s:\[\]]+:\d+)";

/// How the cases are run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shell command line that starts the server (run by `/bin/sh -c`); the case's
    /// `args` are appended, shell-quoted.
    pub server_cmd: String,
    /// Appended to `server_cmd` (as written: several words) for HTTP cases, before the
    /// case's `args`.
    pub http_args: String,
    /// Finds the bound `host:port` in an HTTP server's stderr (see
    /// [`DEFAULT_HTTP_ADDR_REGEX`]).
    pub http_addr_regex: String,
    /// Per-wait timeout for cases that do not set `timeout_ms`.
    pub default_timeout: Duration,
    /// How long the server gets to exit after stdin EOF.
    pub exit_timeout: Duration,
    /// Run only cases with at least one of these tags (empty: all).
    pub only: Vec<String>,
    /// Skip cases with any of these tags.
    pub skip: Vec<String>,
}

impl RunOptions {
    pub fn new(server_cmd: impl Into<String>) -> Self {
        RunOptions {
            server_cmd: server_cmd.into(),
            http_args: DEFAULT_HTTP_ARGS.into(),
            http_addr_regex: DEFAULT_HTTP_ADDR_REGEX.into(),
            default_timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            exit_timeout: Duration::from_secs(5),
            only: Vec::new(),
            skip: Vec::new(),
        }
    }
}

/// The result of one case.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    pub path: PathBuf,
    pub passed: bool,
    pub skipped: bool,
    /// Every failure, first one first. The last entry of a failed case is the tail of
    /// the server's stderr.
    pub failures: Vec<String>,
    /// The normalised transcript: `[{"->": msg}, {"<-": msg}, …]`.
    pub transcript: Value,
    /// Everything the server wrote on stderr (lossy UTF-8).
    pub stderr: String,
    /// The server's exit code (None if it was killed or never started).
    pub exit_code: Option<i32>,
    pub duration: Duration,
    /// The case asked for a golden snapshot.
    pub golden: bool,
}

impl CaseOutcome {
    /// A failed outcome for a case that could not be loaded or run at all.
    pub fn error(path: &Path, message: String) -> Self {
        CaseOutcome {
            path: path.to_path_buf(),
            passed: false,
            skipped: false,
            failures: vec![message],
            transcript: Value::Array(Vec::new()),
            stderr: String::new(),
            exit_code: None,
            duration: Duration::ZERO,
            golden: false,
        }
    }
}

/// Why a case is filtered out by `--only`/`--skip`, if it is.
pub fn skip_reason(case: &Case, opts: &RunOptions) -> Option<String> {
    if let Some(t) = case.tags.iter().find(|t| opts.skip.contains(t)) {
        return Some(format!("tag {t}"));
    }
    if !opts.only.is_empty() && !case.tags.iter().any(|t| opts.only.contains(t)) {
        return Some(format!("no tag in {}", opts.only.join(", ")));
    }
    None
}

/// Quotes a word for `/bin/sh`.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The default `initialize` params.
pub fn default_initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "boris-spec", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// Runs one loaded case (honouring `--only`/`--skip`).
pub fn run_case(case: &Case, opts: &RunOptions) -> CaseOutcome {
    let start = Instant::now();
    let mut outcome = CaseOutcome::error(&case.path, String::new());
    outcome.failures.clear();
    outcome.golden = case.golden;
    if skip_reason(case, opts).is_some() {
        outcome.skipped = true;
        outcome.passed = true;
        return outcome;
    }

    let tmp = match tempfile::Builder::new().prefix("boris-spec-").tempdir() {
        Ok(t) => t,
        Err(e) => {
            outcome
                .failures
                .push(format!("cannot create a temp workdir: {e}"));
            return outcome;
        }
    };
    let workdir = match tmp.path().canonicalize() {
        Ok(p) => p,
        Err(e) => {
            outcome
                .failures
                .push(format!("cannot canonicalize the temp workdir: {e}"));
            return outcome;
        }
    };
    let case = case.expanded(&Placeholders::for_workdir(&workdir));
    let timeout = Duration::from_millis(
        case.timeout_ms
            .unwrap_or(opts.default_timeout.as_millis() as u64),
    );

    let mut transcript = Vec::new();
    let mut stderr = String::new();
    let mut exit_code = None;
    let mut failures = Vec::new();
    let mut literals = Vec::new();

    match create_files(&workdir, &case.files) {
        Err(e) => failures.push(format!("fixtures: {e}")),
        Ok(()) => {
            let http = case.transport == CaseTransport::Http;
            let extra = if http { opts.http_args.as_str() } else { "" };
            let (cmdline, direct) = server_cmdline(&opts.server_cmd, extra, &case.args);
            match Server::spawn(&cmdline, &workdir, &case.env, direct) {
                Err(e) => failures.push(e),
                Ok(server) => {
                    let mut s = Session::new(server, &case, timeout);
                    if case.expect_startup_failure.is_some() {
                        s.run_startup_failure(&case);
                    } else {
                        let started = if http {
                            s.wait_for_addr(&opts.http_addr_regex)
                        } else {
                            Ok(())
                        };
                        match started {
                            Ok(()) => s.run_steps(&case, &workdir),
                            Err(Fatal(e)) => s.failures.push(e),
                        }
                        s.finish(&case, opts.exit_timeout);
                    }
                    stderr = s.server.stderr_text();
                    exit_code = s.server.status.and_then(|st| st.code());
                    transcript = std::mem::take(&mut s.transcript);
                    failures.append(&mut s.failures);
                    literals = s.literals();
                    // Dropping the session kills the process group.
                }
            }
        }
    }

    match Normaliser::new(&workdir, &case.redact) {
        Ok(n) => {
            let n = literals
                .iter()
                .fold(n, |n, (from, to)| n.with_literal(from, to));
            outcome.transcript = n.apply(&Value::Array(transcript));
        }
        Err(e) => failures.push(format!("normalisation: {e}")),
    }
    if !failures.is_empty() {
        failures.push(stderr_tail(&stderr, 20));
    }
    make_removable(&workdir);
    drop(tmp);

    outcome.passed = failures.is_empty();
    outcome.failures = failures;
    outcome.stderr = stderr;
    outcome.exit_code = exit_code;
    outcome.duration = start.elapsed();
    outcome
}

/// Puts `exec` before a plain server command line so that the server replaces the
/// shell and signals reach it directly; returns whether it did. Left alone (the shell
/// stays in between): command lines with shell operators, substitutions, a leading
/// variable assignment or a leading keyword/builtin.
pub fn exec_prefixed(cmd: &str) -> (String, bool) {
    let trimmed = cmd.trim_start();
    let first = trimmed.split_whitespace().next().unwrap_or("");
    let assignment = first.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    let keyword = matches!(
        first,
        "exec"
            | "cd"
            | "if"
            | "for"
            | "while"
            | "until"
            | "case"
            | "{"
            | "!"
            | "export"
            | "set"
            | "eval"
            | "."
            | "source"
            | "time"
            | "command"
    );
    let operators =
        trimmed.contains([';', '&', '|', '(', ')', '<', '>', '`', '\n']) || trimmed.contains("$(");
    if trimmed.is_empty() || assignment || keyword || operators {
        (cmd.to_string(), false)
    } else {
        (format!("exec {trimmed}"), true)
    }
}

/// The shell command line that starts the server: [`exec_prefixed`] `server_cmd`, then
/// `extra` as written (several words: `--http-args`), then `args` shell-quoted. Returns
/// it and whether the shell exec's the server.
pub fn server_cmdline(server_cmd: &str, extra: &str, args: &[String]) -> (String, bool) {
    let (mut cmdline, direct) = exec_prefixed(server_cmd);
    if !extra.trim().is_empty() {
        cmdline.push(' ');
        cmdline.push_str(extra.trim());
    }
    for a in args {
        cmdline.push(' ');
        cmdline.push_str(&shell_quote(a));
    }
    (cmdline, direct)
}

/// `stderr (last N lines):` followed by the lines, indented.
pub(crate) fn stderr_tail(stderr: &str, n: usize) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.is_empty() {
        return "server stderr: (empty)".into();
    }
    let from = lines.len().saturating_sub(n);
    let mut out = format!(
        "server stderr (last {} of {} lines):",
        lines.len() - from,
        lines.len()
    );
    for l in &lines[from..] {
        out.push_str("\n  ");
        out.push_str(&super::matcher::truncate(l, 500));
    }
    out
}

// ---------------------------------------------------------------------------------
// The server process

pub(crate) enum Incoming {
    Json(Value),
    Garbage(String),
    Eof,
    ReadError(String),
}

type WriteReq = (Vec<u8>, mpsc::Sender<std::io::Result<()>>);

/// Largest stderr kept in memory; the rest is read and dropped.
const STDERR_CAP: usize = 16 << 20;

/// The server process and its pipe threads (also used by [`super::bench`]).
pub(crate) struct Server {
    child: Child,
    pgid: Pid,
    /// The shell exec'd the server: the child is the server itself.
    direct: bool,
    status: Option<ExitStatus>,
    stdin: Option<mpsc::Sender<WriteReq>>,
    /// Messages from the server's stdout, one per line, each with the moment its line
    /// was read (before parsing, so a client's JSON decoding never counts as the
    /// server's latency in `boris-spec bench`).
    pub(crate) out: mpsc::Receiver<(Incoming, Instant)>,
    /// `out` reported EOF, a read error, or disconnected.
    pub(crate) stdout_closed: bool,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: mpsc::Receiver<()>,
    /// The value of [`CASE_MARKER_VAR`] in the server's environment, inherited by every
    /// process it starts (unless the server scrubs its children's environment).
    pub(crate) marker: String,
}

/// The environment variable that marks every process a case's server starts, so that
/// the harness can find the ones that outlive it.
pub const CASE_MARKER_VAR: &str = "BORIS_SPEC_CASE";

/// A marker no other case (in this or another harness process) uses.
fn new_marker() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live processes (not zombies, not the harness) whose environment holds
/// `CASE_MARKER_VAR=marker`: `(pid, command line)`. Linux only (reads /proc); empty
/// elsewhere.
pub fn processes_with_marker(marker: &str) -> Vec<(i32, String)> {
    let needle = format!("{CASE_MARKER_VAR}={marker}");
    crate::exec::other_processes()
        .filter(|(_, dir)| {
            // A zombie's environ reads as empty, so only live processes match.
            fs::read(dir.join("environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        })
        .map(|(pid, dir)| (pid, cmdline_of(&dir)))
        .collect()
}

/// A process's arguments joined by spaces ("" when unreadable).
fn cmdline_of(dir: &Path) -> String {
    fs::read(dir.join("cmdline"))
        .map(|raw| {
            String::from_utf8_lossy(&raw)
                .trim_end_matches('\0')
                .replace('\0', " ")
        })
        .unwrap_or_default()
}

impl Server {
    pub(crate) fn spawn(
        cmdline: &str,
        workdir: &Path,
        env: &BTreeMap<String, String>,
        direct: bool,
    ) -> Result<Self, String> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(cmdline)
            .current_dir(workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // Hermetic: the developer's BORIS_* settings must not leak into a case.
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BORIS_") {
                cmd.env_remove(&k);
            }
        }
        cmd.envs(env);
        let marker = new_marker();
        cmd.env(CASE_MARKER_VAR, &marker);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start `/bin/sh -c {cmdline}`: {e}"))?;
        let pgid = Pid::from_raw(child.id() as i32);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = killpg(pgid, Signal::SIGKILL);
            let _ = child.wait();
            return Err("cannot capture the server's stdio".into());
        };

        let (wtx, wrx) = mpsc::channel::<WriteReq>();
        thread::spawn(move || {
            let mut stdin = stdin;
            for (bytes, ack) in wrx {
                let r = stdin.write_all(&bytes).and_then(|()| stdin.flush());
                let failed = r.is_err();
                let _ = ack.send(r);
                if failed {
                    break;
                }
            }
            // Dropping stdin here closes the pipe: EOF for the server.
        });

        let (otx, orx) = mpsc::channel();
        thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) => {
                        let _ = otx.send((Incoming::Eof, Instant::now()));
                        break;
                    }
                    Ok(_) => {
                        let read_at = Instant::now();
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']);
                        if line.trim().is_empty() {
                            continue;
                        }
                        let msg = match serde_json::from_str::<Value>(line) {
                            Ok(v) => Incoming::Json(v),
                            Err(_) => Incoming::Garbage(line.to_string()),
                        };
                        if otx.send((msg, read_at)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = otx.send((Incoming::ReadError(e.to_string()), Instant::now()));
                        break;
                    }
                }
            }
        });

        let captured = Arc::new(Mutex::new(Vec::new()));
        let (dtx, drx) = mpsc::channel();
        let sink = Arc::clone(&captured);
        thread::spawn(move || {
            let mut stderr = stderr;
            let mut chunk = [0u8; 8192];
            loop {
                match stderr.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Ok(mut b) = sink.lock()
                            && b.len() < STDERR_CAP
                        {
                            b.extend_from_slice(&chunk[..n]);
                        }
                    }
                }
            }
            let _ = dtx.send(());
        });

        Ok(Server {
            child,
            pgid,
            direct,
            status: None,
            stdin: Some(wtx),
            out: orx,
            stdout_closed: false,
            stderr: captured,
            stderr_done: drx,
            marker,
        })
    }

    /// Writes bytes to the server's stdin, waiting at most `timeout`.
    pub(crate) fn write(&mut self, bytes: Vec<u8>, timeout: Duration) -> Result<(), String> {
        let Some(tx) = &self.stdin else {
            return Err("the server's stdin is already closed".into());
        };
        let (atx, arx) = mpsc::channel();
        if tx.send((bytes, atx)).is_err() {
            return Err("the server's stdin is closed (an earlier write failed)".into());
        }
        match arx.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!(
                "writing to the server's stdin failed: {e}{}",
                self.exit_note()
            )),
            Err(_) => Err(format!(
                "timed out after {}ms writing to the server's stdin (is it reading?)",
                timeout.as_millis()
            )),
        }
    }

    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The exit status, if the server has exited (non-blocking).
    fn poll_exit(&mut self) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Ok(Some(st)) = self.child.try_wait()
        {
            self.status = Some(st);
        }
        self.status
    }

    /// Waits up to `timeout` for the server to exit.
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(st) = self.poll_exit() {
                return Some(st);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `sig` to the server: the child itself if the shell exec'd it, else every
    /// other process of the harness's process group (the shell's children), so that
    /// the shell waits and then reports the server's exit code.
    fn signal(&mut self, sig: Signal) -> Result<(), String> {
        if self.poll_exit().is_some() {
            return Err("the server has already exited".into());
        }
        let leader = Pid::from_raw(self.child.id() as i32);
        if !self.direct {
            let members = group_members(self.pgid);
            let others: Vec<Pid> = members.into_iter().filter(|p| *p != leader).collect();
            if !others.is_empty() {
                for p in others {
                    let _ = nix::sys::signal::kill(p, sig);
                }
                return Ok(());
            }
        }
        nix::sys::signal::kill(leader, sig).map_err(|e| format!("kill: {e}"))
    }

    /// The server's processes: the child if the shell exec'd it, else the rest of its
    /// process group (Linux; elsewhere, or if there is none, the shell).
    pub(crate) fn server_pids(&self) -> Vec<Pid> {
        let leader = Pid::from_raw(self.child.id() as i32);
        if !self.direct {
            let others: Vec<Pid> = group_members(self.pgid)
                .into_iter()
                .filter(|p| *p != leader)
                .collect();
            if !others.is_empty() {
                return others;
            }
        }
        vec![leader]
    }

    /// SIGKILLs the whole process group and reaps the leader.
    pub(crate) fn kill(&mut self) {
        let _ = killpg(self.pgid, Signal::SIGKILL);
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
    }

    /// ` (server exited with …)` if it has exited, for error messages.
    pub(crate) fn exit_note(&mut self) -> String {
        match self.wait_exit(Duration::from_millis(200)) {
            Some(st) => format!(" (server {})", describe_status(st)),
            None => String::new(),
        }
    }

    pub(crate) fn stderr_text(&self) -> String {
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        match self.stderr.lock() {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(_) => String::new(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close_stdin();
        // Also after a normal exit: stragglers left in the group die with it.
        self.kill();
    }
}

/// The processes of a process group (Linux: from /proc; elsewhere empty).
fn group_members(pgid: Pid) -> Vec<Pid> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid.as_raw()) {
            out.push(Pid::from_raw(pid));
        }
    }
    out
}

/// Processes other than the harness whose command line (arguments joined by spaces)
/// matches `re`: `(pid, command line)`. Linux reads /proc; elsewhere `pgrep -f -l`.
pub fn matching_processes(re: &regex::Regex) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    match fs::read_dir("/proc") {
        Ok(_) => {
            for (pid, dir) in crate::exec::other_processes() {
                let cmdline = cmdline_of(&dir);
                if !cmdline.is_empty() && re.is_match(&cmdline) {
                    out.push((pid, cmdline));
                }
            }
        }
        Err(_) => {
            if let Ok(o) = Command::new("pgrep")
                .args(["-f", "-l", "--", re.as_str()])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
            {
                for line in String::from_utf8_lossy(&o.stdout).lines() {
                    let (pid, rest) = line.split_once(' ').unwrap_or((line, ""));
                    if let Ok(pid) = pid.parse::<i32>()
                        && pid != me
                    {
                        out.push((pid, rest.to_string()));
                    }
                }
            }
        }
    }
    out
}

fn describe_status(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "exited".into(),
    }
}

// ---------------------------------------------------------------------------------
// A running case

/// A fatal step error: stop running steps.
struct Fatal(String);

struct Session {
    server: Server,
    transcript: Vec<Value>,
    /// Record traffic in the transcript (off during the default handshake).
    record: bool,
    /// Responses received, not yet claimed, by id (several may share `null`).
    pending: HashMap<String, VecDeque<Value>>,
    /// Server messages (notifications and requests) since the current step began.
    seen: Vec<Value>,
    /// Ids of requests sent by `call` steps (their `await` checks content text).
    call_ids: HashSet<String>,
    next_id: i64,
    /// Ids the case uses explicitly; the harness never assigns them.
    reserved: HashSet<String>,
    timeout: Duration,
    failures: Vec<String>,
    transport: CaseTransport,
    /// HTTP cases: the server's `host:port`, once known.
    addr: Option<String>,
    /// HTTP cases: saved sessions by name (`""` is `{session}`).
    sessions: BTreeMap<String, SavedSession>,
    /// Every `Mcp-Session-Id` a response carried, in order.
    seen_sessions: Vec<String>,
    /// A `signal` step's `expect_exit` already checked the exit code.
    exit_checked: bool,
}

#[derive(Debug, Clone)]
struct SavedSession {
    id: String,
    /// The negotiated protocol version (sent as `MCP-Protocol-Version`).
    version: String,
}

/// The protocol version the HTTP helpers initialize with.
const HTTP_INIT_VERSION: &str = "2025-11-25";

/// The stateless revision `http_call` uses with `stateless: true`.
const STATELESS_VERSION: &str = "2026-07-28";

/// Response headers recorded in transcripts (besides `access-control-*` and any the
/// step's expectation names).
const RECORDED_RESPONSE_HEADERS: &[&str] = &[
    "content-type",
    "mcp-session-id",
    "www-authenticate",
    "allow",
    "location",
];

/// Bodies longer than this are recorded as `<N bytes>`.
const RECORDED_BODY_MAX: usize = 4096;

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Session {
    fn new(server: Server, case: &Case, timeout: Duration) -> Self {
        let mut reserved = HashSet::new();
        for s in &case.steps {
            let id = match &s.action {
                Action::Call { id, .. } | Action::Request { id, .. } => id.clone(),
                Action::SendJson { message, .. } => message.get("id").cloned(),
                Action::Send { line } => serde_json::from_str::<Value>(line)
                    .ok()
                    .and_then(|v| v.get("id").cloned()),
                Action::HttpCall(c) => c.id.clone(),
                Action::Http(h) => h.json.as_ref().and_then(|j| j.get("id").cloned()),
                _ => None,
            };
            if let Some(id) = id {
                reserved.insert(id_key(&id));
            }
        }
        Session {
            server,
            transcript: Vec::new(),
            record: true,
            pending: HashMap::new(),
            seen: Vec::new(),
            call_ids: HashSet::new(),
            next_id: 0,
            reserved,
            timeout,
            failures: Vec::new(),
            transport: case.transport,
            addr: None,
            sessions: BTreeMap::new(),
            seen_sessions: Vec::new(),
            exit_checked: false,
        }
    }

    fn http(&self) -> bool {
        self.transport == CaseTransport::Http
    }

    /// Literal replacements for the golden transcript: the address and session ids.
    fn literals(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(a) = &self.addr {
            out.push((a.clone(), "<addr>".to_string()));
        }
        for (name, s) in &self.sessions {
            let to = if name == DEFAULT_SESSION {
                "<session>".to_string()
            } else {
                format!("<session:{name}>")
            };
            out.push((s.id.clone(), to));
        }
        for id in &self.seen_sessions {
            out.push((id.clone(), "<session>".to_string()));
        }
        out
    }

    /// HTTP cases: waits for the server to print its address on stderr.
    fn wait_for_addr(&mut self, pattern: &str) -> Result<(), Fatal> {
        let re = regex::Regex::new(pattern)
            .map_err(|e| Fatal(format!("invalid --http-addr-regex: {e}")))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let text = match self.server.stderr.lock() {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(_) => String::new(),
            };
            if let Some(c) = re.captures(&text) {
                let m = c.get(1).or_else(|| c.get(0)).map(|m| m.as_str());
                if let Some(addr) = m.filter(|a| !a.is_empty()) {
                    self.addr = Some(addr.to_string());
                    return Ok(());
                }
            }
            if let Some(st) = self.server.poll_exit() {
                return Err(Fatal(format!(
                    "the server {} before printing its address (looked for /{pattern}/ in its stderr)",
                    describe_status(st)
                )));
            }
            if Instant::now() >= deadline {
                return Err(Fatal(format!(
                    "the server printed no address matching /{pattern}/ on stderr within {}ms",
                    self.timeout.as_millis()
                )));
            }
            self.drain_for(Duration::from_millis(20));
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// HTTP cases: the step with `{addr}` and the saved sessions expanded; a
    /// reference to a session that was never saved stops the case.
    fn runtime_step(&self, step: &Step) -> Result<Step, Fatal> {
        let mut p = Placeholders::default().with("{addr}", self.addr.as_deref().unwrap_or(""));
        for (name, s) in &self.sessions {
            p = p.with(&session_placeholder(name), &s.id);
        }
        let mut out = step.clone();
        out.expand(&p);
        let re = regex::Regex::new(r"\{session(?::([A-Za-z0-9_-]+))?\}")
            .map_err(|e| Fatal(e.to_string()))?;
        if let Some(c) = re.captures(&format!("{:?}", out.action)) {
            return Err(Fatal(format!(
                "{} is used but no session was saved under that name ({})",
                c.get(0).map(|m| m.as_str()).unwrap_or_default(),
                self.saved_names()
            )));
        }
        Ok(out)
    }

    fn saved_names(&self) -> String {
        if self.sessions.is_empty() {
            "none saved yet: use http_initialize or save_session".into()
        } else {
            let names: Vec<String> = self
                .sessions
                .keys()
                .map(|n| session_placeholder(n))
                .collect();
            format!("saved: {}", names.join(", "))
        }
    }

    fn alloc_id(&mut self) -> Value {
        loop {
            let id = json!(self.next_id);
            self.next_id += 1;
            if self.reserved.insert(id_key(&id)) {
                return id;
            }
        }
    }

    fn handle(&mut self, inc: Incoming) {
        // Over HTTP the server's stdout is not part of the protocol.
        if self.http() && matches!(inc, Incoming::Json(_) | Incoming::Garbage(_)) {
            return;
        }
        match inc {
            Incoming::Json(v) => {
                if self.record {
                    self.transcript.push(json!({"<-": v.clone()}));
                }
                let has_method = v.get("method").is_some();
                match (has_method, v.get("id").cloned()) {
                    (true, Some(id)) => {
                        // A request from the server: answer it so it never waits on us.
                        let reply = if v.get("method").and_then(Value::as_str) == Some("ping") {
                            json!({"jsonrpc": "2.0", "id": id, "result": {}})
                        } else {
                            json!({"jsonrpc": "2.0", "id": id, "error": {
                                "code": -32601, "message": "boris-spec does not handle this request"}})
                        };
                        self.seen.push(v);
                        if self.record {
                            self.transcript.push(json!({"->": reply.clone()}));
                        }
                        let line = format!("{reply}\n").into_bytes();
                        if let Err(e) = self.server.write(line, self.timeout) {
                            self.failures
                                .push(format!("answering a server request: {e}"));
                        }
                    }
                    (true, None) => self.seen.push(v),
                    (false, Some(id)) => {
                        self.pending.entry(id_key(&id)).or_default().push_back(v);
                    }
                    (false, None) if v.get("result").is_some() || v.get("error").is_some() => {
                        // A response without an id: treat it like `"id": null`.
                        self.pending
                            .entry(id_key(&Value::Null))
                            .or_default()
                            .push_back(v);
                    }
                    (false, None) => self.failures.push(format!(
                        "server sent a message that is neither a request, a notification nor a response: {}",
                        show(&v)
                    )),
                }
            }
            Incoming::Garbage(line) => {
                if self.record {
                    self.transcript.push(json!({"<-": line.clone()}));
                }
                self.failures.push(format!(
                    "server wrote a non-JSON line on stdout: {}",
                    quote(&line)
                ));
            }
            Incoming::Eof => self.server.stdout_closed = true,
            Incoming::ReadError(e) => {
                self.server.stdout_closed = true;
                self.failures
                    .push(format!("reading the server's stdout failed: {e}"));
            }
        }
    }

    /// Handles every message already received.
    fn drain(&mut self) {
        while !self.server.stdout_closed {
            match self.server.out.try_recv() {
                Ok((inc, _)) => self.handle(inc),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => self.server.stdout_closed = true,
            }
        }
    }

    /// Handles messages arriving within `d`.
    fn drain_for(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        while !self.server.stdout_closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.server.out.recv_timeout(left) {
                Ok((inc, _)) => self.handle(inc),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => self.server.stdout_closed = true,
            }
        }
    }

    fn send_json(&mut self, msg: &Value) -> Result<(), Fatal> {
        self.drain();
        if self.record {
            self.transcript.push(json!({"->": msg.clone()}));
        }
        self.server
            .write(format!("{msg}\n").into_bytes(), self.timeout)
            .map_err(Fatal)
    }

    fn send_raw(&mut self, line: &str) -> Result<(), Fatal> {
        self.drain();
        if self.record {
            let as_msg = serde_json::from_str::<Value>(line.trim_end_matches('\n'))
                .unwrap_or_else(|_| Value::String(line.to_string()));
            self.transcript.push(json!({"->": as_msg}));
        }
        let mut bytes = line.as_bytes().to_vec();
        if !line.ends_with('\n') {
            bytes.push(b'\n');
        }
        self.server.write(bytes, self.timeout).map_err(Fatal)
    }

    /// Waits for the response with `id`, handling everything else that arrives.
    fn wait_response(&mut self, id: &Value, timeout: Duration) -> Result<Value, Fatal> {
        let key = id_key(id);
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(v) = self.pending.get_mut(&key).and_then(VecDeque::pop_front) {
                return Ok(v);
            }
            if self.server.stdout_closed {
                let note = self.server.exit_note();
                return Err(Fatal(format!(
                    "the server closed its stdout before answering id {id}{note}"
                )));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Fatal(format!(
                    "no response to id {id} within {}ms",
                    timeout.as_millis()
                )));
            }
            match self.server.out.recv_timeout(left) {
                Ok((inc, _)) => self.handle(inc),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => self.server.stdout_closed = true,
            }
        }
    }

    /// Sends a request and waits for its response.
    fn request(&mut self, msg: &Value, timeout: Duration) -> Result<Value, Fatal> {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        self.send_json(msg)?;
        self.wait_response(&id, timeout)
    }

    fn default_handshake(&mut self) -> Result<(), Fatal> {
        self.record = false;
        let id = self.alloc_id();
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
                         "params": default_initialize_params()});
        let r = self
            .request(&msg, self.timeout)
            .map_err(|Fatal(e)| Fatal(format!("default handshake (initialize): {e}")))?;
        if let Some(err) = r.get("error") {
            return Err(Fatal(format!(
                "default handshake: initialize returned a JSON-RPC error: {}",
                show(err)
            )));
        }
        self.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .map_err(|Fatal(e)| Fatal(format!("default handshake (initialized): {e}")))?;
        self.record = true;
        Ok(())
    }

    fn run_steps(&mut self, case: &Case, workdir: &Path) {
        let explicit_init = matches!(
            case.steps.first().map(|s| &s.action),
            Some(Action::Initialize { .. })
        );
        if !self.http()
            && case.handshake
            && !explicit_init
            && let Err(Fatal(e)) = self.default_handshake()
        {
            self.failures.push(e);
            return;
        }
        for (i, step) in case.steps.iter().enumerate() {
            let label = format!("step {} ({})", i + 1, step.action.label());
            let before = self.failures.len();
            self.seen.clear();
            let r = if self.http() {
                self.runtime_step(step)
                    .and_then(|step| self.run_step(&step, workdir))
            } else {
                self.run_step(step, workdir)
            };
            // Protocol problems noticed while running the step belong to it.
            for f in &mut self.failures[before..] {
                *f = format!("{label}: {f}");
            }
            match r {
                Ok(fails) => self
                    .failures
                    .extend(fails.into_iter().map(|f| format!("{label}: {f}"))),
                Err(Fatal(e)) => {
                    self.failures.push(format!("{label}: {e}"));
                    return;
                }
            }
        }
    }

    /// Runs one step; `Ok` carries expectation failures, `Err` stops the case.
    fn run_step(&mut self, step: &Step, workdir: &Path) -> Result<Vec<String>, Fatal> {
        let timeout = step
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.timeout);
        let mut fails = Vec::new();
        // (response, text checks apply to content text)
        let mut response: Option<(Value, bool)> = None;
        match &step.action {
            Action::Initialize { params } => {
                let mut merged = default_initialize_params();
                if let (Value::Object(base), Value::Object(over)) = (&mut merged, params) {
                    for (k, v) in over {
                        if v.is_null() {
                            base.remove(k);
                        } else {
                            base.insert(k.clone(), v.clone());
                        }
                    }
                }
                let id = self.alloc_id();
                let msg =
                    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": merged});
                let r = self.request(&msg, timeout)?;
                let ok = r.get("result").is_some();
                response = Some((r, false));
                if ok {
                    self.send_json(
                        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                    )?;
                }
            }
            Action::Call {
                name,
                args,
                meta,
                id,
                wait,
            } => {
                let mut params = Map::new();
                params.insert("name".into(), Value::String(name.clone()));
                if let Some(a) = args {
                    params.insert("arguments".into(), a.clone());
                }
                if let Some(m) = meta {
                    params.insert("_meta".into(), m.clone());
                }
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.alloc_id(),
                };
                self.call_ids.insert(id_key(&id));
                let msg =
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
                if *wait {
                    response = Some((self.request(&msg, timeout)?, true));
                } else {
                    self.send_json(&msg)?;
                }
            }
            Action::Request {
                method,
                params,
                id,
                wait,
            } => {
                let id = match id {
                    Some(id) => id.clone(),
                    None => self.alloc_id(),
                };
                let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
                if let (Some(p), Value::Object(o)) = (params, &mut msg) {
                    o.insert("params".into(), p.clone());
                }
                if *wait {
                    response = Some((self.request(&msg, timeout)?, false));
                } else {
                    self.send_json(&msg)?;
                }
            }
            Action::Send { line } => {
                self.send_raw(line)?;
                if step.expect.is_some() {
                    // The line's own id if it is not a response and its id is valid (a
                    // string or an integer), else a `null`-id response (what JSON-RPC
                    // answers to input it cannot parse, or to an id it cannot echo).
                    let id = serde_json::from_str::<Value>(line.trim_end())
                        .ok()
                        .filter(|v| v.get("result").is_none() && v.get("error").is_none())
                        .and_then(|v| v.get("id").cloned())
                        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                        .unwrap_or(Value::Null);
                    response = Some((self.wait_response(&id, timeout)?, false));
                }
            }
            Action::SendJson { message, wait } => {
                self.send_json(message)?;
                // A message with an id and a method is a request: await its response.
                if *wait
                    && message.get("method").is_some()
                    && let Some(id) = message.get("id")
                {
                    response = Some((self.wait_response(id, timeout)?, false));
                }
            }
            Action::Await { id } => {
                let call = self.call_ids.contains(&id_key(id));
                response = Some((self.wait_response(id, timeout)?, call));
            }
            Action::Write { files } => {
                create_files(workdir, files).map_err(Fatal)?;
            }
            Action::SleepMs(ms) => {
                let d = Duration::from_millis(*ms);
                let start = Instant::now();
                self.drain_for(d);
                // drain_for returns early on EOF; sleep out the remainder.
                thread::sleep(d.saturating_sub(start.elapsed()));
            }
            Action::CheckFiles(checks) => {
                for c in checks {
                    fails.extend(check_file(workdir, c));
                }
            }
            Action::ExpectAlive(true) if self.http() => {
                let addr = self.addr.clone().unwrap_or_default();
                if let Err(e) = client::connect(&addr, timeout) {
                    return Err(Fatal(format!("server not alive: {e}")));
                }
            }
            Action::Http(h) => fails.extend(self.http_step(h, step.expect.as_ref(), timeout)?),
            Action::HttpInitialize(i) => {
                fails.extend(self.http_initialize(i, step.expect.as_ref(), timeout)?)
            }
            Action::HttpCall(c) => {
                fails.extend(self.http_call(c, step.expect.as_ref(), timeout)?)
            }
            Action::Signal { name, expect_exit } => {
                fails.extend(self.signal_step(name, expect_exit.as_ref(), timeout))
            }
            Action::AssertNoProcess(pattern) => {
                fails.extend(self.assert_no_process(pattern, timeout))
            }
            Action::ExpectAlive(true) => {
                let id = self.alloc_id();
                let r = self
                    .request(
                        &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
                        timeout,
                    )
                    .map_err(|Fatal(e)| Fatal(format!("server not alive: {e}")))?;
                if r.get("result").is_none() {
                    fails.push(format!("ping returned no result: {}", show(&r)));
                }
            }
            Action::ExpectAlive(false) => {
                if self.server.wait_exit(timeout).is_some() {
                    // The exit code is checked at the end of the case.
                    self.drain();
                } else {
                    fails.push(format!(
                        "expected the server to have exited, but it is still running after {}ms",
                        timeout.as_millis()
                    ));
                }
            }
        }
        if let Some((r, tool_call)) = &response
            && let Some(expect) = &step.expect
        {
            fails.extend(check_response(expect, r, *tool_call));
            if !expect.notifications.is_empty() {
                fails.extend(check_notifications(&expect.notifications, &self.seen));
            }
        } else if let Some((r, _)) = &response
            && let Some(err) = r.get("error")
        {
            fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
        }
        Ok(fails)
    }

    // ---- HTTP steps -------------------------------------------------------------

    /// Request headers: `Host`, the step's defaults, the MCP headers, then the case's
    /// own (replacing any of the same name; `null` removes). Also returns the headers
    /// recorded in the transcript: the MCP ones and the case's.
    fn headers(
        &self,
        defaults: &[(&str, String)],
        mcp: &[(&str, String)],
        case: &BTreeMap<String, Option<String>>,
    ) -> (Vec<(String, String)>, BTreeMap<String, String>) {
        let mut h: Vec<(String, String)> =
            vec![("Host".into(), self.addr.clone().unwrap_or_default())];
        h.extend(defaults.iter().map(|(n, v)| (n.to_string(), v.clone())));
        h.extend(mcp.iter().map(|(n, v)| (n.to_string(), v.clone())));
        let mut recorded: BTreeMap<String, String> = mcp
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
            .collect();
        for (n, v) in case {
            h.retain(|(x, _)| !x.eq_ignore_ascii_case(n));
            recorded.remove(&n.to_ascii_lowercase());
            if let Some(v) = v {
                h.push((n.clone(), v.clone()));
                recorded.insert(n.to_ascii_lowercase(), v.clone());
            }
        }
        (h, recorded)
    }

    /// Sends a request from a background thread (`wait: false`): recorded, never read.
    fn send_in_background(
        &mut self,
        req: client::Request,
        recorded_headers: BTreeMap<String, String>,
        recorded_body: Option<Value>,
        timeout: Duration,
    ) -> Result<(), Fatal> {
        let addr = self
            .addr
            .clone()
            .ok_or_else(|| Fatal("the server's address is not known".into()))?;
        self.record_request(&req, recorded_headers, recorded_body);
        // Bounded by the timeout; the response (or error) is dropped.
        thread::spawn(move || {
            let _ = client::send(&addr, &req, timeout);
        });
        // Give the request a moment to reach the server before the next step.
        thread::sleep(Duration::from_millis(50));
        Ok(())
    }

    fn record_request(
        &mut self,
        req: &client::Request,
        recorded_headers: BTreeMap<String, String>,
        recorded_body: Option<Value>,
    ) {
        let mut sent = Map::new();
        sent.insert("method".into(), json!(req.method));
        sent.insert("path".into(), json!(req.path));
        if !recorded_headers.is_empty() {
            sent.insert("headers".into(), json!(recorded_headers));
        }
        if let Some(b) = recorded_body {
            sent.insert(if b.is_string() { "body" } else { "json" }.into(), b);
        }
        if self.record {
            self.transcript.push(json!({"->": sent}));
        }
    }

    /// Sends one HTTP request, records it and its response.
    fn exchange(
        &mut self,
        req: client::Request,
        recorded_headers: BTreeMap<String, String>,
        recorded_body: Option<Value>,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Response, Fatal> {
        let addr = self
            .addr
            .clone()
            .ok_or_else(|| Fatal("the server's address is not known".into()))?;
        self.record_request(&req, recorded_headers, recorded_body);
        let resp = client::send(&addr, &req, timeout).map_err(|e| {
            Fatal(format!(
                "{} {}: {e}{}",
                req.method,
                req.path,
                self.server.exit_note()
            ))
        })?;
        if let Some(id) = resp.header("mcp-session-id")
            && !self.seen_sessions.contains(&id)
        {
            self.seen_sessions.push(id);
        }
        if self.record {
            let mut names: Vec<String> = RECORDED_RESPONSE_HEADERS
                .iter()
                .map(|s| s.to_string())
                .collect();
            if let Some(e) = expect {
                names.extend(e.headers.keys().map(|k| k.to_ascii_lowercase()));
            }
            let mut headers = BTreeMap::new();
            for (n, _) in &resp.headers {
                if (names.contains(n) || n.starts_with("access-control-"))
                    && let Some(v) = resp.header(n)
                {
                    headers.insert(n.clone(), v);
                }
            }
            let mut got = Map::new();
            got.insert("status".into(), json!(resp.status));
            if !headers.is_empty() {
                got.insert("headers".into(), json!(headers));
            }
            let messages = resp.messages();
            if !messages.is_empty() {
                got.insert("messages".into(), Value::Array(messages));
            } else if !resp.body.is_empty() {
                got.insert("body".into(), recorded_text(&resp.body));
            }
            self.transcript.push(json!({"<-": got}));
        }
        Ok(resp)
    }

    /// The HTTP checks of `expect`, or, without a `status` key, that the status is 2xx
    /// (when `need_2xx`).
    fn check_http_response(
        expect: Option<&Expect>,
        resp: &Response,
        messages: &[Value],
        need_2xx: bool,
    ) -> Vec<String> {
        let mut fails = Vec::new();
        let explicit_status = expect.is_some_and(|e| e.status.is_some());
        if need_2xx && !explicit_status && !(200..300).contains(&resp.status) {
            fails.push(format!(
                "expected a 2xx response, got {}; body: {}",
                resp.status,
                quote(&resp.body_text())
            ));
        }
        if let Some(e) = expect {
            fails.extend(check_http(
                e,
                resp.status,
                &resp.headers,
                &resp.body_text(),
                messages,
            ));
        }
        fails
    }

    fn save_session(
        &mut self,
        name: &str,
        resp: &Response,
        messages: &[Value],
    ) -> Result<(), String> {
        let Some(id) = resp.header("mcp-session-id") else {
            return Err(format!(
                "cannot save {}: the response (status {}) has no Mcp-Session-Id header",
                session_placeholder(name),
                resp.status
            ));
        };
        let version = messages
            .iter()
            .find_map(|m| m.pointer("/result/protocolVersion").and_then(Value::as_str))
            .unwrap_or(HTTP_INIT_VERSION)
            .to_string();
        self.sessions
            .insert(name.to_string(), SavedSession { id, version });
        Ok(())
    }

    fn http_step(
        &mut self,
        h: &HttpSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let mut defaults = Vec::new();
        let (body, recorded_body) = if let Some(j) = &h.json {
            defaults.push(("Content-Type", "application/json".to_string()));
            defaults.push(("Accept", "application/json, text/event-stream".to_string()));
            (j.to_string().into_bytes(), Some(j.clone()))
        } else if let Some(b) = &h.body {
            (b.clone().into_bytes(), Some(recorded_text(b.as_bytes())))
        } else if let Some(r) = &h.body_repeat {
            let n = usize::try_from(r.count).unwrap_or(usize::MAX);
            let total = r.text.len().saturating_mul(n);
            if total > 256 << 20 {
                return Err(Fatal(format!(
                    "body_repeat of {total} bytes is over the 256 MiB limit"
                )));
            }
            let b = r.text.repeat(n).into_bytes();
            let rec = recorded_text(&b);
            (b, Some(rec))
        } else {
            (Vec::new(), None)
        };
        let (headers, recorded) = self.headers(&defaults, &[], &h.headers);
        let req = client::Request {
            method: h.method.clone(),
            path: h.path.clone(),
            headers,
            body,
        };
        if !h.wait {
            self.send_in_background(req, recorded, recorded_body, timeout)?;
            return Ok(Vec::new());
        }
        let resp = self.exchange(req, recorded, recorded_body, expect, timeout)?;
        let messages = resp.messages();
        let mut fails = Self::check_http_response(expect, &resp, &messages, false);
        if let Some(name) = expect
            .and_then(|e| e.save_session.as_ref())
            .and_then(|s| s.0.as_deref())
            && let Err(e) = self.save_session(name, &resp, &messages)
        {
            fails.push(e);
        }
        Ok(fails)
    }

    fn http_initialize(
        &mut self,
        i: &HttpInitSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let mut params = default_initialize_params();
        if let (Value::Object(base), Some(Value::Object(over))) = (&mut params, &i.params) {
            for (k, v) in over {
                if v.is_null() {
                    base.remove(k);
                } else {
                    base.insert(k.clone(), v.clone());
                }
            }
        }
        let id = self.alloc_id();
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        let defaults = [
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        let (headers, recorded) = self.headers(&defaults, &[], &i.headers);
        let req = client::Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: msg.to_string().into_bytes(),
        };
        let resp = self.exchange(req, recorded, Some(msg), expect, timeout)?;
        let messages = resp.messages();
        let mut fails = Self::check_http_response(expect, &resp, &messages, true);
        let response = find_response(&messages, &id);
        match (response, expect) {
            (Some((_, r)), Some(e)) => fails.extend(check_response(e, r, false)),
            (Some((_, r)), None) => {
                if let Some(err) = r.get("error") {
                    fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
                }
            }
            (None, _) => {
                if (200..300).contains(&resp.status) || expect.is_some_and(Expect::wants_jsonrpc) {
                    fails.push(format!(
                        "no JSON-RPC response with id {id} in the body: {}",
                        quote(&resp.body_text())
                    ));
                }
            }
        }
        let ok = response.is_some_and(|(_, r)| r.get("result").is_some());
        if !ok {
            return Ok(fails);
        }
        let name = match &i.save_session {
            None => Some(DEFAULT_SESSION.to_string()),
            Some(s) => s.0.clone(),
        };
        let session = resp.header("mcp-session-id");
        if let Some(name) = &name
            && let Err(e) = self.save_session(name, &resp, &messages)
        {
            fails.push(e);
        }
        // notifications/initialized, in the new session.
        let version = messages
            .iter()
            .find_map(|m| m.pointer("/result/protocolVersion").and_then(Value::as_str))
            .unwrap_or(HTTP_INIT_VERSION)
            .to_string();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut mcp = vec![("MCP-Protocol-Version", version)];
        if let Some(s) = session {
            mcp.insert(0, ("Mcp-Session-Id", s));
        }
        let (headers, recorded) = self.headers(&defaults, &mcp, &i.headers);
        let req = client::Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: note.to_string().into_bytes(),
        };
        let r2 = self.exchange(req, recorded, Some(note), None, timeout)?;
        if !(200..300).contains(&r2.status) {
            fails.push(format!(
                "notifications/initialized got HTTP {}: {}",
                r2.status,
                quote(&r2.body_text())
            ));
        }
        Ok(fails)
    }

    fn http_call(
        &mut self,
        c: &HttpCallSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let mut params = Map::new();
        params.insert("name".into(), json!(c.tool));
        if let Some(a) = &c.args {
            params.insert("arguments".into(), a.clone());
        }
        let mut meta = match &c.meta {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let mut mcp: Vec<(&str, String)> = Vec::new();
        if c.stateless {
            let mut m = Map::new();
            m.insert(
                "io.modelcontextprotocol/protocolVersion".into(),
                json!(STATELESS_VERSION),
            );
            m.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                json!({}),
            );
            m.extend(meta);
            meta = m;
            mcp.push(("MCP-Protocol-Version", STATELESS_VERSION.into()));
            mcp.push(("Mcp-Method", "tools/call".into()));
            mcp.push(("Mcp-Name", c.tool.clone()));
        } else {
            let name = c.session.as_deref().unwrap_or(DEFAULT_SESSION);
            let Some(s) = self.sessions.get(name) else {
                return Err(Fatal(format!(
                    "{} is not saved ({})",
                    session_placeholder(name),
                    self.saved_names()
                )));
            };
            mcp.push(("Mcp-Session-Id", s.id.clone()));
            mcp.push(("MCP-Protocol-Version", s.version.clone()));
        }
        if !meta.is_empty() || c.meta.is_some() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let id = match &c.id {
            Some(id) => id.clone(),
            None => self.alloc_id(),
        };
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let defaults = [
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        let (headers, recorded) = self.headers(&defaults, &mcp, &c.headers);
        let req = client::Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: msg.to_string().into_bytes(),
        };
        if !c.wait {
            self.send_in_background(req, recorded, Some(msg), timeout)?;
            return Ok(Vec::new());
        }
        let resp = self.exchange(req, recorded, Some(msg), expect, timeout)?;
        let messages = resp.messages();
        let mut fails = Self::check_http_response(expect, &resp, &messages, true);
        match find_response(&messages, &id) {
            Some((at, r)) => {
                // What the server sent on this response before the result.
                self.seen = messages[..at]
                    .iter()
                    .filter(|m| m.get("method").is_some())
                    .cloned()
                    .collect();
                match expect {
                    Some(e) => {
                        fails.extend(check_response(e, r, true));
                        if !e.notifications.is_empty() {
                            fails.extend(check_notifications(&e.notifications, &self.seen));
                        }
                    }
                    None => {
                        if let Some(err) = r.get("error") {
                            fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
                        }
                    }
                }
            }
            None => {
                if (200..300).contains(&resp.status) || expect.is_some_and(Expect::wants_jsonrpc) {
                    fails.push(format!(
                        "no JSON-RPC response with id {id} in the body (HTTP {}): {}",
                        resp.status,
                        quote(&resp.body_text())
                    ));
                }
            }
        }
        Ok(fails)
    }

    fn signal_step(
        &mut self,
        name: &str,
        expect_exit: Option<&ExpectExit>,
        timeout: Duration,
    ) -> Vec<String> {
        let sig: Signal = match format!("SIG{name}").parse() {
            Ok(s) => s,
            Err(_) => return vec![format!("unknown signal {name}")],
        };
        if self.record {
            self.transcript.push(json!({"signal": name}));
        }
        if let Err(e) = self.server.signal(sig) {
            return vec![format!("cannot send SIG{name}: {e}")];
        }
        let Some(x) = expect_exit else {
            return Vec::new();
        };
        let within = x.within_ms.map(Duration::from_millis).unwrap_or(timeout);
        let start = Instant::now();
        let status = self.server.wait_exit(within);
        self.drain();
        match status {
            None => vec![format!(
                "expected the server to exit within {}ms of SIG{name}, but it is still running",
                within.as_millis()
            )],
            Some(st) => {
                self.exit_checked = true;
                if self.record {
                    self.transcript.push(json!({"exit": st.code().map(Value::from).unwrap_or_else(|| json!(describe_status(st)))}));
                }
                if st.code() == Some(x.code) {
                    Vec::new()
                } else {
                    vec![format!(
                        "expected exit code {} after SIG{name}, but the server {} (after {}ms)",
                        x.code,
                        describe_status(st),
                        start.elapsed().as_millis()
                    )]
                }
            }
        }
    }

    fn assert_no_process(&mut self, pattern: &str, timeout: Duration) -> Vec<String> {
        let re = match regex::Regex::new(pattern) {
            Ok(r) => r,
            Err(e) => return vec![format!("invalid regex /{pattern}/: {e}")],
        };
        let deadline = Instant::now() + timeout;
        loop {
            let found = matching_processes(&re);
            if found.is_empty() {
                return Vec::new();
            }
            if Instant::now() >= deadline {
                let list: Vec<String> = found
                    .iter()
                    .map(|(pid, cmd)| format!("{pid} {}", super::matcher::truncate(cmd, 200)))
                    .collect();
                return vec![format!(
                    "expected no process matching /{pattern}/, but after {}ms found: {}",
                    timeout.as_millis(),
                    list.join("; ")
                )];
            }
            self.drain_for(Duration::from_millis(50));
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stdio: closes stdin; HTTP: sends SIGTERM. Then waits for the exit, checks the
    /// exit code (unless a `signal` step already did) and stderr.
    fn finish(&mut self, case: &Case, exit_timeout: Duration) {
        self.drain();
        let how = if self.http() { "SIGTERM" } else { "stdin EOF" };
        if self.http() {
            if self.server.poll_exit().is_none() {
                let _ = self.server.signal(Signal::SIGTERM);
            }
        } else {
            self.server.close_stdin();
        }
        let exited = self.wait_exit_within(exit_timeout);
        match exited {
            None => {
                self.failures.push(format!(
                    "server did not exit within {}ms after {how} (killed)",
                    exit_timeout.as_millis()
                ));
                self.server.kill();
            }
            Some(st) => {
                let want = case.exit_code.unwrap_or(0);
                if !self.exit_checked && st.code() != Some(want) {
                    self.failures.push(format!(
                        "expected exit code {want} after {how}, but the server {}",
                        describe_status(st)
                    ));
                }
                self.server.kill(); // stragglers in the group
            }
        }
        self.server.close_stdin();
        self.drain_for(Duration::from_millis(500));
        self.check_stderr(case);
        self.check_no_leftover_processes();
    }

    /// No process the server started may outlive it (DESIGN §3: no orphans). Every such
    /// process carries the case's marker in its environment; the ones still alive a
    /// second after the server exited fail the case, and are killed.
    fn check_no_leftover_processes(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let left = processes_with_marker(&self.server.marker);
            if left.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                let list: Vec<String> = left
                    .iter()
                    .map(|(pid, cmd)| format!("{pid} {}", super::matcher::truncate(cmd, 200)))
                    .collect();
                self.failures.push(format!(
                    "processes started by the server outlived it: {}",
                    list.join("; ")
                ));
                for (pid, _) in left {
                    let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `limit` for the server to exit, reading its output meanwhile.
    fn wait_exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            self.drain_for(Duration::from_millis(10));
            if let Some(st) = self.server.poll_exit() {
                return Some(st);
            }
            if self.server.stdout_closed {
                thread::sleep(Duration::from_millis(10));
            }
        }
        None
    }

    /// `expect_startup_failure`: the server must exit non-zero by itself.
    fn run_startup_failure(&mut self, case: &Case) {
        let exited = self.wait_exit_within(self.timeout);
        match exited {
            None => {
                self.failures.push(format!(
                    "expected the server to fail at startup, but it was still running after {}ms",
                    self.timeout.as_millis()
                ));
                self.server.kill();
            }
            Some(st) => match (st.code(), case.exit_code) {
                (Some(0), _) => self
                    .failures
                    .push("expected a startup failure, but the server exited with code 0".into()),
                (Some(c), Some(want)) if c != want => self.failures.push(format!(
                    "expected a startup failure with exit code {want}, got {c}"
                )),
                (None, _) => self.failures.push(format!(
                    "expected a startup failure (non-zero exit), but the server {}",
                    describe_status(st)
                )),
                _ => {}
            },
        }
        self.server.kill();
        self.drain_for(Duration::from_millis(500));
        self.check_stderr(case);
    }

    fn check_stderr(&mut self, case: &Case) {
        let stderr = self.server.stderr_text();
        let mut wanted: Vec<&String> = case.stderr_contains.iter().collect();
        if let Some(sf) = &case.expect_startup_failure {
            wanted.extend(sf.stderr_contains.iter());
        }
        for w in wanted {
            if !stderr.contains(w.as_str()) {
                self.failures.push(format!(
                    "expected the server's stderr to contain {}",
                    quote(w)
                ));
            }
        }
        for w in case.stderr_not_contains.iter() {
            if stderr.contains(w.as_str()) {
                self.failures.push(format!(
                    "expected the server's stderr not to contain {}",
                    quote(w)
                ));
            }
        }
    }
}

/// The JSON-RPC response with `id` among `messages` (not a request or notification),
/// with its position.
fn find_response<'a>(messages: &'a [Value], id: &Value) -> Option<(usize, &'a Value)> {
    messages
        .iter()
        .enumerate()
        .find(|(_, m)| m.get("method").is_none() && m.get("id") == Some(id))
}

/// A body for the transcript: the text, or `<N bytes>` when long.
fn recorded_text(b: &[u8]) -> Value {
    if b.len() > RECORDED_BODY_MAX {
        json!(format!("<{} bytes>", b.len()))
    } else {
        json!(String::from_utf8_lossy(b))
    }
}

// ---------------------------------------------------------------------------------
// Files

/// Resolves a case path inside the workdir; absolute paths must lie under it.
fn resolve(workdir: &Path, p: &str) -> Result<PathBuf, String> {
    let path = Path::new(p);
    if path.is_absolute() {
        if path.starts_with(workdir) {
            Ok(path.to_path_buf())
        } else {
            Err(format!("path `{p}` is outside the workdir"))
        }
    } else {
        Ok(workdir.join(path))
    }
}

/// Creates fixtures; modes and mtimes are applied in a second pass, once every entry
/// exists (so a read-only directory can still be filled and a directory's mtime is
/// not disturbed by creating its children). A newly created entry without `mode` gets
/// 0644 (files, FIFOs) or 0755 (directories) whatever the umask; an existing file
/// written through keeps its mode.
pub fn create_files(workdir: &Path, files: &[FileSpec]) -> Result<(), String> {
    let mut created = Vec::with_capacity(files.len());
    for f in files {
        created.push(create_one(workdir, f).map_err(|e| format!("`{}`: {e}", f.path))?);
    }
    for (f, created) in files.iter().zip(created) {
        let path = resolve(workdir, &f.path)?;
        let default_mode = match f.content {
            _ if !created => None,
            FileContent::Dir => Some(0o755),
            FileContent::Symlink(_) => None,
            _ => Some(0o644),
        };
        if let Some(m) = f.mode.or(default_mode) {
            fs::set_permissions(&path, fs::Permissions::from_mode(m))
                .map_err(|e| format!("`{}`: cannot set mode {m:o}: {e}", f.path))?;
        }
        if let Some(t) = f.mtime {
            use nix::sys::stat::{UtimensatFlags, utimensat};
            use nix::sys::time::{TimeSpec, TimeValLike};
            let ts = TimeSpec::seconds(t);
            utimensat(
                nix::fcntl::AT_FDCWD,
                &path,
                &ts,
                &ts,
                UtimensatFlags::NoFollowSymlink,
            )
            .map_err(|e| format!("`{}`: cannot set mtime: {e}", f.path))?;
        }
    }
    Ok(())
}

/// Creates one entry; returns whether it is new (did not exist before).
fn create_one(workdir: &Path, f: &FileSpec) -> Result<bool, String> {
    let path = resolve(workdir, &f.path)?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("cannot create parent dirs: {e}"))?;
    }
    let existing = fs::symlink_metadata(&path).ok();
    let is_dir = existing.as_ref().is_some_and(|m| m.is_dir());
    let remove_existing = || -> Result<(), String> {
        if existing.is_some() && !is_dir {
            fs::remove_file(&path).map_err(|e| format!("cannot replace: {e}"))?;
        }
        Ok(())
    };
    match &f.content {
        FileContent::Text(_) | FileContent::Bytes(_) | FileContent::Repeat { .. } => {
            if is_dir {
                return Err("is a directory".into());
            }
            // A regular file or a symlink is written through; anything else is replaced.
            if let Some(m) = &existing
                && !m.is_file()
                && !m.file_type().is_symlink()
            {
                remove_existing()?;
            }
            let file = fs::File::create(&path).map_err(|e| format!("cannot write: {e}"))?;
            let mut w = std::io::BufWriter::new(file);
            let r = match &f.content {
                FileContent::Text(t) => w.write_all(t.as_bytes()),
                FileContent::Bytes(b) => w.write_all(b),
                FileContent::Repeat { text, count } => {
                    (0..*count).try_for_each(|_| w.write_all(text.as_bytes()))
                }
                _ => Ok(()),
            };
            r.and_then(|()| w.flush())
                .map_err(|e| format!("cannot write: {e}"))?;
        }
        FileContent::Symlink(target) => {
            if is_dir {
                return Err("is a directory".into());
            }
            remove_existing()?;
            std::os::unix::fs::symlink(target, &path)
                .map_err(|e| format!("cannot create symlink: {e}"))?;
        }
        FileContent::Dir => {
            if !is_dir {
                remove_existing()?;
            }
            fs::create_dir_all(&path).map_err(|e| format!("cannot create dir: {e}"))?;
        }
        FileContent::Fifo => {
            if is_dir {
                return Err("is a directory".into());
            }
            remove_existing()?;
            nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644))
                .map_err(|e| format!("cannot create fifo: {e}"))?;
        }
    }
    Ok(existing.is_none())
}

fn kind_of(m: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "directory"
    } else if t.is_file() {
        "regular file"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// One `check_files` entry; returns its failures.
fn check_file(workdir: &Path, c: &FileCheck) -> Vec<String> {
    let mut fails = Vec::new();
    let p = &c.path;
    let path = match resolve(workdir, p) {
        Ok(x) => x,
        Err(e) => return vec![e],
    };
    let lmeta = fs::symlink_metadata(&path);
    if c.exists == Some(false) {
        if let Ok(m) = lmeta {
            fails.push(format!(
                "{p}: expected not to exist, but it is a {}",
                kind_of(&m)
            ));
        }
        return fails;
    }
    let lmeta = match lmeta {
        Ok(m) => m,
        Err(_) => return vec![format!("{p}: does not exist")],
    };
    if let Some(target) = &c.symlink {
        if !lmeta.file_type().is_symlink() {
            fails.push(format!(
                "{p}: expected a symlink to {}, but it is a {}",
                quote(target),
                kind_of(&lmeta)
            ));
        } else {
            match fs::read_link(&path) {
                Ok(t) if t == Path::new(target) => {}
                Ok(t) => fails.push(format!(
                    "{p}: expected a symlink to {}, but it points to {}",
                    quote(target),
                    quote(&t.to_string_lossy())
                )),
                Err(e) => fails.push(format!("{p}: cannot read link: {e}")),
            }
        }
    }
    let needs_target = c.dir.is_some()
        || c.mode.is_some()
        || c.text.is_some()
        || c.base64.is_some()
        || !c.contains.is_empty()
        || !c.not_contains.is_empty();
    if !needs_target {
        return fails;
    }
    let meta = match fs::metadata(&path) {
        Ok(m) => m,
        Err(e) => {
            fails.push(format!("{p}: cannot follow: {e}"));
            return fails;
        }
    };
    if let Some(want_dir) = c.dir
        && meta.is_dir() != want_dir
    {
        fails.push(format!(
            "{p}: expected {}a directory, but it is a {}",
            if want_dir { "" } else { "not " },
            kind_of(&meta)
        ));
    }
    if let Some(m) = &c.mode {
        match parse_mode(m) {
            Err(e) => fails.push(format!("{p}: {e}")),
            Ok(want) => {
                let got = meta.permissions().mode() & 0o7777;
                if got != want {
                    fails.push(format!("{p}: expected mode {want:04o}, got {got:04o}"));
                }
            }
        }
    }
    let wants_content = c.text.is_some()
        || c.base64.is_some()
        || !c.contains.is_empty()
        || !c.not_contains.is_empty();
    if wants_content {
        if !meta.is_file() {
            fails.push(format!(
                "{p}: expected a regular file to read, but it is a {}",
                kind_of(&meta)
            ));
            return fails;
        }
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                fails.push(format!("{p}: cannot read: {e}"));
                return fails;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Some(want) = &c.text
            && want.as_bytes() != bytes.as_slice()
        {
            fails.push(format!(
                "{p}: expected content {}, got {}",
                quote(want),
                quote(&text)
            ));
        }
        if let Some(b) = &c.base64 {
            match decode_base64(b) {
                Err(e) => fails.push(format!("{p}: {e}")),
                Ok(want) if want != bytes => fails.push(format!(
                    "{p}: expected {} bytes (base64), got {} bytes: {}",
                    want.len(),
                    bytes.len(),
                    quote(&text)
                )),
                Ok(_) => {}
            }
        }
        for s in c.contains.iter() {
            if !text.contains(s.as_str()) {
                fails.push(format!(
                    "{p}: expected content to contain {}, got {}",
                    quote(s),
                    quote(&text)
                ));
            }
        }
        for s in c.not_contains.iter() {
            if text.contains(s.as_str()) {
                fails.push(format!(
                    "{p}: expected content not to contain {}, got {}",
                    quote(s),
                    quote(&text)
                ));
            }
        }
    }
    fails
}

/// Makes every directory under `root` writable and searchable so the temp dir can be
/// removed even after a case made parts of it read-only. Does not follow symlinks.
fn make_removable(root: &Path) {
    let Ok(meta) = fs::symlink_metadata(root) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = fs::set_permissions(root, fs::Permissions::from_mode(0o700));
    if let Ok(entries) = fs::read_dir(root) {
        for e in entries.flatten() {
            make_removable(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_words() {
        assert_eq!(shell_quote("--transport"), "--transport");
        assert_eq!(shell_quote("--allow-dir=/a/b"), "--allow-dir=/a/b");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn exec_prefix_only_for_plain_commands() {
        assert_eq!(
            exec_prefixed("/x/boris --transport stdio"),
            ("exec /x/boris --transport stdio".to_string(), true)
        );
        assert_eq!(
            exec_prefixed("'/a b/boris' --x"),
            ("exec '/a b/boris' --x".to_string(), true)
        );
        for keep in [
            "FOO=1 boris",
            "cd x && boris",
            "boris | tee log",
            "boris 2>err",
            "exec boris",
            "$(which boris)",
            "a; b",
            "",
        ] {
            assert_eq!(exec_prefixed(keep), (keep.to_string(), false), "{keep}");
        }
    }

    #[test]
    fn marked_processes_are_found_and_only_they() {
        let marker = new_marker();
        let mut child = Command::new("sleep")
            .arg("5")
            .env(CASE_MARKER_VAR, &marker)
            .spawn()
            .expect("spawn sleep");
        // Until the child has exec'd, /proc shows the parent's environment.
        let mut found = Vec::new();
        for _ in 0..100 {
            found = processes_with_marker(&marker);
            if !found.is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, child.id() as i32);
        assert!(processes_with_marker(&marker).is_empty());
        assert!(processes_with_marker(&new_marker()).is_empty());
    }

    #[test]
    fn matching_processes_finds_a_child() {
        let mut child = Command::new("sleep").arg("30.123456").spawn().unwrap();
        let re = regex::Regex::new(r"^sleep 30\.123456$").unwrap();
        // Right after fork the child still shows the parent's command line: poll.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = matching_processes(&re);
        while !found.iter().any(|(pid, _)| *pid == child.id() as i32) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
            found = matching_processes(&re);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            found.iter().any(|(pid, _)| *pid == child.id() as i32),
            "{found:?}"
        );
        assert!(
            matching_processes(&regex::Regex::new("^no such process 1x2y3z$").unwrap()).is_empty()
        );
    }

    #[test]
    fn stderr_tail_keeps_last_lines() {
        assert_eq!(stderr_tail("", 20), "server stderr: (empty)");
        let s: String = (1..=30).map(|i| format!("l{i}\n")).collect();
        let t = stderr_tail(&s, 20);
        assert!(
            t.starts_with("server stderr (last 20 of 30 lines):\n  l11\n"),
            "{t}"
        );
        assert!(t.ends_with("  l30"), "{t}");
    }

    #[test]
    fn fixtures_and_checks_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().canonicalize().unwrap();
        let case = crate::spec::model::parse_case(
            r#"
source: x
files:
  - {path: a/b.txt, text: "hello\n", mode: "0600", mtime: 1000000000}
  - {path: bin, base64: "AAEC"}
  - {path: big, repeat: {text: "ab", count: 3}}
  - {path: link, symlink: "a/b.txt"}
  - {path: dangling, symlink: "nowhere"}
  - {path: d, dir: true, mode: "0755"}
  - {path: p, fifo: true}
steps:
  - check_files:
      - {path: a/b.txt, text: "hello\n", mode: "0600", contains: ell, not_contains: xyz}
      - {path: bin, base64: "AAEC"}
      - {path: big, text: "ababab"}
      - {path: link, symlink: "a/b.txt", text: "hello\n"}
      - {path: dangling, symlink: "nowhere"}
      - {path: d, dir: true, mode: "0755"}
      - {path: nope, exists: false}
      - {path: p}
"#,
        )
        .unwrap();
        create_files(&wd, &case.files).unwrap();
        let mtime = fs::metadata(wd.join("a/b.txt"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(
            mtime,
            std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000)
        );
        let Action::CheckFiles(checks) = &case.steps[0].action else {
            panic!()
        };
        for c in checks {
            assert_eq!(check_file(&wd, c), Vec::<String>::new(), "{c:?}");
        }
        // And the failing direction.
        let bad = crate::spec::model::parse_case(
            r#"
source: x
steps:
  - check_files:
      - {path: a/b.txt, text: "bye\n", mode: "0644", contains: zzz, not_contains: ell}
      - {path: link, symlink: "other"}
      - {path: a/b.txt, exists: false}
      - {path: missing}
      - {path: p, text: ""}
      - {path: d, dir: false}
"#,
        )
        .unwrap();
        let Action::CheckFiles(checks) = &bad.steps[0].action else {
            panic!()
        };
        let f: Vec<Vec<String>> = checks.iter().map(|c| check_file(&wd, c)).collect();
        assert_eq!(f[0].len(), 4, "{:?}", f[0]);
        assert!(
            f[0][0].contains("expected mode 0644, got 0600"),
            "{:?}",
            f[0]
        );
        assert!(f[1][0].contains("points to \"a/b.txt\""), "{:?}", f[1]);
        assert!(f[2][0].contains("regular file"), "{:?}", f[2]);
        assert_eq!(f[3], vec!["missing: does not exist".to_string()]);
        assert!(f[4][0].contains("fifo"), "{:?}", f[4]);
        assert!(f[5][0].contains("expected not a directory"), "{:?}", f[5]);
    }

    #[test]
    fn fixtures_outside_workdir_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().canonicalize().unwrap();
        let case = crate::spec::model::parse_case(
            "source: x\nfiles: [{path: /etc/x, text: y}]\nsteps: [{sleep_ms: 1}]\n",
        )
        .unwrap();
        let e = create_files(&wd, &case.files).unwrap_err();
        assert!(e.contains("outside the workdir"), "{e}");
    }

    #[test]
    fn make_removable_fixes_readonly_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("ro/inner");
        fs::create_dir_all(&sub).unwrap();
        fs::write(sub.join("f"), "x").unwrap();
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o500)).unwrap();
        fs::set_permissions(dir.path().join("ro"), fs::Permissions::from_mode(0o000)).unwrap();
        make_removable(dir.path());
        fs::remove_dir_all(dir.path().join("ro")).unwrap();
    }
}
