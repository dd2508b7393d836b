//! The YAML case format: serde types, validation and placeholder expansion.
//!
//! Every struct denies unknown fields, so a typo in a case is a load error, never a
//! silently skipped assertion. Steps and fixture entries are first read into a "raw"
//! struct with every key optional, then converted (`try_from`) into a clean enum; the
//! conversion checks that exactly one action key is present and that the other keys
//! make sense for it. See CONTRIBUTING.md ("The spec case format") for the user-facing description.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Default wait for any single response, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// One spec case (one YAML file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Where the file was loaded from (not part of the YAML).
    #[serde(skip)]
    pub path: PathBuf,
    /// Where the behaviour comes from (seed file and scenario, or "DESIGN §n").
    pub source: String,
    /// How the harness talks to the server: `stdio` (default) or `http`.
    #[serde(default)]
    pub transport: CaseTransport,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Extra server arguments (placeholders expanded), appended shell-quoted.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment for the server (placeholders expanded).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Per-wait timeout for this case.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Snapshot the normalised transcript (cargo test only).
    #[serde(default)]
    pub golden: bool,
    /// `false`: no automatic initialize handshake.
    #[serde(default = "yes")]
    pub handshake: bool,
    /// Fixtures created in the workdir before the server starts.
    #[serde(default)]
    pub files: Vec<FileSpec>,
    /// The server must exit non-zero by itself; no steps are run.
    #[serde(default, deserialize_with = "present_or_default")]
    pub expect_startup_failure: Option<StartupFailure>,
    /// After the case, the server's stderr contains each of these.
    #[serde(default)]
    pub stderr_contains: Strings,
    /// After the case, the server's stderr contains none of these.
    #[serde(default)]
    pub stderr_not_contains: Strings,
    /// Required exit code (default 0 after stdin EOF; non-zero for startup failures).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Extra normalisation for the golden transcript.
    #[serde(default)]
    pub redact: Vec<Redaction>,
    #[serde(default)]
    pub steps: Vec<Step>,
}

fn yes() -> bool {
    true
}

/// How a case talks to the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseTransport {
    /// Newline-delimited JSON-RPC on the server's stdin/stdout.
    #[default]
    Stdio,
    /// The server is started with the HTTP arguments (`--transport http --port 0`) and
    /// the steps are HTTP requests to the address it prints on stderr.
    Http,
}

/// `key:` with a null value still counts as present (`Some(default)`).
fn present_or_default<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Some(Option::<T>::deserialize(d)?.unwrap_or_default()))
}

/// `key:` with a null value still counts as present (`Some(Value::Null)`).
fn present_value<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Some(Value::deserialize(d)?))
}

/// A string or a list of strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        match OneOrMany::deserialize(d) {
            Ok(OneOrMany::One(s)) => Ok(Strings(vec![s])),
            Ok(OneOrMany::Many(v)) => Ok(Strings(v)),
            Err(_) => Err(serde::de::Error::custom(
                "expected a string or a list of strings (quote values YAML would read as numbers or booleans)",
            )),
        }
    }
}

impl Strings {
    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartupFailure {
    #[serde(default)]
    pub stderr_contains: Strings,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Redaction {
    pub regex: String,
    pub replace: String,
}

// ---------------------------------------------------------------------------------
// Fixtures

/// A file to create in the workdir (`files:` and `write:`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawFileSpec")]
pub struct FileSpec {
    pub path: String,
    pub content: FileContent,
    /// Permission bits, parsed from an octal string.
    pub mode: Option<u32>,
    /// Modification time, seconds since the Unix epoch.
    pub mtime: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContent {
    Text(String),
    Bytes(Vec<u8>),
    Repeat { text: String, count: u64 },
    Symlink(String),
    Dir,
    Fifo,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    pub text: String,
    pub count: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileSpec {
    path: String,
    text: Option<String>,
    base64: Option<String>,
    repeat: Option<Repeat>,
    symlink: Option<String>,
    #[serde(default)]
    dir: bool,
    #[serde(default)]
    fifo: bool,
    mode: Option<String>,
    mtime: Option<i64>,
}

impl TryFrom<RawFileSpec> for FileSpec {
    type Error = String;
    fn try_from(r: RawFileSpec) -> Result<Self, String> {
        check_rel_path(&r.path)?;
        let mut kinds = Vec::new();
        if r.text.is_some() {
            kinds.push("text");
        }
        if r.base64.is_some() {
            kinds.push("base64");
        }
        if r.repeat.is_some() {
            kinds.push("repeat");
        }
        if r.symlink.is_some() {
            kinds.push("symlink");
        }
        if r.dir {
            kinds.push("dir");
        }
        if r.fifo {
            kinds.push("fifo");
        }
        if kinds.len() != 1 {
            return Err(format!(
                "file `{}` needs exactly one of text, base64, repeat, symlink, dir, fifo (found {})",
                r.path,
                if kinds.is_empty() {
                    "none".to_string()
                } else {
                    kinds.join(", ")
                }
            ));
        }
        let content = if let Some(t) = r.text {
            FileContent::Text(t)
        } else if let Some(b) = r.base64 {
            FileContent::Bytes(decode_base64(&b).map_err(|e| format!("file `{}`: {e}", r.path))?)
        } else if let Some(rep) = r.repeat {
            FileContent::Repeat {
                text: rep.text,
                count: rep.count,
            }
        } else if let Some(s) = r.symlink {
            FileContent::Symlink(s)
        } else if r.dir {
            FileContent::Dir
        } else {
            FileContent::Fifo
        };
        let mode = match r.mode {
            Some(m) => Some(parse_mode(&m).map_err(|e| format!("file `{}`: {e}", r.path))?),
            None => None,
        };
        if matches!(content, FileContent::Symlink(_)) && (mode.is_some() || r.mtime.is_some()) {
            return Err(format!(
                "file `{}`: mode and mtime cannot be set on a symlink",
                r.path
            ));
        }
        Ok(FileSpec {
            path: r.path,
            content,
            mode,
            mtime: r.mtime,
        })
    }
}

pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| format!("invalid base64: {e}"))
}

/// Parses an octal permission string such as `"0755"`, `"644"` or `"0o600"`.
pub fn parse_mode(s: &str) -> Result<u32, String> {
    let digits = s.strip_prefix("0o").unwrap_or(s);
    match u32::from_str_radix(digits, 8) {
        Ok(m) if m <= 0o7777 && !digits.is_empty() => Ok(m),
        _ => Err(format!(
            "mode `{s}` is not an octal permission string like \"0755\""
        )),
    }
}

/// Fixture and check paths are relative to the workdir (or absolute under `{workdir}`,
/// checked after expansion) and may not climb out of it with `..`.
fn check_rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("empty path".into());
    }
    if Path::new(p)
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("path `{p}` must not contain `..`"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// File checks

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCheck {
    pub path: String,
    /// Exact content (text).
    pub text: Option<String>,
    /// Exact content (bytes, base64).
    pub base64: Option<String>,
    #[serde(default)]
    pub contains: Strings,
    #[serde(default)]
    pub not_contains: Strings,
    /// `false`: the path must not exist (not even as a dangling symlink).
    pub exists: Option<bool>,
    /// Permission bits (octal string).
    pub mode: Option<String>,
    /// The path is a symlink with this target.
    pub symlink: Option<String>,
    /// The path is (`true`) or is not (`false`) a directory.
    pub dir: Option<bool>,
}

impl FileCheck {
    fn validate(&self) -> Result<(), String> {
        check_rel_path(&self.path)?;
        if self.exists == Some(false)
            && (self.text.is_some()
                || self.base64.is_some()
                || !self.contains.is_empty()
                || !self.not_contains.is_empty()
                || self.mode.is_some()
                || self.symlink.is_some()
                || self.dir.is_some())
        {
            return Err(format!(
                "check `{}`: exists: false cannot be combined with other assertions",
                self.path
            ));
        }
        if let Some(m) = &self.mode {
            parse_mode(m).map_err(|e| format!("check `{}`: {e}", self.path))?;
        }
        if let Some(b) = &self.base64 {
            decode_base64(b).map_err(|e| format!("check `{}`: {e}", self.path))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// Expectations

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// `result.isError` (absent counts as false) must equal this.
    pub is_error: Option<bool>,
    /// Text starts with `[CODE]` and isError is true.
    pub code: Option<String>,
    /// Text equals this exactly.
    pub text: Option<String>,
    #[serde(default)]
    pub contains: Strings,
    #[serde(default)]
    pub not_contains: Strings,
    #[serde(default)]
    pub regex: Strings,
    /// The `type` of each content block, in order.
    pub content_types: Option<Vec<String>>,
    /// The response is a JSON-RPC error with this code.
    pub jsonrpc_error: Option<i64>,
    /// JSON subset match against the whole response message.
    #[serde(rename = "match")]
    pub match_: Option<Value>,
    /// Each pattern must subset-match at least one message the server sent while
    /// this step waited (notifications and server requests).
    #[serde(default)]
    pub notifications: Vec<Value>,

    // HTTP steps (`http`, `http_initialize`, `http_call`).
    /// The HTTP status code.
    pub status: Option<u16>,
    /// Header name (case-insensitive) → a substring (or a list of substrings) of its
    /// value (all values of the name joined with `, `).
    #[serde(default)]
    pub headers: BTreeMap<String, Strings>,
    /// Header names that must not be in the response.
    #[serde(default)]
    pub headers_absent: Vec<String>,
    /// Each pattern must match some message of the body (a JSON body, or the `data`
    /// of each non-empty server-sent event).
    #[serde(default)]
    pub messages: Vec<MessagePattern>,
    /// The body (as text) equals this exactly.
    pub body: Option<String>,
    #[serde(default)]
    pub body_contains: Strings,
    #[serde(default)]
    pub body_not_contains: Strings,
    /// `http` steps: remember the response's `Mcp-Session-Id` as `{session}` (`true`)
    /// or `{session:NAME}` (a name).
    pub save_session: Option<SaveSession>,
}

/// One `messages` entry of an HTTP expectation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagePattern {
    /// JSON subset match against one message.
    #[serde(rename = "match")]
    pub match_: Value,
}

/// `save_session: true` (the default session, `{session}`) or `save_session: NAME`
/// (`{session:NAME}`). `false` saves nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveSession(pub Option<String>);

/// The name under which the default session is kept (`{session}`).
pub const DEFAULT_SESSION: &str = "";

impl<'de> Deserialize<'de> for SaveSession {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) | Value::Null => Ok(SaveSession(Some(DEFAULT_SESSION.into()))),
            Value::Bool(false) => Ok(SaveSession(None)),
            Value::String(s) => check_session_name(&s)
                .map(|()| SaveSession(Some(s)))
                .map_err(serde::de::Error::custom),
            other => Err(serde::de::Error::custom(format!(
                "save_session takes true or a session name, got {other}"
            ))),
        }
    }
}

fn check_session_name(s: &str) -> Result<(), String> {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Ok(())
    } else {
        Err(format!(
            "session name `{s}` must be letters, digits, `_` or `-`"
        ))
    }
}

/// The placeholder of a saved session: `{session}` or `{session:NAME}`.
pub fn session_placeholder(name: &str) -> String {
    if name == DEFAULT_SESSION {
        "{session}".into()
    } else {
        format!("{{session:{name}}}")
    }
}

impl Expect {
    /// Keys that look at a JSON-RPC response.
    fn jsonrpc_keys(&self) -> Vec<&'static str> {
        let mut k = Vec::new();
        for (present, name) in [
            (self.is_error.is_some(), "is_error"),
            (self.code.is_some(), "code"),
            (self.text.is_some(), "text"),
            (!self.contains.is_empty(), "contains"),
            (!self.not_contains.is_empty(), "not_contains"),
            (!self.regex.is_empty(), "regex"),
            (self.content_types.is_some(), "content_types"),
            (self.jsonrpc_error.is_some(), "jsonrpc_error"),
            (self.match_.is_some(), "match"),
            (!self.notifications.is_empty(), "notifications"),
        ] {
            if present {
                k.push(name);
            }
        }
        k
    }

    /// Keys that look at an HTTP response.
    pub fn http_keys(&self) -> Vec<&'static str> {
        let mut k = Vec::new();
        for (present, name) in [
            (self.status.is_some(), "status"),
            (!self.headers.is_empty(), "headers"),
            (!self.headers_absent.is_empty(), "headers_absent"),
            (!self.messages.is_empty(), "messages"),
            (self.body.is_some(), "body"),
            (!self.body_contains.is_empty(), "body_contains"),
            (!self.body_not_contains.is_empty(), "body_not_contains"),
            (self.save_session.is_some(), "save_session"),
        ] {
            if present {
                k.push(name);
            }
        }
        k
    }

    /// Whether any key needs a JSON-RPC response to check.
    pub fn wants_jsonrpc(&self) -> bool {
        !self.jsonrpc_keys().is_empty()
    }

    fn validate(&self) -> Result<(), String> {
        for r in self.regex.iter() {
            regex::Regex::new(&Placeholders::dummy().expand(r))
                .map_err(|e| format!("invalid regex `{r}`: {e}"))?;
        }
        if let Some(c) = &self.code
            && (c.is_empty() || c.starts_with('['))
        {
            return Err(format!(
                "code `{c}` should be the bare code, e.g. PATH_NOT_FOUND"
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// Steps

#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawStep")]
pub struct Step {
    pub action: Action,
    pub expect: Option<Expect>,
    /// Per-step override of the wait timeout.
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Explicit initialize (params merged over the defaults), then `notifications/initialized`.
    Initialize {
        params: Value,
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

fn default_method() -> String {
    "POST".into()
}

fn default_path() -> String {
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
    pub tool: String,
    #[serde(default, deserialize_with = "present_value")]
    pub args: Option<Value>,
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
            Action::Signal { .. } => "signal",
            Action::AssertNoProcess(_) => "assert_no_process",
        }
    }

    /// Short label for failure messages, e.g. `call view`.
    pub fn label(&self) -> String {
        match self {
            Action::Initialize { .. } => "initialize".into(),
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
            Action::HttpCall(c) => format!("http_call {}", c.tool),
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
enum OneOrManyFiles {
    One(FileSpec),
    Many(Vec<FileSpec>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default, deserialize_with = "present_value")]
    initialize: Option<Value>,
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
    signal: Option<String>,
    expect_exit: Option<ExpectExit>,
    assert_no_process: Option<String>,
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    wait: Option<bool>,
    #[serde(default, deserialize_with = "present_or_default")]
    expect: Option<Expect>,
    timeout_ms: Option<u64>,
}

const STEP_KINDS: &str = "initialize, call, request, send, send_json, await, write, sleep_ms, \
     check_files, expect_alive, http, http_initialize, http_call, signal, assert_no_process";

/// Step kinds that only make sense over stdio / over HTTP.
pub const STDIO_ONLY_STEPS: &[&str] = &[
    "initialize",
    "call",
    "request",
    "send",
    "send_json",
    "await",
];
pub const HTTP_ONLY_STEPS: &[&str] = &["http", "http_initialize", "http_call"];

impl TryFrom<RawStep> for Step {
    type Error = String;
    fn try_from(r: RawStep) -> Result<Self, String> {
        let mut kinds = Vec::new();
        for (present, name) in [
            (r.initialize.is_some(), "initialize"),
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
        only_for(r.meta.is_some(), "meta", &["call"])?;
        only_for(r.id.is_some(), "id", &["call", "request"])?;
        only_for(
            r.wait.is_some(),
            "wait",
            &["call", "request", "send_json", "http", "http_call"],
        )?;
        only_for(r.expect_exit.is_some(), "expect_exit", &["signal"])?;
        // `expect` written inside an http_initialize / http_call map.
        let mut r = r;
        let inner_expect = match (&mut r.http_initialize, &mut r.http_call) {
            (Some(i), _) => i.expect.take(),
            (_, Some(c)) => c.expect.take(),
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
        only_for(
            r.expect.is_some(),
            "expect",
            &[
                "initialize",
                "call",
                "request",
                "send",
                "send_json",
                "await",
                "http",
                "http_initialize",
                "http_call",
            ],
        )?;
        only_for(
            r.timeout_ms.is_some(),
            "timeout_ms",
            &[
                "initialize",
                "call",
                "request",
                "send",
                "send_json",
                "await",
                "expect_alive",
                "http",
                "http_initialize",
                "http_call",
                "assert_no_process",
            ],
        )?;
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
        let action = if let Some(p) = r.initialize {
            let params = match p {
                Value::Null => Value::Object(Default::default()),
                Value::Object(_) => p,
                other => return Err(format!("`initialize` takes a map of params, got {other}")),
            };
            Action::Initialize { params }
        } else if let Some(name) = r.call {
            if let Some(m) = &r.meta
                && !m.is_object()
            {
                return Err(format!("`meta` must be a map, got {m}"));
            }
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
            if c.stateless && c.session.is_some() {
                return Err("`stateless: true` sends no session: remove `session`".into());
            }
            if let Some(s) = &c.session {
                check_session_name(s)?;
            }
            if let Some(m) = &c.meta
                && !m.is_object()
            {
                return Err(format!("`meta` must be a map, got {m}"));
            }
            if let Some(id) = &c.id
                && !(id.is_string() || id.is_i64() || id.is_u64())
            {
                return Err(format!("`id` must be a string or an integer, got {id}"));
            }
            check_headers(&c.headers)?;
            let mut c = c;
            c.wait = wait;
            Action::HttpCall(c)
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
            timeout_ms: r.timeout_ms,
        })
    }
}

/// Header names must be HTTP tokens; values must not contain line breaks.
fn check_headers(h: &BTreeMap<String, Option<String>>) -> Result<(), String> {
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

// ---------------------------------------------------------------------------------
// Loading

/// Reads and validates a case file. The error names the file and, for YAML and
/// schema errors, the line and column.
pub fn load_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read case: {e}"))?;
    let mut case = parse_case(&text)?;
    case.path = path.to_path_buf();
    Ok(case)
}

/// Parses and validates a case from YAML text.
pub fn parse_case(text: &str) -> Result<Case, String> {
    let case: Case = yaml_serde::from_str(text).map_err(|e| format!("invalid case: {e}"))?;
    case.validate()?;
    Ok(case)
}

impl Case {
    fn validate(&self) -> Result<(), String> {
        if self.source.trim().is_empty() {
            return Err("invalid case: `source` must not be empty".into());
        }
        if self.expect_startup_failure.is_some() && !self.steps.is_empty() {
            return Err(
                "invalid case: a case with `expect_startup_failure` runs no steps; remove `steps`"
                    .into(),
            );
        }
        if self.expect_startup_failure.is_some() && self.exit_code == Some(0) {
            return Err(
                "invalid case: `expect_startup_failure` requires a non-zero exit; remove `exit_code: 0`"
                    .into(),
            );
        }
        if self.expect_startup_failure.is_none() && self.steps.is_empty() {
            return Err("invalid case: no `steps`".into());
        }
        for (i, step) in self.steps.iter().enumerate() {
            let kind = step.action.kind();
            let wrong = match self.transport {
                CaseTransport::Stdio => HTTP_ONLY_STEPS.contains(&kind),
                CaseTransport::Http => STDIO_ONLY_STEPS.contains(&kind),
            };
            if wrong {
                return Err(format!(
                    "invalid case: step {} (`{kind}`) is not available in a {} case{}",
                    i + 1,
                    match self.transport {
                        CaseTransport::Stdio => "stdio",
                        CaseTransport::Http => "`transport: http`",
                    },
                    match self.transport {
                        CaseTransport::Stdio => " (add `transport: http`)",
                        CaseTransport::Http => " (use http, http_initialize or http_call)",
                    }
                ));
            }
        }
        if self.transport == CaseTransport::Http && !self.handshake {
            return Err(
                "invalid case: `handshake` is for stdio cases (HTTP cases never get an automatic one)"
                    .into(),
            );
        }
        if self.tags.iter().any(|t| t.trim().is_empty()) {
            return Err("invalid case: empty tag".into());
        }
        for (i, r) in self.redact.iter().enumerate() {
            regex::Regex::new(&r.regex)
                .map_err(|e| format!("invalid case: redact[{i}]: invalid regex: {e}"))?;
        }
        Ok(())
    }

    /// The case with every placeholder expanded (see [`Placeholders`]).
    pub fn expanded(&self, p: &Placeholders) -> Case {
        let mut c = self.clone();
        c.args = c.args.iter().map(|a| p.expand(a)).collect();
        c.env = c
            .env
            .iter()
            .map(|(k, v)| (k.clone(), p.expand(v)))
            .collect();
        c.files = c.files.iter().map(|f| f.expanded(p)).collect();
        c.stderr_contains = p.expand_strings(&c.stderr_contains);
        c.stderr_not_contains = p.expand_strings(&c.stderr_not_contains);
        if let Some(sf) = &mut c.expect_startup_failure {
            sf.stderr_contains = p.expand_strings(&sf.stderr_contains);
        }
        for s in &mut c.steps {
            s.expand(p);
        }
        c
    }
}

impl FileSpec {
    fn expanded(&self, p: &Placeholders) -> FileSpec {
        let content = match &self.content {
            FileContent::Text(t) => FileContent::Text(p.expand(t)),
            FileContent::Repeat { text, count } => FileContent::Repeat {
                text: p.expand(text),
                count: *count,
            },
            FileContent::Symlink(t) => FileContent::Symlink(p.expand(t)),
            other => other.clone(),
        };
        FileSpec {
            path: p.expand(&self.path),
            content,
            mode: self.mode,
            mtime: self.mtime,
        }
    }
}

fn expand_headers(h: &mut BTreeMap<String, Option<String>>, p: &Placeholders) {
    for v in h.values_mut().flatten() {
        *v = p.expand(v);
    }
}

impl Step {
    /// Expands every placeholder of the step (done once with the case's table, and
    /// again at run time for `{session…}` and `{addr}`).
    pub fn expand(&mut self, p: &Placeholders) {
        let ev = |v: &mut Option<Value>| {
            if let Some(x) = v {
                *x = p.expand_value(x);
            }
        };
        match &mut self.action {
            Action::Initialize { params } => *params = p.expand_value(params),
            Action::Call {
                name,
                args,
                meta,
                id,
                ..
            } => {
                *name = p.expand(name);
                ev(args);
                ev(meta);
                ev(id);
            }
            Action::Request {
                method, params, id, ..
            } => {
                *method = p.expand(method);
                ev(params);
                ev(id);
            }
            Action::Send { line } => *line = p.expand(line),
            Action::SendJson { message, .. } => *message = p.expand_value(message),
            Action::Await { id } => *id = p.expand_value(id),
            Action::Write { files } => *files = files.iter().map(|f| f.expanded(p)).collect(),
            Action::SleepMs(_) | Action::ExpectAlive(_) | Action::Signal { .. } => {}
            Action::Http(h) => {
                h.path = p.expand(&h.path);
                expand_headers(&mut h.headers, p);
                ev(&mut h.json);
                h.body = h.body.as_deref().map(|b| p.expand(b));
            }
            Action::HttpInitialize(i) => {
                ev(&mut i.params);
                expand_headers(&mut i.headers, p);
            }
            Action::HttpCall(c) => {
                c.tool = p.expand(&c.tool);
                ev(&mut c.args);
                ev(&mut c.meta);
                ev(&mut c.id);
                expand_headers(&mut c.headers, p);
            }
            Action::AssertNoProcess(pattern) => *pattern = p.expand_regex(pattern),
            Action::CheckFiles(checks) => {
                for c in checks {
                    c.path = p.expand(&c.path);
                    c.text = c.text.as_deref().map(|t| p.expand(t));
                    c.contains = p.expand_strings(&c.contains);
                    c.not_contains = p.expand_strings(&c.not_contains);
                    c.symlink = c.symlink.as_deref().map(|t| p.expand(t));
                }
            }
        }
        if let Some(e) = &mut self.expect {
            e.text = e.text.as_deref().map(|t| p.expand(t));
            e.code = e.code.as_deref().map(|t| p.expand(t));
            e.contains = p.expand_strings(&e.contains);
            e.not_contains = p.expand_strings(&e.not_contains);
            e.regex = Strings(e.regex.iter().map(|r| p.expand_regex(r)).collect());
            e.match_ = e.match_.as_ref().map(|v| p.expand_value(v));
            e.notifications = e.notifications.iter().map(|v| p.expand_value(v)).collect();
            for v in e.headers.values_mut() {
                *v = p.expand_strings(v);
            }
            for m in &mut e.messages {
                m.match_ = p.expand_value(&m.match_);
            }
            e.body = e.body.as_deref().map(|t| p.expand(t));
            e.body_contains = p.expand_strings(&e.body_contains);
            e.body_not_contains = p.expand_strings(&e.body_not_contains);
        }
    }
}

// ---------------------------------------------------------------------------------
// Placeholders

/// The placeholder table: `{name}` → value. Only names in the table are replaced, so
/// other braces (`*.{ts,tsx}`, `\d{8}`) pass through untouched.
#[derive(Debug, Clone, Default)]
pub struct Placeholders(Vec<(String, String)>);

impl Placeholders {
    /// The table for a case running in `workdir` (a canonical absolute path).
    pub fn for_workdir(workdir: &Path) -> Self {
        Placeholders(vec![(
            "{workdir}".to_string(),
            workdir.to_string_lossy().into_owned(),
        )])
    }

    /// Adds (or replaces) one placeholder, e.g. `("{addr}", "127.0.0.1:8080")`.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.0.retain(|(k, _)| k != key);
        self.0.push((key.to_string(), value.to_string()));
        self
    }

    /// A table with dummy values, for validating patterns before a workdir exists.
    pub fn dummy() -> Self {
        Self::for_workdir(Path::new("/workdir"))
    }

    pub fn expand(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (k, v) in &self.0 {
            if out.contains(k.as_str()) {
                out = out.replace(k.as_str(), v);
            }
        }
        out
    }

    /// Expansion inside a regex: values are inserted escaped, so they match literally.
    pub fn expand_regex(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (k, v) in &self.0 {
            if out.contains(k.as_str()) {
                out = out.replace(k.as_str(), &regex::escape(v));
            }
        }
        out
    }

    fn expand_strings(&self, s: &Strings) -> Strings {
        Strings(s.iter().map(|x| self.expand(x)).collect())
    }

    /// Expands every string (and object key) in a JSON value, recursively.
    pub fn expand_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.expand(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.expand_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (self.expand(k), self.expand_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MINIMAL: &str = "source: test\nsteps:\n  - call: view\n    args: {path: a}\n";

    #[test]
    fn parses_minimal_case() {
        let c = parse_case(MINIMAL).unwrap();
        assert_eq!(c.source, "test");
        assert!(c.handshake);
        assert!(!c.golden);
        assert_eq!(c.steps.len(), 1);
        assert_eq!(
            c.steps[0].action,
            Action::Call {
                name: "view".into(),
                args: Some(json!({"path": "a"})),
                meta: None,
                id: None,
                wait: true
            }
        );
    }

    #[test]
    fn unknown_top_level_key_is_an_error_with_location() {
        let e = parse_case("source: x\nstepz: []\n").unwrap_err();
        assert!(e.contains("unknown field `stepz`"), "{e}");
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn unknown_expect_key_is_an_error() {
        let e = parse_case("source: x\nsteps:\n  - call: view\n    expect: {is_eror: true}\n")
            .unwrap_err();
        assert!(e.contains("is_eror"), "{e}");
        assert!(e.contains("line 4"), "{e}");
    }

    #[test]
    fn step_with_two_actions_is_an_error() {
        let e = parse_case("source: x\nsteps:\n  - call: view\n    send: hi\n").unwrap_err();
        assert!(e.contains("exactly one of"), "{e}");
        assert!(e.contains("call, send"), "{e}");
    }

    #[test]
    fn step_with_misplaced_key_is_an_error() {
        let e =
            parse_case("source: x\nsteps:\n  - sleep_ms: 1\n    expect: {text: x}\n").unwrap_err();
        assert!(
            e.contains("`expect` is not allowed in a `sleep_ms` step"),
            "{e}"
        );
        let e = parse_case("source: x\nsteps:\n  - request: {method: ping}\n    args: {}\n")
            .unwrap_err();
        assert!(e.contains("`args`"), "{e}");
    }

    #[test]
    fn null_initialize_and_expect_count_as_present() {
        let c = parse_case("source: x\nsteps:\n  - initialize:\n    expect:\n").unwrap();
        assert_eq!(c.steps[0].action, Action::Initialize { params: json!({}) });
        assert!(c.steps[0].expect.is_some());
        let c = parse_case("source: x\nexpect_startup_failure:\n").unwrap();
        assert!(c.expect_startup_failure.is_some());
    }

    #[test]
    fn startup_failure_case_has_no_steps() {
        let e = parse_case("source: x\nexpect_startup_failure: {}\nsteps:\n  - sleep_ms: 1\n")
            .unwrap_err();
        assert!(e.contains("runs no steps"), "{e}");
        assert!(
            parse_case("source: x\n")
                .unwrap_err()
                .contains("no `steps`")
        );
    }

    #[test]
    fn strings_accept_one_or_many() {
        let c = parse_case(
            "source: x\nstderr_contains: shell\nsteps:\n  - call: v\n    expect: {contains: [a, b], regex: '^x'}\n",
        )
        .unwrap();
        assert_eq!(c.stderr_contains, Strings(vec!["shell".into()]));
        let e = c.steps[0].expect.as_ref().unwrap();
        assert_eq!(e.contains, Strings(vec!["a".into(), "b".into()]));
        assert_eq!(e.regex, Strings(vec!["^x".into()]));
    }

    #[test]
    fn fixtures_parse_every_kind() {
        let c = parse_case(
            r##"
source: x
files:
  - {path: a.txt, text: "hello\n"}
  - {path: img.png, base64: "iVBORw0KGgo="}
  - {path: big.txt, repeat: {text: "line\n", count: 3}}
  - {path: run.sh, text: "#!/bin/sh\n", mode: "0755", mtime: 1700000000}
  - {path: link, symlink: "{workdir}/a.txt"}
  - {path: emptydir, dir: true}
  - {path: pipe, fifo: true}
steps:
  - sleep_ms: 1
"##,
        )
        .unwrap();
        let kinds: Vec<_> = c.files.iter().map(|f| f.content.clone()).collect();
        assert_eq!(kinds[0], FileContent::Text("hello\n".into()));
        assert_eq!(
            kinds[1],
            FileContent::Bytes(vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'])
        );
        assert_eq!(
            kinds[2],
            FileContent::Repeat {
                text: "line\n".into(),
                count: 3
            }
        );
        assert_eq!(c.files[3].mode, Some(0o755));
        assert_eq!(c.files[3].mtime, Some(1_700_000_000));
        assert_eq!(kinds[4], FileContent::Symlink("{workdir}/a.txt".into()));
        assert_eq!(kinds[5], FileContent::Dir);
        assert_eq!(kinds[6], FileContent::Fifo);
    }

    #[test]
    fn bad_fixtures_are_errors() {
        for (yaml, needle) in [
            ("{path: a}", "exactly one of"),
            ("{path: a, text: x, dir: true}", "text, dir"),
            ("{path: a, text: x, mode: \"0999\"}", "octal"),
            ("{path: a, base64: \"!!!\"}", "base64"),
            ("{path: ../a, text: x}", "`..`"),
            ("{path: a, symlink: b, mode: \"0644\"}", "symlink"),
            ("{path: a, txt: x}", "unknown field"),
        ] {
            let e = parse_case(&format!(
                "source: x\nfiles:\n  - {yaml}\nsteps: [{{sleep_ms: 1}}]\n"
            ))
            .unwrap_err();
            assert!(e.contains(needle), "{yaml}: {e}");
        }
    }

    #[test]
    fn parse_mode_accepts_octal_strings() {
        assert_eq!(parse_mode("0755"), Ok(0o755));
        assert_eq!(parse_mode("644"), Ok(0o644));
        assert_eq!(parse_mode("0o600"), Ok(0o600));
        assert!(parse_mode("").is_err());
        assert!(parse_mode("rwx").is_err());
        assert!(parse_mode("77777").is_err());
    }

    #[test]
    fn invalid_regex_is_a_load_error() {
        let e =
            parse_case("source: x\nsteps:\n  - call: v\n    expect: {regex: '('}\n").unwrap_err();
        assert!(e.contains("invalid regex"), "{e}");
        // A placeholder inside a regex is fine.
        parse_case("source: x\nsteps:\n  - call: v\n    expect: {regex: '^{workdir}/a$'}\n")
            .unwrap();
    }

    #[test]
    fn placeholders_expand_known_names_only() {
        let p = Placeholders::for_workdir(Path::new("/tmp/w.1"));
        assert_eq!(p.expand("{workdir}/a"), "/tmp/w.1/a");
        assert_eq!(p.expand("*.{ts,tsx} {other}"), "*.{ts,tsx} {other}");
        assert_eq!(p.expand_regex("^{workdir}/a$"), r"^/tmp/w\.1/a$");
        assert_eq!(
            p.expand_value(&json!({"path": "{workdir}", "list": ["{workdir}/x", 1, null]})),
            json!({"path": "/tmp/w.1", "list": ["/tmp/w.1/x", 1, null]})
        );
    }

    #[test]
    fn case_expansion_reaches_every_part() {
        let c = parse_case(
            r#"
source: x
args: ["--allow-dir={workdir}/src"]
env: {A: "{workdir}/a,{workdir}/b"}
files:
  - {path: "{workdir}/f", symlink: "{workdir}/t"}
stderr_contains: ["{workdir}"]
steps:
  - call: view
    args: {path: "{workdir}/a.txt"}
    expect: {text: "{workdir}", regex: "{workdir}$", match: {x: "{workdir}"}}
  - send: '{"p":"{workdir}"}'
  - check_files: [{path: "{workdir}/a", text: "{workdir}"}]
"#,
        )
        .unwrap();
        let e = c.expanded(&Placeholders::for_workdir(Path::new("/w")));
        assert_eq!(e.args, vec!["--allow-dir=/w/src"]);
        assert_eq!(e.env["A"], "/w/a,/w/b");
        assert_eq!(e.files[0].path, "/w/f");
        assert_eq!(e.files[0].content, FileContent::Symlink("/w/t".into()));
        assert_eq!(e.stderr_contains, Strings(vec!["/w".into()]));
        match &e.steps[0].action {
            Action::Call { args, .. } => assert_eq!(args, &Some(json!({"path": "/w/a.txt"}))),
            other => panic!("{other:?}"),
        }
        let ex = e.steps[0].expect.as_ref().unwrap();
        assert_eq!(ex.text.as_deref(), Some("/w"));
        assert_eq!(ex.regex, Strings(vec!["/w$".into()]));
        assert_eq!(ex.match_, Some(json!({"x": "/w"})));
        assert_eq!(
            e.steps[1].action,
            Action::Send {
                line: r#"{"p":"/w"}"#.into()
            }
        );
        match &e.steps[2].action {
            Action::CheckFiles(c) => {
                assert_eq!(c[0].path, "/w/a");
                assert_eq!(c[0].text.as_deref(), Some("/w"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn http_case_parses() {
        let c = parse_case(
            r#"
source: x
transport: http
steps:
  - http_initialize: {save_session: a}
  - http_initialize:
  - http:
      method: DELETE
      headers: {Mcp-Session-Id: "{session:a}", Accept: null}
    expect:
      status: 202
      headers: {content-type: [text, event-stream], x: ""}
      headers_absent: [www-authenticate]
      messages: [{match: {id: 1}}]
      body_contains: ok
      save_session: other
  - http: {method: POST, body_repeat: {text: " ", count: 3}}
    wait: false
  - http_call: {session: a, tool: bash, args: {command: pwd}, expect: {is_error: false, status: 200}}
  - http_call: {stateless: true, tool: view, args: {}, meta: {progressToken: 1}, id: 9}
    expect: {notifications: [{method: notifications/progress}]}
  - signal: sigterm
    expect_exit: {within_ms: 5000}
  - assert_no_process: 'sleep 1\.5 {workdir}'
    timeout_ms: 100
"#,
        )
        .unwrap();
        assert_eq!(c.transport, CaseTransport::Http);
        let Action::HttpInitialize(i) = &c.steps[0].action else {
            panic!("{:?}", c.steps[0].action)
        };
        assert_eq!(i.save_session, Some(SaveSession(Some("a".into()))));
        assert_eq!(
            c.steps[1].action,
            Action::HttpInitialize(HttpInitSpec::default())
        );
        let Action::Http(h) = &c.steps[2].action else {
            panic!()
        };
        assert_eq!(h.method, "DELETE");
        assert_eq!(h.path, "/mcp");
        assert_eq!(h.headers["Accept"], None);
        assert!(h.wait);
        let e = c.steps[2].expect.as_ref().unwrap();
        assert_eq!(
            e.headers["content-type"],
            Strings(vec!["text".into(), "event-stream".into()])
        );
        assert_eq!(e.save_session, Some(SaveSession(Some("other".into()))));
        let Action::Http(h) = &c.steps[3].action else {
            panic!()
        };
        assert!(!h.wait);
        // `expect` inside http_call moves to the step.
        let Action::HttpCall(call) = &c.steps[4].action else {
            panic!()
        };
        assert!(call.expect.is_none());
        let e = c.steps[4].expect.as_ref().unwrap();
        assert_eq!((e.is_error, e.status), (Some(false), Some(200)));
        assert_eq!(
            c.steps[6].action,
            Action::Signal {
                name: "TERM".into(),
                expect_exit: Some(ExpectExit {
                    code: 0,
                    within_ms: Some(5000)
                })
            }
        );
        let x = c.expanded(&Placeholders::for_workdir(Path::new("/w.1")));
        assert_eq!(
            x.steps[7].action,
            Action::AssertNoProcess(r"sleep 1\.5 /w\.1".into())
        );
        // Run-time placeholders survive the case expansion, then expand.
        let Action::Http(h) = &x.steps[2].action else {
            panic!()
        };
        assert_eq!(h.headers["Mcp-Session-Id"].as_deref(), Some("{session:a}"));
        let mut step = x.steps[2].clone();
        step.expand(&Placeholders::default().with(&session_placeholder("a"), "uuid-1"));
        let Action::Http(h) = &step.action else {
            panic!()
        };
        assert_eq!(h.headers["Mcp-Session-Id"].as_deref(), Some("uuid-1"));
    }

    #[test]
    fn http_case_errors() {
        for (yaml, needle) in [
            (
                "transport: http\nsteps: [{call: view}]",
                "not available in a `transport: http` case",
            ),
            ("steps: [{http: {method: GET}}]", "add `transport: http`"),
            (
                "transport: http\nhandshake: false\nsteps: [{sleep_ms: 1}]",
                "handshake",
            ),
            ("transport: grpc\nsteps: [{sleep_ms: 1}]", "unknown variant"),
            (
                "transport: http\nsteps: [{http: {method: get}}]",
                "upper-case",
            ),
            (
                "transport: http\nsteps: [{http: {path: mcp}}]",
                "start with `/`",
            ),
            (
                "transport: http\nsteps: [{http: {json: {}, body: x}}]",
                "at most one",
            ),
            (
                "transport: http\nsteps: [{http: {headers: {\"a b\": x}}}]",
                "header name",
            ),
            (
                "transport: http\nsteps: [{http: {}, expect: {is_error: true}}]",
                "messages",
            ),
            (
                "transport: http\nsteps: [{http_call: {tool: x}, expect: {save_session: true}}]",
                "only for `http` steps",
            ),
            (
                "steps: [{call: x, expect: {status: 200}}]",
                "only for HTTP steps",
            ),
            (
                "transport: http\nsteps: [{http_call: {tool: x, stateless: true, session: a}}]",
                "stateless",
            ),
            (
                "transport: http\nsteps: [{http_call: {tool: x, expect: {}}, expect: {}}]",
                "both inside",
            ),
            (
                "transport: http\nsteps: [{http: {}, wait: false, expect: {status: 200}}]",
                "never read",
            ),
            (
                "transport: http\nsteps: [{http_initialize: {save_session: \"a b\"}}]",
                "session name",
            ),
            (
                "transport: http\nsteps: [{http: {}, expect: {messages: [{match: 1}]}}]",
                "JSON object",
            ),
            ("steps: [{signal: WINCH}]", "unknown signal"),
            (
                "steps: [{sleep_ms: 1, expect_exit: {code: 0}}]",
                "`expect_exit` is not allowed",
            ),
            ("steps: [{assert_no_process: \"(\"}]", "invalid regex"),
        ] {
            let e = parse_case(&format!("source: x\n{yaml}\n")).unwrap_err();
            assert!(e.contains(needle), "{yaml}: {e}");
        }
    }

    #[test]
    fn wait_false_and_await() {
        let c = parse_case(
            "source: x\nsteps:\n  - call: bash\n    id: 7\n    wait: false\n  - await: 7\n    expect: {is_error: false}\n",
        )
        .unwrap();
        assert!(matches!(
            c.steps[0].action,
            Action::Call { wait: false, .. }
        ));
        assert_eq!(c.steps[1].action, Action::Await { id: json!(7) });
        let e = parse_case(
            "source: x\nsteps:\n  - call: bash\n    wait: false\n    expect: {is_error: false}\n",
        )
        .unwrap_err();
        assert!(e.contains("await"), "{e}");
    }
}
