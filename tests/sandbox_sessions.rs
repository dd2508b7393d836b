//! The sandbox between sessions and around the server's secrets (issue 25 §5): what a
//! command of one HTTP session can reach of the server's token and of other sessions.
//! Real servers over raw HTTP/1.1, real files in temp dirs; each attack prints
//! `ATTACK_RAN` first and runs once unconfined as the control that it escapes there.

use crate::common;

use crate::common::BIN;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn sandbox_supported() -> bool {
    Command::new(BIN)
        .args(["--sandbox", "on", "--check-config"])
        .current_dir(std::env::temp_dir())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A Boris serving HTTP with its stderr in `log`, without a controlling terminal.
struct HttpServer {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    fn start(dir: &Path, log: &Path, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let file = std::fs::File::create(log).expect("log file");
        let mut cmd = Command::new(BIN);
        cmd.args(["--transport", "http", "--port", "0"])
            .args(extra)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(file));
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BORIS_") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(env.iter().copied());
        // SAFETY: setsid is async-signal-safe. No controlling terminal, as under a
        // service manager.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut server = HttpServer {
            child: cmd.spawn().expect("spawn boris"),
            addr: String::new(),
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if let Some(at) = text.find("bound=") {
                let addr: String = text[at + 6..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                server.addr = addr;
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not listen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The generated token, from wherever the log says it is.
    fn token(&self) -> String {
        let text = std::fs::read_to_string(&self.log).expect("log");
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("bearer token: "))
            .unwrap_or_else(|| panic!("no token line in:\n{text}"));
        match line.strip_prefix("in ") {
            Some(rest) => {
                let path = rest.split(" (").next().expect("path");
                std::fs::read_to_string(path)
                    .expect("token file")
                    .trim()
                    .to_string()
            }
            None => line.trim().to_string(),
        }
    }

    /// One POST to /mcp: (the response's head, its body).
    fn post(&self, token: &str, session: Option<&str>, body: &str) -> (String, String) {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if let Some(id) = session {
            head.push_str(&format!(
                "Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            ));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).expect("send");
        s.write_all(body.as_bytes()).expect("send");
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        let (h, b) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
        (h.to_string(), b.to_string())
    }

    /// A new session: its id.
    fn session(&self, token: &str) -> String {
        let (head, body) = self.post(
            token,
            None,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        );
        let id = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no session id: {head}\n{body}"));
        self.post(
            token,
            Some(&id),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        id
    }

    /// bash in `session`: the response body (the result's text, JSON-escaped).
    fn bash(&self, token: &str, session: &str, command: &str) -> String {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": command}}});
        self.post(token, Some(session), &body.to_string()).1
    }
}

/// X10: with `--generate-token` and stderr sent to a file, a command read the token from
/// that log (and could then call the server's own port with it).
#[test]
fn a_generated_token_is_not_readable_from_a_stderr_file() {
    if !sandbox_supported() {
        eprintln!("skipped: this kernel cannot enforce --sandbox on");
        return;
    }
    let landlock_only = [("BORIS_SANDBOX_PROBE", "landlock-only")];
    for (mode, env, readable) in [
        ("off", &[][..], true),
        ("on", &[][..], false),
        ("auto", &landlock_only[..], false),
    ] {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().canonicalize().expect("canonical");
        let log = root.join("boris.log");
        let server = HttpServer::start(&root, &log, &["--sandbox", mode, "--generate-token"], env);
        let token = server.token();
        let session = server.session(&token);
        // The attacker reads the log, and any file it names.
        let attack = format!(
            "echo ATTACK_RAN; cat '{log}'; for f in $(grep -o '/[^ ]*bearer-token' '{log}'); do cat \"$f\"; done; true",
            log = log.display()
        );
        let out = server.bash(&token, &session, &attack);
        assert!(out.contains("ATTACK_RAN"), "--sandbox {mode}: {out}");
        assert_eq!(
            out.contains(&token),
            readable,
            "--sandbox {mode} {env:?}: the token {} readable by a command: {out}",
            if readable { "should be" } else { "is" }
        );
    }
}

/// S3: what the status line claims of pathname Unix sockets outside the writable
/// directories before Landlock ABI 9, tested both ways: one that is there when the
/// session starts is refused; one made after (by a process outside the sandbox) is
/// reached. When the second fails to connect, the claim (and docs/security.md) can be made whole.
#[test]
fn unix_sockets_outside_are_closed_as_found_at_the_session_start() {
    use std::os::unix::net::UnixListener;
    if !sandbox_supported()
        || std::process::Command::new("python3")
            .arg("-V")
            .output()
            .is_err()
    {
        eprintln!("skipped: no --sandbox on here, or no python3");
        return;
    }
    if boris::sandbox::landlock_abi() >= 9 {
        eprintln!("skipped: Landlock ABI 9 refuses both; the status line says so");
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("w")).expect("w");
    std::fs::create_dir_all(root.join("run")).expect("run");
    let early = UnixListener::bind(root.join("run/early.sock")).expect("bind early");
    let allow = format!("--allow-dir={}", root.join("w").display());
    let mut server = common::Server::start(
        &root,
        &["--sandbox", "on", "--sandbox-network", "off", &allow],
        "sockets",
    );
    let probe = |name: &str| {
        format!(
            "echo ATTACK_RAN; python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}'); print('{name} reached')\" 2>/dev/null || echo '{name} refused'",
            root.join("run").join(format!("{name}.sock")).display()
        )
    };
    let call = |server: &mut common::Server, command: String| {
        let r = server.request(
            "tools/call",
            serde_json::json!({"name": "bash", "arguments": {"command": command}}),
        );
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let first = call(&mut server, probe("early"));
    assert!(
        first.contains("ATTACK_RAN") && first.contains("early refused"),
        "{first}"
    );
    let late = UnixListener::bind(root.join("run/late.sock")).expect("bind late");
    let second = call(&mut server, probe("late"));
    assert!(second.contains("ATTACK_RAN"), "{second}");
    assert!(
        second.contains("late reached"),
        "a socket made after the session's start is now refused: make the status line and \
         docs/security.md say so: {second}"
    );
    drop((early, late));
}
