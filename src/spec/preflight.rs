//! `boris-spec smoke` and `boris-spec lint`: what a server author checks before running
//! the suite (issue 13). `smoke` starts the server, initialises, pings and lists its
//! tools, calling nothing that could change anything; `lint` reads `tools/list` the way
//! real clients do and reports what they warn about or reject, with the token cost of
//! the list. The checks themselves ([`lint_tools`]) are pure.

use std::time::Duration;

use serde_json::Value;

use super::bench::Conn;
use super::display::stderr_tail;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Clients reject the tool or the list.
    Error,
    /// Clients warn, or models are likely to misuse the tool.
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    /// The tool (empty for the list as a whole).
    pub tool: String,
    pub message: String,
}

/// Formats JSON Schema knows; anything else (`uint64`, `int64`…) is a Rust leftover.
const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The checks real clients make of `tools/list`.
pub fn lint_tools(tools: &[Value]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let mut say = |level, message: String| {
            out.push(Finding {
                level,
                tool: name.to_string(),
                message,
            })
        };
        let valid_name = !name.is_empty()
            && name.len() <= 128
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !valid_name {
            say(
                Level::Error,
                "name must be 1-128 characters of A-Z, a-z, 0-9, `_`, `-`, `.`".into(),
            );
        }
        if !seen.insert(name.to_string()) {
            say(Level::Error, "the name is listed twice".into());
        }
        if tool
            .get("description")
            .and_then(Value::as_str)
            .is_none_or(|d| d.trim().is_empty())
        {
            say(
                Level::Warning,
                "no description: the model has only the name to go on".into(),
            );
        }
        if tool.get("annotations").is_none() {
            say(
                Level::Warning,
                "no annotations: clients cannot tell a read-only tool from a destructive one"
                    .into(),
            );
        }
        let Some(schema) = tool.get("inputSchema").and_then(Value::as_object) else {
            say(Level::Error, "no inputSchema object".into());
            continue;
        };
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            say(Level::Error, "inputSchema must have `type: object`".into());
        }
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(req) = schema.get("required").and_then(Value::as_array) {
            for r in req.iter().filter_map(Value::as_str) {
                if !props.is_some_and(|p| p.contains_key(r)) {
                    say(
                        Level::Error,
                        format!("`{r}` is required but not among the properties"),
                    );
                }
            }
        }
        for (prop, s) in props.into_iter().flatten() {
            schema_findings(&format!("`{prop}`"), s, true, &mut say);
        }
        if contains_key(&Value::Object(schema.clone()), "$ref") {
            say(
                Level::Warning,
                "uses `$ref`: several clients do not resolve references".into(),
            );
        }
    }
    out
}

/// Findings for one property schema (and, within it, array items and sub-objects).
fn schema_findings(at: &str, s: &Value, top: bool, say: &mut impl FnMut(Level, String)) {
    let Some(obj) = s.as_object() else {
        return;
    };
    if let Some(Value::Array(types)) = obj.get("type") {
        let shown: Vec<String> = types.iter().map(|t| t.to_string()).collect();
        say(
            Level::Warning,
            format!(
                "{at} has a list of types ({}): optional means not required, with one type",
                shown.join(", ")
            ),
        );
    }
    if obj.contains_key("anyOf") || obj.contains_key("oneOf") {
        say(
            Level::Warning,
            format!("{at} uses anyOf/oneOf, which several model APIs reject"),
        );
    }
    if obj.get("default") == Some(&Value::Null) {
        say(Level::Warning, format!("{at} has `default: null`"));
    }
    if let Some(f) = obj.get("format").and_then(Value::as_str)
        && !KNOWN_FORMATS.contains(&f)
    {
        say(
            Level::Warning,
            format!("{at} has format `{f}`, which JSON Schema does not define"),
        );
    }
    if top && obj.get("description").is_none() {
        say(Level::Warning, format!("{at} has no description"));
    }
    if let Some(items) = obj.get("items") {
        schema_findings(&format!("{at}[]"), items, false, say);
    }
    if let Some(Value::Object(props)) = obj.get("properties") {
        for (k, v) in props {
            schema_findings(&format!("{at}.{k}"), v, false, say);
        }
    }
}

fn contains_key(v: &Value, key: &str) -> bool {
    match v {
        Value::Object(m) => m.contains_key(key) || m.values().any(|x| contains_key(x, key)),
        Value::Array(a) => a.iter().any(|x| contains_key(x, key)),
        _ => false,
    }
}

/// A rough token count of text a model reads (about four characters a token).
pub fn approx_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// What `smoke` found.
pub struct Smoke {
    pub report: String,
    pub ok: bool,
}

/// Starts the server, initialises, pings, lists its tools (following `nextCursor`),
/// and checks that what `initialize` declares is what answers. Calls no tool.
pub fn smoke(server_cmd: &str, timeout: Duration) -> Result<Smoke, String> {
    let dir = tempfile::Builder::new()
        .prefix("boris-smoke-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let mut conn = Conn::start(server_cmd, dir.path(), timeout)?;
    let result = smoke_steps(&mut conn);
    conn.server.close_stdin();
    let exited = conn.server.wait_exit(Duration::from_secs(5));
    let tail = stderr_tail(&conn.server.stderr_text(), 10);
    let (mut report, mut ok) = result.map_err(|e| format!("{e}\n{tail}"))?;
    if exited.is_none() {
        report.push_str("FAIL the server did not exit within 5 s of stdin closing\n");
        ok = false;
    }
    Ok(Smoke { report, ok })
}

fn smoke_steps(conn: &mut Conn) -> Result<(String, bool), String> {
    let mut out = String::new();
    let mut ok = true;
    let init = conn.initialize()?;
    let info = init.get("serverInfo").cloned().unwrap_or(Value::Null);
    out.push_str(&format!(
        "ok   initialize: {} {} (protocol {})\n",
        info.get("name").and_then(Value::as_str).unwrap_or("?"),
        info.get("version").and_then(Value::as_str).unwrap_or("?"),
        init.get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("?"),
    ));
    let caps = init.get("capabilities").cloned().unwrap_or(Value::Null);
    let ping = conn.call_method("ping", None)?;
    if ping.get("result").is_some() {
        out.push_str("ok   ping\n");
    } else {
        out.push_str(&format!("FAIL ping: {ping}\n"));
        ok = false;
    }
    let tools = list_tools(conn)?;
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    out.push_str(&format!(
        "ok   tools/list: {} tools: {}\n",
        names.len(),
        names.join(", ")
    ));
    if caps.get("tools").is_none() {
        out.push_str("FAIL tools are listed but the tools capability is not declared\n");
        ok = false;
    }
    for (cap, method) in [("prompts", "prompts/list"), ("resources", "resources/list")] {
        let declared = caps.get(cap).is_some();
        let answer = conn.call_method(method, None)?;
        let answers = answer.get("result").is_some();
        match (declared, answers) {
            (true, false) => {
                out.push_str(&format!("FAIL {cap} declared, but {method} is an error\n"));
                ok = false;
            }
            (false, true) => {
                out.push_str(&format!(
                    "FAIL {cap} not declared, but {method} answers (declared and answered must agree)\n"
                ));
                ok = false;
            }
            _ => out.push_str(&format!(
                "ok   {cap}: {}\n",
                if declared {
                    "declared and answered"
                } else {
                    "neither declared nor answered"
                }
            )),
        }
    }
    Ok((out, ok))
}

/// Every tool, following `nextCursor`.
pub(crate) fn list_tools(conn: &mut Conn) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let params = cursor.as_ref().map(|c| serde_json::json!({"cursor": c}));
        let r = conn.call_method("tools/list", params)?;
        let result = r
            .get("result")
            .ok_or_else(|| format!("tools/list failed: {r}"))?;
        tools.extend(
            result
                .get("tools")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    Ok(tools)
}

/// `lint`: the tools of a running server, checked.
pub fn lint(server_cmd: &str, timeout: Duration) -> Result<(Vec<Value>, Vec<Finding>), String> {
    let dir = tempfile::Builder::new()
        .prefix("boris-lint-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let mut conn = Conn::start(server_cmd, dir.path(), timeout)?;
    let tools = conn
        .initialize()
        .and_then(|_| list_tools(&mut conn))
        .map_err(|e| format!("{e}\n{}", stderr_tail(&conn.server.stderr_text(), 10)))?;
    conn.server.close_stdin();
    conn.server.wait_exit(Duration::from_secs(5));
    let findings = lint_tools(&tools);
    Ok((tools, findings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lint_finds_what_clients_complain_about() {
        let tools = vec![
            json!({"name": "good", "description": "d", "annotations": {"readOnlyHint": true},
                   "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "description": "x"}}, "required": ["p"]}}),
            json!({"name": "bad name!", "inputSchema": {"type": "object",
                   "properties": {"n": {"type": ["integer", "null"], "format": "uint64", "default": null}},
                   "required": ["missing"]}}),
            json!({"name": "good", "description": "again", "annotations": {}}),
        ];
        let f = lint_tools(&tools);
        let on = |tool: &str, needle: &str| {
            f.iter()
                .any(|x| x.tool == tool && x.message.contains(needle))
        };
        assert!(!f.iter().any(|x| x.tool == "good"
            && x.level == Level::Warning
            && x.message.contains("description")));
        assert!(on("bad name!", "name must be"));
        assert!(on("bad name!", "list of types"));
        assert!(on("bad name!", "format `uint64`"));
        assert!(on("bad name!", "default: null"));
        assert!(on("bad name!", "`missing` is required"));
        assert!(on("bad name!", "no annotations"));
        assert!(on("good", "listed twice"));
        assert!(on("good", "no inputSchema"));
        assert_eq!(approx_tokens("abcdefgh"), 2);
    }
}
