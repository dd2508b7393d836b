//! `boris-spec bench` end to end against the built `boris`: pipelined calls are all
//! answered and matched, setup calls run first, errors are counted by kind.

use std::time::Duration;

use boris::spec::bench::{BenchOptions, run};
use boris::spec::shell_quote;
use serde_json::json;

fn opts(dir: &std::path::Path, tool: &str, args: serde_json::Value) -> BenchOptions {
    BenchOptions {
        server_cmd: format!(
            "{} --transport stdio",
            shell_quote(env!("CARGO_BIN_EXE_boris"))
        ),
        cwd: Some(dir.to_path_buf()),
        tool: tool.into(),
        args,
        init_calls: Vec::new(),
        calls: 40,
        concurrency: 4,
        warmup: 5,
        timeout: Duration::from_secs(20),
    }
}

#[test]
fn bench_view_pipelined() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "hello\n".repeat(700)).unwrap();
    let r = run(&opts(dir.path(), "view", json!({"path": "f.txt"}))).unwrap();
    assert_eq!((r.calls, r.concurrency, r.warmup), (40, 4, 5));
    assert_eq!(
        (r.jsonrpc_errors, r.tool_errors),
        (0, 0),
        "{:?}",
        r.first_error
    );
    assert!(r.latency.p50 <= r.latency.p99 && r.latency.p99 <= r.latency.max);
    assert!(r.calls_per_sec > 0.0);
    if cfg!(target_os = "linux") {
        assert!(r.peak_rss_kb.is_some_and(|kb| kb > 0));
    }
    let j = r.to_json();
    assert_eq!(j["errors"], json!({"jsonrpc": 0, "is_error": 0}));
}

#[test]
fn bench_edit_after_setup_and_error_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nEND\n").unwrap();
    let mut o = opts(
        dir.path(),
        "str_replace",
        json!({"path": "f.txt", "old_str": "END", "new_str": "=END"}),
    );
    o.init_calls = vec![("view".into(), json!({"path": "f.txt"}))];
    let r = run(&o).unwrap();
    assert_eq!(
        (r.jsonrpc_errors, r.tool_errors),
        (0, 0),
        "{:?}",
        r.first_error
    );
    let text = std::fs::read_to_string(dir.path().join("f.txt")).unwrap();
    assert_eq!(text, format!("a\n{}END\n", "=".repeat(45)));

    // A missing file: every call is an isError result.
    let r = run(&opts(dir.path(), "view", json!({"path": "missing.txt"}))).unwrap();
    assert_eq!((r.jsonrpc_errors, r.tool_errors), (0, 40));
    assert!(r.first_error.unwrap().starts_with("isError:"));

    // A failing setup call stops the run.
    let mut o = opts(dir.path(), "view", json!({"path": "f.txt"}));
    o.init_calls = vec![("view".into(), json!({"path": "missing.txt"}))];
    let e = run(&o).unwrap_err();
    assert!(e.starts_with("setup call view failed"), "{e}");
}

/// `--transport http`: both eras, concurrent clients, and an attack whose connections
/// the server refuses while every call is answered.
#[test]
fn bench_over_http_both_eras_and_under_attack() {
    use boris::spec::bench_http::{Attack, Era, HttpBenchOptions, run_spawned};
    let server = format!(
        "{} --transport http --port 0 --sandbox off --max-connections-per-ip 4",
        shell_quote(env!("CARGO_BIN_EXE_boris"))
    );
    for (era, attack) in [
        (Era::Session, Attack::None),
        (Era::Stateless, Attack::None),
        (Era::Session, Attack::H2Preface),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = HttpBenchOptions {
            addr: String::new(),
            pids: Vec::new(),
            tool: "view".into(),
            args: json!({"path": "four.txt"}),
            init_calls: Vec::new(),
            era,
            calls: 12,
            clients: 3,
            warmup: 2,
            think: Duration::from_millis(5),
            timeout: Duration::from_secs(30),
            attack,
            attack_count: 10,
            attack_from: std::net::Ipv4Addr::new(127, 0, 0, 6),
            attack_body_bytes: 0,
            after_wait: Duration::ZERO,
            bearer: None,
        };
        let r = run_spawned(&server, Some(dir.path()), &mut opts).unwrap();
        assert_eq!(
            (r.ok_calls, r.failed_calls),
            (12, 0),
            "{era:?} {attack:?}: {:?}",
            r.first_failure
        );
        assert!(r.rss_before_kb.is_some() && r.rss_after_kb.is_some());
        if attack != Attack::None {
            assert!(r.attack_refused > 0, "no attack connection was refused");
        }
    }
}

/// `--bearer-env` (the bearer token of every client request): against `boris --token`,
/// the calls are answered with it and the run fails at the first session without it.
#[test]
fn bench_over_http_with_a_bearer_token() {
    use boris::spec::bench_http::{Attack, Era, HttpBenchOptions, run_spawned};
    let server = format!(
        "{} --transport http --port 0 --sandbox off --token bench-token-0123456789",
        shell_quote(env!("CARGO_BIN_EXE_boris"))
    );
    for bearer in [Some("bench-token-0123456789"), None] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = HttpBenchOptions {
            addr: String::new(),
            pids: Vec::new(),
            tool: "view".into(),
            args: json!({"path": "four.txt"}),
            init_calls: Vec::new(),
            era: Era::Session,
            calls: 6,
            clients: 2,
            warmup: 1,
            think: Duration::ZERO,
            timeout: Duration::from_secs(30),
            attack: Attack::None,
            attack_count: 0,
            attack_from: std::net::Ipv4Addr::new(127, 0, 0, 7),
            attack_body_bytes: 0,
            after_wait: Duration::ZERO,
            bearer: bearer.map(str::to_string),
        };
        let result = run_spawned(&server, Some(dir.path()), &mut opts);
        match bearer {
            Some(_) => {
                let r = result.unwrap();
                assert_eq!(
                    (r.ok_calls, r.failed_calls),
                    (6, 0),
                    "{:?}",
                    r.first_failure
                );
            }
            None => {
                let e = result.expect_err("without the token no session opens");
                assert!(e.contains("401"), "{e}");
            }
        }
    }
}
