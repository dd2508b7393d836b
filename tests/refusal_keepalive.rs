//! A request refused before its body is read (401 for a missing token, in `--auth token`
//! and `--auth oauth`) must not leave the client a kept-alive connection the server then
//! closes: hyper drops a connection whose request body the service never read, and a
//! client that reuses it for its next request — the MCP SDK's OAuth flow fetches the
//! resource metadata right after the 401, on the same connection — gets "server
//! disconnected" (seen in tests/auth/signin_test.py about one run in three). The refusal
//! must say `Connection: close`, or the connection must really stay usable.
//!
//! Deterministic: the body is sent only well after the refusal has arrived, the losing
//! side of the race a real client runs.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::common;

/// The server (stopped when dropped) and its address.
struct Server(#[allow(dead_code)] common::http::HttpServer, SocketAddr);

fn start(auth: &[&str]) -> Server {
    let server = common::http::HttpServer::start(auth);
    let addr = server
        .addr
        .parse()
        .expect("boris logs the address it bound");
    Server(server, addr)
}

/// Reads one response head (up to the blank line) and its `content-length` body.
fn read_response(stream: &mut TcpStream) -> Option<String> {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => got.push(byte[0]),
            Ok(_) => return None,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                return None;
            }
            Err(_) => return None,
        }
    }
    let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    Some(head)
}

/// A POST to /mcp without a token whose body follows only after the answer; then, unless
/// the answer said `Connection: close`, a second request on the same connection.
fn refused_then_reused(server: &Server) {
    refused_then_reused_with(server, "", "http/1.1 401");
}

/// The same with `extra` header lines, the refusal's status line starting with `status`.
fn refused_then_reused_with(server: &Server, extra: &str, status: &str) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let mut s = TcpStream::connect(server.1).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\n{extra}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        server.1,
        body.len()
    );
    s.write_all(head.as_bytes()).expect("send the head");
    let first = read_response(&mut s).expect("an answer to the head");
    assert!(first.starts_with(status), "{first}");
    if first.contains("\r\nconnection: close\r\n") {
        return; // the client knows to open a new connection
    }
    // Said nothing: then the connection must serve the next request. The body comes late
    // (after the server is done with the refused request), as it does from a client whose
    // body write lost the race.
    std::thread::sleep(Duration::from_millis(300));
    let _ = s.write_all(body.as_bytes());
    std::thread::sleep(Duration::from_millis(100));
    let next = format!("GET /health HTTP/1.1\r\nHost: {}\r\n\r\n", server.1);
    let sent = s.write_all(next.as_bytes());
    let second = sent.ok().and_then(|()| read_response(&mut s));
    assert!(
        second
            .as_deref()
            .is_some_and(|h| h.starts_with("http/1.1 200")),
        "the 401 kept the connection alive, yet the next request on it got {second:?}: {first}"
    );
}

#[test]
fn a_refusal_in_token_mode_closes_or_keeps_a_usable_connection() {
    let server = start(&["--auth", "token", "--token", "s3cret-token-for-the-test"]);
    refused_then_reused(&server);
}

#[test]
fn a_refusal_in_oauth_mode_closes_or_keeps_a_usable_connection() {
    let public = "http://127.0.0.1:9/mcp";
    let server = start(&[
        "--auth",
        "oauth",
        "--oauth-issuer",
        "http://127.0.0.1:1",
        "--public-url",
        public,
    ]);
    refused_then_reused(&server);
}

/// The header screen's refusals (a foreign `Origin`: 403) come before the body as well.
#[test]
fn a_foreign_origin_refusal_closes_or_keeps_a_usable_connection() {
    let server = start(&["--auth", "token", "--token", "s3cret-token-for-the-test"]);
    refused_then_reused_with(&server, "Origin: https://evil.example\r\n", "http/1.1 403");
}

/// A refused request without a body leaves nothing unread: its connection stays open and
/// serves the next request, with no `Connection: close` on the refusal.
#[test]
fn a_refused_get_keeps_its_connection() {
    let server = start(&["--auth", "token", "--token", "s3cret-token-for-the-test"]);
    let mut s = TcpStream::connect(server.1).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", server.1);
    s.write_all(get("/metrics").as_bytes()).expect("send");
    let first = read_response(&mut s).expect("an answer");
    assert!(
        first.starts_with("http/1.1 401") && !first.contains("connection: close"),
        "{first}"
    );
    std::thread::sleep(Duration::from_millis(300));
    s.write_all(get("/health").as_bytes()).expect("send again");
    let second = read_response(&mut s);
    assert!(
        second
            .as_deref()
            .is_some_and(|h| h.starts_with("http/1.1 200")),
        "{second:?}"
    );
}
