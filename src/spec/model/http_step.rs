//! The HTTP steps' own shapes (`http`, `http_initialize`, `http_call`, `http_request`)
//! and the checks each makes of itself.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{
    Expect, Repeat, SaveSession, check_session_name, present_or_default, present_value, yes,
};
use crate::spec::vocabulary::Capability;

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
    pub capability: Option<Capability>,
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

impl HttpSpec {
    /// A method token, a path, at most one body, valid headers.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if !self.method.chars().all(|c| c.is_ascii_uppercase()) || self.method.is_empty() {
            return Err(format!(
                "http method `{}` must be an upper-case token like POST",
                self.method
            ));
        }
        if !self.path.starts_with('/') || self.path.contains(char::is_whitespace) {
            return Err(format!(
                "http path `{}` must start with `/` and have no spaces",
                self.path
            ));
        }
        let bodies = [
            self.json.is_some(),
            self.body.is_some(),
            self.body_repeat.is_some(),
        ];
        if bodies.iter().filter(|b| **b).count() > 1 {
            return Err("an http step takes at most one of json, body, body_repeat".into());
        }
        check_headers(&self.headers)
    }
}

impl HttpInitSpec {
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_map("params", self.params.as_ref())?;
        check_headers(&self.headers)
    }
}

impl HttpCallSpec {
    /// A tool with `args`, or a capability with `with`; a session or `stateless`.
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_rpc_keys(
            self.stateless,
            self.session.as_deref(),
            self.id.as_ref(),
            &self.headers,
        )?;
        match (&self.capability, self.tool.is_empty()) {
            (Some(_), false) => return Err("`http_call` takes `tool` or `do`, not both".into()),
            (None, true) => return Err("`http_call` needs a `tool` or a `do`".into()),
            (Some(_), true) if self.args.is_some() => {
                return Err("`http_call` with `do` takes `with`, not `args`".into());
            }
            (None, false) if self.with.is_some() => {
                return Err("`http_call` with `tool` takes `args`, not `with`".into());
            }
            _ => {}
        }
        check_map("meta", self.meta.as_ref())?;
        Ok(())
    }
}

impl HttpRequestSpec {
    pub(crate) fn validate(&self) -> Result<(), String> {
        check_rpc_keys(
            self.stateless,
            self.session.as_deref(),
            self.id.as_ref(),
            &self.headers,
        )?;
        if self.method.trim().is_empty() {
            return Err("`http_request` needs a `method`".into());
        }
        check_map("params", self.params.as_ref())?;
        Ok(())
    }
}

/// An optional key whose value must be a map (`params`, `meta`).
pub(super) fn check_map(key: &str, value: Option<&Value>) -> Result<(), String> {
    match value {
        Some(v) if !v.is_object() => Err(format!("`{key}` must be a map, got {v}")),
        _ => Ok(()),
    }
}
