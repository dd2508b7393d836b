//! The HTTP steps: each request on a fresh connection, with the MCP headers of its
//! session (or the stateless revision's), recorded with its response; bodies read as
//! SSE events or JSON; session ids kept.

use std::collections::BTreeMap;
use std::thread;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::spec::display::{quote, show};
use crate::spec::http::{self as client, Response};
use crate::spec::matcher::{check_http, check_notifications, check_response};
use crate::spec::model::{
    DEFAULT_SESSION, Expect, HttpCallSpec, HttpInitSpec, HttpRequestSpec, HttpSpec,
    session_placeholder,
};
use crate::spec::protocol::{SESSION_ERA, STATELESS_ERA, initialize_params, stateless_meta};

use super::super::core::Fatal;
use super::{HttpSession, RECORDED_BODY_MAX, RECORDED_RESPONSE_HEADERS, SavedSession};

impl HttpSession {
    /// Request headers: `Host`, the step's defaults, the MCP headers, then the case's
    /// own (replacing any of the same name; `null` removes). Also returns the headers
    /// recorded in the transcript: the MCP ones and the case's.
    fn headers(
        &self,
        defaults: &[(&str, String)],
        mcp: &[(&str, String)],
        case: &BTreeMap<String, Option<String>>,
    ) -> (Vec<(String, String)>, BTreeMap<String, String>) {
        let mut h: Vec<(String, String)> =
            vec![("Host".into(), self.addr.clone().unwrap_or_default())];
        h.extend(defaults.iter().map(|(n, v)| (n.to_string(), v.clone())));
        h.extend(mcp.iter().map(|(n, v)| (n.to_string(), v.clone())));
        let mut recorded: BTreeMap<String, String> = mcp
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v.clone()))
            .collect();
        for (n, v) in case {
            h.retain(|(x, _)| !x.eq_ignore_ascii_case(n));
            recorded.remove(&n.to_ascii_lowercase());
            if let Some(v) = v {
                h.push((n.clone(), v.clone()));
                recorded.insert(n.to_ascii_lowercase(), v.clone());
            }
        }
        (h, recorded)
    }

    /// Sends a request from a background thread (`wait: false`): recorded, never read.
    fn send_in_background(
        &mut self,
        req: client::Request,
        recorded_headers: BTreeMap<String, String>,
        recorded_body: Option<Value>,
        timeout: Duration,
    ) -> Result<(), Fatal> {
        let addr = self
            .addr
            .clone()
            .ok_or_else(|| Fatal("the server's address is not known".into()))?;
        self.record_request(&req, recorded_headers, recorded_body);
        // Bounded by the timeout; the response (or error) is dropped.
        thread::spawn(move || {
            let _ = client::send(&addr, &req, timeout);
        });
        // Give the request a moment to reach the server before the next step.
        thread::sleep(Duration::from_millis(50));
        Ok(())
    }

    fn record_request(
        &mut self,
        req: &client::Request,
        recorded_headers: BTreeMap<String, String>,
        recorded_body: Option<Value>,
    ) {
        let mut sent = Map::new();
        sent.insert("method".into(), json!(req.method));
        sent.insert("path".into(), json!(req.path));
        if !recorded_headers.is_empty() {
            sent.insert("headers".into(), json!(recorded_headers));
        }
        if let Some(b) = recorded_body {
            sent.insert(if b.is_string() { "body" } else { "json" }.into(), b);
        }
        self.core.record(json!({"->": sent}));
    }

    /// Sends one HTTP request, records it and its response.
    fn exchange(
        &mut self,
        req: client::Request,
        recorded_headers: BTreeMap<String, String>,
        recorded_body: Option<Value>,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Response, Fatal> {
        let addr = self
            .addr
            .clone()
            .ok_or_else(|| Fatal("the server's address is not known".into()))?;
        self.record_request(&req, recorded_headers, recorded_body);
        let resp = client::send(&addr, &req, timeout).map_err(|e| {
            Fatal(format!(
                "{} {}: {e}{}",
                req.method,
                req.path,
                self.core.server.exit_note()
            ))
        })?;
        if let Some(id) = resp.header("mcp-session-id")
            && !self.seen_sessions.contains(&id)
        {
            self.seen_sessions.push(id);
        }
        if self.core.record {
            let mut names: Vec<String> = RECORDED_RESPONSE_HEADERS
                .iter()
                .map(|s| s.to_string())
                .collect();
            if let Some(e) = expect {
                names.extend(e.headers.keys().map(|k| k.to_ascii_lowercase()));
            }
            let mut headers = BTreeMap::new();
            for (n, _) in &resp.headers {
                if (names.contains(n) || n.starts_with("access-control-"))
                    && let Some(v) = resp.header(n)
                {
                    headers.insert(n.clone(), v);
                }
            }
            let mut got = Map::new();
            got.insert("status".into(), json!(resp.status));
            if !headers.is_empty() {
                got.insert("headers".into(), json!(headers));
            }
            let messages = resp.messages();
            if !messages.is_empty() {
                got.insert("messages".into(), Value::Array(messages));
            } else if !resp.body.is_empty() {
                got.insert("body".into(), recorded_text(&resp.body));
            }
            self.core.transcript.push(json!({"<-": got}));
        }
        Ok(resp)
    }

    /// The HTTP checks of `expect`, or, without a `status` key, that the status is 2xx
    /// (when `need_2xx`).
    fn check_http_response(
        expect: Option<&Expect>,
        resp: &Response,
        messages: &[Value],
        need_2xx: bool,
    ) -> Vec<String> {
        let mut fails = Vec::new();
        let explicit_status = expect.is_some_and(|e| e.status.is_some());
        if need_2xx && !explicit_status && !(200..300).contains(&resp.status) {
            fails.push(format!(
                "expected a 2xx response, got {}; body: {}",
                resp.status,
                quote(&resp.body_text())
            ));
        }
        if let Some(e) = expect {
            fails.extend(check_http(
                e,
                resp.status,
                &resp.headers,
                &resp.body_text(),
                messages,
            ));
        }
        fails
    }

    fn save_session(
        &mut self,
        name: &str,
        resp: &Response,
        messages: &[Value],
    ) -> Result<(), String> {
        let Some(id) = resp.header("mcp-session-id") else {
            return Err(format!(
                "cannot save {}: the response (status {}) has no Mcp-Session-Id header",
                session_placeholder(name),
                resp.status
            ));
        };
        let version = messages
            .iter()
            .find_map(|m| m.pointer("/result/protocolVersion").and_then(Value::as_str))
            .unwrap_or(SESSION_ERA)
            .to_string();
        self.sessions
            .insert(name.to_string(), SavedSession { id, version });
        Ok(())
    }

    pub(super) fn http_step(
        &mut self,
        h: &HttpSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let mut defaults = Vec::new();
        let (body, recorded_body) = if let Some(j) = &h.json {
            defaults.push(("Content-Type", "application/json".to_string()));
            defaults.push(("Accept", "application/json, text/event-stream".to_string()));
            (j.to_string().into_bytes(), Some(j.clone()))
        } else if let Some(b) = &h.body {
            (b.clone().into_bytes(), Some(recorded_text(b.as_bytes())))
        } else if let Some(r) = &h.body_repeat {
            let n = usize::try_from(r.count).unwrap_or(usize::MAX);
            let total = r.text.len().saturating_mul(n);
            if total > 256 << 20 {
                return Err(Fatal(format!(
                    "body_repeat of {total} bytes is over the 256 MiB limit"
                )));
            }
            let b = r.text.repeat(n).into_bytes();
            let rec = recorded_text(&b);
            (b, Some(rec))
        } else {
            (Vec::new(), None)
        };
        let (headers, recorded) = self.headers(&defaults, &[], &h.headers);
        let req = client::Request {
            method: h.method.clone(),
            path: h.path.clone(),
            headers,
            body,
        };
        if !h.wait {
            self.send_in_background(req, recorded, recorded_body, timeout)?;
            return Ok(Vec::new());
        }
        let resp = self.exchange(req, recorded, recorded_body, expect, timeout)?;
        let messages = resp.messages();
        // For `save`: the response among the body's messages.
        self.core.last_response = messages
            .iter()
            .find(|m| {
                m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
            })
            .cloned();
        let mut fails = Self::check_http_response(expect, &resp, &messages, false);
        if let Some(name) = expect
            .and_then(|e| e.save_session.as_ref())
            .and_then(|s| s.0.as_deref())
            && let Err(e) = self.save_session(name, &resp, &messages)
        {
            fails.push(e);
        }
        Ok(fails)
    }

    pub(super) fn http_initialize(
        &mut self,
        i: &HttpInitSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let params = initialize_params(i.params.as_ref());
        let id = self.core.alloc_id();
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
        let defaults = [
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        let (headers, recorded) = self.headers(&defaults, &[], &i.headers);
        let req = client::Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: msg.to_string().into_bytes(),
        };
        let resp = self.exchange(req, recorded, Some(msg), expect, timeout)?;
        let messages = resp.messages();
        let mut fails = Self::check_http_response(expect, &resp, &messages, true);
        let response = find_response(&messages, &id);
        self.core.last_response = response.map(|(_, r)| r.clone());
        match (response, expect) {
            (Some((_, r)), Some(e)) => fails.extend(check_response(e, r, false)),
            (Some((_, r)), None) => {
                if let Some(err) = r.get("error") {
                    fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
                }
            }
            (None, _) => {
                if (200..300).contains(&resp.status) || expect.is_some_and(Expect::wants_jsonrpc) {
                    fails.push(format!(
                        "no JSON-RPC response with id {id} in the body: {}",
                        quote(&resp.body_text())
                    ));
                }
            }
        }
        let ok = response.is_some_and(|(_, r)| r.get("result").is_some());
        if !ok {
            return Ok(fails);
        }
        let name = match &i.save_session {
            None => Some(DEFAULT_SESSION.to_string()),
            Some(s) => s.0.clone(),
        };
        let session = resp.header("mcp-session-id");
        if let Some(name) = &name
            && let Err(e) = self.save_session(name, &resp, &messages)
        {
            fails.push(e);
        }
        // notifications/initialized, in the new session.
        let version = messages
            .iter()
            .find_map(|m| m.pointer("/result/protocolVersion").and_then(Value::as_str))
            .unwrap_or(SESSION_ERA)
            .to_string();
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let mut mcp = vec![("MCP-Protocol-Version", version)];
        if let Some(s) = session {
            mcp.insert(0, ("Mcp-Session-Id", s));
        }
        let (headers, recorded) = self.headers(&defaults, &mcp, &i.headers);
        let req = client::Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: note.to_string().into_bytes(),
        };
        let r2 = self.exchange(req, recorded, Some(note), None, timeout)?;
        if !(200..300).contains(&r2.status) {
            fails.push(format!(
                "notifications/initialized got HTTP {}: {}",
                r2.status,
                quote(&r2.body_text())
            ));
        }
        Ok(fails)
    }

    pub(super) fn http_call(
        &mut self,
        c: &HttpCallSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let mut params = Map::new();
        params.insert("name".into(), json!(c.tool));
        if let Some(a) = &c.args {
            params.insert("arguments".into(), a.clone());
        }
        let rpc = Rpc {
            method: "tools/call",
            params,
            meta: c.meta.as_ref(),
            session: c.session.as_deref(),
            stateless: c.stateless,
            headers: &c.headers,
            id: c.id.as_ref(),
            wait: c.wait,
            tool_call: true,
        };
        self.http_rpc(rpc, expect, timeout)
    }

    pub(super) fn http_request(
        &mut self,
        q: &HttpRequestSpec,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let mut params = match &q.params {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let meta = params.remove("_meta");
        let rpc = Rpc {
            method: &q.method,
            params,
            meta: meta.as_ref(),
            session: q.session.as_deref(),
            stateless: q.stateless,
            headers: &q.headers,
            id: q.id.as_ref(),
            wait: true,
            tool_call: false,
        };
        self.http_rpc(rpc, expect, timeout)
    }

    /// POSTs one JSON-RPC request in a saved session, or statelessly (the 2026-07-28
    /// revision: protocol version and client capabilities in `_meta`, `Mcp-Method` and
    /// `Mcp-Name` headers), and checks its response.
    fn http_rpc(
        &mut self,
        rpc: Rpc<'_>,
        expect: Option<&Expect>,
        timeout: Duration,
    ) -> Result<Vec<String>, Fatal> {
        let Rpc {
            method,
            mut params,
            meta,
            session,
            stateless,
            headers: extra_headers,
            id,
            wait,
            tool_call,
        } = rpc;
        let meta_map = if stateless {
            stateless_meta(meta)
        } else {
            match meta {
                Some(Value::Object(m)) => m.clone(),
                _ => Map::new(),
            }
        };
        let mut mcp: Vec<(&str, String)> = Vec::new();
        if stateless {
            mcp.push(("MCP-Protocol-Version", STATELESS_ERA.into()));
            mcp.push(("Mcp-Method", method.to_string()));
            // The header the transport routes on: the tool, resource or task named.
            if let Some(name) = ["name", "uri", "taskId"]
                .iter()
                .find_map(|k| params.get(*k).and_then(Value::as_str))
            {
                mcp.push(("Mcp-Name", name.to_string()));
            }
        } else {
            let name = session.unwrap_or(DEFAULT_SESSION);
            let Some(s) = self.sessions.get(name) else {
                return Err(Fatal(format!(
                    "{} is not saved ({})",
                    session_placeholder(name),
                    self.saved_names()
                )));
            };
            mcp.push(("Mcp-Session-Id", s.id.clone()));
            mcp.push(("MCP-Protocol-Version", s.version.clone()));
        }
        if !meta_map.is_empty() || meta.is_some() {
            params.insert("_meta".into(), Value::Object(meta_map));
        }
        let id = match id {
            Some(id) => id.clone(),
            None => self.core.alloc_id(),
        };
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_empty() || tool_call {
            msg["params"] = Value::Object(params);
        }
        let defaults = [
            ("Content-Type", "application/json".to_string()),
            ("Accept", "application/json, text/event-stream".to_string()),
        ];
        let (headers, recorded) = self.headers(&defaults, &mcp, extra_headers);
        let req = client::Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: msg.to_string().into_bytes(),
        };
        if !wait {
            self.send_in_background(req, recorded, Some(msg), timeout)?;
            return Ok(Vec::new());
        }
        let resp = self.exchange(req, recorded, Some(msg), expect, timeout)?;
        let messages = resp.messages();
        let mut fails = Self::check_http_response(expect, &resp, &messages, true);
        match find_response(&messages, &id) {
            Some((at, r)) => {
                self.core.last_response = Some(r.clone());
                // What the server sent on this response before the result.
                self.core.seen = messages[..at]
                    .iter()
                    .filter(|m| m.get("method").is_some())
                    .cloned()
                    .collect();
                match expect {
                    Some(e) => {
                        fails.extend(check_response(e, r, tool_call));
                        if !e.notifications.is_empty() {
                            fails.extend(check_notifications(&e.notifications, &self.core.seen));
                        }
                    }
                    None => {
                        if let Some(err) = r.get("error") {
                            fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
                        }
                    }
                }
            }
            None => {
                if (200..300).contains(&resp.status) || expect.is_some_and(Expect::wants_jsonrpc) {
                    fails.push(format!(
                        "no JSON-RPC response with id {id} in the body (HTTP {}): {}",
                        resp.status,
                        quote(&resp.body_text())
                    ));
                }
            }
        }
        Ok(fails)
    }
}

/// One JSON-RPC request of an `http_call` or `http_request` step.
struct Rpc<'a> {
    method: &'a str,
    params: Map<String, Value>,
    meta: Option<&'a Value>,
    session: Option<&'a str>,
    stateless: bool,
    headers: &'a BTreeMap<String, Option<String>>,
    id: Option<&'a Value>,
    wait: bool,
    /// Text checks apply to the result's content text.
    tool_call: bool,
}

/// The JSON-RPC response with `id` among `messages` (not a request or notification),
/// with its position.
fn find_response<'a>(messages: &'a [Value], id: &Value) -> Option<(usize, &'a Value)> {
    messages
        .iter()
        .enumerate()
        .find(|(_, m)| m.get("method").is_none() && m.get("id") == Some(id))
}

/// A body for the transcript: the text, or `<N bytes>` when long.
fn recorded_text(b: &[u8]) -> Value {
    if b.len() > RECORDED_BODY_MAX {
        json!(format!("<{} bytes>", b.len()))
    } else {
        json!(String::from_utf8_lossy(b))
    }
}
