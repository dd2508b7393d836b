//! Placeholders (`{workdir}`, `{addr}`, `{session…}`): the table and its expansion
//! through fixtures, steps and expectations.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::*;

pub(crate) fn expand_headers(h: &mut BTreeMap<String, Option<String>>, p: &Placeholders) {
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
            Action::Do { with, meta, id, .. } => {
                for v in with.values_mut() {
                    *v = p.expand_value(v);
                }
                ev(meta);
                ev(id);
            }
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
            Action::SleepMs(_)
            | Action::ExpectAlive(_)
            | Action::ExpectStopped
            | Action::Signal { .. } => {}
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
            Action::HttpRequest(q) => {
                q.method = p.expand(&q.method);
                ev(&mut q.params);
                ev(&mut q.id);
                expand_headers(&mut q.headers, p);
            }
            Action::AssertNoProcess(pattern) | Action::AssertProcess(pattern) => {
                *pattern = p.expand_regex(pattern)
            }
            Action::IdpToken(t) => t.expand(p),
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
            e.not_regex = Strings(e.not_regex.iter().map(|r| p.expand_regex(r)).collect());
            e.match_ = e.match_.as_ref().map(|v| p.expand_value(v));
            e.notifications = e.notifications.iter().map(|v| p.expand_value(v)).collect();
            for v in e.headers.values_mut() {
                *v = p.expand_strings(v);
            }
            for v in e.headers_not_contains.values_mut() {
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

/// The server's process id, known once it runs (expanded in the steps only): what a
/// case aims at when it attacks the server itself.
pub const SERVER_PID: &str = "{server_pid}";

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

    pub(crate) fn expand_strings(&self, s: &Strings) -> Strings {
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
