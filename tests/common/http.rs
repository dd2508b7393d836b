//! `boris --transport http --port 0` for the process tests that talk HTTP over a real
//! socket: started in a temp dir, its stderr read on a thread, its address taken from
//! the `bound=` field of the start line (text or JSON log format).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub struct HttpServer {
    pub child: Child,
    /// `host:port` it listens on.
    pub addr: String,
    /// Its stderr lines up to and including the one that named the address.
    pub startup: Vec<String>,
    /// Its stderr lines after that, as they come.
    pub lines: Receiver<String>,
    pub dir: tempfile::TempDir,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    /// Starts the server with `extra` flags after `--transport http --port 0 --workdir
    /// <temp dir>`; panics with its stderr if it names no address within 10 s.
    pub fn start(extra: &[&str]) -> HttpServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(super::BIN)
            .args(["--transport", "http", "--port", "0", "--workdir"])
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
        let mut startup = Vec::new();
        while Instant::now() < deadline {
            let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) else {
                continue;
            };
            startup.push(line.clone());
            if let Some(addr) = bound_addr(&line) {
                return HttpServer {
                    child,
                    addr,
                    startup,
                    lines,
                    dir,
                };
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("boris did not log its bound address; stderr: {startup:#?}");
    }
}

/// The address a start line names: `"fields":{"bound":…}` in JSON, `bound=…` in text.
fn bound_addr(line: &str) -> Option<String> {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(line) {
        return json["fields"]["bound"].as_str().map(str::to_string);
    }
    let at = line.find("bound=")?;
    line[at + 6..].split_whitespace().next().map(str::to_string)
}
