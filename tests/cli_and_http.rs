//! The binary as a process: `--version`, and the HTTP transport over a real socket
//! (health, bearer token, initialize). The MCP behaviour itself is covered by the spec
//! suite (tests/spec.rs); these check what a YAML case over stdio cannot.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_boris");

#[test]
fn version_flag_prints_the_crate_version() {
    let out = Command::new(BIN)
        .arg("--version")
        .output()
        .expect("run boris");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("boris {}", boris::config::VERSION)
    );
    // The tests' build honours BORIS_SANDBOX_PROBE, and says so (issue 25 S2).
    assert!(boris::config::VERSION.ends_with(" (probe-simulation)"));
}

/// A server on a free port, killed when dropped.
use crate::common::http::HttpServer;

fn start_http(extra: &[&str]) -> HttpServer {
    HttpServer::start(extra)
}

fn http(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("write");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

fn get_health(addr: &str) -> String {
    http(
        addr,
        &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

fn post_initialize(addr: &str, auth: Option<&str>) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    http(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

#[test]
fn http_health_and_initialize() {
    let server = start_http(&[]);
    let health = get_health(&server.addr);
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains(r#"{"status":"ok"}"#), "{health}");

    let init = post_initialize(&server.addr, None);
    assert!(init.starts_with("HTTP/1.1 200"), "{init}");
    assert!(
        init.to_ascii_lowercase().contains("mcp-session-id:"),
        "{init}"
    );
    assert!(init.contains(r#""serverInfo":{"name":"boris""#), "{init}");
}

#[test]
fn http_bearer_token_is_required_and_checked() {
    let server = start_http(&["--generate-token"]);
    let token = server
        .startup
        .iter()
        .find_map(|l| l.strip_prefix("bearer token: "))
        .expect("the generated token is printed on stderr")
        .to_string();
    assert_eq!(token.len(), 64);
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));

    let missing = post_initialize(&server.addr, None);
    assert!(missing.starts_with("HTTP/1.1 401"), "{missing}");
    assert!(
        missing
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{missing}"
    );
    let wrong = post_initialize(&server.addr, Some("Bearer 0000"));
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let right = post_initialize(&server.addr, Some(&format!("bearer {token}")));
    assert!(right.starts_with("HTTP/1.1 200"), "{right}");

    // Health stays open without the token.
    let health = get_health(&server.addr);
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
}

/// `boris` with every inherited BORIS_* variable removed, so a developer's settings never
/// change what a test sees.
fn boris() -> Command {
    let mut cmd = Command::new(BIN);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("BORIS_") {
            cmd.env_remove(name);
        }
    }
    cmd.stdin(Stdio::null());
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn started_in_root_without_a_directory_refuses_with_one_line() {
    // issue 11: a desktop client that starts servers in / must not hand out the disk.
    let out = boris()
        .current_dir("/")
        .args(["--transport", "stdio"])
        .output()
        .expect("run boris");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--workdir") && stderr.contains("--allow-dir /"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn started_in_root_with_an_explicit_directory_starts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let project = tmp.path().to_str().expect("utf-8 temp path");
    type Case<'a> = (&'a [&'a str], Option<(&'a str, &'a str)>);
    let cases: [Case; 5] = [
        (&["--allow-dir", "/"], None),
        (&["--workdir", "/"], None),
        (&["--workdir", project], None),
        (&[], Some(("BORIS_WORKDIR", "/"))),
        (&[], Some(("BORIS_ALLOW_DIRS", "/"))),
    ];
    for (args, env) in cases {
        let mut cmd = boris();
        cmd.current_dir("/")
            .args(["--transport", "stdio"])
            .args(args)
            .arg("--check-config");
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run boris");
        assert!(out.status.success(), "{args:?} {env:?}: {out:?}");
    }
}

#[test]
fn check_config_prints_one_summary_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = boris()
        .args(["--transport", "stdio", "--workdir"])
        .arg(tmp.path())
        .args(["--deny-dir", ".env", "--no-bash", "--check-config"])
        // Issue 20: which language server each language would run, or that it has none.
        .args(["--lsp", "python=off", "--lsp", "zig:zig=no-such-zls"])
        .output()
        .expect("run boris");
    assert!(out.status.success(), "{out:?}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("; language servers: python (off), ")
            && stdout.trim_end().ends_with(", zig (not installed)"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with("boris: configuration ok: transport stdio;"),
        "{stdout}"
    );
    assert!(stdout.contains("denied .env;"), "{stdout}");
    assert!(!stdout.contains("bash,"), "{stdout}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// The HTTP line says how a client is let in: the OAuth issuers and resource in oauth
/// mode (it said "no token" there), a token, or none.
#[test]
fn check_config_says_how_http_clients_sign_in() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| {
        let out = boris()
            .args(["--transport", "http", "--port", "0", "--workdir"])
            .arg(tmp.path())
            .args(args)
            .arg("--check-config")
            .output()
            .expect("run boris");
        assert!(out.status.success(), "{args:?}: {out:?}");
        text(&out.stdout)
    };
    let oauth = run(&[
        "--auth",
        "oauth",
        "--oauth-issuer",
        "https://idp.example/realms/x",
        "--public-url",
        "https://boris.example/mcp",
    ]);
    assert!(
        oauth.contains(
            "(OAuth access tokens for https://boris.example/mcp from https://idp.example/realms/x)"
        ),
        "{oauth}"
    );
    assert!(!oauth.contains("no token"), "{oauth}");
    let token = run(&["--token", "a-token-long-enough-0123456789"]);
    assert!(token.contains("(token required)"), "{token}");
    assert!(!token.contains("a-token-long-enough"), "{token}");
    let none = run(&["--auth", "none"]);
    assert!(none.contains("(no token)"), "{none}");
}

#[test]
fn completions_and_man_page_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let out = boris()
            .args(["completions", shell])
            .output()
            .expect("run boris");
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = text(&out.stdout);
        assert!(script.contains("workdir"), "{shell}: {script}");
        assert!(script.contains("max-file-size"), "{shell}: {script}");
    }
    let out = boris().arg("man").output().expect("run boris");
    assert!(out.status.success(), "{out:?}");
    let page = text(&out.stdout);
    assert!(page.contains(".TH boris 1"), "{page}");
    assert!(page.contains("allow\\-dir"), "{page}");
    // A subcommand does not mix with server flags: that would be a silent no-op.
    let out = boris()
        .args(["--transport", "stdio", "man"])
        .output()
        .expect("run boris");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn json_logs_carry_arrays_as_arrays() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut child = boris()
        .args(["--transport", "stdio", "--log-format", "json", "--workdir"])
        .arg(tmp.path())
        .args(["--deny-dir", ".env", "--deny-dir", "*.pem"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn boris");
    let mut first = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut first)
        .expect("read the start line");
    drop(child.stdin.take());
    let _ = child.wait();
    let line: serde_json::Value = serde_json::from_str(&first).expect("a JSON log line");
    let fields = &line["fields"];
    assert_eq!(fields["message"], "boris starting", "{first}");
    assert_eq!(
        fields["denied"],
        serde_json::json!([".env", "*.pem"]),
        "{first}"
    );
    let tools = fields["tools"].as_array().expect("tools is an array");
    assert!(tools.iter().any(|t| t == "view"), "{first}");
    assert!(fields["allowed"].is_array(), "{first}");
    assert_eq!(line["level"], "INFO", "{first}");
}

#[test]
fn http_start_prints_the_url_before_the_bound_line() {
    let server = start_http(&["--generate-token"]);
    let url = format!("boris: MCP at http://{}/mcp", server.addr);
    assert!(
        server.startup.iter().any(|l| l.starts_with(&url)),
        "{:#?}",
        server.startup
    );
}
