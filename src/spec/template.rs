//! The adapter language's templates (issue 13, extended by issue 29 §3): how a case's
//! values become one server's call arguments.
//!
//! A string that is exactly `{name}` becomes the value itself (any JSON type), and a key
//! whose value names a value the step did not give is left out; `{name}` inside a longer
//! string is replaced by the value's text. A placeholder may pass its value through
//! filters, `{name|filter|…}`, for servers that spell a value another way:
//!
//! - `not`: a boolean inverted (`case_sensitive: "{ignore_case|not}"`);
//! - `map:A=B,C=D`: a value's text replaced by another (a mapped value that reads as a
//!   JSON scalar, `true` or `3`, keeps that type when it is the whole string); a value
//!   the map does not name is kept;
//! - `lines:P`: every line of a text prefixed with `P` (`-`, `+`, a space), so that an
//!   edit becomes a patch: `"@@\n{old|lines:-}\n{new|lines:+}"`;
//! - `join:SEP`: a list's elements' texts joined (a multi-edit's hunks as one patch);
//! - `div:N`: a whole number divided by N, rounded up (milliseconds to a server's
//!   seconds: `{timeout|div:1000}`; 500 ms is 1 s, never 0);
//! - `default:V`: the value when the step gives none (typed as `map`'s results), for a
//!   server whose default differs from the suite's (`{ignore_case|not|default:true}`
//!   for a search that ignores case unless told).
//!
//! Placeholders no value names (`{workdir}`, `{saved:…}`, `{captured:…}`) are left for
//! later expansion.

use serde_json::{Map, Value};

/// The value names a template uses, `{name}` or `{name|filters}` anywhere in its
/// strings.
pub fn placeholders(template: &Value) -> Vec<String> {
    match template {
        Value::String(s) => tokens(s)
            .into_iter()
            .map(|t| name_of(t).to_string())
            .collect(),
        Value::Object(m) => m.values().flat_map(placeholders).collect(),
        Value::Array(a) => a.iter().flat_map(placeholders).collect(),
        _ => Vec::new(),
    }
}

/// Fills a template; `None` when it is exactly a placeholder with no value (its key is
/// then left out).
pub fn fill(template: &Value, values: &Map<String, Value>) -> Option<Value> {
    match template {
        Value::String(s) => fill_string(s, values),
        Value::Object(m) => Some(Value::Object(
            m.iter()
                .filter_map(|(k, v)| fill(v, values).map(|v| (k.clone(), v)))
                .collect(),
        )),
        Value::Array(a) => Some(Value::Array(
            a.iter().filter_map(|v| fill(v, values)).collect(),
        )),
        other => Some(other.clone()),
    }
}

fn fill_string(s: &str, values: &Map<String, Value>) -> Option<Value> {
    let whole = tokens(s);
    if let [t] = whole[..]
        && s.len() == t.len() + 2
        && name_of(t) != "workdir"
    {
        return match values.get(name_of(t)) {
            None if is_value_name(name_of(t)) => {
                default_of(t).map(|d| typed(Value::String(d.into())))
            }
            None => Some(Value::String(s.to_string())),
            Some(v) => Some(filtered(v, t)),
        };
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find('}').map(|j| &after[..j]) {
            Some(t) if !t.contains('{') && values.contains_key(name_of(t)) => {
                let v = filtered(&values[name_of(t)], t);
                out.push_str(&text_of(&v));
                rest = &after[t.len() + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Some(Value::String(out))
}

/// The insides of the `{…}` tokens of a string (no nested braces).
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        rest = &rest[i + 1..];
        if let Some(j) = rest.find('}') {
            let t = &rest[..j];
            if !t.contains('{') {
                out.push(t);
            }
        }
    }
    out
}

/// A token's `default:V` filter's V: the value when the step gives none.
fn default_of(token: &str) -> Option<&str> {
    token
        .split('|')
        .skip(1)
        .find_map(|f| f.strip_prefix("default:"))
}

/// A token's value name: what comes before its filters.
fn name_of(token: &str) -> &str {
    token.split('|').next().unwrap_or(token)
}

/// Whether a name is a case value (`old`, `path_abs`) rather than a later placeholder
/// (`workdir`, `saved:x`, `captured:x`): only a missing case value drops its key.
fn is_value_name(name: &str) -> bool {
    !name.contains(':') && name != "workdir"
}

/// A value passed through the token's filters; an unknown filter or one that does not
/// fit the value leaves it as it is (`boris-spec lint` names unknown filters).
fn filtered(v: &Value, token: &str) -> Value {
    token
        .split('|')
        .skip(1)
        .fold(v.clone(), |v, f| apply(&v, f).unwrap_or(v))
}

/// One filter (module docs); `None` when it does not apply.
fn apply(v: &Value, filter: &str) -> Option<Value> {
    let (name, arg) = filter.split_once(':').unwrap_or((filter, ""));
    match name {
        "not" => v.as_bool().map(|b| Value::Bool(!b)),
        "lines" => v.as_str().map(|t| Value::String(prefix_lines(t, arg))),
        "join" => v
            .as_array()
            .map(|a| Value::String(a.iter().map(text_of).collect::<Vec<_>>().join(arg))),
        "map" => {
            let text = text_of(v);
            Some(
                arg.split(',')
                    .filter_map(|pair| pair.split_once('='))
                    .find(|(from, _)| *from == text)
                    .map_or_else(|| v.clone(), |(_, to)| typed(Value::String(to.to_string()))),
            )
        }
        "div" => {
            let by = arg.parse::<u64>().ok().filter(|d| *d > 0)?;
            v.as_u64().map(|n| Value::from(n.div_ceil(by)))
        }
        // Applies only to a missing value (`default_of`).
        "default" => Some(v.clone()),
        _ => None,
    }
}

/// The filter names `apply` knows, for lint.
pub const FILTERS: &[&str] = &["not", "lines", "map", "join", "default", "div"];

/// The unknown filters a template uses.
pub fn unknown_filters(template: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect_strings(template, &mut |s| {
        for t in tokens(s) {
            for f in t.split('|').skip(1) {
                let name = f.split(':').next().unwrap_or(f);
                if !FILTERS.contains(&name) {
                    out.push(f.to_string());
                }
            }
        }
    });
    out
}

fn collect_strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Object(m) => m.values().for_each(|v| collect_strings(v, f)),
        Value::Array(a) => a.iter().for_each(|v| collect_strings(v, f)),
        _ => {}
    }
}

/// Every line of `text` prefixed with `prefix`; an empty text is one empty line (a
/// patch removing or adding an empty string still has its line).
fn prefix_lines(text: &str, prefix: &str) -> String {
    text.split('\n')
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A mapped string that reads as a JSON scalar takes that type.
fn typed(v: Value) -> Value {
    match &v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(x @ (Value::Bool(_) | Value::Number(_) | Value::Null)) if s.trim() == s => x,
            _ => v,
        },
        _ => v,
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(t) => t.clone(),
        other => other.to_string(),
    }
}

/// A case path (relative to the workdir) made relative to the case's root (itself
/// relative to the workdir, or none: the workdir), for servers that take only paths
/// inside their root. An absolute path or a later placeholder is kept.
pub fn relative_to_root(path: &str, root: Option<&str>) -> String {
    let root = root.unwrap_or("").trim_matches('/');
    if path.starts_with('/') || path.starts_with('{') || root.is_empty() || root == "." {
        return path.to_string();
    }
    if root.starts_with('/') || root.starts_with('{') {
        return path.to_string();
    }
    let parts = |s: &str| -> Vec<String> {
        s.split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_string)
            .collect()
    };
    let (r, p) = (parts(root), parts(path));
    let common = r.iter().zip(&p).take_while(|(a, b)| a == b).count();
    let mut out: Vec<String> = vec!["..".to_string(); r.len() - common];
    out.extend(p[common..].iter().cloned());
    if out.is_empty() {
        ".".into()
    } else {
        out.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vals(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn not_inverts_a_boolean_and_keeps_its_type() {
        let t = json!({"case_sensitive": "{ignore_case|not}", "x": "{missing|not}"});
        assert_eq!(
            fill(&t, &vals(json!({"ignore_case": true}))).unwrap(),
            json!({"case_sensitive": false})
        );
        assert_eq!(
            fill(&t, &vals(json!({"ignore_case": false}))).unwrap(),
            json!({"case_sensitive": true})
        );
        let d = json!({"case_sensitive": "{ignore_case|not|default:true}"});
        assert_eq!(
            fill(&d, &vals(json!({}))).unwrap(),
            json!({"case_sensitive": true})
        );
        assert_eq!(
            fill(&d, &vals(json!({"ignore_case": true}))).unwrap(),
            json!({"case_sensitive": false})
        );
        // Not a boolean: passed as it is, for the server to refuse.
        assert_eq!(
            fill(&t, &vals(json!({"ignore_case": "yes"}))).unwrap(),
            json!({"case_sensitive": "yes"})
        );
    }

    #[test]
    fn lines_turn_an_edit_into_a_patch() {
        let t = json!("*** Update File: {path}\n@@\n{old|lines:-}\n{new|lines:+}\n*** End");
        let v = vals(json!({"path": "a.txt", "old": "x\ny", "new": "z"}));
        assert_eq!(
            fill(&t, &v).unwrap(),
            json!("*** Update File: a.txt\n@@\n-x\n-y\n+z\n*** End")
        );
        assert_eq!(prefix_lines("", "+"), "+");
        let t = json!({"timeout": "{timeout|div:1000}"});
        assert_eq!(
            fill(&t, &vals(json!({"timeout": 500}))).unwrap(),
            json!({"timeout": 1})
        );
        assert_eq!(
            fill(&t, &vals(json!({"timeout": 3000}))).unwrap(),
            json!({"timeout": 3})
        );
        // A negative number is passed as it is, for the server to refuse.
        assert_eq!(
            fill(&t, &vals(json!({"timeout": -5}))).unwrap(),
            json!({"timeout": -5})
        );
        // A string that reads as JSON stays a string (`command: "false"`).
        assert_eq!(
            fill(
                &json!({"cmd": "{command}"}),
                &vals(json!({"command": "false"}))
            )
            .unwrap(),
            json!({"cmd": "false"})
        );
        let t = json!("{edits|join:\n}");
        let v = vals(json!({"edits": ["@@\n-a\n+b", "@@\n-c\n+d"]}));
        assert_eq!(fill(&t, &v).unwrap(), json!("@@\n-a\n+b\n@@\n-c\n+d"));
    }

    #[test]
    fn map_replaces_named_values_and_types_whole_results() {
        let t = json!({"mode": "{output|map:content=lines,count=n}", "n": "{flag|map:yes=true}"});
        let v = vals(json!({"output": "count", "flag": "yes"}));
        assert_eq!(fill(&t, &v).unwrap(), json!({"mode": "n", "n": true}));
        let v = vals(json!({"output": "other", "flag": "no"}));
        assert_eq!(fill(&t, &v).unwrap(), json!({"mode": "other", "n": "no"}));
    }

    #[test]
    fn later_placeholders_stay_and_names_strip_their_filters() {
        let t = json!({"rev": "{captured:rev:{path}}", "p": "{workdir}/{path}", "w": "{workdir}"});
        assert_eq!(
            fill(&t, &vals(json!({"path": "a"}))).unwrap(),
            json!({"rev": "{captured:rev:a}", "p": "{workdir}/a", "w": "{workdir}"})
        );
        assert_eq!(
            placeholders(&json!(["{a|not}", "x {b|lines:-} {c}"])),
            vec!["a", "b", "c"]
        );
        assert_eq!(
            unknown_filters(&json!({"a": "{a|nope}", "b": "{b|map:x=y|not}"})),
            vec!["nope"]
        );
    }

    #[test]
    fn paths_relative_to_the_root() {
        for (path, root, want) in [
            ("inside/a.txt", Some("inside"), "a.txt"),
            ("inside", Some("inside"), "."),
            ("secret.txt", Some("inside"), "../secret.txt"),
            ("inside/../x", Some("inside"), "../x"),
            ("a/b/c", Some("a/d"), "../b/c"),
            ("a.txt", None, "a.txt"),
            ("/etc/passwd", Some("inside"), "/etc/passwd"),
            ("{workdir}/x", Some("inside"), "{workdir}/x"),
        ] {
            assert_eq!(relative_to_root(path, root), want, "{path} under {root:?}");
        }
    }
}
