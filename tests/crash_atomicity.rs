//! Fault injection (DESIGN §7, "a crash never leaves a half-written file"): a real
//! `boris --transport stdio` is SIGKILLed at a random moment while it handles a large
//! `create_file` or `str_replace`. Afterwards the file must be byte-identical to either
//! the old or the new content, and the temporary files killed writers leave behind must
//! not accumulate: a later successful write removes them (`fsutil::atomic_write`).

use crate::common::Server;
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
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

/// What this test adds to the shared client.
trait Edits {
    fn call(&mut self, tool: &str, args: Value) -> Value;
    fn kill(self);
}

impl Edits for Server {
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let resp = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = resp.get("result").unwrap_or_else(|| panic!("{resp}"));
        assert_ne!(result["isError"], json!(true), "{tool} failed: {result}");
        resp
    }

    fn kill(mut self) {
        let _ = self.child.kill(); // SIGKILL
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
        let mut server = Server::start(dir.path(), &["--max-file-size", "64MB"], "crash-atomicity");
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
    let mut server = Server::start(dir.path(), &["--max-file-size", "64MB"], "crash-atomicity");
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
