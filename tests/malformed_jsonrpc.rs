//! Hostile JSON-RPC input that a YAML case cannot carry (DESIGN §3: a bad line never
//! stops the server): lines of invalid UTF-8, and multi-megabyte lines — a 5 MB string
//! argument, 5 MB of garbage, 5 MB of invalid UTF-8 — sent again and again to a real
//! `boris --transport stdio`. The server must keep answering `ping`, and its resident
//! memory must stay bounded (no line is kept after it is handled).

mod common;

use common::Server;
use serde_json::json;

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
fn invalid_utf8_lines_are_dropped_and_the_server_keeps_serving() {
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
