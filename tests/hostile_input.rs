//! The generated hostile-input pack (issue 29 §5) against Boris, every tool profile: the
//! fixed seed and count CI runs. Each call must be answered, well-formed, change nothing
//! when it fails, and never change anything outside the workdir; a failure prints the
//! shrunk case to paste into `spec/`. And the harness's own regressions, against a small
//! server made for them: a parse error with a null id answers a call (JSON-RPC's answer
//! to a message its server could not read; coding-tools-mcp's, issue 29 §5), no answer
//! fails it; a log the server writes in its workdir from its start is its own (as
//! mako10k-mcp-shell-server's `logs/`), a failed call that changes a user's file fails.

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
/// error and a null id (`answer`), never (`silent`), or with a tool error after writing
/// its log (`log`: a log in its workdir from its start) or a user's file (`clobber`).
const FAKE_SERVER: &str = r#"
import json, sys
mode = sys.argv[1]
silent = mode != "answer"
def say(m):
    print(json.dumps(m), flush=True)
def log(text):
    with open("server.log", "a") as f:
        f.write(text + "\n")
if mode == "log":
    log("started")
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
    elif meth == "tools/call" and mode in ("log", "clobber"):
        if mode == "log":
            log("call refused")
        else:
            with open("a.txt", "w") as f:
                f.write("clobbered\n")
        say({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "no"}],
             "isError": True}})
"#;

fn against_fake_server(mode: &str, cases: usize) -> hostile::Report {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("server.py");
    std::fs::write(&script, FAKE_SERVER).expect("write the server");
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
    let report = against_fake_server("answer", 6);
    assert_eq!(report.calls, 6);
    let failed: Vec<_> = report.failures.iter().map(|f| &f.detail).collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn a_call_never_answered_fails() {
    let report = against_fake_server("silent", 1);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(report.failures[0].broken, hostile::Broken::Answers);
}

#[test]
fn the_servers_own_log_is_not_a_change_a_failed_call_made() {
    let report = against_fake_server("log", 3);
    let failed: Vec<_> = report.failures.iter().map(|f| &f.detail).collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn a_failed_call_that_changes_a_users_file_fails() {
    let report = against_fake_server("clobber", 1);
    assert_eq!(report.failures.len(), 1);
    assert_eq!(
        report.failures[0].broken,
        hostile::Broken::ErrorChangesNothing
    );
    assert!(report.failures[0].detail.contains("a.txt changed"));
}
