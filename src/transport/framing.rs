//! Pure: what to do with one incoming JSON-RPC message (a stdio line, an HTTP body)
//! before rmcp sees it, so that every request gets an answer (issue 14).
//!
//! rmcp drops a line that is not JSON, drops a line over 16 MiB without a word (the
//! client then waits forever), answers a request whose params have the wrong shape with
//! `-32600` and no id (so the client cannot match it), and reads `tools/call` with
//! non-object arguments as a *custom* method (`-32601`). Here:
//!
//! - not JSON (prose, a lone `\ud800` escape, a raw `0xFF` byte) → `-32700 Parse
//!   error`, id null;
//! - nesting past the parser's depth limit (128) → `-32600` with the request's id, found
//!   by [`IdScanner`] (`boris-spec hostile` found the client waiting forever on id null);
//! - a request for a known method whose params do not fit → `-32602 Invalid params`
//!   with the request's id;
//! - any other JSON that is not a message (`42`, `{}`, a batch, an id of the wrong
//!   type) → `-32600 Invalid Request`, id null (JSON-RPC 2.0 §5);
//! - a message over the size limit → `-32600` saying it is too large, with the request's
//!   id found by [`IdScanner`] while the oversized bytes stream past (never buffered);
//! - malformed notifications and responses are dropped: nothing may answer them.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::{Value, json};

/// The largest message accepted: a `create_file` of a `--max-file-size` file, whatever
/// its bytes (JSON escapes a control byte as `\u00XX`, six bytes), plus room for the
/// envelope. Never below 4 MiB, so small limits do not refuse ordinary requests.
pub fn message_cap(max_file_size: u64) -> usize {
    let cap = max_file_size
        .saturating_mul(6)
        .saturating_add(1 << 20)
        .max(4 << 20);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// What to do with one message.
#[derive(Debug)]
pub enum Inbound {
    /// A message rmcp can handle.
    Message(Box<ClientJsonRpcMessage>),
    /// Answer at once with this JSON-RPC error response (compact JSON, no newline).
    Reply(Reply),
    /// Nothing to do: blank input, or a malformed notification or response.
    Ignore,
}

/// An error response written by the transport itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub code: i64,
    pub body: Vec<u8>,
}

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// The request methods a client may send, as rmcp 3.9 models them. A request for one of
/// these that rmcp cannot read has bad params; any other name is a custom method, which
/// rmcp itself answers (`-32601`).
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

pub fn is_known_method(method: &str) -> bool {
    KNOWN_METHODS.contains(&method)
}

/// Decides what one complete message (without its newline) is. An empty or blank
/// message is not JSON (`-32700`); stdio skips blank lines before asking.
pub fn classify(input: &[u8]) -> Inbound {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    match serde_json::from_slice::<ClientJsonRpcMessage>(input) {
        Ok(message) => match &message {
            ClientJsonRpcMessage::Request(req) => match &req.request {
                ClientRequest::CustomRequest(custom) if is_known_method(&custom.method) => {
                    // rmcp fell back to "custom" because the params did not fit.
                    let id = serde_json::to_value(&req.id).unwrap_or(Value::Null);
                    let params = custom.params.clone().unwrap_or(Value::Null);
                    Inbound::Reply(invalid_params(&custom.method, &params, id))
                }
                _ => Inbound::Message(Box::new(message)),
            },
            _ => Inbound::Message(Box::new(message)),
        },
        Err(e) => match e.classify() {
            serde_json::error::Category::Syntax if too_deep(&e) => {
                // Valid JSON the parser will not descend into: answered with the
                // request's id when it has one, or the client waits forever.
                let mut scan = IdScanner::new();
                scan.feed(input);
                match scan.id() {
                    Some(id) => Inbound::Reply(invalid_request(
                        id,
                        "Invalid Request: the message nests arrays or objects more than 128 \
                         deep, past what the server parses; no MCP request needs that",
                    )),
                    None => Inbound::Reply(parse_error(&e)),
                }
            }
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                Inbound::Reply(parse_error(&e))
            }
            serde_json::error::Category::Data | serde_json::error::Category::Io => {
                not_a_message(input)
            }
        },
    }
}

/// Whether serde_json stopped at its nesting limit (128) rather than at bad syntax.
pub fn too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// Valid JSON that rmcp could not read as a message.
fn not_a_message(input: &[u8]) -> Inbound {
    let value: Value = match serde_json::from_slice(input) {
        Ok(v) => v,
        Err(e) => return Inbound::Reply(parse_error(&e)),
    };
    let Value::Object(map) = &value else {
        let what = match &value {
            Value::Array(_) => "a JSON array (MCP has no batches since 2025-06-18)",
            _ => "not a JSON object",
        };
        return Inbound::Reply(invalid_request(
            Value::Null,
            &format!("Invalid Request: the message is {what}"),
        ));
    };
    let id = map.get("id");
    let id_ok = matches!(id, Some(Value::String(_)))
        || matches!(id, Some(Value::Number(n)) if n.is_i64() || n.is_u64());
    match (map.get("method"), id) {
        // A notification (no id) or a response cannot be answered.
        (Some(_), None) => Inbound::Ignore,
        (None, Some(_)) if map.contains_key("result") || map.contains_key("error") => {
            Inbound::Ignore
        }
        (Some(Value::String(method)), Some(id)) if id_ok && is_known_method(method) => {
            let params = map.get("params").cloned().unwrap_or(Value::Null);
            Inbound::Reply(invalid_params(method, &params, id.clone()))
        }
        (Some(Value::String(_)), Some(id)) if id_ok => Inbound::Reply(invalid_request(
            id.clone(),
            "Invalid Request: the message is not a valid JSON-RPC 2.0 request (check `jsonrpc` is \"2.0\")",
        )),
        (Some(_), Some(id)) if id_ok => Inbound::Reply(invalid_request(
            id.clone(),
            "Invalid Request: `method` must be a string",
        )),
        (None, Some(id)) if id_ok => Inbound::Reply(invalid_request(
            id.clone(),
            "Invalid Request: the message has an id but neither a `method` nor a `result`",
        )),
        (_, Some(_)) if !id_ok => Inbound::Reply(invalid_request(
            Value::Null,
            "Invalid Request: `id` must be a string or an integer",
        )),
        _ => Inbound::Reply(invalid_request(
            Value::Null,
            "Invalid Request: a request needs `jsonrpc`, `id` and `method`",
        )),
    }
}

fn error_body(id: Value, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    serde_json::to_vec(&body).unwrap_or_default()
}

pub fn parse_error(e: &serde_json::Error) -> Reply {
    Reply {
        code: PARSE_ERROR,
        body: error_body(
            Value::Null,
            PARSE_ERROR,
            &format!("Parse error: the message is not valid JSON ({e})"),
            None,
        ),
    }
}

pub fn invalid_request(id: Value, message: &str) -> Reply {
    Reply {
        code: INVALID_REQUEST,
        body: error_body(id, INVALID_REQUEST, message, None),
    }
}

/// `-32602` for a known method whose params rmcp could not read, saying what is wrong.
pub fn invalid_params(method: &str, params: &Value, id: Value) -> Reply {
    let detail = match method {
        "tools/call" => tools_call_problem(params),
        _ if !params.is_object() && !params.is_null() => {
            format!("params must be an object, not {}", kind(params))
        }
        _ => "params do not have the shape this method requires".to_string(),
    };
    Reply {
        code: INVALID_PARAMS,
        body: error_body(
            id,
            INVALID_PARAMS,
            &format!("Invalid params for {method}: {detail}"),
            None,
        ),
    }
}

fn tools_call_problem(params: &Value) -> String {
    let Value::Object(p) = params else {
        return format!(
            "params must be an object {{\"name\": ..., \"arguments\": {{...}}}}, not {}",
            kind(params)
        );
    };
    match (p.get("name"), p.get("arguments")) {
        (None, _) => "`name` (the tool's name) is missing".to_string(),
        (Some(n), _) if !n.is_string() => format!("`name` must be a string, not {}", kind(n)),
        (_, Some(a)) if !a.is_object() && !a.is_null() => {
            format!("`arguments` must be an object, not {}", kind(a))
        }
        _ => "params do not have the shape tools/call requires".to_string(),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The answer to a message over the size limit: `-32600` with the request's id when one
/// was found, so the client's pending request fails instead of waiting forever.
pub fn too_large(id: Option<Value>, size: usize, limit: usize) -> Reply {
    invalid_request_with_data(
        id.unwrap_or(Value::Null),
        &format!(
            "Invalid Request: the message is {size} bytes, over the {limit}-byte limit \
             (--max-file-size plus JSON overhead); send a smaller request, or raise \
             --max-file-size"
        ),
        json!({"size": size, "limit": limit}),
    )
}

fn invalid_request_with_data(id: Value, message: &str, data: Value) -> Reply {
    Reply {
        code: INVALID_REQUEST,
        body: error_body(id, INVALID_REQUEST, message, Some(data)),
    }
}

/// Finds the top-level `"id"` of a JSON object streamed past in chunks, without holding
/// it: a message too large to buffer can still be answered with its id. Clients write
/// `id` first (Python) or last (TypeScript spreads the request, then adds `id`), so the
/// scanner follows the whole message: string and escape state, nesting depth, and which
/// key each top-level value belongs to. Only a string id of at most 256 bytes or an
/// integer id is captured; a key spelled with escapes is not recognised.
#[derive(Debug, Default, Clone)]
pub struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1: expecting a key (after `{` or `,`).
    want_key: bool,
    /// The key being read (only short keys are kept).
    key: Vec<u8>,
    key_too_long: bool,
    /// The last complete key at depth 1, until its value is done.
    current_key_is_id: bool,
    /// Bytes of the id value while it is being read.
    value: Vec<u8>,
    capturing: bool,
    /// Whether the value being captured is a string.
    value_is_string: bool,
    value_too_long: bool,
    /// The id found, as JSON.
    found: Option<Value>,
    /// Bytes seen, for the "too large" message.
    pub seen: usize,
}

const MAX_ID_BYTES: usize = 256;

impl IdScanner {
    pub fn new() -> Self {
        IdScanner::default()
    }

    /// The top-level id seen so far, if any (the last one, if a message repeats it).
    pub fn id(&self) -> Option<Value> {
        self.found.clone()
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.seen = self.seen.saturating_add(chunk.len());
        for &b in chunk {
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            let at_top_key = self.depth == 1 && self.want_key;
            if self.escaped {
                self.escaped = false;
                if at_top_key {
                    self.key_too_long = true; // escaped keys are not matched
                } else if self.capturing {
                    self.push_value(b);
                }
                return;
            }
            match b {
                b'\\' => {
                    self.escaped = true;
                    if self.capturing {
                        self.push_value(b);
                    }
                }
                b'"' => {
                    self.in_string = false;
                    if at_top_key {
                        self.want_key = false;
                        self.current_key_is_id = !self.key_too_long && self.key == b"id";
                    } else if self.capturing {
                        self.finish_value();
                    }
                }
                _ => {
                    if at_top_key {
                        if self.key.len() < 8 {
                            self.key.push(b);
                        } else {
                            self.key_too_long = true;
                        }
                    } else if self.capturing {
                        self.push_value(b);
                    }
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.want_key {
                    self.key.clear();
                    self.key_too_long = false;
                } else if self.depth == 1 && self.current_key_is_id && !self.capturing {
                    self.start_value(true);
                }
            }
            b'{' | b'[' => {
                if self.depth == 1 && self.current_key_is_id {
                    self.current_key_is_id = false; // an object or array is no id
                }
                self.depth = self.depth.saturating_add(1);
                if self.depth == 1 {
                    self.want_key = b == b'{';
                }
            }
            b'}' | b']' => {
                if self.depth == 1 && self.capturing {
                    self.finish_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' => {
                if self.depth == 1 {
                    if self.capturing {
                        self.finish_value();
                    }
                    self.current_key_is_id = false;
                    self.want_key = true;
                }
            }
            b':' => {}
            b' ' | b'\t' | b'\n' | b'\r' => {
                if self.depth == 1 && self.capturing && !self.value_is_string {
                    self.finish_value();
                }
            }
            _ => {
                if self.depth == 1 && self.current_key_is_id && !self.want_key {
                    if !self.capturing {
                        self.start_value(false);
                    }
                    self.push_value(b);
                }
            }
        }
    }

    fn start_value(&mut self, is_string: bool) {
        self.capturing = true;
        self.value_is_string = is_string;
        self.value.clear();
        self.value_too_long = false;
    }

    fn push_value(&mut self, b: u8) {
        if self.value.len() < MAX_ID_BYTES {
            self.value.push(b);
        } else {
            self.value_too_long = true;
        }
    }

    fn finish_value(&mut self) {
        self.capturing = false;
        self.current_key_is_id = false;
        if self.value_too_long {
            return;
        }
        let parsed = if self.value_is_string {
            let mut quoted = Vec::with_capacity(self.value.len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(&self.value);
            quoted.push(b'"');
            serde_json::from_slice::<Value>(&quoted)
                .ok()
                .filter(Value::is_string)
        } else {
            serde_json::from_slice::<Value>(&self.value)
                .ok()
                .filter(|v| v.as_i64().is_some() || v.as_u64().is_some())
        };
        if parsed.is_some() {
            self.found = parsed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reply(input: &str) -> Value {
        match classify(input.as_bytes()) {
            Inbound::Reply(r) => serde_json::from_slice(&r.body).expect("reply is JSON"),
            other => panic!("expected a reply to {input:?}, got {other:?}"),
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_a_null_id() {
        for bad in [
            "hello",
            "{",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#,
        ] {
            let r = reply(bad);
            assert_eq!(r["error"]["code"], json!(PARSE_ERROR), "{bad}");
            assert_eq!(r["id"], Value::Null, "{bad}");
        }
        let mut raw = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#.to_vec();
        raw.push(0xFF);
        raw.extend_from_slice(br#""}}"#);
        assert!(matches!(classify(&raw), Inbound::Reply(r) if r.code == PARSE_ERROR));
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert!(matches!(classify(deep.as_bytes()), Inbound::Reply(r) if r.code == PARSE_ERROR));
    }

    #[test]
    fn a_request_nested_past_the_limit_is_answered_with_its_id() {
        // Found by `boris-spec hostile`: valid JSON, 600 arrays deep in an argument, was
        // answered with id null, and the client's call never ended.
        for (id, place) in [("46", "first"), ("\"a-1\"", "last")] {
            let deep = format!("{}{}", "[".repeat(600), "]".repeat(600));
            let call = format!(
                r#""method":"tools/call","params":{{"name":"view","arguments":{{"path":{deep}}}}}"#
            );
            let msg = if place == "first" {
                format!(r#"{{"jsonrpc":"2.0","id":{id},{call}}}"#)
            } else {
                format!(r#"{{"jsonrpc":"2.0",{call},"id":{id}}}"#)
            };
            let r = reply(&msg);
            assert_eq!(r["error"]["code"], json!(INVALID_REQUEST), "{place}");
            assert_eq!(
                r["id"],
                serde_json::from_str::<Value>(id).unwrap_or_default(),
                "{place}"
            );
        }
        // 128 deep is within the limit: an ordinary message.
        let ok = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"x":{}{}}}}}}}"#,
            "[".repeat(100),
            "]".repeat(100)
        );
        assert!(matches!(classify(ok.as_bytes()), Inbound::Message(_)));
    }

    #[test]
    fn bad_params_of_a_known_method_are_invalid_params_with_the_id() {
        let r = reply(
            r#"{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"view","arguments":"a.txt"}}"#,
        );
        assert_eq!(r["id"], json!(25));
        assert_eq!(r["error"]["code"], json!(INVALID_PARAMS));
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("`arguments` must be an object"),
            "{message}"
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":["view"]}"#);
        assert_eq!(r["id"], json!("x"));
        assert_eq!(r["error"]["code"], json!(INVALID_PARAMS));
        let r = reply(r#"{"jsonrpc":"2.0","id":22,"method":"tools/list","params":7}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(22), json!(INVALID_PARAMS))
        );
    }

    #[test]
    fn other_invalid_messages() {
        for (input, id) in [
            ("42", Value::Null),
            ("[]", Value::Null),
            (r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#, Value::Null),
            ("{}", Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":7,"method":42}"#, json!(7)),
        ] {
            let r = reply(input);
            assert_eq!(r["error"]["code"], json!(INVALID_REQUEST), "{input}");
            assert_eq!(r["id"], id, "{input}");
        }
        // A malformed notification or response is never answered.
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":7}"#),
            Inbound::Ignore
        ));
        assert!(matches!(classify(b"   "), Inbound::Reply(r) if r.code == PARSE_ERROR));
        // Valid messages pass, unknown methods included (rmcp answers -32601).
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"does/not/exist"}"#),
            Inbound::Message(_)
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"view","arguments":{}}}"#),
            Inbound::Message(_)
        ));
    }

    #[test]
    fn the_scanner_finds_the_id_first_or_last() {
        let big = "x".repeat(100_000);
        for msg in [
            format!(
                r#"{{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{{"name":"create_file","arguments":{{"path":"a","content":"{big}"}}}}}}"#
            ),
            format!(
                r#"{{"method":"tools/call","params":{{"arguments":{{"id":1,"content":"\"id\":5 {big}"}}}},"jsonrpc":"2.0", "id" : "req-9"}}"#
            ),
        ] {
            let mut s = IdScanner::new();
            for chunk in msg.as_bytes().chunks(7) {
                s.feed(chunk);
            }
            let want = serde_json::from_str::<Value>(&msg).expect("json")["id"].clone();
            assert_eq!(s.id(), Some(want));
        }
    }

    proptest! {
        /// Whatever the params hold and wherever `id` stands among the keys, the scanner
        /// finds exactly the message's id, chunk boundaries notwithstanding.
        #[test]
        fn scanner_agrees_with_a_parser(
            id in prop_oneof![any::<i64>().prop_map(Value::from), "[ -~]{0,20}".prop_map(Value::from)],
            text in "(\\PC|[\"\\\\{}\\[\\],:])*",
            nested_id in any::<i32>(),
            position in 0usize..4,
            chunk in 1usize..64,
        ) {
            let mut entries = vec![
                "\"jsonrpc\":\"2.0\"".to_string(),
                "\"method\":\"tools/call\"".to_string(),
                format!(
                    "\"params\":{}",
                    json!({"name": "x", "arguments": {"id": nested_id, "t": text, "l": [1, {"id": 2}]}})
                ),
            ];
            entries.insert(position.min(entries.len()), format!("\"id\":{id}"));
            let msg = format!("{{{}}}", entries.join(","));
            let mut s = IdScanner::new();
            for c in msg.as_bytes().chunks(chunk) {
                s.feed(c);
            }
            prop_assert_eq!(s.id(), Some(id));
        }

        /// No input makes the classifier panic.
        #[test]
        fn classify_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = classify(&bytes);
            let mut s = IdScanner::new();
            s.feed(&bytes);
        }
    }
}
