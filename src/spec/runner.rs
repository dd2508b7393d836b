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

use super::matcher::{check_notifications, check_response, quote, show};
use super::model::{
    Action, Case, DEFAULT_TIMEOUT_MS, FileCheck, FileContent, FileSpec, Placeholders, Step,
    decode_base64, parse_mode,
};
use super::normalise::Normaliser;

/// How the cases are run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shell command line that starts the server (run by `/bin/sh -c`); the case's
    /// `args` are appended, shell-quoted.
    pub server_cmd: String,
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

    match create_files(&workdir, &case.files) {
        Err(e) => failures.push(format!("fixtures: {e}")),
        Ok(()) => {
            let mut cmdline = opts.server_cmd.clone();
            for a in &case.args {
                cmdline.push(' ');
                cmdline.push_str(&shell_quote(a));
            }
            match Server::spawn(&cmdline, &workdir, &case.env) {
                Err(e) => failures.push(e),
                Ok(server) => {
                    let mut s = Session::new(server, &case, timeout);
                    if case.expect_startup_failure.is_some() {
                        s.run_startup_failure(&case);
                    } else {
                        s.run_steps(&case, &workdir);
                        s.finish(&case, opts.exit_timeout);
                    }
                    stderr = s.server.stderr_text();
                    exit_code = s.server.status.and_then(|st| st.code());
                    transcript = std::mem::take(&mut s.transcript);
                    failures.append(&mut s.failures);
                    // Dropping the session kills the process group.
                }
            }
        }
    }

    match Normaliser::new(&workdir, &case.redact) {
        Ok(n) => outcome.transcript = n.apply(&Value::Array(transcript)),
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

/// `stderr (last N lines):` followed by the lines, indented.
fn stderr_tail(stderr: &str, n: usize) -> String {
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

enum Incoming {
    Json(Value),
    Garbage(String),
    Eof,
    ReadError(String),
}

type WriteReq = (Vec<u8>, mpsc::Sender<std::io::Result<()>>);

/// Largest stderr kept in memory; the rest is read and dropped.
const STDERR_CAP: usize = 16 << 20;

struct Server {
    child: Child,
    pgid: Pid,
    status: Option<ExitStatus>,
    stdin: Option<mpsc::Sender<WriteReq>>,
    out: mpsc::Receiver<Incoming>,
    stdout_closed: bool,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: mpsc::Receiver<()>,
}

impl Server {
    fn spawn(
        cmdline: &str,
        workdir: &Path,
        env: &BTreeMap<String, String>,
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
                        let _ = otx.send(Incoming::Eof);
                        break;
                    }
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']);
                        if line.trim().is_empty() {
                            continue;
                        }
                        let msg = match serde_json::from_str::<Value>(line) {
                            Ok(v) => Incoming::Json(v),
                            Err(_) => Incoming::Garbage(line.to_string()),
                        };
                        if otx.send(msg).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = otx.send(Incoming::ReadError(e.to_string()));
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
            status: None,
            stdin: Some(wtx),
            out: orx,
            stdout_closed: false,
            stderr: captured,
            stderr_done: drx,
        })
    }

    /// Writes bytes to the server's stdin, waiting at most `timeout`.
    fn write(&mut self, bytes: Vec<u8>, timeout: Duration) -> Result<(), String> {
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

    fn close_stdin(&mut self) {
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
    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
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

    /// SIGKILLs the whole process group and reaps the leader.
    fn kill(&mut self) {
        let _ = killpg(self.pgid, Signal::SIGKILL);
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
    }

    /// ` (server exited with …)` if it has exited, for error messages.
    fn exit_note(&mut self) -> String {
        match self.wait_exit(Duration::from_millis(200)) {
            Some(st) => format!(" (server {})", describe_status(st)),
            None => String::new(),
        }
    }

    fn stderr_text(&self) -> String {
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
}

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
                Ok(inc) => self.handle(inc),
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
                Ok(inc) => self.handle(inc),
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
                Ok(inc) => self.handle(inc),
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
        if case.handshake
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
            let r = self.run_step(step, workdir);
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
                    // The line's own id if it is a request, else a `null`-id response
                    // (what JSON-RPC answers to input it cannot parse).
                    let id = serde_json::from_str::<Value>(line.trim_end())
                        .ok()
                        .filter(|v| v.get("method").is_some())
                        .and_then(|v| v.get("id").cloned())
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

    /// Closes stdin, waits for the exit, checks exit code and stderr.
    fn finish(&mut self, case: &Case, exit_timeout: Duration) {
        self.drain();
        self.server.close_stdin();
        let deadline = Instant::now() + exit_timeout;
        let mut exited = None;
        while Instant::now() < deadline {
            self.drain_for(Duration::from_millis(10));
            if let Some(st) = self.server.poll_exit() {
                exited = Some(st);
                break;
            }
            if self.server.stdout_closed {
                thread::sleep(Duration::from_millis(10));
            }
        }
        match exited {
            None => {
                self.failures.push(format!(
                    "server did not exit within {}ms after stdin EOF (killed)",
                    exit_timeout.as_millis()
                ));
                self.server.kill();
            }
            Some(st) => {
                let want = case.exit_code.unwrap_or(0);
                if st.code() != Some(want) {
                    self.failures.push(format!(
                        "expected exit code {want} after stdin EOF, but the server {}",
                        describe_status(st)
                    ));
                }
                self.server.kill(); // stragglers in the group
            }
        }
        self.drain_for(Duration::from_millis(500));
        self.check_stderr(case);
    }

    /// `expect_startup_failure`: the server must exit non-zero by itself.
    fn run_startup_failure(&mut self, case: &Case) {
        let deadline = Instant::now() + self.timeout;
        let mut exited = None;
        while Instant::now() < deadline {
            self.drain_for(Duration::from_millis(10));
            if let Some(st) = self.server.poll_exit() {
                exited = Some(st);
                break;
            }
            if self.server.stdout_closed {
                thread::sleep(Duration::from_millis(10));
            }
        }
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
