//! Fault injection (DESIGN §7, "a crash never leaves a half-written file"): a real
//! `boris --transport stdio` is SIGKILLed at a random moment while it handles a large
//! `create_file` or `str_replace`. Afterwards the file must be byte-identical to either
//! the old or the new content, and the temporary files killed writers leave behind must
//! not accumulate: a later successful write removes them (`fsutil::atomic_write`).

use serde_json::{Value, json};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_boris");
const ITERATIONS: usize = 40;
const MIN_ITERATIONS: usize = 10;
const TIME_BUDGET: Duration = Duration::from_secs(15);
const FILE_SIZE: usize = 8 * 1024 * 1024;
const TEMP_PREFIX: &str = ".boris-tmp-";
/// `fsutil::STALE_TEMP_AGE` plus a margin.
const STALE_AFTER: Duration = Duration::from_millis(5_500);

/// A small deterministic generator (xorshift), so a failure can be replayed by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// About `size` bytes of distinct lines, tagged with `generation` so that two
/// generations differ on every line.
fn content(generation: usize, size: usize) -> String {
    let mut s = String::with_capacity(size + 64);
    let mut i = 0usize;
    while s.len() < size {
        s.push_str(&format!(
            "gen {generation:05} line {i:09} the quick brown fox jumps over\n"
        ));
        i += 1;
    }
    s
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(BIN)
            .args(["--transport", "stdio", "--max-file-size", "64MB"])
            .current_dir(dir)
            .env_remove("BORIS_ALLOW_DIRS")
            .env_remove("BORIS_DENY_DIRS")
            .env_remove("BORIS_MAX_FILE_SIZE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn boris");
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
                   "clientInfo": {"name": "crash-atomicity", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("serialize");
        line.push(b'\n');
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(&line).expect("write to boris");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its id without waiting.
    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn wait_for(&mut self, id: u64, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = self.lines.recv_timeout(left).ok()?;
            let msg: Value = serde_json::from_str(&line).expect("stdout is JSON only");
            if msg.get("id").and_then(Value::as_u64) == Some(id) {
                return Some(msg);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.wait_for(id, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("no answer to {method}"))
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let resp = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = resp.get("result").unwrap_or_else(|| panic!("{resp}"));
        assert_ne!(result["isError"], json!(true), "{tool} failed: {result}");
        resp
    }

    /// Whether the response to `id` has arrived (without waiting).
    fn answered(&mut self, id: u64) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            let msg: Value = serde_json::from_str(&line).expect("stdout is JSON only");
            if msg.get("id").and_then(Value::as_u64) == Some(id) {
                return true;
            }
        }
        false
    }

    fn kill(mut self) {
        let _ = self.child.kill(); // SIGKILL
        let _ = self.child.wait();
    }

    fn stop(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(TEMP_PREFIX))
        })
        .collect()
}

/// The edit of one iteration: the arguments to send and the content it produces.
fn edit(create: bool, generation: usize, old: &str) -> (&'static str, Value, String) {
    if create {
        let new = content(generation, FILE_SIZE);
        let args = json!({"path": "big.txt", "content": new});
        ("create_file", args, new)
    } else {
        // Rewrite the first half: distinct lines make the old half unique.
        let cut = old[..old.len() / 2].rfind('\n').expect("lines") + 1;
        let old_str = &old[..cut];
        let new_str = content(generation, cut);
        let new = format!("{new_str}{}", &old[cut..]);
        let args = json!({"path": "big.txt", "old_str": old_str, "new_str": new_str});
        ("str_replace", args, new)
    }
}

#[test]
fn sigkill_during_a_large_write_leaves_old_or_new_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("big.txt");
    let mut current = content(0, FILE_SIZE);
    fs::write(&file, &current).expect("write fixture");
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    eprintln!("CRASH_SEED={seed}");
    let mut rng = Rng(seed);

    let started = Instant::now();
    let (mut kept_old, mut got_new, mut mid_write) = (0, 0, 0);
    let (mut max_temps, mut last_kill) = (0, Instant::now());
    let mut iterations = 0;
    for i in 0..ITERATIONS {
        if iterations >= MIN_ITERATIONS && started.elapsed() > TIME_BUDGET {
            break;
        }
        iterations += 1;
        let generation = i + 1;
        let mut server = Server::start(dir.path());
        server.call("view", json!({"path": "big.txt", "view_range": [1, 5]}));
        // create_file three times in four: it is the cheaper call.
        let create = rng.below(4) != 0;
        let (tool, args, new) = edit(create, generation, &current);
        // A third of the kills land 0-30 ms after the request is sent (while it is read,
        // parsed and the file hashed); the rest are aimed at the write itself: 0-20 ms
        // after the temporary file appears (while it is filled, synced and renamed).
        let aim_at_write = rng.below(3) != 0;
        let delay = Duration::from_millis(if aim_at_write {
            rng.below(21)
        } else {
            rng.below(31)
        });
        let id = server.send_request("tools/call", json!({"name": tool, "arguments": args}));
        if aim_at_write {
            let before = temp_files(dir.path()).len();
            let deadline = Instant::now() + Duration::from_secs(20);
            while temp_files(dir.path()).len() <= before && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(500));
                if server.answered(id) {
                    break;
                }
            }
        }
        std::thread::sleep(delay);
        server.kill();
        last_kill = Instant::now();

        let after = fs::read(&file).expect("the file must still exist");
        if after == current.as_bytes() {
            kept_old += 1;
        } else if after == new.as_bytes() {
            got_new += 1;
            current = new;
        } else {
            panic!(
                "iteration {i} ({tool}, killed after {delay:?}, seed {seed}): big.txt is \
                 {} bytes, neither the old ({}) nor the new ({}) content",
                after.len(),
                current.len(),
                new.len()
            );
        }
        let temps = temp_files(dir.path()).len();
        if temps > max_temps {
            mid_write += 1;
        }
        max_temps = max_temps.max(temps);
    }
    eprintln!(
        "{iterations} kills in {:?}: {kept_old} kept the old content, {got_new} the new; \
         {mid_write} left a new temp file, at most {max_temps} at once",
        started.elapsed()
    );

    // A temp file is removed once its writer is dead and it is old enough: wait for the
    // last one to age, then one successful write must leave none behind.
    if let Some(left) = STALE_AFTER.checked_sub(last_kill.elapsed()) {
        std::thread::sleep(left);
    }
    let mut server = Server::start(dir.path());
    server.call("view", json!({"path": "big.txt", "view_range": [1, 5]}));
    server.call(
        "create_file",
        json!({"path": "big.txt", "content": "final\n"}),
    );
    server.stop();
    assert_eq!(fs::read(&file).expect("read"), b"final\n");
    let left = temp_files(dir.path());
    assert!(
        left.is_empty(),
        "stray temp files after a successful write: {left:?}"
    );
}
