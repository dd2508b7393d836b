//! Expectations: what a step requires of the response it gets.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::*;

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
    /// Regexes the text must not match (an honest outcome never reads `exit code 0`).
    #[serde(default)]
    pub not_regex: Strings,
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
    /// Header name → substrings its value must not contain (an absent header passes):
    /// a static-token challenge with no `resource_metadata`.
    #[serde(default)]
    pub headers_not_contains: BTreeMap<String, Strings>,
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
    /// Remember values of the response for later steps: NAME → a JSON pointer into the
    /// JSON-RPC response (`/result/taskId`), or `text:REGEX` (group 1, else the match,
    /// in the tool result's text: a path or an id a server only prints), used later as
    /// `{saved:NAME}`.
    #[serde(default)]
    pub save: BTreeMap<String, String>,
    /// Like `save`, for adapters (`spec::adapter`, captures): NAME → a pointer or
    /// `text:REGEX`, used later as `{captured:NAME}`; finding nothing is no failure.
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
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

pub(crate) fn check_session_name(s: &str) -> Result<(), String> {
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

/// The placeholder of a value saved with `save`: `{saved:NAME}`.
pub fn saved_placeholder(name: &str) -> String {
    format!("{{saved:{name}}}")
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
    pub(crate) fn jsonrpc_keys(&self) -> Vec<&'static str> {
        let mut k = Vec::new();
        for (present, name) in [
            (self.is_error.is_some(), "is_error"),
            (self.code.is_some(), "code"),
            (self.text.is_some(), "text"),
            (!self.contains.is_empty(), "contains"),
            (!self.not_contains.is_empty(), "not_contains"),
            (!self.regex.is_empty(), "regex"),
            (!self.not_regex.is_empty(), "not_regex"),
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
            (
                !self.headers_not_contains.is_empty(),
                "headers_not_contains",
            ),
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

    /// This expectation and `more` together: a key set in `more` wins over the same
    /// single-valued key here; lists (`contains`, `regex`, `notifications`, …) add up.
    pub fn merged(&self, more: &Expect) -> Expect {
        fn join(a: &Strings, b: &Strings) -> Strings {
            Strings(a.0.iter().chain(&b.0).cloned().collect())
        }
        let mut headers = self.headers.clone();
        headers.extend(more.headers.clone());
        let mut headers_not_contains = self.headers_not_contains.clone();
        for (name, v) in &more.headers_not_contains {
            let had = headers_not_contains.remove(name).unwrap_or_default();
            headers_not_contains.insert(name.clone(), join(&had, v));
        }
        Expect {
            is_error: more.is_error.or(self.is_error),
            code: more.code.clone().or_else(|| self.code.clone()),
            text: more.text.clone().or_else(|| self.text.clone()),
            contains: join(&self.contains, &more.contains),
            not_contains: join(&self.not_contains, &more.not_contains),
            regex: join(&self.regex, &more.regex),
            not_regex: join(&self.not_regex, &more.not_regex),
            content_types: more
                .content_types
                .clone()
                .or_else(|| self.content_types.clone()),
            jsonrpc_error: more.jsonrpc_error.or(self.jsonrpc_error),
            match_: more.match_.clone().or_else(|| self.match_.clone()),
            notifications: self
                .notifications
                .iter()
                .chain(&more.notifications)
                .cloned()
                .collect(),
            status: more.status.or(self.status),
            headers,
            headers_absent: self
                .headers_absent
                .iter()
                .chain(&more.headers_absent)
                .cloned()
                .collect(),
            headers_not_contains,
            messages: self
                .messages
                .iter()
                .chain(&more.messages)
                .cloned()
                .collect(),
            body: more.body.clone().or_else(|| self.body.clone()),
            body_contains: join(&self.body_contains, &more.body_contains),
            body_not_contains: join(&self.body_not_contains, &more.body_not_contains),
            save_session: more
                .save_session
                .clone()
                .or_else(|| self.save_session.clone()),
            save: {
                let mut save = self.save.clone();
                save.extend(more.save.clone());
                save
            },
            capture: {
                let mut capture = self.capture.clone();
                capture.extend(more.capture.clone());
                capture
            },
        }
    }

    /// Whether any key needs a JSON-RPC response to check.
    pub fn wants_jsonrpc(&self) -> bool {
        !self.jsonrpc_keys().is_empty()
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        for (name, pointer) in &self.save {
            check_session_name(name).map_err(|e| e.replace("session name", "saved name"))?;
            if let Some(re) = pointer.strip_prefix("text:") {
                regex::Regex::new(re).map_err(|e| format!("save: {name}: invalid regex: {e}"))?;
            } else if !pointer.starts_with('/') {
                return Err(format!(
                    "save: {name}: `{pointer}` is neither a JSON pointer (e.g. /result/taskId) \
                     nor text:REGEX"
                ));
            }
        }
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
