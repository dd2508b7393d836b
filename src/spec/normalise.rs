//! Normalisation of a transcript before it is compared with a golden snapshot.
//! Pure: a function of the transcript, the workdir and the case's redactions.
//!
//! Applied to every string in the transcript, in this order:
//! 1. every occurrence of the workdir path → `<workdir>` (then, for HTTP cases, the
//!    server address → `<addr>` and each session id → `<session>`/`<session:NAME>`);
//! 2. the built-in regex table ([`BUILTIN`]);
//! 3. the case's own `redact:` list, in order (they see the output of 1 and 2).
//!
//! Then `serverInfo.version` (anywhere) → `<version>`.

use std::path::Path;

use regex::Regex;
use serde_json::Value;

use super::model::Redaction;

/// Built-in regex replacements (pattern, replacement), applied to every string.
pub const BUILTIN: &[(&str, &str)] = &[
    // The bash working-directory sentinel nonce.
    (r"__BORIS_CWD_[0-9a-f]{8}__", "__BORIS_CWD_<nonce>__"),
    // What the sandbox enforces depends on the kernel (issue 18): the instructions'
    // line reads the same in every golden, whatever the machine.
    (
        r"Commands run (?:confined: sandbox on \([^)]*\): [^.\n]*|unconfined \(no sandbox\))",
        "Commands run <sandbox status>",
    ),
];

/// A compiled normaliser for one case run.
#[derive(Debug, Clone)]
pub struct Normaliser {
    literals: Vec<(String, String)>,
    regexes: Vec<(Regex, String)>,
}

impl Normaliser {
    /// `workdir` is the case's canonical workdir. Fails only on an invalid redaction
    /// regex (which case validation already rejects).
    pub fn new(workdir: &Path, redact: &[Redaction]) -> Result<Self, String> {
        let mut literals = Vec::new();
        let wd = workdir.to_string_lossy().into_owned();
        if !wd.is_empty() && wd != "/" {
            literals.push((wd, "<workdir>".to_string()));
        }
        let mut regexes = Vec::new();
        for (pattern, replace) in BUILTIN {
            let re = Regex::new(pattern).map_err(|e| format!("built-in regex {pattern}: {e}"))?;
            regexes.push((re, replace.to_string()));
        }
        for (i, r) in redact.iter().enumerate() {
            let re = Regex::new(&r.regex).map_err(|e| format!("redact[{i}]: {e}"))?;
            regexes.push((re, r.replace.clone()));
        }
        Ok(Normaliser { literals, regexes })
    }

    /// Also replaces every occurrence of `from` by `to` (after the workdir, before the
    /// regexes): HTTP cases use it for the server address (`<addr>`) and session ids
    /// (`<session>`, `<session:NAME>`). An empty `from` is ignored.
    pub fn with_literal(mut self, from: &str, to: &str) -> Self {
        if !from.is_empty() {
            self.literals.push((from.to_string(), to.to_string()));
        }
        self
    }

    /// Normalises one string.
    pub fn string(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (from, to) in &self.literals {
            if out.contains(from.as_str()) {
                out = out.replace(from.as_str(), to);
            }
        }
        for (re, to) in &self.regexes {
            if let std::borrow::Cow::Owned(o) = re.replace_all(&out, to.as_str()) {
                out = o;
            }
        }
        out
    }

    /// Normalises a whole JSON value (a transcript or a single message).
    pub fn apply(&self, v: &Value) -> Value {
        let mut out = self.strings(v);
        redact_server_version(&mut out);
        out
    }

    fn strings(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.string(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.strings(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.strings(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Replaces `serverInfo.version` with `<version>` wherever a `serverInfo` object occurs.
fn redact_server_version(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(info)) = o.get_mut("serverInfo")
                && let Some(ver) = info.get_mut("version")
            {
                *ver = Value::String("<version>".into());
            }
            for x in o.values_mut() {
                redact_server_version(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_server_version),
        _ => {}
    }
}

/// Convenience: normalise `transcript` for a case run in `workdir`.
pub fn normalise(
    transcript: &Value,
    workdir: &Path,
    redact: &[Redaction],
) -> Result<Value, String> {
    Ok(Normaliser::new(workdir, redact)?.apply(transcript))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wd() -> &'static Path {
        Path::new("/tmp/boris-spec-abc123")
    }

    #[test]
    fn workdir_is_replaced_everywhere() {
        let t = json!([
            {"->": {"params": {"arguments": {"path": "/tmp/boris-spec-abc123/a.txt"}}}},
            {"<-": {"result": {"content": [{"type": "text",
                "text": "1\tx\n/tmp/boris-spec-abc123/b and /tmp/boris-spec-abc123"}]}}}
        ]);
        let n = normalise(&t, wd(), &[]).unwrap();
        assert_eq!(
            n,
            json!([
                {"->": {"params": {"arguments": {"path": "<workdir>/a.txt"}}}},
                {"<-": {"result": {"content": [{"type": "text",
                    "text": "1\tx\n<workdir>/b and <workdir>"}]}}}
            ])
        );
    }

    #[test]
    fn server_version_and_nonce() {
        let t = json!([{"<-": {"result": {
            "serverInfo": {"name": "boris", "version": "0.1.0"},
            "protocolVersion": "2025-11-25"}}},
            {"<-": {"result": {"content": [{"type": "text",
                "text": "echo __BORIS_CWD_0a1b2c3d__ __BORIS_CWD_xyz__"}]}}}]);
        let n = normalise(&t, wd(), &[]).unwrap();
        assert_eq!(n[0]["<-"]["result"]["serverInfo"]["version"], "<version>");
        assert_eq!(n[0]["<-"]["result"]["serverInfo"]["name"], "boris");
        assert_eq!(n[0]["<-"]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(
            n[1]["<-"]["result"]["content"][0]["text"],
            "echo __BORIS_CWD_<nonce>__ __BORIS_CWD_xyz__"
        );
    }

    #[test]
    fn case_redactions_run_after_builtins() {
        let redact = vec![
            Redaction {
                regex: r"task_id: \w+".into(),
                replace: "task_id: <task>".into(),
            },
            Redaction {
                regex: r"<workdir>/(\w+)".into(),
                replace: "W/$1".into(),
            },
        ];
        let t = json!({"a": "task_id: t42 in /tmp/boris-spec-abc123/src", "n": 5, "b": true});
        let n = normalise(&t, wd(), &redact).unwrap();
        assert_eq!(
            n,
            json!({"a": "task_id: <task> in W/src", "n": 5, "b": true})
        );
    }

    #[test]
    fn keys_and_non_strings_are_untouched() {
        let t = json!({"/tmp/boris-spec-abc123": 1, "x": [null, 2.5, false]});
        assert_eq!(normalise(&t, wd(), &[]).unwrap(), t);
    }

    #[test]
    fn http_literals() {
        let n = Normaliser::new(wd(), &[])
            .unwrap()
            .with_literal("127.0.0.1:4242", "<addr>")
            .with_literal("abc-123", "<session:a>")
            .with_literal("", "<nothing>");
        assert_eq!(
            n.apply(&json!({"h": "127.0.0.1:4242", "s": "id abc-123 in /tmp/boris-spec-abc123"})),
            json!({"h": "<addr>", "s": "id <session:a> in <workdir>"})
        );
    }

    #[test]
    fn bad_redaction_is_an_error() {
        let r = vec![Redaction {
            regex: "(".into(),
            replace: String::new(),
        }];
        assert!(normalise(&json!([]), wd(), &r).is_err());
    }
}
