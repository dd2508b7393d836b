//! The stdio transport's descriptors (src/transport/stdio_fd.rs): pipes and sockets are
//! polled on the runtime's reactor, anything else falls back to tokio's stdio. What a
//! YAML case cannot express: a client that writes every request before reading any
//! answer, and stdin/stdout that are plain files.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_boris");

fn handshake() -> Vec<u8> {
    let mut out = Vec::new();
    for msg in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "stdio-pipes-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        out.extend(serde_json::to_vec(&msg).unwrap());
        out.push(b'\n');
    }
    out
}

fn boris(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["--transport", "stdio"]).current_dir(dir);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("BORIS_") {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// A client that pipelines: it writes 1,500 requests (6 MiB, far more than a pipe holds)
/// before reading a single answer, and the answers (64 KiB each) fill stdout long before
/// that.
/// A server that blocked on a full stdout would stop reading stdin, and both sides would
/// wait forever; Boris must keep reading while its writes wait.
#[test]
fn a_client_that_writes_everything_before_reading_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("{}\n", "x".repeat(63));
    std::fs::write(dir.path().join("big.txt"), line.repeat(1000)).unwrap();

    let mut child = boris(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // If the writes below ever block for good, this kills the server so the test fails
    // instead of hanging.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            return true;
        }
        false
    });

    let calls = 1500u64;
    let mut input = handshake();
    let pad = "p".repeat(4096);
    for id in 1..=calls {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "view", "arguments": {"path": "big.txt"},
                                    "_meta": {"pad": pad}}});
        input.extend(serde_json::to_vec(&msg).unwrap());
        input.push(b'\n');
    }
    assert!(
        input.len() > 4 << 20,
        "the requests must overflow a pipe many times"
    );
    let mut stdin = child.stdin.take().unwrap();
    let started = Instant::now();
    let wrote = stdin.write_all(&input).and_then(|()| stdin.flush());
    let _ = done_tx.send(());
    let killed = watchdog.join().unwrap();
    assert!(
        !killed && wrote.is_ok(),
        "writing the requests blocked for {:?}: the server stopped reading stdin",
        started.elapsed()
    );
    drop(stdin); // EOF: the server answers what it has, then exits

    let mut answered = 0u64;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let msg: Value = serde_json::from_str(&line.unwrap()).expect("stdout is JSON only");
        if let Some(id) = msg.get("id").and_then(Value::as_u64)
            && id >= 1
        {
            let text = msg["result"]["content"][0]["text"].as_str().unwrap_or("");
            assert!(
                text.contains("  1000\t"),
                "answer {id} is not the whole file"
            );
            answered += 1;
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status {status}");
    assert_eq!(answered, calls, "every request is answered");
}

/// stdin and stdout as regular files (not pollable): tokio's stdio takes over, and the
/// session works the same.
#[test]
fn regular_files_as_stdin_and_stdout_work() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = handshake();
    input.extend(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    input.push(b'\n');
    std::fs::write(dir.path().join("in.jsonl"), &input).unwrap();
    let stdin = std::fs::File::open(dir.path().join("in.jsonl")).unwrap();
    let stdout = std::fs::File::create(dir.path().join("out.jsonl")).unwrap();

    let status = boris(dir.path())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "exit status {status}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let ids: Vec<u64> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON lines"))
        .filter_map(|m| m.get("id").and_then(Value::as_u64))
        .collect();
    assert_eq!(ids, vec![0, 1], "{out}");
    assert!(out.contains("\"str_replace\""), "{out}");
}

/// stdin and stdout as the two ends of one Unix socket (some clients spawn servers that
/// way): both directions share one file description, made non-blocking once.
#[test]
fn a_socket_as_stdin_and_stdout_works() {
    use std::os::unix::net::UnixStream;
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let theirs_out = theirs.try_clone().unwrap();
    let mut child = boris(dir.path())
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = ours.try_clone().unwrap();
    ours.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut input = handshake();
    input.extend(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_file","arguments":{"path":"a.txt","content":"hello\n"}}}"#);
    input.push(b'\n');
    writer.write_all(&input).unwrap();

    let mut reader = BufReader::new(ours);
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "socket closed early"
        );
        let msg: Value = serde_json::from_str(&line).unwrap();
        seen.push(msg);
    }
    assert_eq!(seen[1]["id"], 1);
    assert_eq!(seen[1]["result"]["isError"], false, "{}", seen[1]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "hello\n"
    );
    writer.shutdown(std::net::Shutdown::Write).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status {status}");
}

/// A wrapper that shares Boris's stdin and stdout (`sh -c 'boris …; next-command'`) gets
/// them back in blocking mode: Boris switches the shared pipes to non-blocking while it
/// runs and restores their flags when the session ends.
#[test]
fn stdin_and_stdout_flags_are_restored_for_whoever_shares_them() {
    let dir = tempfile::tempdir().unwrap();
    // After Boris exits, grep (same stdin/stdout open file descriptions, inherited from
    // the shell) prints the flags of its fd 0 and 1.
    let script = r#""$0" --transport stdio 2>/dev/null; echo "boris exited $?"; grep -H '^flags' /proc/self/fdinfo/0 /proc/self/fdinfo/1"#;
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", script, BIN]).current_dir(dir.path());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("BORIS_") {
            cmd.env_remove(k);
        }
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&handshake()).unwrap();
    drop(stdin); // EOF: Boris ends its session and exits
    let out = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("boris exited 0"), "{out}");
    const O_NONBLOCK: u32 = 0o4000;
    let mut seen = 0;
    for line in out.lines().filter(|l| l.contains(":flags:")) {
        let octal = line.rsplit(':').next().unwrap_or("").trim();
        let flags = u32::from_str_radix(octal, 8).unwrap_or_else(|_| panic!("{line}"));
        assert_eq!(flags & O_NONBLOCK, 0, "left non-blocking: {line}");
        seen += 1;
    }
    assert_eq!(seen, 2, "{out}");
}
