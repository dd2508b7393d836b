//! A case over stdio: newline-delimited JSON-RPC on the server's stdin and stdout,
//! responses matched by id (so they may arrive in any order), server requests answered,
//! the default handshake, and the steps that send messages.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::spec::display::{quote, show};
use crate::spec::matcher::{check_notifications, check_response};
use crate::spec::model::{Action, Case, Placeholders, Step};
use crate::spec::protocol::{default_initialize_params, initialize_params};

use super::core::{Core, Fatal, Line, id_key};
use super::transport::{Ending, Session};

pub(crate) struct StdioSession {
    core: Core,
    /// Responses received, not yet claimed, by id (several may share `null`).
    pending: HashMap<String, VecDeque<Value>>,
    /// Ids of requests sent by `call` steps (their `await` checks content text).
    call_ids: HashSet<String>,
}

impl StdioSession {
    pub(crate) fn new(core: Core) -> Self {
        StdioSession {
            core,
            pending: HashMap::new(),
            call_ids: HashSet::new(),
        }
    }

    fn handle(&mut self, line: Line) {
        let core = &mut self.core;
        let v = match line {
            Line::Message(v) => v,
            Line::NotJson(line) => {
                core.record(json!({"<-": line.clone()}));
                core.failures.push(format!(
                    "server wrote a non-JSON line on stdout: {}",
                    quote(&line)
                ));
                return;
            }
        };
        core.record(json!({"<-": v.clone()}));
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
                core.seen.push(v);
                core.record(json!({"->": reply.clone()}));
                let line = format!("{reply}\n").into_bytes();
                if let Err(e) = core.server.write(line, core.timeout) {
                    core.failures
                        .push(format!("answering a server request: {e}"));
                }
            }
            (true, None) => core.seen.push(v),
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
            (false, None) => core.failures.push(format!(
                "server sent a message that is neither a request, a notification nor a response: {}",
                show(&v)
            )),
        }
    }

    /// Handles every message already received.
    fn drain(&mut self) {
        while let Some(line) = self.core.next_line(Duration::ZERO) {
            self.handle(line);
        }
    }

    /// Handles messages arriving within `d` (returns early when stdout closes).
    fn drain_for(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.core.next_line(left) {
                Some(line) => self.handle(line),
                None => break,
            }
        }
    }

    fn send_json(&mut self, msg: &Value) -> Result<(), Fatal> {
        self.drain();
        self.core.record(json!({"->": msg.clone()}));
        let timeout = self.core.timeout;
        self.core
            .server
            .write(format!("{msg}\n").into_bytes(), timeout)
            .map_err(Fatal)
    }

    fn send_raw(&mut self, line: &str) -> Result<(), Fatal> {
        self.drain();
        let as_msg = serde_json::from_str::<Value>(line.trim_end_matches('\n'))
            .unwrap_or_else(|_| Value::String(line.to_string()));
        self.core.record(json!({"->": as_msg}));
        let mut bytes = line.as_bytes().to_vec();
        if !line.ends_with('\n') {
            bytes.push(b'\n');
        }
        let timeout = self.core.timeout;
        self.core.server.write(bytes, timeout).map_err(Fatal)
    }

    /// Waits for the response with `id`, handling everything else that arrives.
    fn wait_response(&mut self, id: &Value, timeout: Duration) -> Result<Value, Fatal> {
        let key = id_key(id);
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(v) = self.pending.get_mut(&key).and_then(VecDeque::pop_front) {
                return Ok(v);
            }
            if self.core.server.stdout_closed {
                let note = self.core.server.exit_note();
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
            if let Some(line) = self.core.next_line(left) {
                self.handle(line);
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
        self.core.record = false;
        let id = self.core.alloc_id();
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
                         "params": default_initialize_params()});
        let r = self
            .request(&msg, self.core.timeout)
            .map_err(|Fatal(e)| Fatal(format!("default handshake (initialize): {e}")))?;
        if let Some(err) = r.get("error") {
            return Err(Fatal(format!(
                "default handshake: initialize returned a JSON-RPC error: {}",
                show(err)
            )));
        }
        self.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .map_err(|Fatal(e)| Fatal(format!("default handshake (initialized): {e}")))?;
        self.core.record = true;
        Ok(())
    }

    /// Sends a step's message; with `wait`, returns its response (and whether text
    /// checks apply to its content text: a tool call).
    fn send_step(
        &mut self,
        step: &Step,
        timeout: Duration,
    ) -> Result<Option<(Value, bool)>, Fatal> {
        Ok(match &step.action {
            Action::Initialize { params } => {
                let id = self.core.alloc_id();
                let msg = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
                                 "params": initialize_params(Some(params))});
                let r = self.request(&msg, timeout)?;
                if r.get("result").is_some() {
                    self.send_json(
                        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                    )?;
                }
                Some((r, false))
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
                    None => self.core.alloc_id(),
                };
                self.call_ids.insert(id_key(&id));
                let msg =
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
                if *wait {
                    Some((self.request(&msg, timeout)?, true))
                } else {
                    self.send_json(&msg)?;
                    None
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
                    None => self.core.alloc_id(),
                };
                let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
                if let (Some(p), Value::Object(o)) = (params, &mut msg) {
                    o.insert("params".into(), p.clone());
                }
                if *wait {
                    Some((self.request(&msg, timeout)?, false))
                } else {
                    self.send_json(&msg)?;
                    None
                }
            }
            Action::Send { line } => {
                self.send_raw(line)?;
                if step.expect.is_none() {
                    return Ok(None);
                }
                // The line's own id if it is not a response and its id is valid (a
                // string or an integer), else a `null`-id response (what JSON-RPC
                // answers to input it cannot parse, or to an id it cannot echo).
                let id = super::core::line_id(line)
                    .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                    .unwrap_or(Value::Null);
                Some((self.wait_response(&id, timeout)?, false))
            }
            Action::SendJson { message, wait } => {
                self.send_json(message)?;
                // A message with an id and a method is a request: await its response.
                match message.get("id") {
                    Some(id) if *wait && message.get("method").is_some() => {
                        Some((self.wait_response(id, timeout)?, false))
                    }
                    _ => None,
                }
            }
            Action::Await { id } => {
                let call = self.call_ids.contains(&id_key(id));
                Some((self.wait_response(id, timeout)?, call))
            }
            other => {
                return Err(Fatal(format!(
                    "`{}` is not a message step (a harness bug)",
                    other.kind()
                )));
            }
        })
    }

    /// `expect_alive: true`: a ping gets a result.
    fn ping(&mut self, timeout: Duration) -> Result<Vec<String>, Fatal> {
        let id = self.core.alloc_id();
        let r = self
            .request(
                &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
                timeout,
            )
            .map_err(|Fatal(e)| Fatal(format!("server not alive: {e}")))?;
        Ok(match r.get("result") {
            None => vec![format!("ping returned no result: {}", show(&r))],
            Some(_) => Vec::new(),
        })
    }

    /// A step's response against its expectations (without any, it must not be a
    /// JSON-RPC error); kept for `save`.
    fn check(&mut self, step: &Step, response: Option<(Value, bool)>) -> Vec<String> {
        let mut fails = Vec::new();
        let Some((r, tool_call)) = response else {
            return fails;
        };
        match &step.expect {
            Some(expect) => {
                fails.extend(check_response(expect, &r, tool_call));
                if !expect.notifications.is_empty() {
                    fails.extend(check_notifications(&expect.notifications, &self.core.seen));
                }
            }
            None => {
                if let Some(err) = r.get("error") {
                    fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
                }
            }
        }
        self.core.last_response = Some(r);
        fails
    }
}

impl Session for StdioSession {
    fn core(&self) -> &Core {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    fn start(&mut self, case: &Case) -> Result<(), Fatal> {
        let explicit_init = matches!(
            case.steps.first().map(|s| &s.action),
            Some(Action::Initialize { .. })
        );
        if case.handshake && !explicit_init {
            self.default_handshake()?;
        }
        Ok(())
    }

    fn runtime_placeholders(&self) -> Placeholders {
        Placeholders::default()
    }

    fn check_resolved(&self, _shown: &str) -> Result<(), Fatal> {
        Ok(())
    }

    fn run_own_step(
        &mut self,
        step: &Step,
        timeout: Duration,
    ) -> Option<Result<Vec<String>, Fatal>> {
        Some(match &step.action {
            Action::ExpectAlive(true) => self.ping(timeout),
            Action::Initialize { .. }
            | Action::Call { .. }
            | Action::Request { .. }
            | Action::Send { .. }
            | Action::SendJson { .. }
            | Action::Await { .. } => self
                .send_step(step, timeout)
                .map(|response| self.check(step, response)),
            _ => return None,
        })
    }

    fn listen(&mut self, d: Duration) {
        if d.is_zero() {
            self.drain();
        } else {
            self.drain_for(d);
        }
    }

    fn pause(&mut self) {
        self.drain_for(Duration::from_millis(100));
    }

    fn ask_to_exit(&mut self) -> Ending {
        self.core.server.close_stdin();
        Ending {
            how: "stdin EOF",
            by_signal: false,
        }
    }

    fn literals(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
