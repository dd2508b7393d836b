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

#[derive(Debug, Clone, Default, Deserialize)]
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
}

impl Expect {
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
    /// `true`: ping and require a reply. `false`: the server must have exited.
    ExpectAlive(bool),
}

impl Action {
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
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    wait: Option<bool>,
    #[serde(default, deserialize_with = "present_or_default")]
    expect: Option<Expect>,
    timeout_ms: Option<u64>,
}

const STEP_KINDS: &str =
    "initialize, call, request, send, send_json, await, write, sleep_ms, check_files, expect_alive";

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
        only_for(r.wait.is_some(), "wait", &["call", "request", "send_json"])?;
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
            ],
        )?;
        let wait = r.wait.unwrap_or(true);
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

impl Step {
    fn expand(&mut self, p: &Placeholders) {
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
            Action::SleepMs(_) | Action::ExpectAlive(_) => {}
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
