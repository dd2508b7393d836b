//! The file tools raced (issue 25 §2, findings X3–X5): a thread swaps a directory of the
//! workspace with a symlink to outside (or to a denied directory) with
//! `renameat2(RENAME_EXCHANGE)`, in a loop, while `view`, `create_file` and
//! `str_replace` aim at files below that directory. Nothing outside may be written and
//! no outside or denied byte returned, whichever moment each call meets. Seeded: a
//! failure names its seed (`RACE_SEED` replays it).

use crate::common::Server;
use serde_json::{Value, json};
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Calls per tool and target (two targets: about 2,000 per tool).
const CALLS: usize = 1000;

/// The whole run's time limit; past it the test stops early (and says so).
const BUDGET: Duration = Duration::from_secs(25);

fn seed() -> u64 {
    std::env::var("RACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

/// xorshift: the same seed, the same schedule.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn exchange(a: &Path, b: &Path) -> bool {
    let a = CString::new(a.as_os_str().as_bytes()).expect("no NUL");
    let b = CString::new(b.as_os_str().as_bytes()).expect("no NUL");
    // SAFETY: two valid NUL-terminated paths.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    rc == 0
}

/// Swaps `dir` and `link` until stopped; counts the swaps.
fn swapper(
    dir: PathBuf,
    link: PathBuf,
    seed: u64,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut rng = Rng(seed | 1);
        while !stop.load(Ordering::Relaxed) {
            if exchange(&dir, &link) {
                swaps.fetch_add(1, Ordering::Relaxed);
            }
            // A varying pause, so calls meet every phase of the swap.
            let spin = rng.next() % 2000;
            for _ in 0..spin {
                std::hint::spin_loop();
            }
        }
    })
}

fn call(server: &mut Server, tool: &str, args: Value) -> String {
    let resp = server.request("tools/call", json!({"name": tool, "arguments": args}));
    resp.to_string()
}

struct Layout {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    secrets: PathBuf,
}

fn layout() -> Layout {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(tmp.path()).expect("canonical");
    let ws = root.join("ws");
    let outside = root.join("outside");
    let secrets = ws.join("secrets");
    for d in [&ws.join("d"), &outside, &secrets] {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(ws.join("d/f.txt"), "INSIDE old\n").expect("write");
    fs::write(outside.join("f.txt"), "OUTSIDE-BYTES old\n").expect("write");
    fs::write(secrets.join("f.txt"), "DENIED-BYTES old\n").expect("write");
    Layout {
        _tmp: tmp,
        ws,
        outside,
        secrets,
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Races each tool against swaps of `ws/d` with a link to `target`.
fn race(l: &Layout, target: &Path, seed: u64, deadline: Instant) -> Vec<String> {
    let link = l.ws.join("swap");
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(target, &link).expect("symlink");
    let ws = l.ws.to_str().expect("utf-8");
    let mut server = Server::start(
        &l.ws,
        &[
            "--allow-dir",
            ws,
            "--deny-dir",
            "secrets",
            "--require-view-before-edit",
            "false",
            "--no-bash",
        ],
        "race-test",
    );
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let thread = swapper(
        l.ws.join("d"),
        link.clone(),
        seed,
        stop.clone(),
        swaps.clone(),
    );
    let before_outside = listing(&l.outside);
    let before_secrets = listing(&l.secrets);
    let file = l.ws.join("d/f.txt");
    let file = file.to_str().expect("utf-8");
    let mut failures = Vec::new();
    let mut rng = Rng(seed.rotate_left(17) | 1);
    for i in 0..CALLS {
        if Instant::now() > deadline {
            eprintln!("stopped early after {i} rounds (time budget)");
            break;
        }
        let order = rng.next() % 3;
        for k in 0..3 {
            let (tool, args) = match (order + k) % 3 {
                0 => ("view", json!({"path": file})),
                1 => (
                    "create_file",
                    json!({"path": format!("{ws}/d/new-{i}.txt"), "content": "PLANTED\n"}),
                ),
                _ => (
                    "str_replace",
                    json!({"path": file, "old_str": "old", "new_str": "new"}),
                ),
            };
            let out = call(&mut server, tool, args);
            // A call refused for its arguments never reached the file: it races nothing.
            if out.contains("[INVALID_INPUT]") {
                failures.push(format!("{tool} did not run: {out}"));
            }
            for marker in ["OUTSIDE-BYTES", "DENIED-BYTES"] {
                if out.contains(marker) {
                    failures.push(format!("{tool} returned {marker}: {out}"));
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().expect("swapper");
    // Put the directory back where it was, for the checks below.
    if fs::symlink_metadata(l.ws.join("d"))
        .expect("d")
        .file_type()
        .is_symlink()
    {
        exchange(&l.ws.join("d"), &link);
    }
    assert!(
        swaps.load(Ordering::Relaxed) > 100,
        "the swap did not happen often enough to test anything"
    );
    if listing(&l.outside) != before_outside {
        failures.push(format!(
            "files were created outside: {:?}",
            listing(&l.outside)
        ));
    }
    if listing(&l.secrets) != before_secrets {
        failures.push(format!(
            "files were created in the denied directory: {:?}",
            listing(&l.secrets)
        ));
    }
    for (dir, text) in [
        (&l.outside, "OUTSIDE-BYTES old\n"),
        (&l.secrets, "DENIED-BYTES old\n"),
    ] {
        let now = fs::read_to_string(dir.join("f.txt")).expect("read");
        if now != text {
            failures.push(format!("{} was rewritten: {now:?}", dir.display()));
        }
    }
    server.stop();
    failures
}

#[test]
fn file_tools_cannot_be_raced_out_of_the_workspace() {
    let seed = seed();
    eprintln!("RACE_SEED={seed}");
    let deadline = Instant::now() + BUDGET;
    let l = layout();
    let mut failures = race(&l, &l.outside, seed, deadline);
    let l2 = layout();
    failures.extend(race(
        &l2,
        &l2.secrets,
        seed.wrapping_add(1),
        deadline + BUDGET,
    ));
    failures.truncate(5);
    assert!(
        failures.is_empty(),
        "RACE_SEED={seed}: {}",
        failures.join("\n")
    );
}

/// The control: the same swap, with no tool call in flight, really makes the path lead
/// outside (so a run that found nothing found it against a real attack).
#[test]
fn the_swap_really_leads_outside() {
    let l = layout();
    let link = l.ws.join("swap");
    std::os::unix::fs::symlink(&l.outside, &link).expect("symlink");
    assert!(exchange(&l.ws.join("d"), &link));
    assert_eq!(
        fs::read_to_string(l.ws.join("d/f.txt")).expect("read through the swap"),
        "OUTSIDE-BYTES old\n"
    );
}
