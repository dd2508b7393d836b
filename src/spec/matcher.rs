//! Expectations against a response message. Pure: no I/O, no process.

use std::ops::ControlFlow;

use serde_json::Value;

use super::display::{MAX_SHOWN, quote, show, truncate};
use super::model::Expect;

/// The concatenated text of every `text` content block of a `tools/call` response,
/// or `None` if the response has no `result.content` array.
pub fn content_text(response: &Value) -> Option<String> {
    let content = response.get("result")?.get("content")?.as_array()?;
    Some(
        content
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
    )
}

/// The `type` of every content block, in order.
pub fn content_types(response: &Value) -> Option<Vec<String>> {
    let content = response.get("result")?.get("content")?.as_array()?;
    Some(
        content
            .iter()
            .map(|b| {
                b.get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("<none>")
                    .to_string()
            })
            .collect(),
    )
}

/// JSON subset match: objects need every expected key, matching recursively (extra
/// keys in `actual` are fine); arrays need the same length, elementwise; scalars are
/// equal (numbers compared by value, so `1` matches `1.0`). The error names the first
/// mismatching location as a path like `$.result.content[0].type`.
pub fn subset_match(expected: &Value, actual: &Value) -> Result<(), String> {
    subset_at(expected, actual, "$")
}

fn subset_at(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let here = format!("{at}.{k}");
                match a.get(k) {
                    None => return Err(format!("{here}: missing (expected {})", show(ev))),
                    Some(av) => subset_at(ev, av, &here)?,
                }
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "{at}: expected an array of {} elements, got {}: {}",
                    e.len(),
                    a.len(),
                    show(actual)
                ));
            }
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                subset_at(ev, av, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            if e == a || (e.as_f64().is_some() && e.as_f64() == a.as_f64()) {
                Ok(())
            } else {
                Err(format!("{at}: expected {e}, got {a}"))
            }
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{at}: expected {}, got {}", show(e), show(a))),
    }
}

/// Checks a response (a JSON-RPC message with `result` or `error`) against `expect`.
///
/// `tool_call`: the step is a `call`, so text expectations apply to the concatenated
/// text content; otherwise (and for an error response) they apply to the compact
/// JSON of the whole response. Returns one message per failed expectation.
pub fn check_response(expect: &Expect, response: &Value, tool_call: bool) -> Vec<String> {
    let mut fails = Vec::new();
    if check_envelope(expect, response, &mut fails).is_break() {
        return fails;
    }
    let is_error = response
        .get("result")
        .map(|r| r.get("isError").and_then(Value::as_bool) == Some(true));
    let text_content = content_text(response);
    check_is_error(expect, is_error, text_content.as_deref(), &mut fails);
    check_error_code(
        expect,
        response,
        is_error,
        text_content.as_deref(),
        &mut fails,
    );

    if wants_text(expect) {
        let (what, subject) = if tool_call && response.get("error").is_none() {
            match &text_content {
                Some(t) => ("text", t.clone()),
                None => {
                    fails.push(format!(
                        "expected text content, but the response has no result.content: {}",
                        show(response)
                    ));
                    return fails;
                }
            }
        } else {
            ("response JSON", response.to_string())
        };
        check_text(expect, what, &subject, &mut fails);
    }

    if let Some(want) = &expect.content_types {
        match content_types(response) {
            None => fails.push(format!(
                "expected content types {want:?}, but the response has no result.content"
            )),
            Some(got) if &got != want => {
                fails.push(format!("expected content types {want:?}, got {got:?}"))
            }
            _ => {}
        }
    }

    if let Some(m) = &expect.match_
        && let Err(e) = subset_match(m, response)
    {
        fails.push(format!("match failed at {e}"));
    }

    fails
}

/// `jsonrpc_error` against the response's `result` or `error`. Breaks when the
/// response is not the kind the other expectations could be checked on.
fn check_envelope(expect: &Expect, response: &Value, fails: &mut Vec<String>) -> ControlFlow<()> {
    match (expect.jsonrpc_error, response.get("error")) {
        (Some(code), Some(err)) => {
            let got = err.get("code").and_then(Value::as_i64);
            if got != Some(code) {
                fails.push(format!(
                    "expected JSON-RPC error {code}, got error {}",
                    show(err)
                ));
            }
        }
        (Some(code), None) => {
            fails.push(format!(
                "expected JSON-RPC error {code}, got {}",
                show(response)
            ));
            return ControlFlow::Break(());
        }
        (None, Some(err)) => {
            let match_wants_error = expect
                .match_
                .as_ref()
                .is_some_and(|m| m.get("error").is_some());
            if !match_wants_error {
                fails.push(format!("unexpected JSON-RPC error: {}", show(err)));
                return ControlFlow::Break(());
            }
        }
        (None, None) => {
            if response.get("result").is_none() {
                fails.push(format!(
                    "response has neither `result` nor `error`: {}",
                    show(response)
                ));
                return ControlFlow::Break(());
            }
        }
    }
    ControlFlow::Continue(())
}

/// `is_error` against the result's `isError` (`None`: the response has no result).
fn check_is_error(
    expect: &Expect,
    is_error: Option<bool>,
    text_content: Option<&str>,
    fails: &mut Vec<String>,
) {
    let Some(want) = expect.is_error else {
        return;
    };
    match is_error {
        None => fails.push(format!(
            "expected isError={want}, got a JSON-RPC error instead of a result"
        )),
        Some(got) if got != want => fails.push(format!(
            "expected isError={want}, got isError={got}; text: {}",
            quote(text_content.unwrap_or(""))
        )),
        _ => {}
    }
}

/// `code`: the text starts with `[CODE]` and the result is an error.
fn check_error_code(
    expect: &Expect,
    response: &Value,
    is_error: Option<bool>,
    text_content: Option<&str>,
    fails: &mut Vec<String>,
) {
    let Some(code) = &expect.code else {
        return;
    };
    let prefix = format!("[{code}]");
    match text_content {
        None => fails.push(format!(
            "expected error code {prefix}, but the response has no result.content: {}",
            show(response)
        )),
        Some(t) => {
            if !t.starts_with(&prefix) {
                fails.push(format!(
                    "expected text starting with {prefix}, got {}",
                    quote(t)
                ));
            }
            if is_error != Some(true) {
                fails.push(format!("expected isError=true with code {prefix}"));
            }
        }
    }
}

/// Whether any expectation reads the text (or the response JSON, off a call).
fn wants_text(expect: &Expect) -> bool {
    expect.text.is_some()
        || !expect.contains.is_empty()
        || !expect.not_contains.is_empty()
        || !expect.regex.is_empty()
        || !expect.not_regex.is_empty()
}

/// `text`, `contains`, `not_contains`, `regex`, `not_regex` against `subject`, which
/// the messages call `what`.
fn check_text(expect: &Expect, what: &str, subject: &str, fails: &mut Vec<String>) {
    if let Some(want) = &expect.text
        && want != subject
    {
        fails.push(format!(
            "expected {what} {}, got {}{}",
            quote(want),
            quote(subject),
            first_difference(want, subject)
        ));
    }
    check_contains(fails, what, subject, &expect.contains, &expect.not_contains);
    for r in expect.regex.iter() {
        match regex::Regex::new(r) {
            Err(e) => fails.push(format!("invalid regex /{r}/: {e}")),
            Ok(re) => {
                if !re.is_match(subject) {
                    fails.push(format!(
                        "expected {what} to match /{r}/, got {}",
                        quote(subject)
                    ));
                }
            }
        }
    }
    for r in expect.not_regex.iter() {
        match regex::Regex::new(r) {
            Err(e) => fails.push(format!("invalid regex /{r}/: {e}")),
            Ok(re) => {
                if let Some(m) = re.find(subject) {
                    fails.push(format!(
                        "expected {what} not to match /{r}/ (it matched {}), got {}",
                        quote(m.as_str()),
                        quote(subject)
                    ));
                }
            }
        }
    }
}

/// Each pattern must subset-match at least one of `received`.
pub fn check_notifications(patterns: &[Value], received: &[Value]) -> Vec<String> {
    patterns
        .iter()
        .filter(|p| !received.iter().any(|r| subset_match(p, r).is_ok()))
        .map(|p| {
            let got: Vec<String> = received
                .iter()
                .map(|r| {
                    r.get("method")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string()
                })
                .collect();
            format!(
                "expected a server message matching {} while waiting; got {} message(s){}",
                show(p),
                received.len(),
                if got.is_empty() {
                    String::new()
                } else {
                    format!(": {}", got.join(", "))
                }
            )
        })
        .collect()
}

/// Checks the HTTP keys of `expect` (`status`, `headers`, `headers_absent`,
/// `messages`, `body`, `body_contains`, `body_not_contains`) against a response.
/// `headers` are `(lower-case name, value)` pairs; `messages` are the JSON messages
/// of the body. Returns one message per failed expectation.
pub fn check_http(
    expect: &Expect,
    status: u16,
    headers: &[(String, String)],
    body: &str,
    messages: &[Value],
) -> Vec<String> {
    let mut fails = Vec::new();
    let header = |name: &str| -> Option<String> {
        let v: Vec<&str> = headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        (!v.is_empty()).then(|| v.join(", "))
    };
    if let Some(want) = expect.status
        && want != status
    {
        fails.push(format!(
            "expected HTTP status {want}, got {status}; body: {}",
            quote(body)
        ));
    }
    for (name, wants) in &expect.headers {
        let got = header(name);
        for want in wants.iter() {
            match &got {
                None => fails.push(format!(
                    "expected header {name} containing {}, but it is absent",
                    quote(want)
                )),
                Some(got) if !got.contains(want.as_str()) => fails.push(format!(
                    "expected header {name} to contain {}, got {}",
                    quote(want),
                    quote(got)
                )),
                Some(_) => {}
            }
        }
        if wants.is_empty() && got.is_none() {
            fails.push(format!("expected header {name}, but it is absent"));
        }
    }
    for name in &expect.headers_absent {
        if let Some(got) = header(name) {
            fails.push(format!("expected no header {name}, got {}", quote(&got)));
        }
    }
    for (name, unwanted) in &expect.headers_not_contains {
        if let Some(got) = header(name) {
            for u in unwanted.iter().filter(|u| got.contains(u.as_str())) {
                fails.push(format!(
                    "expected header {name} not to contain {}, got {}",
                    quote(u),
                    quote(&got)
                ));
            }
        }
    }
    for m in &expect.messages {
        if !messages.iter().any(|x| subset_match(&m.match_, x).is_ok()) {
            let why = match messages {
                [] => "the body has no JSON messages".to_string(),
                [one] => format!(
                    "the only message differs: {}",
                    subset_match(&m.match_, one).err().unwrap_or_default()
                ),
                many => format!(
                    "none of the {} messages matches: {}",
                    many.len(),
                    truncate(
                        &many
                            .iter()
                            .map(Value::to_string)
                            .collect::<Vec<_>>()
                            .join(" | "),
                        MAX_SHOWN
                    )
                ),
            };
            fails.push(format!(
                "expected a message matching {}; {why}",
                show(&m.match_)
            ));
        }
    }
    if let Some(want) = &expect.body
        && want != body
    {
        fails.push(format!(
            "expected body {}, got {}{}",
            quote(want),
            quote(body),
            first_difference(want, body)
        ));
    }
    check_contains(
        &mut fails,
        "the body",
        body,
        &expect.body_contains,
        &expect.body_not_contains,
    );
    fails
}

/// ` (first difference at char N)` for two unequal texts, else empty.
fn first_difference(a: &str, b: &str) -> String {
    let n = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    if a == b {
        String::new()
    } else {
        format!(" (first difference at char {n})")
    }
}

/// Each string of `wanted` must occur in `subject`, none of `unwanted`.
fn check_contains(
    fails: &mut Vec<String>,
    what: &str,
    subject: &str,
    wanted: &super::model::Strings,
    unwanted: &super::model::Strings,
) {
    for c in wanted.iter() {
        if !subject.contains(c.as_str()) {
            fails.push(format!(
                "expected {what} to contain {}, got {}",
                quote(c),
                quote(subject)
            ));
        }
    }
    for c in unwanted.iter() {
        if subject.contains(c.as_str()) {
            fails.push(format!(
                "expected {what} not to contain {}, got {}",
                quote(c),
                quote(subject)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::model::Strings;
    use serde_json::json;

    fn ok_text(text: &str, is_error: bool) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": text}], "isError": is_error}})
    }

    fn strings(v: &[&str]) -> Strings {
        Strings(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn subset_objects_arrays_scalars() {
        let actual = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": null});
        assert!(subset_match(&json!({}), &actual).is_ok());
        assert!(subset_match(&json!({"b": {"d": "x"}}), &actual).is_ok());
        assert!(subset_match(&json!({"a": 1.0}), &actual).is_ok());
        assert!(subset_match(&json!({"e": null}), &actual).is_ok());
        let e = subset_match(&json!({"b": {"c": [1]}}), &actual).unwrap_err();
        assert!(e.starts_with("$.b.c: expected an array of 1"), "{e}");
        let e = subset_match(&json!({"b": {"c": [1, 3]}}), &actual).unwrap_err();
        assert_eq!(e, "$.b.c[1]: expected 3, got 2");
        let e = subset_match(&json!({"z": true}), &actual).unwrap_err();
        assert_eq!(e, "$.z: missing (expected true)");
        let e = subset_match(&json!({"a": "1"}), &actual).unwrap_err();
        assert_eq!(e, "$.a: expected \"1\", got 1");
    }

    #[test]
    fn text_expectations() {
        let r = ok_text("hello world", false);
        let mut e = Expect {
            text: Some("hello world".into()),
            contains: strings(&["hello"]),
            not_contains: strings(&["bye"]),
            regex: strings(&["^hel+o"]),
            is_error: Some(false),
            content_types: Some(vec!["text".into()]),
            ..Default::default()
        };
        assert!(check_response(&e, &r, true).is_empty());
        e.text = Some("hello there".into());
        e.contains = strings(&["nope"]);
        e.not_contains = strings(&["world"]);
        e.regex = strings(&["^world"]);
        e.is_error = Some(true);
        e.content_types = Some(vec!["image".into()]);
        let f = check_response(&e, &r, true);
        assert_eq!(f.len(), 6, "{f:#?}");
        assert!(f[0].contains("isError=true"), "{}", f[0]);
        assert!(f[1].contains("first difference at char 6"), "{}", f[1]);
        assert!(f[2].contains("to contain \"nope\""), "{}", f[2]);
        assert!(f[3].contains("not to contain \"world\""), "{}", f[3]);
        assert!(f[4].contains("/^world/"), "{}", f[4]);
        assert!(f[5].contains("content types"), "{}", f[5]);
    }

    #[test]
    fn not_regex_fails_on_a_match_and_names_it() {
        let r = ok_text("Command finished\nexit code 0", false);
        let e = Expect {
            not_regex: strings(&["(?i)exit[ _]?code\\W{0,3}0\\b"]),
            ..Default::default()
        };
        let f = check_response(&e, &r, true);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].contains("(it matched \"exit code 0\")"), "{}", f[0]);
        let honest = ok_text("timed out: killed (exit code 143)", false);
        assert!(check_response(&e, &honest, true).is_empty());
    }

    #[test]
    fn text_concatenates_text_blocks_only() {
        let r = json!({"id": 1, "result": {"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "xx", "mimeType": "image/png"},
            {"type": "text", "text": "b"}]}});
        assert_eq!(content_text(&r).as_deref(), Some("ab"));
        assert_eq!(
            content_types(&r),
            Some(vec!["text".into(), "image".into(), "text".into()])
        );
    }

    #[test]
    fn code_needs_prefix_and_is_error() {
        let e = Expect {
            code: Some("PATH_NOT_FOUND".into()),
            ..Default::default()
        };
        assert!(
            check_response(
                &e,
                &ok_text("[PATH_NOT_FOUND] no such file: /a", true),
                true
            )
            .is_empty()
        );
        let f = check_response(&e, &ok_text("[PATH_NOT_FOUND] x", false), true);
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("isError=true"));
        let f = check_response(&e, &ok_text("[ACCESS_DENIED] x", true), true);
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("starting with [PATH_NOT_FOUND]"));
    }

    #[test]
    fn jsonrpc_errors() {
        let err = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "bad"}});
        let want = Expect {
            jsonrpc_error: Some(-32602),
            contains: strings(&["bad"]),
            ..Default::default()
        };
        // Text checks on an error response apply to the compact JSON.
        assert!(check_response(&want, &err, true).is_empty());
        let other = Expect {
            jsonrpc_error: Some(-32601),
            ..Default::default()
        };
        assert_eq!(check_response(&other, &err, true).len(), 1);
        // An unexpected error fails even with no expectations.
        let f = check_response(&Expect::default(), &err, true);
        assert_eq!(f.len(), 1);
        assert!(f[0].starts_with("unexpected JSON-RPC error"));
        // ...unless `match` asks for it.
        let m = Expect {
            match_: Some(json!({"error": {"code": -32602}})),
            ..Default::default()
        };
        assert!(check_response(&m, &err, false).is_empty());
        // Expecting an error but getting a result.
        let f = check_response(&want, &ok_text("x", false), true);
        assert_eq!(f.len(), 1);
        assert!(f[0].starts_with("expected JSON-RPC error -32602, got"));
    }

    #[test]
    fn raw_requests_match_compact_json() {
        let r = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "view"}]}});
        let e = Expect {
            contains: strings(&[r#""name":"view""#]),
            match_: Some(json!({"result": {"tools": [{"name": "view"}]}})),
            ..Default::default()
        };
        assert!(check_response(&e, &r, false).is_empty());
        let e = Expect {
            text: Some("x".into()),
            ..Default::default()
        };
        // A call step whose result has no content cannot satisfy text checks.
        let f = check_response(&e, &r, true);
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("no result.content"));
    }

    #[test]
    fn notifications_need_a_match_each() {
        let got = vec![
            json!({"method": "notifications/progress", "params": {"progressToken": "t1", "progress": 1}}),
            json!({"method": "notifications/message", "params": {}}),
        ];
        assert!(
            check_notifications(
                &[json!({"method": "notifications/progress", "params": {"progressToken": "t1"}})],
                &got
            )
            .is_empty()
        );
        let f = check_notifications(&[json!({"method": "notifications/cancelled"})], &got);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].contains("notifications/progress, notifications/message"),
            "{}",
            f[0]
        );
    }

    #[test]
    fn http_expectations() {
        use crate::spec::model::MessagePattern;
        let headers = vec![
            ("content-type".to_string(), "text/event-stream".to_string()),
            ("vary".to_string(), "origin".to_string()),
            ("vary".to_string(), "accept".to_string()),
        ];
        let msgs = vec![
            json!({"method": "notifications/progress", "params": {"progress": 1}}),
            json!({"id": 1, "result": {"isError": false}}),
        ];
        let mut e = Expect {
            status: Some(200),
            headers: [
                ("Content-Type".to_string(), strings(&["event-stream"])),
                ("VARY".to_string(), strings(&["origin, accept", "accept"])),
            ]
            .into(),
            headers_absent: vec!["www-authenticate".into()],
            messages: vec![
                MessagePattern {
                    match_: json!({"id": 1, "result": {"isError": false}}),
                },
                MessagePattern {
                    match_: json!({"method": "notifications/progress"}),
                },
            ],
            body: Some("b".into()),
            body_contains: strings(&["b"]),
            body_not_contains: strings(&["zz"]),
            ..Default::default()
        };
        assert_eq!(
            check_http(&e, 200, &headers, "b", &msgs),
            Vec::<String>::new()
        );
        e.status = Some(404);
        e.headers_absent = vec!["Vary".into()];
        e.headers.insert("mcp-session-id".into(), strings(&["x"]));
        e.messages.push(MessagePattern {
            match_: json!({"id": 2}),
        });
        e.body = Some("c".into());
        e.body_contains = strings(&["c"]);
        e.body_not_contains = strings(&["b"]);
        e.headers_not_contains = [
            ("vary".to_string(), strings(&["origin", "nothing-like-it"])),
            ("x-absent".to_string(), strings(&["origin"])),
        ]
        .into();
        let f = check_http(&e, 200, &headers, "b", &msgs);
        assert_eq!(f.len(), 8, "{f:#?}");
        assert!(
            f.iter()
                .any(|x| x.contains("expected header vary not to contain \"origin\"")),
            "{f:#?}"
        );
        assert!(
            f[0].contains("expected HTTP status 404, got 200"),
            "{}",
            f[0]
        );
        assert!(f[1].contains("mcp-session-id"), "{}", f[1]);
        assert!(f[2].contains("expected no header Vary"), "{}", f[2]);
        assert!(f[3].contains("not to contain \"origin\""), "{}", f[3]);
        assert!(f[4].contains("none of the 2 messages"), "{}", f[4]);
        let f = check_http(
            &Expect {
                messages: vec![MessagePattern {
                    match_: json!({"a": 1}),
                }],
                ..Default::default()
            },
            200,
            &[],
            "",
            &[],
        );
        assert!(f[0].contains("no JSON messages"), "{f:?}");
    }

    #[test]
    fn quote_escapes_and_truncates() {
        assert_eq!(quote("a\nb"), r#""a\nb""#);
        let long = "x".repeat(1000);
        assert!(quote(&long).ends_with("more chars]"));
    }
}
