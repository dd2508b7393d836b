//! Steps: the raw YAML form, its validation, and the clean [`Action`] enum.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::*;

// ---------------------------------------------------------------------------------
// Steps

#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawStep")]
pub struct Step {
    pub action: Action,
    pub expect: Option<Expect>,
    /// Expectations checked only under a profile (`boris`, `boris_compat`,
    /// `boris_pipe`): merged into `expect` by an adapter that claims the profile.
    pub profiles: BTreeMap<String, Expect>,
    /// Per-step override of the wait timeout.
    pub timeout_ms: Option<u64>,
    /// Repeat the step (every 100 ms) until its expectations hold, for at most this long:
    /// for state that settles in its own time (a task's status, a file a background
    /// command writes).
    pub until_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Explicit initialize (params merged over the defaults), then `notifications/initialized`.
    Initialize {
        params: Value,
    },
    /// A capability (`read_file`, `replace`, `run`, …) with its portable arguments:
    /// an adapter turns it into the server's own `tools/call` (see `spec::adapter`)
    /// and adds the expectations of the profiles it satisfies.
    Do {
        capability: String,
        with: serde_json::Map<String, Value>,
        /// The call's `_meta` (a progress token), as `call:` steps have it.
        meta: Option<Value>,
        id: Option<Value>,
        wait: bool,
    },
    /// `tools/call`.
    Call {
        name: String,
        args: Option<Value>,
        meta: Option<Value>,
        id: Option<Value>,
        wait: bool,
    },
    /// Any JSON-RPC request.
    Request {
        method: String,
        params: Option<Value>,
        id: Option<Value>,
        wait: bool,
    },
    /// A raw line, sent verbatim. Nothing is awaited unless the step has `expect`:
    /// then the response to the line's id (if it is a JSON request) or else a
    /// response with `id: null` (the answer to unparseable input).
    Send {
        line: String,
    },
    /// A raw JSON message; if it has an id (and `wait` is not false) its response is awaited.
    SendJson {
        message: Value,
        wait: bool,
    },
    /// Wait for the response to an earlier request sent with `wait: false`.
    Await {
        id: Value,
    },
    /// Modify the workdir.
    Write {
        files: Vec<FileSpec>,
    },
    SleepMs(u64),
    CheckFiles(Vec<FileCheck>),
    /// `true`: ping and require a reply (HTTP: accept a TCP connection). `false`: the
    /// server must have exited.
    ExpectAlive(bool),
    /// One HTTP request (HTTP cases).
    Http(HttpSpec),
    /// POST `initialize` and `notifications/initialized`, saving the session id.
    HttpInitialize(HttpInitSpec),
    /// POST `tools/call` in a session (or statelessly) with the MCP headers.
    HttpCall(HttpCallSpec),
    /// POST any JSON-RPC request in a session (or statelessly) with the MCP headers.
    HttpRequest(HttpRequestSpec),
    /// Send a signal to the server; optionally require it to exit.
    Signal {
        /// Without the `SIG` prefix: `TERM`, `INT`, …
        name: String,
        expect_exit: Option<ExpectExit>,
    },
    /// No process (other than the harness) has a command line matching this regex.
    AssertNoProcess(String),
}

/// An HTTP request step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    #[serde(default = "default_method")]
    pub method: String,
    #[serde(default = "default_path")]
    pub path: String,
    /// Extra headers; a `null` value removes a header the harness would add.
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    /// A JSON body (sent compact, with `Content-Type: application/json`).
    #[serde(default, deserialize_with = "present_value")]
    pub json: Option<Value>,
    /// A raw body.
    pub body: Option<String>,
    /// A generated body: `text` repeated `count` times.
    pub body_repeat: Option<Repeat>,
    /// The step's `wait` (false: send in the background, never read the response).
    #[serde(skip, default = "yes")]
    pub wait: bool,
}

impl PartialEq for Repeat {
    fn eq(&self, o: &Self) -> bool {
        self.text == o.text && self.count == o.count
    }
}

pub(crate) fn default_method() -> String {
    "POST".into()
}

pub(crate) fn default_path() -> String {
    "/mcp".into()
}

/// `http_initialize`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpInitSpec {
    /// Where to keep the session id (default: `{session}`).
    #[serde(default)]
    pub save_session: Option<SaveSession>,
    /// Merged over the default initialize params (a `null` value removes a key).
    #[serde(default)]
    pub params: Option<Value>,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    /// Same as a step-level `expect` (give one or the other).
    #[serde(default, deserialize_with = "present_or_default")]
    pub expect: Option<Expect>,
}

/// `http_call`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpCallSpec {
    /// The saved session to use (default: `{session}`).
    pub session: Option<String>,
    /// No session: a stateless 2026-07-28 request (`_meta` and `Mcp-*` headers added).
    #[serde(default)]
    pub stateless: bool,
    /// The tool by name (Boris's own), with `args`; or a capability (`do`, `with`),
    /// which the adapter turns into a tool and arguments.
    #[serde(default)]
    pub tool: String,
    #[serde(default, deserialize_with = "present_value")]
    pub args: Option<Value>,
    #[serde(default, rename = "do")]
    pub capability: Option<String>,
    #[serde(default)]
    pub with: Option<serde_json::Map<String, Value>>,
    pub meta: Option<Value>,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    #[serde(default, deserialize_with = "present_value")]
    pub id: Option<Value>,
    /// Same as a step-level `expect` (give one or the other).
    #[serde(default, deserialize_with = "present_or_default")]
    pub expect: Option<Expect>,
    /// The step's `wait` (false: send in the background, never read the response).
    #[serde(skip, default = "yes")]
    pub wait: bool,
}

/// `http_request`: any JSON-RPC request over HTTP, as `http_call` sends `tools/call`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpRequestSpec {
    pub method: String,
    #[serde(default, deserialize_with = "present_value")]
    pub params: Option<Value>,
    /// The saved session to use (default: `{session}`).
    pub session: Option<String>,
    /// No session: a stateless 2026-07-28 request (`_meta` and `Mcp-*` headers added).
    #[serde(default)]
    pub stateless: bool,
    #[serde(default)]
    pub headers: BTreeMap<String, Option<String>>,
    #[serde(default, deserialize_with = "present_value")]
    pub id: Option<Value>,
    /// Same as a step-level `expect` (give one or the other).
    #[serde(default, deserialize_with = "present_or_default")]
    pub expect: Option<Expect>,
}

/// `expect_exit` of a `signal` step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectExit {
    /// Required exit code (default 0).
    #[serde(default)]
    pub code: i32,
    /// How long to wait (default: the step's timeout).
    pub within_ms: Option<u64>,
}

/// Signals a `signal` step may send.
pub const SIGNALS: &[&str] = &["TERM", "INT", "HUP", "QUIT", "KILL", "USR1", "USR2"];

impl Action {
    /// The step's action key, e.g. `call`.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Initialize { .. } => "initialize",
            Action::Do { .. } => "do",
            Action::Call { .. } => "call",
            Action::Request { .. } => "request",
            Action::Send { .. } => "send",
            Action::SendJson { .. } => "send_json",
            Action::Await { .. } => "await",
            Action::Write { .. } => "write",
            Action::SleepMs(_) => "sleep_ms",
            Action::CheckFiles(_) => "check_files",
            Action::ExpectAlive(_) => "expect_alive",
            Action::Http(_) => "http",
            Action::HttpInitialize(_) => "http_initialize",
            Action::HttpCall(_) => "http_call",
            Action::HttpRequest(_) => "http_request",
            Action::Signal { .. } => "signal",
            Action::AssertNoProcess(_) => "assert_no_process",
        }
    }

    /// Short label for failure messages, e.g. `call view`.
    pub fn label(&self) -> String {
        match self {
            Action::Initialize { .. } => "initialize".into(),
            Action::Do { capability, .. } => format!("do {capability}"),
            Action::Call { name, .. } => format!("call {name}"),
            Action::Request { method, .. } => format!("request {method}"),
            Action::Send { .. } => "send".into(),
            Action::SendJson { message, .. } => match message.get("method").and_then(Value::as_str)
            {
                Some(m) => format!("send_json {m}"),
                None => "send_json".into(),
            },
            Action::Await { id } => format!("await {id}"),
            Action::Write { .. } => "write".into(),
            Action::SleepMs(_) => "sleep_ms".into(),
            Action::CheckFiles(_) => "check_files".into(),
            Action::ExpectAlive(_) => "expect_alive".into(),
            Action::Http(h) => format!("http {} {}", h.method, h.path),
            Action::HttpInitialize(_) => "http_initialize".into(),
            Action::HttpCall(c) => match &c.capability {
                Some(cap) => format!("http_call {cap}"),
                None => format!("http_call {}", c.tool),
            },
            Action::HttpRequest(r) => format!("http_request {}", r.method),
            Action::Signal { name, .. } => format!("signal {name}"),
            Action::AssertNoProcess(_) => "assert_no_process".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    pub method: String,
    #[serde(default, deserialize_with = "present_value")]
    pub params: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrManyFiles {
    One(FileSpec),
    Many(Vec<FileSpec>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    #[serde(default, deserialize_with = "present_value")]
    initialize: Option<Value>,
    #[serde(rename = "do")]
    do_: Option<String>,
    with: Option<serde_json::Map<String, Value>>,
    #[serde(default, deserialize_with = "present_or_default")]
    boris: Option<Expect>,
    #[serde(default, deserialize_with = "present_or_default")]
    boris_compat: Option<Expect>,
    #[serde(default, deserialize_with = "present_or_default")]
    boris_pipe: Option<Expect>,
    call: Option<String>,
    #[serde(default, deserialize_with = "present_value")]
    args: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    meta: Option<Value>,
    request: Option<RequestSpec>,
    send: Option<String>,
    send_json: Option<Value>,
    #[serde(rename = "await", default, deserialize_with = "present_value")]
    await_: Option<Value>,
    write: Option<OneOrManyFiles>,
    sleep_ms: Option<u64>,
    check_files: Option<Vec<FileCheck>>,
    expect_alive: Option<bool>,
    http: Option<HttpSpec>,
    #[serde(default, deserialize_with = "present_or_default")]
    http_initialize: Option<HttpInitSpec>,
    http_call: Option<HttpCallSpec>,
    http_request: Option<HttpRequestSpec>,
    signal: Option<String>,
    expect_exit: Option<ExpectExit>,
    assert_no_process: Option<String>,
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    wait: Option<bool>,
    #[serde(default, deserialize_with = "present_or_default")]
    expect: Option<Expect>,
    timeout_ms: Option<u64>,
    until_ms: Option<u64>,
}

pub(crate) const STEP_KINDS: &str = "initialize, do, call, request, send, send_json, await, write, sleep_ms, \
     check_files, expect_alive, http, http_initialize, http_call, http_request, signal, \
     assert_no_process";

/// Step kinds that get a response, so they may carry `expect` (and profile
/// expectations).
const RESPONSE_STEPS: &[&str] = &[
    "initialize",
    "do",
    "call",
    "request",
    "send",
    "send_json",
    "await",
    "http",
    "http_initialize",
    "http_call",
    "http_request",
];

/// Step kinds that only make sense over stdio / over HTTP.
pub const STDIO_ONLY_STEPS: &[&str] = &[
    "initialize",
    "do",
    "call",
    "request",
    "send",
    "send_json",
    "await",
];
pub const HTTP_ONLY_STEPS: &[&str] = &["http", "http_initialize", "http_call", "http_request"];

impl TryFrom<RawStep> for Step {
    type Error = String;
    fn try_from(r: RawStep) -> Result<Self, String> {
        let mut kinds = Vec::new();
        for (present, name) in [
            (r.initialize.is_some(), "initialize"),
            (r.do_.is_some(), "do"),
            (r.call.is_some(), "call"),
            (r.request.is_some(), "request"),
            (r.send.is_some(), "send"),
            (r.send_json.is_some(), "send_json"),
            (r.await_.is_some(), "await"),
            (r.write.is_some(), "write"),
            (r.sleep_ms.is_some(), "sleep_ms"),
            (r.check_files.is_some(), "check_files"),
            (r.expect_alive.is_some(), "expect_alive"),
            (r.http.is_some(), "http"),
            (r.http_initialize.is_some(), "http_initialize"),
            (r.http_call.is_some(), "http_call"),
            (r.http_request.is_some(), "http_request"),
            (r.signal.is_some(), "signal"),
            (r.assert_no_process.is_some(), "assert_no_process"),
        ] {
            if present {
                kinds.push(name);
            }
        }
        if kinds.len() != 1 {
            return Err(format!(
                "a step needs exactly one of {STEP_KINDS} (found {})",
                if kinds.is_empty() {
                    "none".to_string()
                } else {
                    kinds.join(", ")
                }
            ));
        }
        let kind = kinds[0];
        let only_for = |present: bool, key: &str, allowed: &[&str]| -> Result<(), String> {
            if present && !allowed.contains(&kind) {
                Err(format!(
                    "`{key}` is not allowed in a `{kind}` step (only in: {})",
                    allowed.join(", ")
                ))
            } else {
                Ok(())
            }
        };
        only_for(r.args.is_some(), "args", &["call"])?;
        only_for(r.meta.is_some(), "meta", &["call", "do"])?;
        only_for(r.with.is_some(), "with", &["do"])?;
        only_for(r.id.is_some(), "id", &["do", "call", "request"])?;
        only_for(
            r.wait.is_some(),
            "wait",
            &[
                "do",
                "call",
                "request",
                "send_json",
                "http",
                "http_call",
                "http_request",
            ],
        )?;
        only_for(r.expect_exit.is_some(), "expect_exit", &["signal"])?;
        // `expect` written inside an http_initialize / http_call map.
        let mut r = r;
        let inner_expect = match (
            &mut r.http_initialize,
            &mut r.http_call,
            &mut r.http_request,
        ) {
            (Some(i), _, _) => i.expect.take(),
            (_, Some(c), _) => c.expect.take(),
            (_, _, Some(q)) => q.expect.take(),
            _ => None,
        };
        if inner_expect.is_some() {
            if r.expect.is_some() {
                return Err(format!(
                    "`expect` is given both inside `{kind}` and beside it: keep one"
                ));
            }
            r.expect = inner_expect;
        }
        only_for(r.expect.is_some(), "expect", RESPONSE_STEPS)?;
        for (present, key) in [
            (r.boris.is_some(), "boris"),
            (r.boris_compat.is_some(), "boris_compat"),
            (r.boris_pipe.is_some(), "boris_pipe"),
        ] {
            // Profile expectations go wherever an `expect` may.
            only_for(present, key, RESPONSE_STEPS)?;
        }
        only_for(
            r.timeout_ms.is_some(),
            "timeout_ms",
            &[
                "initialize",
                "do",
                "call",
                "request",
                "send",
                "send_json",
                "await",
                "expect_alive",
                "http",
                "http_initialize",
                "http_call",
                "http_request",
                "assert_no_process",
            ],
        )?;
        only_for(
            r.until_ms.is_some(),
            "until_ms",
            &[
                "do",
                "call",
                "request",
                "http",
                "http_call",
                "http_request",
                "check_files",
            ],
        )?;
        if r.until_ms.is_some() && r.expect.is_none() && kind != "check_files" {
            return Err("`until_ms` repeats the step until its `expect` holds: add one".into());
        }
        if let Some(e) = &r.expect
            && !e.save.is_empty()
            && ![
                "do",
                "call",
                "request",
                "send",
                "send_json",
                "await",
                "http",
                "http_call",
                "http_request",
                "initialize",
                "http_initialize",
            ]
            .contains(&kind)
        {
            return Err(format!(
                "`save` needs a JSON-RPC response; a `{kind}` step has none"
            ));
        }
        if let Some(e) = &r.expect {
            let http_keys = e.http_keys();
            let rpc_keys = e.jsonrpc_keys();
            if !HTTP_ONLY_STEPS.contains(&kind) && !http_keys.is_empty() {
                return Err(format!(
                    "`{}` in `expect` is only for HTTP steps (http, http_initialize, http_call)",
                    http_keys.join("`, `")
                ));
            }
            if kind == "http" && !rpc_keys.is_empty() {
                return Err(format!(
                    "`{}` in the `expect` of an `http` step: check the body with `messages` \
                     (JSON subset match per message) or `body_contains`, or use `http_call`",
                    rpc_keys.join("`, `")
                ));
            }
            if kind != "http" && e.save_session.is_some() {
                return Err(
                    "`save_session` in `expect` is only for `http` steps (http_initialize has its own)"
                        .into(),
                );
            }
            for m in &e.messages {
                if !m.match_.is_object() {
                    return Err(format!(
                        "a `messages` pattern matches a JSON object, got {}",
                        m.match_
                    ));
                }
            }
        }
        let wait = r.wait.unwrap_or(true);
        if !wait && r.expect.is_some() && HTTP_ONLY_STEPS.contains(&kind) {
            return Err(format!(
                "an `{kind}` step with `wait: false` is sent in the background and its response \
                 is never read: remove `expect`"
            ));
        }
        if !wait && r.expect.is_some() {
            return Err(
                "`expect` needs the response: use `wait: false` with a later `await` step instead"
                    .into(),
            );
        }
        if let Some(id) = &r.id
            && !(id.is_string() || id.is_i64() || id.is_u64())
        {
            return Err(format!("`id` must be a string or an integer, got {id}"));
        }
        if let Some(e) = &r.expect {
            e.validate()?;
        }
        let mut profiles = BTreeMap::new();
        for (key, e) in [
            ("boris", r.boris.take()),
            ("boris_compat", r.boris_compat.take()),
            ("boris_pipe", r.boris_pipe.take()),
        ] {
            if let Some(e) = e {
                if !wait {
                    return Err(format!(
                        "`{key}` expectations need the response: use `wait: false` with a later `await`"
                    ));
                }
                e.validate()?;
                profiles.insert(key.to_string(), e);
            }
        }
        if let Some(m) = &r.meta
            && !m.is_object()
        {
            return Err(format!("`meta` must be a map, got {m}"));
        }
        let action = if let Some(capability) = r.do_ {
            check_capability(&capability)?;
            Action::Do {
                capability,
                with: r.with.unwrap_or_default(),
                meta: r.meta,
                id: r.id,
                wait,
            }
        } else if let Some(p) = r.initialize {
            let params = match p {
                Value::Null => Value::Object(Default::default()),
                Value::Object(_) => p,
                other => return Err(format!("`initialize` takes a map of params, got {other}")),
            };
            Action::Initialize { params }
        } else if let Some(name) = r.call {
            Action::Call {
                name,
                args: r.args,
                meta: r.meta,
                id: r.id,
                wait,
            }
        } else if let Some(req) = r.request {
            Action::Request {
                method: req.method,
                params: req.params,
                id: r.id,
                wait,
            }
        } else if let Some(line) = r.send {
            Action::Send { line }
        } else if let Some(message) = r.send_json {
            if r.expect.is_some() && message.get("id").is_none() {
                return Err(
                    "`send_json` without an `id` gets no response, so it cannot have `expect`"
                        .into(),
                );
            }
            Action::SendJson { message, wait }
        } else if let Some(id) = r.await_ {
            if !(id.is_string() || id.is_i64() || id.is_u64()) {
                return Err(format!(
                    "`await` takes the id of an earlier request (string or integer), got {id}"
                ));
            }
            Action::Await { id }
        } else if let Some(files) = r.write {
            Action::Write {
                files: match files {
                    OneOrManyFiles::One(f) => vec![f],
                    OneOrManyFiles::Many(v) => v,
                },
            }
        } else if let Some(ms) = r.sleep_ms {
            Action::SleepMs(ms)
        } else if let Some(checks) = r.check_files {
            for c in &checks {
                c.validate()?;
            }
            Action::CheckFiles(checks)
        } else if let Some(alive) = r.expect_alive {
            Action::ExpectAlive(alive)
        } else if let Some(h) = r.http {
            if !h.method.chars().all(|c| c.is_ascii_uppercase()) || h.method.is_empty() {
                return Err(format!(
                    "http method `{}` must be an upper-case token like POST",
                    h.method
                ));
            }
            if !h.path.starts_with('/') || h.path.contains(char::is_whitespace) {
                return Err(format!(
                    "http path `{}` must start with `/` and have no spaces",
                    h.path
                ));
            }
            let bodies = [h.json.is_some(), h.body.is_some(), h.body_repeat.is_some()];
            if bodies.iter().filter(|b| **b).count() > 1 {
                return Err("an http step takes at most one of json, body, body_repeat".into());
            }
            check_headers(&h.headers)?;
            let mut h = h;
            h.wait = wait;
            Action::Http(h)
        } else if let Some(i) = r.http_initialize {
            if let Some(p) = &i.params
                && !p.is_object()
            {
                return Err(format!("`params` must be a map, got {p}"));
            }
            check_headers(&i.headers)?;
            Action::HttpInitialize(i)
        } else if let Some(c) = r.http_call {
            check_rpc_keys(c.stateless, c.session.as_deref(), c.id.as_ref(), &c.headers)?;
            match (&c.capability, c.tool.is_empty()) {
                (Some(_), false) => {
                    return Err("`http_call` takes `tool` or `do`, not both".into());
                }
                (None, true) => return Err("`http_call` needs a `tool` or a `do`".into()),
                (Some(cap), true) => {
                    check_capability(cap)?;
                    if c.args.is_some() {
                        return Err("`http_call` with `do` takes `with`, not `args`".into());
                    }
                }
                (None, false) if c.with.is_some() => {
                    return Err("`http_call` with `tool` takes `args`, not `with`".into());
                }
                (None, false) => {}
            }
            if let Some(m) = &c.meta
                && !m.is_object()
            {
                return Err(format!("`meta` must be a map, got {m}"));
            }
            let mut c = c;
            c.wait = wait;
            Action::HttpCall(c)
        } else if let Some(q) = r.http_request {
            check_rpc_keys(q.stateless, q.session.as_deref(), q.id.as_ref(), &q.headers)?;
            if q.method.trim().is_empty() {
                return Err("`http_request` needs a `method`".into());
            }
            if let Some(p) = &q.params
                && !p.is_object()
            {
                return Err(format!("`params` must be a map, got {p}"));
            }
            Action::HttpRequest(q)
        } else if let Some(sig) = r.signal {
            let name = sig.trim().to_ascii_uppercase();
            let name = name.strip_prefix("SIG").unwrap_or(&name).to_string();
            if !SIGNALS.contains(&name.as_str()) {
                return Err(format!(
                    "unknown signal `{sig}` (one of: {})",
                    SIGNALS.join(", ")
                ));
            }
            Action::Signal {
                name,
                expect_exit: r.expect_exit,
            }
        } else if let Some(pattern) = r.assert_no_process {
            if pattern.trim().is_empty() {
                return Err("`assert_no_process` needs a non-empty pattern".into());
            }
            regex::Regex::new(&Placeholders::dummy().expand_regex(&pattern))
                .map_err(|e| format!("assert_no_process: invalid regex `{pattern}`: {e}"))?;
            Action::AssertNoProcess(pattern)
        } else {
            return Err(format!("a step needs exactly one of {STEP_KINDS}"));
        };
        Ok(Step {
            action,
            expect: r.expect,
            profiles,
            timeout_ms: r.timeout_ms,
            until_ms: r.until_ms,
        })
    }
}

/// The keys `http_call` and `http_request` share: a session or `stateless`, an id, headers.
fn check_rpc_keys(
    stateless: bool,
    session: Option<&str>,
    id: Option<&Value>,
    headers: &BTreeMap<String, Option<String>>,
) -> Result<(), String> {
    if stateless && session.is_some() {
        return Err("`stateless: true` sends no session: remove `session`".into());
    }
    if let Some(s) = session {
        check_session_name(s)?;
    }
    if let Some(id) = id
        && !(id.is_string() || id.is_i64() || id.is_u64())
    {
        return Err(format!("`id` must be a string or an integer, got {id}"));
    }
    check_headers(headers)
}

/// Header names must be HTTP tokens; values must not contain line breaks.
pub(crate) fn check_headers(h: &BTreeMap<String, Option<String>>) -> Result<(), String> {
    for (n, v) in h {
        if n.is_empty()
            || !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
        {
            return Err(format!("`{n}` is not a valid header name"));
        }
        if let Some(v) = v
            && v.contains(['\r', '\n'])
        {
            return Err(format!(
                "header `{n}`: the value must not contain a line break"
            ));
        }
    }
    Ok(())
}

/// A `do` names one of the capabilities.
fn check_capability(capability: &str) -> Result<(), String> {
    let known = crate::spec::vocabulary::CAPABILITIES;
    if known.iter().any(|(c, _)| *c == capability) {
        return Ok(());
    }
    Err(format!(
        "unknown capability `{capability}` (one of: {})",
        known.iter().map(|(c, _)| *c).collect::<Vec<_>>().join(", ")
    ))
}
