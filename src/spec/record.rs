//! `boris-spec record` (issue 13 §4): turns a short script of calls into a case. The
//! script is a case file whose steps need no `expect`; the recorder runs it against the
//! live server, writes each call's answer back as the step's expectation (is-error and
//! the exact text; the error code of a JSON-RPC error), and replays the result once: a
//! step whose text differs between the two runs (a time, a pid) keeps only `is_error`,
//! and says so. The transcript of the replay is what a golden snapshot records.
//!
//! Text goes under the adapter's first profile key (`boris:`) for `do` steps, so the
//! recorded case stays portable; `call` steps are the server's own and get it in
//! `expect`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use yaml_serde::{Mapping, Value as Yaml};

use super::model::{Action, Case, parse_case};
use super::runner::{CaseOutcome, RunOptions, run_case};

/// What a recording produced.
#[derive(Debug)]
pub struct Recording {
    /// The case, as YAML, with the recorded expectations.
    pub case_yaml: String,
    /// The replay of the written case (its transcript is the golden).
    pub replay: CaseOutcome,
    /// Steps whose recorded text did not hold on the replay, and other notes.
    pub notes: Vec<String>,
}

/// The `source` a script without one gets: the author must say what the case checks.
pub const SOURCE_TODO: &str = "TODO: what this case checks and where that is specified \
     (seed file and section, DESIGN §, or issue)";

/// Records `script` (a case file's text) against the server of `opts`. `path` names the
/// case in messages (and, for a golden, its snapshot).
pub fn record(script: &str, path: &Path, opts: &RunOptions) -> Result<Recording, String> {
    let mut doc: Yaml = yaml_serde::from_str(script).map_err(|e| format!("the script: {e}"))?;
    let Yaml::Mapping(top) = &mut doc else {
        return Err("the script must be a map with `steps`".into());
    };
    // `source` first, as in every case file.
    let source = top
        .remove("source")
        .unwrap_or_else(|| Yaml::String(SOURCE_TODO.into()));
    let mut ordered = Mapping::new();
    ordered.insert("source".into(), source);
    for (k, v) in std::mem::take(top) {
        ordered.insert(k, v);
    }
    *top = ordered;
    let case = load(&doc, path)?;
    let first = run_case(&case, opts);
    if let Some(why) = &first.unsupported {
        return Err(format!("the adapter cannot run this script: {why}"));
    }
    let responses = responses_in_order(&first.transcript);
    let profile = opts.adapter.profiles.first().cloned();
    let mut written = Vec::new();
    {
        let steps = steps_mut(&mut doc)?;
        let mut k = 0;
        for (i, step) in case.steps.iter().enumerate() {
            let do_step = match &step.action {
                Action::Do { wait: true, .. } => true,
                Action::Call { wait: true, .. } | Action::Request { wait: true, .. } => false,
                _ => continue,
            };
            let response = responses.get(k);
            k += 1;
            let (Some(response), Some(Yaml::Mapping(raw))) = (response, steps.get_mut(i)) else {
                continue;
            };
            if raw.contains_key("expect") || raw.contains_key("boris") {
                continue;
            }
            let tool_call = !matches!(step.action, Action::Request { .. });
            let (expect, text) = derive(response, tool_call);
            if let Some(e) = expect {
                raw.insert("expect".into(), e);
            }
            if let Some(t) = text {
                written.push(i);
                match (&profile, do_step) {
                    (Some(p), true) => {
                        let mut m = Mapping::new();
                        m.insert("text".into(), t);
                        raw.insert(p.as_str().into(), Yaml::Mapping(m));
                    }
                    _ => {
                        if let Some(Yaml::Mapping(e)) = raw.get_mut("expect") {
                            e.insert("text".into(), t);
                        }
                    }
                }
            }
        }
    }
    let mut notes = Vec::new();
    let mut replay = run_case(&load(&doc, path)?, opts);
    // A recorded text that does not hold on the replay is not the server's stable
    // answer: keep is_error only for that step.
    let unstable: Vec<usize> = written
        .iter()
        .copied()
        .filter(|i| {
            let label = format!("step {} (", i + 1);
            replay.failures.iter().any(|f| f.starts_with(&label))
        })
        .collect();
    if !unstable.is_empty() {
        let steps = steps_mut(&mut doc)?;
        for i in &unstable {
            if let Some(Yaml::Mapping(raw)) = steps.get_mut(*i) {
                if let Some(p) = &profile {
                    raw.remove(p.as_str());
                }
                if let Some(Yaml::Mapping(e)) = raw.get_mut("expect") {
                    e.remove("text");
                }
            }
            notes.push(format!(
                "step {}: its text changed between two runs; kept is_error only{}",
                i + 1,
                if case.golden {
                    " (the golden records it: add a `redact:` entry for the changing part)"
                } else {
                    ""
                }
            ));
        }
        replay = run_case(&load(&doc, path)?, opts);
    }
    if !replay.passed {
        notes.push(format!(
            "the written case does not pass on a replay: {}",
            replay.failures.first().cloned().unwrap_or_default()
        ));
    }
    let case_yaml = yaml_serde::to_string(&doc).map_err(|e| e.to_string())?;
    Ok(Recording {
        case_yaml,
        replay,
        notes,
    })
}

/// Where the golden of the case at `out` goes, and its snapshot name, when `out` lies
/// under a `spec/` directory: `<root>/golden/<dir>__<name>.snap` for
/// `<root>/spec/<dir>/<name>.yaml`, as `tests/spec.rs` names it.
pub fn golden_location(out: &Path) -> Option<(PathBuf, String)> {
    let abs = std::path::absolute(out).ok()?;
    let spec_dir = abs
        .ancestors()
        .find(|a| a.file_name() == Some("spec".as_ref()))?;
    let rel = abs
        .strip_prefix(spec_dir)
        .ok()?
        .to_string_lossy()
        .into_owned();
    let name = rel.strip_suffix(".yaml").unwrap_or(&rel).replace('/', "__");
    Some((spec_dir.parent()?.join("golden"), name))
}

fn load(doc: &Yaml, path: &Path) -> Result<Case, String> {
    let text = yaml_serde::to_string(doc).map_err(|e| e.to_string())?;
    let mut case = parse_case(&text)?;
    case.path = path.to_path_buf();
    Ok(case)
}

fn steps_mut(doc: &mut Yaml) -> Result<&mut Vec<Yaml>, String> {
    match doc.get_mut("steps") {
        Some(Yaml::Sequence(s)) => Ok(s),
        _ => Err("the script has no `steps` list".into()),
    }
}

/// The responses to the requests the case sent, in the order it sent them.
fn responses_in_order(transcript: &Value) -> Vec<Value> {
    let entries = transcript.as_array().cloned().unwrap_or_default();
    let sent: Vec<&Value> = entries
        .iter()
        .filter_map(|e| e.get("->"))
        .filter(|m| m.get("method").is_some() && m.get("id").is_some())
        .collect();
    sent.iter()
        .filter_map(|req| {
            entries
                .iter()
                .filter_map(|e| e.get("<-"))
                .find(|m| m.get("method").is_none() && m.get("id") == req.get("id"))
        })
        .cloned()
        .collect()
}

/// The expectation a response gives: `(expect, text)`. A tool result gives `is_error`
/// and its text; a JSON-RPC error its code; any other result nothing (the golden has it).
fn derive(response: &Value, tool_call: bool) -> (Option<Yaml>, Option<Yaml>) {
    let mut expect = Mapping::new();
    if let Some(code) = response.pointer("/error/code").and_then(Value::as_i64) {
        expect.insert("jsonrpc_error".into(), Yaml::Number(code.into()));
        return (Some(Yaml::Mapping(expect)), None);
    }
    let Some(result) = response.get("result").filter(|_| tool_call) else {
        return (None, None);
    };
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    expect.insert("is_error".into(), Yaml::Bool(is_error));
    let text: String = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let text = text
        .replace("<workdir>", "{workdir}")
        .replace("__BORIS_CWD_<nonce>__", "");
    (Some(Yaml::Mapping(expect)), Some(Yaml::String(text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn responses_pair_with_requests_in_send_order() {
        let t = json!([
            {"->": {"id": 1, "method": "tools/call"}},
            {"->": {"id": 2, "method": "tools/list"}},
            {"<-": {"method": "notifications/progress"}},
            {"<-": {"id": 2, "result": {"tools": []}}},
            {"<-": {"id": 1, "result": {"content": []}}},
            {"->": {"id": 9, "result": {}}},
        ]);
        let r = responses_in_order(&t);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0]["id"], 1);
        assert_eq!(r[1]["id"], 2);
    }

    #[test]
    fn expectations_from_answers() {
        let (e, t) = derive(
            &json!({"result": {"content": [{"type": "text", "text": "in <workdir>/a"}]}}),
            true,
        );
        assert_eq!(yaml_serde::to_string(&e).unwrap().trim(), "is_error: false");
        assert_eq!(t, Some(Yaml::String("in {workdir}/a".into())));
        let (e, t) = derive(&json!({"error": {"code": -32602, "message": "x"}}), true);
        assert_eq!(
            yaml_serde::to_string(&e).unwrap().trim(),
            "jsonrpc_error: -32602"
        );
        assert!(t.is_none());
        assert_eq!(
            derive(&json!({"result": {"tools": []}}), false),
            (None, None)
        );
    }

    #[test]
    fn goldens_go_beside_the_spec_directory() {
        let (dir, name) = golden_location(Path::new("/r/spec/view/new-case.yaml")).unwrap();
        assert_eq!(dir, PathBuf::from("/r/golden"));
        assert_eq!(name, "view__new-case");
        assert!(golden_location(Path::new("/tmp/case.yaml")).is_none());
    }
}
