//! A minimal stdio MCP client for the process tests: spawns `boris --transport stdio`,
//! does the handshake, and exchanges raw JSON-RPC lines (the spec harness is the full
//! client; these tests need things a YAML case cannot express: huge or invalid lines,
//! SIGKILL at a random moment).

pub mod http;
pub mod source;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_boris");

pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
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
    /// Starts the server in `dir` with `extra` flags (the caller's `BORIS_*` settings
    /// removed) and completes the handshake as `client`.
    pub fn start(dir: &Path, extra: &[&str], client: &str) -> Server {
        Server::start_with_env(dir, extra, client, &[])
    }

    /// As [`Server::start`], with `env` set in the server's environment (after the
    /// caller's `BORIS_*` settings are removed).
    pub fn start_with_env(
        dir: &Path,
        extra: &[&str],
        client: &str,
        env: &[(&str, &str)],
    ) -> Server {
        let mut cmd = Command::new(BIN);
        cmd.args(["--transport", "stdio"])
            .args(extra)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BORIS_") {
                cmd.env_remove(k);
            }
        }
        cmd.envs(env.iter().copied());
        Server::spawn(cmd, client)
    }

    /// Spawns `cmd` (Boris over stdio, perhaps under another program) and completes the
    /// handshake as `client`.
    pub fn spawn(mut cmd: Command, client: &str) -> Server {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn boris");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 1,
        };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": client, "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    /// One line, sent verbatim (a newline is added).
    pub fn raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("write to boris");
        stdin.write_all(b"\n").expect("write to boris");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its id without waiting.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.raw(&serde_json::to_vec(&msg).expect("serialize"));
        id
    }

    /// The response to `id`, skipping everything else, or None after `timeout`.
    pub fn wait_for(&mut self, id: u64, timeout: Duration) -> Option<Value> {
        self.wait_for_id(&json!(id), timeout)
    }

    /// The response whose `id` is `id` (a string, a number, or null for an error the
    /// server could not tie to a request), skipping everything else.
    pub fn wait_for_id(&mut self, id: &Value, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = self.lines.recv_timeout(left).ok()?;
            let msg: Value = serde_json::from_str(&line).expect("stdout is JSON only");
            let is_response = msg.get("result").is_some() || msg.get("error").is_some();
            if is_response && msg.get("id").unwrap_or(&Value::Null) == id {
                return Some(msg);
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait_for(id, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("no answer to {method} (server gone?)"))
    }

    /// Whether the response to `id` has arrived (without waiting).
    pub fn answered(&mut self, id: u64) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            let msg: Value = serde_json::from_str(&line).expect("stdout is JSON only");
            if msg.get("id").and_then(Value::as_u64) == Some(id) {
                return true;
            }
        }
        false
    }

    /// Closes stdin and waits for the exit.
    pub fn stop(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
