//! Steps: the raw YAML form, its validation, and the clean [`Action`] enum.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::http_step::{HttpCallSpec, HttpInitSpec, HttpRequestSpec, HttpSpec, check_map};
use super::step_kind::{Needs, StepKey, StepKind};
use super::{Expect, FileCheck, FileSpec, Placeholders, present_or_default, present_value};
use crate::spec::identity::TokenSpec;
use crate::spec::vocabulary::Capability;

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
    /// Set at load on the steps whose answer must show the case's attack marker
    /// (`Case::marker_answer_steps`), and kept through adapters and routes, which
    /// rewrite the actions and add steps.
    pub shows_marker: bool,
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
        capability: Capability,
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
    /// `expect_alive: stopped`: the server's process is stopped (SIGSTOP), as the
    /// harness sees it in /proc.
    ExpectStopped,
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
    /// Some process (other than the harness) has a command line matching this regex:
    /// seen by the harness from outside the server, as `AssertNoProcess`.
    AssertProcess(String),
    /// A token from the case's identity provider, kept as `{saved:NAME}` (the auth
    /// pack, `spec::identity`).
    IdpToken(TokenSpec),
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
pub const SIGNALS: &[&str] = &[
    "TERM", "INT", "HUP", "QUIT", "KILL", "USR1", "USR2", "STOP", "CONT",
];

impl Action {
    /// The capability a portable step does (`do:`, or an `http_call` with `do:`).
    pub fn capability(&self) -> Option<Capability> {
        match self {
            Action::Do { capability, .. } => Some(*capability),
            Action::HttpCall(c) => c.capability,
            _ => None,
        }
    }

    /// The step's kind (its action key, e.g. `call`).
    pub fn kind(&self) -> StepKind {
        match self {
            Action::Initialize { .. } => StepKind::Initialize,
            Action::Do { .. } => StepKind::Do,
            Action::Call { .. } => StepKind::Call,
            Action::Request { .. } => StepKind::Request,
            Action::Send { .. } => StepKind::Send,
            Action::SendJson { .. } => StepKind::SendJson,
            Action::Await { .. } => StepKind::Await,
            Action::Write { .. } => StepKind::Write,
            Action::SleepMs(_) => StepKind::SleepMs,
            Action::CheckFiles(_) => StepKind::CheckFiles,
            Action::ExpectAlive(_) | Action::ExpectStopped => StepKind::ExpectAlive,
            Action::Http(_) => StepKind::Http,
            Action::HttpInitialize(_) => StepKind::HttpInitialize,
            Action::HttpCall(_) => StepKind::HttpCall,
            Action::HttpRequest(_) => StepKind::HttpRequest,
            Action::Signal { .. } => StepKind::Signal,
            Action::AssertNoProcess(_) => StepKind::AssertNoProcess,
            Action::AssertProcess(_) => StepKind::AssertProcess,
            Action::IdpToken(_) => StepKind::IdpToken,
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
            Action::ExpectStopped => "expect_alive stopped".into(),
            Action::Http(h) => format!("http {} {}", h.method, h.path),
            Action::HttpInitialize(_) => "http_initialize".into(),
            Action::HttpCall(c) => match &c.capability {
                Some(cap) => format!("http_call {cap}"),
                None => format!("http_call {}", c.tool),
            },
            Action::HttpRequest(r) => format!("http_request {}", r.method),
            Action::Signal { name, .. } => format!("signal {name}"),
            Action::AssertNoProcess(_) => "assert_no_process".into(),
            Action::AssertProcess(_) => "assert_process".into(),
            Action::IdpToken(t) => format!("idp_token {}", t.save),
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

/// `expect_alive: true | false | stopped`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum Alive {
    Bool(bool),
    Word(String),
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
    expect_alive: Option<Alive>,
    http: Option<HttpSpec>,
    #[serde(default, deserialize_with = "present_or_default")]
    http_initialize: Option<HttpInitSpec>,
    http_call: Option<HttpCallSpec>,
    http_request: Option<HttpRequestSpec>,
    signal: Option<String>,
    expect_exit: Option<ExpectExit>,
    assert_no_process: Option<String>,
    assert_process: Option<String>,
    idp_token: Option<TokenSpec>,
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    wait: Option<bool>,
    #[serde(default, deserialize_with = "present_or_default")]
    expect: Option<Expect>,
    timeout_ms: Option<u64>,
    until_ms: Option<u64>,
}

impl RawStep {
    /// The action keys the step has (exactly one, for a valid step).
    fn kinds(&self) -> Vec<StepKind> {
        [
            (self.initialize.is_some(), StepKind::Initialize),
            (self.do_.is_some(), StepKind::Do),
            (self.call.is_some(), StepKind::Call),
            (self.request.is_some(), StepKind::Request),
            (self.send.is_some(), StepKind::Send),
            (self.send_json.is_some(), StepKind::SendJson),
            (self.await_.is_some(), StepKind::Await),
            (self.write.is_some(), StepKind::Write),
            (self.sleep_ms.is_some(), StepKind::SleepMs),
            (self.check_files.is_some(), StepKind::CheckFiles),
            (self.expect_alive.is_some(), StepKind::ExpectAlive),
            (self.http.is_some(), StepKind::Http),
            (self.http_initialize.is_some(), StepKind::HttpInitialize),
            (self.http_call.is_some(), StepKind::HttpCall),
            (self.http_request.is_some(), StepKind::HttpRequest),
            (self.signal.is_some(), StepKind::Signal),
            (self.assert_no_process.is_some(), StepKind::AssertNoProcess),
            (self.assert_process.is_some(), StepKind::AssertProcess),
            (self.idp_token.is_some(), StepKind::IdpToken),
        ]
        .into_iter()
        .filter_map(|(present, kind)| present.then_some(kind))
        .collect()
    }

    /// `expect` written inside an `http_initialize` / `http_call` / `http_request` map.
    fn take_inner_expect(&mut self) -> Option<Expect> {
        match (
            &mut self.http_initialize,
            &mut self.http_call,
            &mut self.http_request,
        ) {
            (Some(i), _, _) => i.expect.take(),
            (_, Some(c), _) => c.expect.take(),
            (_, _, Some(q)) => q.expect.take(),
            _ => None,
        }
    }

    /// Every key beside the action is one its kind takes (the table in `step_kind`).
    fn check_keys(&self, kind: StepKind) -> Result<(), String> {
        for (present, key, shown_as) in [
            (self.args.is_some(), StepKey::Args, "args"),
            (self.meta.is_some(), StepKey::Meta, "meta"),
            (self.with.is_some(), StepKey::With, "with"),
            (self.id.is_some(), StepKey::Id, "id"),
            (self.wait.is_some(), StepKey::Wait, "wait"),
            (
                self.expect_exit.is_some(),
                StepKey::ExpectExit,
                "expect_exit",
            ),
            (self.expect.is_some(), StepKey::Expect, "expect"),
            // Profile expectations go wherever an `expect` may.
            (self.boris.is_some(), StepKey::Expect, "boris"),
            (self.boris_compat.is_some(), StepKey::Expect, "boris_compat"),
            (self.boris_pipe.is_some(), StepKey::Expect, "boris_pipe"),
            (self.timeout_ms.is_some(), StepKey::TimeoutMs, "timeout_ms"),
            (self.until_ms.is_some(), StepKey::UntilMs, "until_ms"),
        ] {
            kind.check_key(present, key, shown_as)?;
        }
        Ok(())
    }

    /// The step's action, from its one action key.
    fn into_action(self, wait: bool, has_expect: bool) -> Result<Action, String> {
        let r = self;
        Ok(if let Some(capability) = r.do_ {
            Action::Do {
                capability: Capability::parse(&capability)?,
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
            if has_expect && message.get("id").is_none() {
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
            match alive {
                Alive::Bool(b) => Action::ExpectAlive(b),
                Alive::Word(w) if w == "stopped" => Action::ExpectStopped,
                Alive::Word(w) => {
                    return Err(format!(
                        "`expect_alive` takes true, false or stopped, got `{w}`"
                    ));
                }
            }
        } else if let Some(mut h) = r.http {
            h.validate()?;
            h.wait = wait;
            Action::Http(h)
        } else if let Some(i) = r.http_initialize {
            i.validate()?;
            Action::HttpInitialize(i)
        } else if let Some(mut c) = r.http_call {
            c.validate()?;
            c.wait = wait;
            Action::HttpCall(c)
        } else if let Some(q) = r.http_request {
            q.validate()?;
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
            check_process_pattern("assert_no_process", &pattern)?;
            Action::AssertNoProcess(pattern)
        } else if let Some(pattern) = r.assert_process {
            check_process_pattern("assert_process", &pattern)?;
            Action::AssertProcess(pattern)
        } else if let Some(t) = r.idp_token {
            t.validate()?;
            Action::IdpToken(t)
        } else {
            return Err(format!(
                "a step needs exactly one of {}",
                StepKind::keys_listed()
            ));
        })
    }
}

impl TryFrom<RawStep> for Step {
    type Error = String;
    fn try_from(mut r: RawStep) -> Result<Self, String> {
        let kinds = r.kinds();
        let &[kind] = &kinds[..] else {
            let found: Vec<&str> = kinds.iter().map(|k| k.key()).collect();
            return Err(format!(
                "a step needs exactly one of {} (found {})",
                StepKind::keys_listed(),
                if found.is_empty() {
                    "none".to_string()
                } else {
                    found.join(", ")
                }
            ));
        };
        if let Some(inner) = r.take_inner_expect() {
            if r.expect.is_some() {
                return Err(format!(
                    "`expect` is given both inside `{kind}` and beside it: keep one"
                ));
            }
            r.expect = Some(inner);
        }
        r.check_keys(kind)?;
        if r.until_ms.is_some() && r.expect.is_none() && kind != StepKind::CheckFiles {
            return Err("`until_ms` repeats the step until its `expect` holds: add one".into());
        }
        if let Some(e) = &r.expect {
            expect_fits(kind, e)?;
        }
        let wait = r.wait.unwrap_or(true);
        if !wait && r.expect.is_some() {
            return Err(if kind.needs() == Needs::Http {
                format!(
                    "an `{kind}` step with `wait: false` is sent in the background and its \
                     response is never read: remove `expect`"
                )
            } else {
                "`expect` needs the response: use `wait: false` with a later `await` step instead"
                    .into()
            });
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
        check_map("meta", r.meta.as_ref())?;
        let (expect, timeout_ms, until_ms) = (r.expect.take(), r.timeout_ms, r.until_ms);
        Ok(Step {
            action: r.into_action(wait, expect.is_some())?,
            expect,
            profiles,
            timeout_ms,
            until_ms,
            shows_marker: false,
        })
    }
}

/// A process step's pattern: a non-empty regex (with placeholders expanded).
fn check_process_pattern(key: &str, pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err(format!("`{key}` needs a non-empty pattern"));
    }
    regex::Regex::new(&Placeholders::dummy().expand_regex(pattern))
        .map_err(|e| format!("{key}: invalid regex `{pattern}`: {e}"))?;
    Ok(())
}

/// The keys of an `expect` fit the step's kind: HTTP keys on HTTP steps, JSON-RPC keys
/// on steps that get one JSON-RPC response.
fn expect_fits(kind: StepKind, e: &Expect) -> Result<(), String> {
    let http_keys = e.http_keys();
    let rpc_keys = e.jsonrpc_keys();
    if kind.needs() != Needs::Http && !http_keys.is_empty() {
        return Err(format!(
            "`{}` in `expect` is only for HTTP steps (http, http_initialize, http_call)",
            http_keys.join("`, `")
        ));
    }
    if kind == StepKind::Http && !rpc_keys.is_empty() {
        return Err(format!(
            "`{}` in the `expect` of an `http` step: check the body with `messages` \
             (JSON subset match per message) or `body_contains`, or use `http_call`",
            rpc_keys.join("`, `")
        ));
    }
    if kind != StepKind::Http && e.save_session.is_some() {
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
    Ok(())
}
