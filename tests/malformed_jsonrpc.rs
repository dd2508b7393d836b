//! Hostile JSON-RPC input that a YAML case cannot carry (DESIGN §3: a bad line never
//! stops the server; issue 14: every request gets an answer): lines of invalid UTF-8,
//! multi-megabyte lines — a 5 MB string argument, 5 MB of garbage, 5 MB of invalid
//! UTF-8 — sent again and again, and requests over the size limit, to a real
//! `boris --transport stdio` (and, for the limit, `--transport http`). The server must
//! answer each, keep answering `ping`, and its resident memory must stay bounded (no
//! line is kept after it is handled).

use crate::common;

use crate::common::Server;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant};

const BIG: usize = 5 * 1024 * 1024;

trait Checks {
    fn assert_alive(&mut self, after: &str);
    fn rss_kib(&self) -> u64;
}

impl Checks for Server {
    fn assert_alive(&mut self, after: &str) {
        let pong = self.request("ping", json!({}));
        assert!(
            pong.get("result").is_some(),
            "ping after {after} failed: {pong}"
        );
        assert!(
            self.child.try_wait().expect("try_wait").is_none(),
            "server exited after {after}"
        );
    }

    /// Resident memory in KiB, from /proc.
    fn rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }
}

#[test]
fn invalid_utf8_lines_get_a_parse_error_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "hello\n").expect("fixture");
    let mut s = Server::start(dir.path(), &[], "malformed-jsonrpc");
    let lines: [&[u8]; 5] = [
        b"\xff\xfe\xfd",
        b"\xc3\x28",
        br#"{"jsonrpc":"2.0","id":900,"method":"ping""#,
        b"{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"ping\",\"params\":{\"x\":\"\xed\xa0\x80\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":902,\"method\":\"tools/call\",\"params\":{\"name\":\"create_file\",\"arguments\":{\"path\":\"b\xff.txt\",\"content\":\"x\"}}}",
    ];
    for line in lines {
        s.raw(line);
        let shown = format!("{:?}", String::from_utf8_lossy(line));
        let reply = s
            .wait_for_id(&Value::Null, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("no answer to {shown}"));
        assert_eq!(reply["error"]["code"], json!(-32700), "{shown}: {reply}");
        s.assert_alive(&shown);
    }
    // Nothing was written for the invalid create_file.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["a.txt"], "{names:?}");
    let view = s.request(
        "tools/call",
        json!({"name": "view", "arguments": {"path": "a.txt"}}),
    );
    assert!(
        view["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hello"))
    );
}

#[test]
fn five_megabyte_lines_keep_memory_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Server::start(dir.path(), &[], "malformed-jsonrpc");
    let big = "a".repeat(BIG);
    let garbage = vec![b'{'; BIG];
    let mut bad_utf8 = br#"{"jsonrpc":"2.0","method":"x","params":{"s":""#.to_vec();
    bad_utf8.extend(std::iter::repeat_n(0xffu8, BIG));
    bad_utf8.extend(br#""}}"#);

    let round = |s: &mut Server| {
        // A 5 MB path: an error result (the name is far too long), answered.
        let r = s.request(
            "tools/call",
            json!({"name": "view", "arguments": {"path": &big}}),
        );
        assert_eq!(r["result"]["isError"], json!(true), "5 MB path: {r:.200}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        eprintln!(
            "5 MB path answered with {} bytes: {:.120}",
            text.len(),
            text
        );
        // A 5 MB string in an unknown argument.
        let r = s.request(
            "tools/call",
            json!({"name": "glob", "arguments": {"pattern": "*.txt", "junk": &big}}),
        );
        assert!(r.get("result").is_some() || r.get("error").is_some());
        // A 5 MB unknown notification, 5 MB of garbage, 5 MB of invalid UTF-8.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/x", "params": {"s": &big}});
        s.raw(&serde_json::to_vec(&note).expect("serialize"));
        s.raw(&garbage);
        s.raw(&bad_utf8);
        s.assert_alive("5 MB lines");
    };
    round(&mut s);
    let first = s.rss_kib();
    for _ in 0..8 {
        round(&mut s);
    }
    let last = s.rss_kib();
    eprintln!("VmRSS after one round of 5 MB lines: {first} KiB, after nine: {last} KiB");
    // Each round pushes ~25 MB through the server; nine of them must not add up.
    assert!(
        last < first + 64 * 1024,
        "memory grows with input: {first} KiB -> {last} KiB"
    );
    assert!(last < 512 * 1024, "VmRSS {last} KiB");
}

/// A `create_file` request line whose `id` comes last, as the TypeScript SDK writes it
/// (it spreads the request, then adds the id): the server must still find it.
fn create_line_id_last(id: &str, path: &str, content_bytes: usize) -> Vec<u8> {
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"create_file","arguments":{{"path":"{path}","content":""#
    )
    .into_bytes();
    line.extend(std::iter::repeat_n(b'x', content_bytes));
    line.extend(format!(r#""}}}},"id":"{id}"}}"#).into_bytes());
    line
}

#[test]
fn a_17_mb_request_is_served_and_one_over_the_limit_is_answered_with_its_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Over rmcp's 16 MiB line limit, under Boris's (6 x --max-file-size + 1 MiB): served.
    // The content is over --max-file-size, so the answer is FILE_TOO_LARGE.
    let mut s = Server::start(dir.path(), &[], "malformed-jsonrpc");
    let content = "y".repeat(17 * 1024 * 1024);
    let r = s.request(
        "tools/call",
        json!({"name": "create_file", "arguments": {"path": "big.txt", "content": content}}),
    );
    let text = r["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.starts_with("[FILE_TOO_LARGE]"), "{r:.300}");
    s.assert_alive("a 17 MB request");
    s.stop();

    // Over the limit (1 MB files: 7 MiB messages), id last: -32600 for that id.
    let mut s = Server::start(dir.path(), &["--max-file-size", "1MB"], "malformed-jsonrpc");
    s.raw(&create_line_id_last("big-1", "over.txt", 9 * 1024 * 1024));
    let reply = s
        .wait_for_id(&json!("big-1"), Duration::from_secs(30))
        .expect("an answer to the oversized request");
    assert_eq!(reply["error"]["code"], json!(-32600), "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("over the 7340032-byte limit"), "{message}");
    assert!(!dir.path().join("over.txt").exists());
    s.assert_alive("an oversized request");
    // Twice the limit and no id at all: an answer with a null id.
    let mut junk = vec![b' '; 15 * 1024 * 1024];
    junk.push(b'x');
    s.raw(&junk);
    let reply = s
        .wait_for_id(&Value::Null, Duration::from_secs(30))
        .expect("an answer to the oversized line");
    assert_eq!(reply["error"]["code"], json!(-32600), "{reply}");
    s.assert_alive("an oversized line without an id");
}

#[test]
fn http_answers_an_oversized_request_with_its_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = std::process::Command::new(common::BIN)
        .args([
            "--transport",
            "http",
            "--port",
            "0",
            "--max-file-size",
            "1MB",
        ])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn boris");
    // Only the first lines of stderr are read, then the pipe is closed: the server
    // must go on serving (and logging into the void) all the same.
    let stderr = child.stderr.take().expect("stderr");
    let mut addr = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        if let Some(at) = line.find("bound=") {
            addr = line[at + 6..]
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            break;
        }
        assert!(Instant::now() < deadline, "no bound address");
    }
    let body = create_line_id_last("big-2", "over.txt", 9 * 1024 * 1024);
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write head");
    // The server may answer before it has read the whole body; a reset then is fine.
    let _ = stream.write_all(&body);
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let _ = child.kill();
    let _ = child.wait();
    assert!(response.starts_with("HTTP/1.1 413"), "{response:.300}");
    let json_body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    let reply: Value = serde_json::from_str(json_body).expect("a JSON-RPC body");
    assert_eq!(reply["id"], json!("big-2"), "{reply}");
    assert_eq!(reply["error"]["code"], json!(-32600), "{reply}");
    assert!(!dir.path().join("over.txt").exists());
}
