//! The drain on SIGTERM and the per-call log line (issue 31 §3), over a real socket:
//! what the calls in flight answer, which a YAML case cannot read (its backgrounded
//! steps' answers are never read), and the JSON log lines of those calls.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_boris");

struct Server {
    child: Child,
    addr: String,
    lines: Receiver<String>,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(extra: &[&str]) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(BIN)
        .args(["--transport", "http", "--port", "0", "--log-format", "json"])
        .arg("--workdir")
        .arg(dir.path())
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn boris");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if let Some(addr) = json["fields"]["bound"].as_str() {
            return Server {
                addr: addr.to_string(),
                child,
                lines,
                _dir: dir,
            };
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("boris did not log its bound address");
}

/// POSTs one JSON-RPC message and reads the whole response (head and body).
fn post(addr: &str, session: Option<&str>, body: &serde_json::Value) -> String {
    let body = body.to_string();
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

fn open_session(addr: &str) -> String {
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(addr, None, &init);
    let session = response
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
        })
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("no session id in {response}"));
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(addr, Some(&session), &initialized);
    session
}

fn bash(id: u64, command: &str) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": command}}})
}

/// Waits until a process whose command line is exactly `cmdline` runs.
fn wait_for_process(cmdline: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let found = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim() == cmdline)
            });
        if found {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{cmdline} never started");
}

#[test]
fn sigterm_lets_a_short_call_finish_and_ends_a_long_one() {
    let mut server = start(&["--shutdown-grace", "3"]);
    let addr = server.addr.clone();
    let session = open_session(&addr);
    let short = {
        let (addr, session) = (addr.clone(), session.clone());
        std::thread::spawn(move || {
            post(&addr, Some(&session), &bash(2, "sleep 1.25; echo finished"))
        })
    };
    let long = {
        let (addr, session) = (addr.clone(), session.clone());
        std::thread::spawn(move || post(&addr, Some(&session), &bash(3, "sleep 41.5")))
    };
    wait_for_process("sleep 1.25");
    wait_for_process("sleep 41.5");
    let signalled = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");

    let short = short.join().expect("short call");
    assert!(
        short.contains("finished"),
        "the short call's real answer: {short}"
    );
    let long = long.join().expect("long call");
    assert!(
        long.contains("the server is shutting down") && long.contains("\"id\":3"),
        "the long call ends with the shutting-down error: {long}"
    );
    let status = server.child.wait().expect("exit");
    assert!(status.success(), "{status}");
    let took = signalled.elapsed();
    assert!(
        took >= Duration::from_secs(3),
        "the long call had the grace: {took:?}"
    );

    // One JSON line per call: session, tool, duration and outcome as JSON values.
    let calls: Vec<serde_json::Value> = server
        .lines
        .try_iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(&l).ok())
        .filter(|l| l["fields"]["message"] == "tool call")
        .map(|l| l["fields"].clone())
        .collect();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    for call in &calls {
        assert_eq!(call["session"], session.as_str(), "{call}");
        assert_eq!(call["tool"], "bash", "{call}");
        assert!(call["subject"].is_null(), "{call}");
        assert!(call["duration_ms"].is_u64(), "{call}");
    }
    let outcome = |o: &str| calls.iter().find(|c| c["outcome"] == o).cloned();
    let ok = outcome("ok").expect("the short call: ok");
    assert!(ok["duration_ms"].as_u64() >= Some(1250), "{ok}");
    assert!(ok["error_code"].is_null(), "{ok}");
    let ended = outcome("shutting_down").expect("the long call: shutting_down");
    assert!(ended["duration_ms"].as_u64() >= Some(3000), "{ended}");
}

#[test]
fn a_tool_error_is_logged_with_its_code() {
    let server = start(&[]);
    let session = open_session(&server.addr);
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "view", "arguments": {"path": "missing.txt"}}});
    let response = post(&server.addr, Some(&session), &call);
    assert!(response.contains("PATH_NOT_FOUND"), "{response}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let Ok(line) = server.lines.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        let Ok(line) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let fields = &line["fields"];
        if fields["message"] == "tool call" {
            assert_eq!(fields["tool"], "view", "{line}");
            assert_eq!(fields["outcome"], "error", "{line}");
            assert_eq!(fields["error_code"], "PATH_NOT_FOUND", "{line}");
            assert_eq!(fields["session"], session.as_str(), "{line}");
            return;
        }
    }
    panic!("no tool call line");
}
