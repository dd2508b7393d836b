//! A case over streamable HTTP: the server started with its HTTP arguments, its
//! address found (printed on stderr, or the port the harness gave it), and the HTTP
//! steps (`http`, `http_initialize`, `http_call`, `http_request`), each request on a
//! fresh connection: headers, session ids, SSE and JSON bodies, transcripts. The
//! server's stdout is not part of the protocol here: it is read and dropped.

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::spec::http as client;
use crate::spec::model::{Action, Case, DEFAULT_SESSION, Placeholders, Step, session_placeholder};
use crate::spec::process::{Backoff, describe_status};

use super::core::{Core, Fatal};
use super::transport::{Ending, Session};

mod steps;

/// How the harness learns where the server listens.
pub(crate) enum Listening {
    /// It was told to bind this `host:port` (`{port}` in the adapter's `http_args`).
    At(String),
    /// It prints its address on stderr: the first match of this regex (group 1 if any).
    Printed(String),
}

pub(crate) struct HttpSession {
    core: Core,
    listening: Listening,
    /// The server's `host:port`, once known.
    addr: Option<String>,
    /// Saved sessions by name (`""` is `{session}`).
    sessions: BTreeMap<String, SavedSession>,
    /// Every `Mcp-Session-Id` a response carried, in order.
    seen_sessions: Vec<String>,
}

#[derive(Debug, Clone)]
struct SavedSession {
    id: String,
    /// The negotiated protocol version (sent as `MCP-Protocol-Version`).
    version: String,
}

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

impl HttpSession {
    pub(crate) fn new(core: Core, listening: Listening) -> Self {
        HttpSession {
            core,
            listening,
            addr: None,
            sessions: BTreeMap::new(),
            seen_sessions: Vec::new(),
        }
    }

    /// HTTP cases: waits for the server to print its address on stderr.
    fn wait_for_addr(&mut self, pattern: &str) -> Result<(), Fatal> {
        let re = regex::Regex::new(pattern)
            .map_err(|e| Fatal(format!("invalid --http-addr-regex: {e}")))?;
        let deadline = Instant::now() + self.core.timeout;
        let mut backoff = Backoff::default();
        loop {
            let text = match self.core.server.stderr.lock() {
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
            if let Some(st) = self.core.server.poll_exit() {
                return Err(Fatal(format!(
                    "the server {} before printing its address (looked for /{pattern}/ in its stderr)",
                    describe_status(st)
                )));
            }
            if Instant::now() >= deadline {
                return Err(Fatal(format!(
                    "the server printed no address matching /{pattern}/ on stderr within {}ms",
                    self.core.timeout.as_millis()
                )));
            }
            self.wait_reading(backoff.next_wait());
        }
    }

    /// Waits until the server accepts connections on `addr` (it was told to bind there).
    fn wait_for_port(&mut self, addr: &str) -> Result<(), Fatal> {
        let sock: std::net::SocketAddr = addr
            .parse()
            .map_err(|e| Fatal(format!("bad address {addr}: {e}")))?;
        let deadline = Instant::now() + self.core.timeout;
        let mut backoff = Backoff::default();
        loop {
            if std::net::TcpStream::connect_timeout(&sock, Duration::from_millis(200)).is_ok() {
                self.addr = Some(addr.to_string());
                return Ok(());
            }
            if let Some(st) = self.core.server.poll_exit() {
                return Err(Fatal(format!(
                    "the server {} before listening on {addr}",
                    describe_status(st)
                )));
            }
            if Instant::now() >= deadline {
                return Err(Fatal(format!(
                    "the server did not listen on {addr} within {}ms",
                    self.core.timeout.as_millis()
                )));
            }
            self.wait_reading(backoff.next_wait());
        }
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
}

impl Session for HttpSession {
    fn core(&self) -> &Core {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    fn start(&mut self, _case: &Case) -> Result<(), Fatal> {
        match &self.listening {
            Listening::At(addr) => {
                let addr = addr.clone();
                self.wait_for_port(&addr)
            }
            Listening::Printed(pattern) => {
                let pattern = pattern.clone();
                self.wait_for_addr(&pattern)
            }
        }
    }

    /// `{addr}`, the saved sessions and the versions they negotiated (`{version…}`).
    fn runtime_placeholders(&self) -> Placeholders {
        let mut p = Placeholders::default().with("{addr}", self.addr.as_deref().unwrap_or(""));
        for (name, s) in &self.sessions {
            p = p.with(&session_placeholder(name), &s.id);
            // `{version}` / `{version:NAME}`: the version that session negotiated,
            // for raw `http` steps' MCP-Protocol-Version header.
            let version = session_placeholder(name).replacen("{session", "{version", 1);
            p = p.with(&version, &s.version);
        }
        p
    }

    /// A reference to a session never saved stops the case.
    fn check_resolved(&self, action: &str) -> Result<(), Fatal> {
        // Compiled once: every step of every case comes through here.
        static SESSION: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
        if let Some(re) =
            SESSION.get_or_init(|| regex::Regex::new(r"\{session(?::([A-Za-z0-9_-]+))?\}").ok())
            && let Some(c) = re.captures(action)
        {
            return Err(Fatal(format!(
                "{} is used but no session was saved under that name ({})",
                c.get(0).map(|m| m.as_str()).unwrap_or_default(),
                self.saved_names()
            )));
        }
        Ok(())
    }

    fn run_own_step(
        &mut self,
        step: &Step,
        timeout: Duration,
    ) -> Option<Result<Vec<String>, Fatal>> {
        let expect = step.expect.as_ref();
        Some(match &step.action {
            Action::Http(h) => self.http_step(h, expect, timeout),
            Action::HttpInitialize(i) => self.http_initialize(i, expect, timeout),
            Action::HttpCall(c) => self.http_call(c, expect, timeout),
            Action::HttpRequest(q) => self.http_request(q, expect, timeout),
            Action::ExpectAlive(true) => {
                let addr = self.addr.clone().unwrap_or_default();
                match client::connect(&addr, timeout) {
                    Ok(_) => Ok(Vec::new()),
                    Err(e) => Err(Fatal(format!("server not alive: {e}"))),
                }
            }
            _ => return None,
        })
    }

    /// The server's stdout is not the protocol here: read and dropped.
    fn listen(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.core.next_line(left).is_none() {
                break;
            }
        }
    }

    fn pause(&mut self) {
        thread::sleep(Duration::from_millis(100));
    }

    fn ask_to_exit(&mut self) -> Ending {
        if self.core.server.poll_exit().is_none() {
            let _ = self.core.server.signal(Signal::SIGTERM);
        }
        Ending {
            how: "SIGTERM",
            by_signal: true,
        }
    }

    /// The address and session ids, for the golden transcript.
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
}
