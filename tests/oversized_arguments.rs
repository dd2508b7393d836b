//! What an outside fuzzer (mcp-wallfacer, all packs, three profiles) found (issue 28 §7),
//! as arguments a YAML case cannot carry: a glob of 500 KB made globset panic (answered as
//! an internal error quoting 1 MB of regex), errors quoted a 10 MB argument whole, and the
//! terminal's size schema said 0–65535 where the tool takes 2–500 rows and 10–1000
//! columns. Each runs against a real `boris --transport stdio`.

use crate::common::Server;
use serde_json::{Value, json};

/// More than any error needs: the message, the argument's first few hundred bytes.
const MAX_ERROR_BYTES: usize = 2048;

fn text(reply: &Value) -> String {
    reply["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| reply.to_string())
}

fn call(server: &mut Server, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

/// Calls `tool` and checks that the answer is the error `code`, short, and no panic.
fn assert_short_error(server: &mut Server, tool: &str, args: Value, code: &str) {
    let reply = call(server, tool, args);
    let body = reply.to_string();
    let shown = &body[..body.len().min(300)];
    assert!(
        body.len() <= MAX_ERROR_BYTES,
        "{tool}: the answer is {} bytes: {shown}…",
        body.len()
    );
    assert!(
        text(&reply).starts_with(&format!("[{code}]")),
        "{tool}: {shown}"
    );
}

fn start(profile: &[&str]) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "hello\n").expect("write");
    let mut args = vec!["--sandbox", "off"];
    args.extend_from_slice(profile);
    let server = Server::start(dir.path(), &args, "oversized-arguments");
    (dir, server)
}

#[test]
fn huge_globs_are_refused_before_compiling_in_every_profile() {
    // Each profile's tools that take a glob: (profile flags, tool, arguments, code).
    type Call = (
        &'static [&'static str],
        &'static str,
        fn(&str) -> Value,
        &'static str,
    );
    let calls: [Call; 6] = [
        (
            &[],
            "glob",
            |g| json!({"pattern": g}),
            "GLOB_INVALID_PATTERN",
        ),
        (
            &[],
            "grep",
            |g| json!({"pattern": "x", "include": g}),
            "INVALID_INPUT",
        ),
        (
            GEMINI,
            "glob",
            |g| json!({"pattern": g}),
            "GLOB_INVALID_PATTERN",
        ),
        (
            GEMINI,
            "grep_search",
            |g| json!({"pattern": "x", "include_pattern": g}),
            "GLOB_INVALID_PATTERN",
        ),
        (
            GEMINI,
            "list_directory",
            |g| json!({"dir_path": ".", "ignore": [g]}),
            "GLOB_INVALID_PATTERN",
        ),
        (
            CODEX,
            "grep_files",
            |g| json!({"pattern": "x", "include": g}),
            "GLOB_INVALID_PATTERN",
        ),
    ];
    // 500 KB of `a` and of `*`: both grew globset's regex past its limit (a panic).
    for glob in ["a".repeat(500_000), "*".repeat(100_000)] {
        for profile in [&[][..], GEMINI, CODEX] {
            let (_dir, mut server) = start(profile);
            for (_, tool, args, code) in calls.iter().filter(|c| c.0 == profile) {
                assert_short_error(&mut server, tool, args(&glob), code);
            }
        }
    }
}

const GEMINI: &[&str] = &["--tool-profile", "gemini-cli"];
const CODEX: &[&str] = &["--tool-profile", "codex"];

#[test]
fn errors_quote_a_few_hundred_bytes_of_a_huge_argument() {
    // 1 MB proves the bound as well as the fuzzer's 10 MB, at a tenth of the time.
    let big = "q".repeat(1_000_000);
    let (_dir, mut server) = start(&[]);
    // The regex crate draws the pattern and a caret line under it: twice 10 MB before.
    assert_short_error(
        &mut server,
        "grep",
        json!({"pattern": format!("({big}")}),
        "GREP_INVALID_PATTERN",
    );
    assert_short_error(
        &mut server,
        "grep",
        json!({"pattern": "x", "type": big}),
        "INVALID_INPUT",
    );
    assert_short_error(
        &mut server,
        "grep",
        json!({"pattern": "x", "output_mode": big}),
        "GREP_INVALID_OUTPUT_MODE",
    );
    assert_short_error(
        &mut server,
        "glob",
        json!({"pattern": "*", "type": big}),
        "GLOB_INVALID_TYPE",
    );
    assert_short_error(
        &mut server,
        "task_output",
        json!({"task_id": big}),
        "BASH_TASK_NOT_FOUND",
    );
    assert_short_error(
        &mut server,
        "terminal_write",
        json!({"session_id": big, "text": "x"}),
        "TERMINAL_NOT_FOUND",
    );
    // serde quotes a value of the wrong type whole.
    assert_short_error(
        &mut server,
        "bash",
        json!({"command": "true", "timeout": big}),
        "INVALID_INPUT",
    );
    assert_short_error(
        &mut server,
        "view",
        json!({"path": "a.txt", "view_range": big}),
        "INVALID_INPUT",
    );
    let reply = call(&mut server, &format!("no_such_tool_{big}"), json!({}));
    let body = reply.to_string();
    assert!(
        body.len() <= MAX_ERROR_BYTES,
        "unknown tool: {} bytes",
        body.len()
    );
    assert!(
        body.contains("unknown tool \\\"no_such_tool_qqq"),
        "{}",
        &body[..300.min(body.len())]
    );
    // The server still answers.
    let listed = server.request("tools/list", json!({}));
    assert!(listed["result"]["tools"].is_array());
}

/// Every integer bound a schema states is the one the tool enforces: just outside it is
/// refused, at it accepted. And no schema states a bound that is only its Rust type's
/// range (0–65535 for a `u16`), which is how the terminal's size schema went wrong.
#[test]
fn schemas_state_the_bounds_the_tools_enforce() {
    let (_dir, mut server) = start(&[]);
    let listed = server.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let schema = |tool: &str, param: &str| -> (u64, u64) {
        let t = tools.iter().find(|t| t["name"] == tool).expect(tool);
        let p = &t["inputSchema"]["properties"][param];
        (
            p["minimum"]
                .as_u64()
                .unwrap_or_else(|| panic!("{tool}.{param}: no minimum")),
            p["maximum"]
                .as_u64()
                .unwrap_or_else(|| panic!("{tool}.{param}: no maximum")),
        )
    };
    for tool in &tools {
        for (param, p) in tool["inputSchema"]["properties"]
            .as_object()
            .into_iter()
            .flatten()
        {
            for type_max in [u64::from(u8::MAX), u64::from(u16::MAX), u64::from(u32::MAX)] {
                assert_ne!(
                    p["maximum"].as_u64(),
                    Some(type_max),
                    "{}.{param} states its type's range, not the tool's",
                    tool["name"]
                );
            }
        }
    }
    for (param, other) in [("rows", "cols"), ("cols", "rows")] {
        let (min, max) = schema("terminal_start", param);
        let (other_min, _) = schema("terminal_start", other);
        for (value, accepted) in [(min - 1, false), (min, true), (max, true), (max + 1, false)] {
            let reply = call(
                &mut server,
                "terminal_start",
                json!({"command": "true", param: value, other: other_min, "yield_time_ms": 2000}),
            );
            let said = text(&reply);
            assert_eq!(
                !said.starts_with("[INVALID_INPUT]"),
                accepted,
                "terminal_start {param}={value}: {said}"
            );
        }
        let (rmin, rmax) = schema("terminal_resize", param);
        assert_eq!((rmin, rmax), (min, max), "terminal_resize.{param}");
    }
}
