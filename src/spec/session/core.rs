//! What every transport's session shares: the server process, the transcript, the
//! failures so far, request ids, the values steps saved, and the lines the server
//! writes on stdout.

use std::collections::{BTreeMap, HashSet};
use std::process::ExitStatus;
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::spec::display::{quote, show};
use crate::spec::findings::TeardownFault;
use crate::spec::matcher::content_text;
use crate::spec::model::{
    Action, Case, Placeholders, SERVER_PID, Step, marker_failure, saved_placeholder,
};
use crate::spec::process::{Incoming, Server};

/// A fatal step error: stop running steps.
pub(crate) struct Fatal(pub(crate) String);

/// A line the server wrote on stdout.
pub(crate) enum Line {
    Message(Value),
    /// Not JSON (stdout is for MCP only).
    NotJson(String),
}

pub(crate) struct Core {
    pub(super) server: Server,
    pub(super) transcript: Vec<Value>,
    /// Record traffic in the transcript (off during the default handshake).
    pub(super) record: bool,
    pub(super) failures: Vec<String>,
    /// The case's wait for anything (a step's `timeout_ms` wins).
    pub(super) timeout: Duration,
    next_id: i64,
    /// Ids the case uses explicitly; the harness never assigns them.
    reserved: HashSet<String>,
    /// Values kept by `save` (`{saved:NAME}`).
    pub(super) saved: BTreeMap<String, String>,
    /// Values kept by an adapter's `capture` (`{captured:NAME}`).
    pub(super) captured: BTreeMap<String, String>,
    /// The JSON-RPC response the last step got, for `save`.
    pub(super) last_response: Option<Value>,
    /// Server messages (notifications and requests) since the current step began.
    pub(super) seen: Vec<Value>,
    /// A `signal` step's `expect_exit` already checked the exit code.
    pub(super) exit_checked: bool,
    /// Dying of SIGTERM counts as exiting 0 (`Case::sigterm_death_ok`).
    sigterm_death_ok: bool,
    /// A teardown fault fails the case (`Case::strict_teardown`).
    strict_teardown: bool,
    /// Teardown faults set aside for the run's findings (when not strict).
    pub(super) teardown: Vec<TeardownFault>,
    /// The case's identity provider (the auth pack): `idp_token` steps ask it.
    pub(super) identity: Option<crate::spec::identity::IdentityProvider>,
}

/// How an id is keyed (JSON text, so `1` and `"1"` differ).
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

/// The id of a raw line sent to the server, unless it is a response: parsed, or found by
/// the server's own scanner in valid JSON too deeply nested to parse (a server may still
/// answer it with that id).
pub(crate) fn line_id(line: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(line.trim_end()) {
        Ok(v) if v.get("result").is_some() || v.get("error").is_some() => None,
        Ok(v) => v.get("id").cloned(),
        Err(e) if crate::transport::framing::too_deep(&e) => {
            let mut scan = crate::transport::framing::IdScanner::new();
            scan.feed(line.as_bytes());
            scan.id()
        }
        // Not JSON: JSON-RPC answers it with a null id.
        Err(_) => None,
    }
}

impl Core {
    pub(crate) fn new(server: Server, case: &Case, timeout: Duration) -> Self {
        let mut reserved = HashSet::new();
        for s in &case.steps {
            let id = match &s.action {
                Action::Call { id, .. } | Action::Request { id, .. } => id.clone(),
                Action::SendJson { message, .. } => message.get("id").cloned(),
                Action::Send { line } => line_id(line),
                Action::HttpCall(c) => c.id.clone(),
                Action::HttpRequest(q) => q.id.clone(),
                Action::Http(h) => h.json.as_ref().and_then(|j| j.get("id").cloned()),
                _ => None,
            };
            if let Some(id) = id {
                reserved.insert(id_key(&id));
            }
        }
        Core {
            server,
            transcript: Vec::new(),
            record: true,
            failures: Vec::new(),
            timeout,
            next_id: 0,
            reserved,
            saved: BTreeMap::new(),
            captured: BTreeMap::new(),
            last_response: None,
            seen: Vec::new(),
            exit_checked: false,
            sigterm_death_ok: case.sigterm_death_ok,
            strict_teardown: case.strict_teardown,
            teardown: Vec::new(),
            identity: None,
        }
    }

    /// A request id no step of the case uses.
    pub(super) fn alloc_id(&mut self) -> Value {
        loop {
            let id = json!(self.next_id);
            self.next_id += 1;
            if self.reserved.insert(id_key(&id)) {
                return id;
            }
        }
    }

    /// Records a message in the transcript (unless recording is off).
    pub(super) fn record(&mut self, entry: Value) {
        if self.record {
            self.transcript.push(entry);
        }
    }

    /// The next line the server wrote on stdout, waiting up to `wait` (zero: only one
    /// already read). `None` when none came, or when stdout has closed: at its end, or
    /// on a read error (a failure).
    pub(super) fn next_line(&mut self, wait: Duration) -> Option<Line> {
        if self.server.stdout_closed {
            return None;
        }
        let got = if wait.is_zero() {
            self.server
                .out
                .try_recv()
                .map_err(|e| e == mpsc::TryRecvError::Disconnected)
        } else {
            self.server
                .out
                .recv_timeout(wait)
                .map_err(|e| e == mpsc::RecvTimeoutError::Disconnected)
        };
        match got {
            Ok((Incoming::Json(v), _)) => Some(Line::Message(v)),
            Ok((Incoming::Garbage(line), _)) => Some(Line::NotJson(line)),
            Ok((Incoming::Eof, _)) | Err(true) => {
                self.server.stdout_closed = true;
                None
            }
            Ok((Incoming::ReadError(e), _)) => {
                self.server.stdout_closed = true;
                self.failures
                    .push(format!("reading the server's stdout failed: {e}"));
                None
            }
            Err(false) => None,
        }
    }

    /// `step` with `{saved:…}`, `{captured:…}` and the transport's own run-time
    /// placeholders (`p`) expanded; an argument that is exactly a `{captured:…}` not
    /// captured is left out.
    pub(super) fn expanded(&self, step: &Step, mut p: Placeholders) -> Step {
        for (name, value) in &self.saved {
            p = p.with(&saved_placeholder(name), value);
        }
        for (name, value) in &self.captured {
            p = p.with(&format!("{{captured:{name}}}"), value);
        }
        if format!("{step:?}").contains(SERVER_PID) {
            let pid = self
                .server
                .server_pids()
                .first()
                .map(|p| p.as_raw().to_string())
                .unwrap_or_default();
            p = p.with(SERVER_PID, &pid);
        }
        let mut out = step.clone();
        out.expand(&p);
        drop_uncaptured(&mut out.action);
        out
    }

    /// A `{saved:NAME}` left in the step (`shown`: its action and expectation as text)
    /// stops the case: nothing was saved under that name.
    pub(super) fn check_saved(&self, shown: &str) -> Result<(), Fatal> {
        // Compiled once: every step of every case comes through here.
        static SAVED: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
        if let Some(re) = SAVED.get_or_init(|| regex::Regex::new(r"\{saved:[A-Za-z0-9_-]+\}").ok())
            && let Some(m) = re.find(shown)
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
        Ok(())
    }

    /// The attack marker rule (`Case::attack_marker`): an attack step whose answer (its
    /// own, or its `await`'s: `Case::marker_answer_steps`) does not show the marker on a
    /// line of its own failed to run.
    pub(super) fn attack_marker_failure(&self, marker: &str) -> Option<String> {
        let answer = self
            .last_response
            .as_ref()
            .map(|r| content_text(r).unwrap_or_else(|| r.to_string()));
        marker_failure(marker, answer.as_deref())
    }

    /// Keeps the values `expect.save` points at in the last response.
    pub(super) fn save_values(&mut self, save: &BTreeMap<String, String>) -> Vec<String> {
        let mut fails = Vec::new();
        let Some(response) = &self.last_response else {
            if !save.is_empty() {
                fails.push("save: the step got no JSON-RPC response".to_string());
            }
            return fails;
        };
        for (name, at) in save {
            match value_at(response, at) {
                Ok(v) => {
                    self.saved.insert(name.clone(), v);
                }
                Err(e) => fails.push(format!("save: {name}: {e}")),
            }
        }
        fails
    }

    /// Keeps what an adapter's `capture` finds in the last response; a miss keeps
    /// nothing (and is no failure: not every answer hands a value out).
    pub(super) fn capture_values(&mut self, capture: &BTreeMap<String, String>) {
        let Some(response) = &self.last_response else {
            return;
        };
        for (name, at) in capture {
            if let Ok(v) = value_at(response, at) {
                self.captured.insert(name.clone(), v);
            }
        }
    }

    /// A fault of how the server ended: a failure of the case when its teardown is held
    /// strictly, else set aside for the run's findings.
    pub(super) fn teardown_fault(&mut self, fault: TeardownFault) {
        if self.strict_teardown {
            self.failures.push(fault.message());
        } else {
            self.teardown.push(fault);
        }
    }

    /// Whether the server exited with `want`; after a SIGTERM, dying of it counts as
    /// exiting 0 for a server not held to the boris profile (`Case::sigterm_death_ok`).
    pub(super) fn exited_as_wanted(&self, st: ExitStatus, want: i32, after_sigterm: bool) -> bool {
        use std::os::unix::process::ExitStatusExt;
        st.code() == Some(want)
            || (want == 0
                && after_sigterm
                && self.sigterm_death_ok
                && st.signal() == Some(Signal::SIGTERM as i32))
    }
}

/// The value `at` names in a JSON-RPC response: a JSON pointer (`/result/taskId`), or
/// `text:REGEX` (group 1, else the match) in the tool result's text.
fn value_at(response: &Value, at: &str) -> Result<String, String> {
    if let Some(re) = at.strip_prefix("text:") {
        let text = content_text(response).unwrap_or_default();
        return regex::Regex::new(re)
            .ok()
            .and_then(|re| {
                re.captures(&text)
                    .and_then(|c| c.get(1).or_else(|| c.get(0)))
                    .map(|m| m.as_str().to_string())
            })
            .ok_or_else(|| format!("/{re}/ does not match the result's text {}", quote(&text)));
    }
    match response.pointer(at) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err(format!("nothing at {at} in {}", show(response))),
    }
}

/// Leaves out the call arguments (at any depth) that are exactly a `{captured:…}` nothing captured
/// (a write with no revision read before it is a plain write).
fn drop_uncaptured(action: &mut Action) {
    let args = match action {
        Action::Call {
            args: Some(Value::Object(a)),
            ..
        } => a,
        Action::HttpCall(c) => match &mut c.args {
            Some(Value::Object(a)) => a,
            _ => return,
        },
        _ => return,
    };
    drop_in(args);
}

fn drop_in(m: &mut serde_json::Map<String, Value>) {
    m.retain(|_, v| {
        !v.as_str()
            .is_some_and(|s| s.starts_with("{captured:") && s.ends_with('}'))
    });
    for v in m.values_mut() {
        match v {
            Value::Object(o) => drop_in(o),
            Value::Array(a) => a.iter_mut().for_each(|x| {
                if let Value::Object(o) = x {
                    drop_in(o)
                }
            }),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncaptured_value_leaves_its_argument_out_at_any_depth() {
        let mut action = Action::Call {
            name: "t".into(),
            args: Some(json!({
                "id": "{captured:cmd:1}",
                "keep": "x {captured:y}",
                "changes": [{"path": "a", "revision": "{captured:rev:a}"}]
            })),
            meta: None,
            id: None,
            wait: true,
        };
        drop_uncaptured(&mut action);
        let Action::Call { args, .. } = action else {
            panic!("not a call")
        };
        assert_eq!(
            args.unwrap(),
            json!({"keep": "x {captured:y}", "changes": [{"path": "a"}]})
        );
    }
}
