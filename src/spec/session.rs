//! A running case over stdio: the transcript, responses matched by id, the default
//! handshake, and the steps. HTTP steps are in [`super::session_http`], teardown and
//! end-of-case checks in [`super::teardown`].

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::display::{quote, show};
use super::fixtures::{check_file, create_files};
use super::http::{self as client};
use super::matcher::{check_notifications, check_response, content_text};
use super::model::{
    Action, Case, CaseTransport, DEFAULT_SESSION, Placeholders, Step, saved_placeholder,
    session_placeholder,
};
use super::process::{Incoming, Server, describe_status};
use super::protocol::{default_initialize_params, initialize_params};
// ---------------------------------------------------------------------------------
// A running case

/// A fatal step error: stop running steps.
pub(crate) struct Fatal(pub(crate) String);

pub(crate) struct Session {
    pub(crate) server: Server,
    pub(crate) transcript: Vec<Value>,
    /// Record traffic in the transcript (off during the default handshake).
    pub(crate) record: bool,
    /// Responses received, not yet claimed, by id (several may share `null`).
    pub(crate) pending: HashMap<String, VecDeque<Value>>,
    /// Server messages (notifications and requests) since the current step began.
    pub(crate) seen: Vec<Value>,
    /// Ids of requests sent by `call` steps (their `await` checks content text).
    pub(crate) call_ids: HashSet<String>,
    pub(crate) next_id: i64,
    /// Ids the case uses explicitly; the harness never assigns them.
    pub(crate) reserved: HashSet<String>,
    pub(crate) timeout: Duration,
    pub(crate) failures: Vec<String>,
    pub(crate) transport: CaseTransport,
    /// HTTP cases: the server's `host:port`, once known.
    pub(crate) addr: Option<String>,
    /// HTTP cases: saved sessions by name (`""` is `{session}`).
    pub(crate) sessions: BTreeMap<String, SavedSession>,
    /// Every `Mcp-Session-Id` a response carried, in order.
    pub(crate) seen_sessions: Vec<String>,
    /// A `signal` step's `expect_exit` already checked the exit code.
    pub(crate) exit_checked: bool,
    /// Dying of SIGTERM counts as exiting 0 (`Case::sigterm_death_ok`).
    pub(crate) sigterm_death_ok: bool,
    /// Values kept by `save` (`{saved:NAME}`).
    pub(crate) saved: BTreeMap<String, String>,
    /// The JSON-RPC response the last step got, for `save`.
    pub(crate) last_response: Option<Value>,
}

#[derive(Debug, Clone)]
pub(crate) struct SavedSession {
    pub(crate) id: String,
    /// The negotiated protocol version (sent as `MCP-Protocol-Version`).
    pub(crate) version: String,
}

/// Response headers recorded in transcripts (besides `access-control-*` and any the
/// step's expectation names).
pub(crate) const RECORDED_RESPONSE_HEADERS: &[&str] = &[
    "content-type",
    "mcp-session-id",
    "www-authenticate",
    "allow",
    "location",
];

/// Bodies longer than this are recorded as `<N bytes>`.
pub(crate) const RECORDED_BODY_MAX: usize = 4096;

pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Session {
    pub(crate) fn new(server: Server, case: &Case, timeout: Duration) -> Self {
        let mut reserved = HashSet::new();
        for s in &case.steps {
            let id = match &s.action {
                Action::Call { id, .. } | Action::Request { id, .. } => id.clone(),
                Action::SendJson { message, .. } => message.get("id").cloned(),
                Action::Send { line } => serde_json::from_str::<Value>(line)
                    .ok()
                    .and_then(|v| v.get("id").cloned()),
                Action::HttpCall(c) => c.id.clone(),
                Action::HttpRequest(q) => q.id.clone(),
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
            sigterm_death_ok: case.sigterm_death_ok,
            saved: BTreeMap::new(),
            last_response: None,
        }
    }

    pub(crate) fn http(&self) -> bool {
        self.transport == CaseTransport::Http
    }

    /// Literal replacements for the golden transcript: the address and session ids.
    pub(crate) fn literals(&self) -> Vec<(String, String)> {
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
    pub(crate) fn wait_for_addr(&mut self, pattern: &str) -> Result<(), Fatal> {
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

    /// Waits until the server accepts connections on `addr` (it was told to bind there).
    pub(crate) fn wait_for_port(&mut self, addr: &str) -> Result<(), Fatal> {
        let sock: std::net::SocketAddr = addr
            .parse()
            .map_err(|e| Fatal(format!("bad address {addr}: {e}")))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            if std::net::TcpStream::connect_timeout(&sock, Duration::from_millis(200)).is_ok() {
                self.addr = Some(addr.to_string());
                return Ok(());
            }
            if let Some(st) = self.server.poll_exit() {
                return Err(Fatal(format!(
                    "the server {} before listening on {addr}",
                    describe_status(st)
                )));
            }
            if Instant::now() >= deadline {
                return Err(Fatal(format!(
                    "the server did not listen on {addr} within {}ms",
                    self.timeout.as_millis()
                )));
            }
            self.drain_for(Duration::from_millis(20));
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// The step with what is known only at run time expanded: `{saved:…}` values and,
    /// in HTTP cases, `{addr}`, the saved sessions and their versions (`{version…}`). A reference to a session or a
    /// value that was never saved stops the case.
    pub(crate) fn runtime_step(&self, step: &Step) -> Result<Step, Fatal> {
        let mut p = Placeholders::default();
        if self.http() {
            p = p.with("{addr}", self.addr.as_deref().unwrap_or(""));
            for (name, s) in &self.sessions {
                p = p.with(&session_placeholder(name), &s.id);
                // `{version}` / `{version:NAME}`: the version that session negotiated,
                // for raw `http` steps' MCP-Protocol-Version header.
                let version = session_placeholder(name).replacen("{session", "{version", 1);
                p = p.with(&version, &s.version);
            }
        }
        for (name, value) in &self.saved {
            p = p.with(&saved_placeholder(name), value);
        }
        let mut out = step.clone();
        out.expand(&p);
        // Compiled once: every step of every case comes through here.
        static SESSION: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
        static SAVED: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
        let action = format!("{:?}", out.action);
        if self.http()
            && let Some(re) =
                SESSION.get_or_init(|| regex::Regex::new(r"\{session(?::([A-Za-z0-9_-]+))?\}").ok())
            && let Some(c) = re.captures(&action)
        {
            return Err(Fatal(format!(
                "{} is used but no session was saved under that name ({})",
                c.get(0).map(|m| m.as_str()).unwrap_or_default(),
                self.saved_names()
            )));
        }
        let shown = format!("{action} {:?}", out.expect);
        if let Some(re) = SAVED.get_or_init(|| regex::Regex::new(r"\{saved:[A-Za-z0-9_-]+\}").ok())
            && let Some(m) = re.find(&shown)
        {
            return Err(Fatal(format!(
                "{} is used but nothing was saved under that name (saved: {})",
                m.as_str(),
                if self.saved.is_empty() {
                    "none yet; use `save` in an earlier step's expect".to_string()
                } else {
                    self.saved.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            )));
        }
        Ok(out)
    }

    /// Keeps the values `expect.save` points at in the last response.
    pub(crate) fn save_values(&mut self, save: &BTreeMap<String, String>) -> Vec<String> {
        let mut fails = Vec::new();
        let Some(response) = &self.last_response else {
            if !save.is_empty() {
                fails.push("save: the step got no JSON-RPC response".to_string());
            }
            return fails;
        };
        for (name, pointer) in save {
            if let Some(re) = pointer.strip_prefix("text:") {
                let text = content_text(response).unwrap_or_default();
                let found = regex::Regex::new(re).ok().and_then(|re| {
                    re.captures(&text)
                        .and_then(|c| c.get(1).or_else(|| c.get(0)))
                        .map(|m| m.as_str().to_string())
                });
                match found {
                    Some(v) => {
                        self.saved.insert(name.clone(), v);
                    }
                    None => fails.push(format!(
                        "save: {name}: /{re}/ does not match the result's text {}",
                        quote(&text)
                    )),
                }
                continue;
            }
            match response.pointer(pointer) {
                Some(Value::String(s)) => {
                    self.saved.insert(name.clone(), s.clone());
                }
                Some(other) => {
                    self.saved.insert(name.clone(), other.to_string());
                }
                None => fails.push(format!(
                    "save: {name}: nothing at {pointer} in {}",
                    show(response)
                )),
            }
        }
        fails
    }

    pub(crate) fn saved_names(&self) -> String {
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

    pub(crate) fn alloc_id(&mut self) -> Value {
        loop {
            let id = json!(self.next_id);
            self.next_id += 1;
            if self.reserved.insert(id_key(&id)) {
                return id;
            }
        }
    }

    pub(crate) fn handle(&mut self, inc: Incoming) {
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
    pub(crate) fn drain(&mut self) {
        while !self.server.stdout_closed {
            match self.server.out.try_recv() {
                Ok((inc, _)) => self.handle(inc),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => self.server.stdout_closed = true,
            }
        }
    }

    /// Handles messages arriving within `d`.
    pub(crate) fn drain_for(&mut self, d: Duration) {
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

    pub(crate) fn send_json(&mut self, msg: &Value) -> Result<(), Fatal> {
        self.drain();
        if self.record {
            self.transcript.push(json!({"->": msg.clone()}));
        }
        self.server
            .write(format!("{msg}\n").into_bytes(), self.timeout)
            .map_err(Fatal)
    }

    pub(crate) fn send_raw(&mut self, line: &str) -> Result<(), Fatal> {
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
    pub(crate) fn wait_response(&mut self, id: &Value, timeout: Duration) -> Result<Value, Fatal> {
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
    pub(crate) fn request(&mut self, msg: &Value, timeout: Duration) -> Result<Value, Fatal> {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        self.send_json(msg)?;
        self.wait_response(&id, timeout)
    }

    pub(crate) fn default_handshake(&mut self) -> Result<(), Fatal> {
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

    pub(crate) fn run_steps(&mut self, case: &Case, workdir: &Path) {
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
            let until = step
                .until_ms
                .map(|ms| Instant::now() + Duration::from_millis(ms));
            let r = loop {
                self.seen.clear();
                self.last_response = None;
                let r = self.runtime_step(step).and_then(|step| {
                    let mut fails = self.run_step(&step, workdir)?;
                    if let Some(e) = &step.expect
                        && !e.save.is_empty()
                        && fails.is_empty()
                    {
                        fails.extend(self.save_values(&e.save));
                    }
                    Ok(fails)
                });
                // Repeat while only the expectations failed and there is time left.
                match (&r, until) {
                    (Ok(fails), Some(until))
                        if !fails.is_empty()
                            && self.failures.len() == before
                            && Instant::now() < until =>
                    {
                        if self.http() {
                            thread::sleep(Duration::from_millis(100));
                        } else {
                            self.drain_for(Duration::from_millis(100));
                        }
                    }
                    _ => break r,
                }
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
    pub(crate) fn run_step(&mut self, step: &Step, workdir: &Path) -> Result<Vec<String>, Fatal> {
        let timeout = step
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.timeout);
        let mut fails = Vec::new();
        // (response, text checks apply to content text)
        let mut response: Option<(Value, bool)> = None;
        match &step.action {
            Action::Do { capability, .. } => {
                return Err(Fatal(format!(
                    "`do: {capability}` reached the runner unadapted (a harness bug)"
                )));
            }
            Action::Initialize { params } => {
                let merged = initialize_params(Some(params));
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
            Action::HttpRequest(q) => {
                fails.extend(self.http_request(q, step.expect.as_ref(), timeout)?)
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
        if let Some((r, _)) = &response {
            self.last_response = Some(r.clone());
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
}
