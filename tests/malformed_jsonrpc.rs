//! Hostile JSON-RPC input that a YAML case cannot carry (DESIGN §3: a bad line never
//! stops the server): lines of invalid UTF-8, and multi-megabyte lines — a 5 MB string
//! argument, 5 MB of garbage, 5 MB of invalid UTF-8 — sent again and again to a real
//! `boris --transport stdio`. The server must keep answering `ping`, and its resident
//! memory must stay bounded (no line is kept after it is handled).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_boris");
const BIG: usize = 5 * 1024 * 1024;

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(dir: &std::path::Path) -> Server {
        let mut child = Command::new(BIN)
            .args(["--transport", "stdio"])
            .current_dir(dir)
            .env_remove("BORIS_ALLOW_DIRS")
            .env_remove("BORIS_MAX_FILE_SIZE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn boris");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            lines: rx,
            next_id: 1,
        };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "malformed-jsonrpc", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    /// One line, sent verbatim (a newline is added).
    fn raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("write to boris");
        self.stdin.write_all(b"\n").expect("write to boris");
        self.stdin.flush().expect("flush");
    }

    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.raw(&serde_json::to_vec(&msg).expect("serialize"));
        id
    }

    fn wait_for(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| panic!("no answer to request {id}"));
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to request {id} (server gone?)"));
            let msg: Value = serde_json::from_str(&line).expect("stdout is JSON only");
            if msg.get("id").and_then(Value::as_u64) == Some(id) {
                return msg;
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait_for(id)
    }

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
fn invalid_utf8_lines_are_dropped_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "hello\n").expect("fixture");
    let mut s = Server::start(dir.path());
    let lines: [&[u8]; 5] = [
        b"\xff\xfe\xfd",
        b"\xc3\x28",
        br#"{"jsonrpc":"2.0","id":900,"method":"ping""#,
        b"{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"ping\",\"params\":{\"x\":\"\xed\xa0\x80\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":902,\"method\":\"tools/call\",\"params\":{\"name\":\"create_file\",\"arguments\":{\"path\":\"b\xff.txt\",\"content\":\"x\"}}}",
    ];
    for line in lines {
        s.raw(line);
        s.assert_alive(&format!("{:?}", String::from_utf8_lossy(line)));
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
    let mut s = Server::start(dir.path());
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
