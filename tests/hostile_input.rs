//! The generated hostile-input pack (issue 29 §5) against Boris, every tool profile: the
//! fixed seed and count CI runs. Each call must be answered, well-formed, change nothing
//! when it fails, and never change anything outside the workdir; a failure prints the
//! shrunk case to paste into `spec/`. And the harness's own regressions, against a small
//! server made for them: a parse error with a null id answers a call (JSON-RPC's answer
//! to a message its server could not read; coding-tools-mcp's, issue 29 §5), no answer
//! fails it.

use std::time::Duration;

use boris::spec::hostile::{self, Options};

fn run(profile: &[&str]) {
    let server = format!(
        "'{}' --transport stdio {}",
        env!("CARGO_BIN_EXE_boris"),
        profile.join(" ")
    );
    let opts = Options {
        server,
        seed: hostile::DEFAULT_SEED,
        cases: hostile::DEFAULT_CASES,
        timeout: Duration::from_secs(60),
        only: vec![],
        skip: vec![],
    };
    let report = hostile::run(&opts).unwrap_or_else(|e| panic!("the run failed: {e}"));
    assert!(report.calls == opts.cases, "{} calls made", report.calls);
    assert!(
        report.tools.len() >= 5,
        "too few tools called: {:?}",
        report.tools
    );
    assert!(
        report.failures.is_empty(),
        "{}",
        hostile::render(&report, &opts)
    );
}

#[test]
fn default_profile() {
    run(&[]);
}

#[test]
fn claude_code_profile() {
    run(&["--tool-profile", "claude-code"]);
}

#[test]
fn codex_profile() {
    run(&["--tool-profile", "codex"]);
}

#[test]
fn gemini_cli_profile() {
    run(&["--tool-profile", "gemini-cli"]);
}

#[test]
fn anthropic_compat_and_pipe() {
    run(&["--anthropic-compat"]);
    run(&["--bash-profile", "pipe"]);
}

/// A stdio MCP server with one tool that answers every `tools/call` with JSON-RPC's parse
/// error and a null id (`answer`), or never (`silent`).
const NULL_ID_SERVER: &str = r#"
import json, sys
silent = sys.argv[1] == "silent"
def say(m):
    print(json.dumps(m), flush=True)
for line in sys.stdin:
    try:
        m = json.loads(line)
    except Exception:
        m = {"method": "tools/call"}
    meth, i = m.get("method"), m.get("id")
    if meth == "initialize":
        say({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"],
             "capabilities": {"tools": {}}, "serverInfo": {"name": "null-id", "version": "0"}}})
    elif meth == "tools/list":
        say({"jsonrpc": "2.0", "id": i, "result": {"tools": [{"name": "echo", "inputSchema":
             {"type": "object", "properties": {"text": {"type": "string"}}}}]}})
    elif meth == "tools/call" and not silent:
        say({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
"#;

fn against_null_id_server(mode: &str, cases: usize) -> hostile::Report {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("server.py");
    std::fs::write(&script, NULL_ID_SERVER).expect("write the server");
    let opts = Options {
        server: format!("python3 '{}' {mode}", script.display()),
        seed: hostile::DEFAULT_SEED,
        cases,
        timeout: Duration::from_secs(2),
        only: vec![],
        skip: vec![],
    };
    hostile::run(&opts).unwrap_or_else(|e| panic!("the run failed: {e}"))
}

#[test]
fn a_parse_error_with_a_null_id_answers_the_call() {
    let report = against_null_id_server("answer", 6);
    assert_eq!(report.calls, 6);
    let failed: Vec<_> = report.failures.iter().map(|f| &f.detail).collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn a_call_never_answered_fails() {
    let report = against_null_id_server("silent", 1);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.failures[0].broken, hostile::Broken::Answers);
}
