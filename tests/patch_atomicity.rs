//! Fault injection for `apply_patch` (issue 19 §2: "killed mid-apply, no file is
//! half-written and not half of the files changed"): a real `boris --transport stdio` is
//! SIGKILLed while it applies a patch of several large files, at random moments and,
//! under strace, between two of its renames. The next Boris — at its start, or when it
//! first touches the directory — must leave every file of the patch old or every file
//! new, never a mix and never a partial file (`journal`).

use crate::common::{BIN, Server};
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const ITERATIONS: usize = 40;
const MIN_ITERATIONS: usize = 10;
const TIME_BUDGET: Duration = Duration::from_secs(20);
/// Each file's size: large enough that staging takes a while.
const BODY_LINES: usize = 30_000;
const PREFIX: &str = ".boris-patch-";

/// The files of the patch, under the work directory.
const FILES: [&str; 4] = ["a.txt", "sub/b.txt", "sub/deep/c.txt", "d.txt"];
/// Added by even generations' patches, deleted by odd ones'.
const TOGGLED: &str = "sub/extra.txt";

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

fn header(name: &str, generation: usize) -> String {
    format!("file {name} generation {generation:05}")
}

fn content(name: &str, generation: usize) -> String {
    let mut s = header(name, generation);
    s.push('\n');
    for i in 0..BODY_LINES {
        s.push_str(&format!("{name} line {i:07} the quick brown fox\n"));
    }
    s
}

/// The patch that takes every file from `generation` to the next, and adds or deletes
/// the toggled file.
fn patch(files: &[&str], generation: usize, toggle: bool) -> String {
    let mut p = String::from("*** Begin Patch\n");
    for name in files {
        p.push_str(&format!(
            "*** Update File: {name}\n@@\n-{}\n+{}\n {name} line 0000000 the quick brown fox\n",
            header(name, generation),
            header(name, generation + 1)
        ));
    }
    if toggle {
        if generation.is_multiple_of(2) {
            p.push_str(&format!("*** Add File: {TOGGLED}\n+extra\n"));
        } else {
            p.push_str(&format!("*** Delete File: {TOGGLED}\n"));
        }
    }
    p.push_str("*** End Patch\n");
    p
}

/// The generation every file of the patch is at: panics on a mix or a partial file.
fn generation_on_disk(dir: &Path, files: &[&str], toggle: bool, context: &str) -> usize {
    let mut seen = None;
    for name in files {
        let text = fs::read_to_string(dir.join(name)).expect("a patched file exists");
        let first = text.lines().next().unwrap_or_default().to_string();
        let g: usize = first
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{context}: {name} starts with {first:?}"));
        assert_eq!(text, content(name, g), "{context}: {name} is not whole");
        match seen {
            None => seen = Some(g),
            Some(s) => assert_eq!(
                s, g,
                "{context}: {name} is at generation {g}, others at {s}"
            ),
        }
    }
    let g = seen.unwrap_or_default();
    if toggle {
        // Generation g was reached by the patch from g-1: odd g added the file.
        assert_eq!(
            dir.join(TOGGLED).exists(),
            g % 2 == 1,
            "{context}: {TOGGLED} does not match generation {g}"
        );
    }
    g
}

/// Whether `name` no longer starts with its header of `generation` (reads 64 bytes).
fn changed_header(dir: &Path, name: &str, generation: usize) -> bool {
    use std::io::Read;
    let mut start = [0u8; 64];
    let n = fs::File::open(dir.join(name))
        .and_then(|mut f| f.read(&mut start))
        .unwrap_or(0);
    !start[..n].starts_with(header(name, generation).as_bytes())
}

fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in ["", "sub", "sub/deep"] {
        if let Ok(entries) = fs::read_dir(dir.join(d)) {
            out.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(PREFIX))
            }));
        }
    }
    out
}

fn journals(dir: &Path) -> usize {
    leftovers(dir)
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".journal"))
        .count()
}

fn setup(dir: &Path) {
    for name in FILES {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, content(name, 0)).expect("write fixture");
    }
}

fn call_ok(server: &mut Server, tool: &str, args: Value) {
    let resp = server.request("tools/call", json!({"name": tool, "arguments": args}));
    let result = resp.get("result").unwrap_or_else(|| panic!("{resp}"));
    assert_ne!(result["isError"], json!(true), "{tool} failed: {result}");
}

#[test]
fn sigkill_during_a_patch_leaves_every_file_old_or_every_file_new() {
    let dir = tempfile::tempdir().expect("tempdir");
    setup(dir.path());
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
    let flags = [
        "--max-file-size",
        "64MB",
        "--require-view-before-edit=false",
    ];
    let started = Instant::now();
    let mut generation = 0;
    let (mut old, mut new, mut mid_commit, mut torn, mut iterations) = (0, 0, 0, 0, 0);
    for i in 0..ITERATIONS {
        if iterations >= MIN_ITERATIONS && started.elapsed() > TIME_BUDGET {
            break;
        }
        iterations += 1;
        let mut server = Server::start(dir.path(), &flags, "patch-atomicity");
        let text = patch(&FILES, generation, true);
        let id = server.send_request(
            "tools/call",
            json!({"name": "apply_patch", "arguments": {"input": text}}),
        );
        // A third of the kills at a random moment; a third once the first file is
        // staged; a third as soon as the commit point is passed (the journal is there,
        // or a first file already changed), in the middle of the renames.
        let aim = rng.below(3);
        let deadline = Instant::now() + Duration::from_secs(20);
        match aim {
            0 => std::thread::sleep(Duration::from_millis(rng.below(60))),
            1 => {
                while Instant::now() < deadline
                    && leftovers(dir.path()).is_empty()
                    && !server.answered(id)
                {
                    std::thread::sleep(Duration::from_micros(200));
                }
                std::thread::sleep(Duration::from_millis(rng.below(25)));
            }
            _ => {
                while Instant::now() < deadline
                    && journals(dir.path()) == 0
                    && !FILES
                        .iter()
                        .any(|f| changed_header(dir.path(), f, generation))
                    && !server.answered(id)
                {}
            }
        }
        let _ = server.child.kill();
        let _ = server.child.wait();
        let (journal, mixed) = (journals(dir.path()) > 0, {
            let changed = FILES
                .iter()
                .filter(|f| changed_header(dir.path(), f, generation))
                .count();
            changed > 0 && changed < FILES.len()
        });
        mid_commit += usize::from(journal);
        torn += usize::from(mixed);

        // The next Boris finishes or undoes what was left at its start.
        let server = Server::start(dir.path(), &flags, "patch-atomicity");
        let context = format!("iteration {i} (aim {aim}, seed {seed})");
        let g = generation_on_disk(dir.path(), &FILES, true, &context);
        assert_eq!(journals(dir.path()), 0, "{context}: a journal was left");
        if g == generation {
            old += 1;
        } else {
            assert_eq!(g, generation + 1, "{context}");
            new += 1;
            generation = g;
        }
        server.stop();
    }
    eprintln!(
        "{iterations} kills in {:?}: {old} left every file old, {new} every file new; {mid_commit} \
         were past the commit point (a journal to roll forward), {torn} between two renames \
         (some files new, some old, until the next Boris started)",
        started.elapsed()
    );
    // Staged files of patches killed before their journal go once old enough.
    std::thread::sleep(Duration::from_millis(5_500));
    let mut server = Server::start(dir.path(), &flags, "patch-atomicity");
    for d in ["a.txt", "sub/b.txt", "sub/deep/c.txt"] {
        call_ok(
            &mut server,
            "view",
            json!({"path": d, "view_range": [1, 1]}),
        );
    }
    server.stop();
    let left = leftovers(dir.path());
    assert!(left.is_empty(), "leftovers: {left:?}");
}

/// The pid of `parent`'s first child (Boris under strace).
fn child_of(parent: u32) -> Option<i32> {
    let children = fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

/// Killed between two renames of the commit (strace delays every rename by 300 ms): the
/// files are half old and half new until the next Boris first touches their directory
/// (here `sub/`, which holds the journal and is not an allowed directory's top), which
/// rolls the patch forward.
#[test]
fn killed_between_renames_the_next_boris_finishes_the_patch() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("skipped: no strace to slow down the renames");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    setup(dir.path());
    let files = ["sub/b.txt", "sub/deep/c.txt"];
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-e",
        "trace=rename,renameat,renameat2",
    ])
    .args(["-e", "inject=rename,renameat,renameat2:delay_exit=300000"])
    .args([
        BIN,
        "--transport",
        "stdio",
        "--require-view-before-edit=false",
    ])
    .current_dir(dir.path());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("BORIS_") {
            cmd.env_remove(k);
        }
    }
    let mut traced = Server::spawn(cmd, "patch-atomicity");
    let Some(boris) = child_of(traced.child.id()) else {
        eprintln!("skipped: strace could not start Boris here");
        return;
    };
    let text = patch(&files, 0, false);
    let id = traced.send_request(
        "tools/call",
        json!({"name": "apply_patch", "arguments": {"input": text}}),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let half = loop {
        assert!(Instant::now() < deadline, "the patch never got half-way");
        assert!(!traced.answered(id), "the patch finished before the kill");
        let firsts: Vec<String> = files
            .iter()
            .map(|f| {
                fs::read_to_string(dir.path().join(f))
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        let new = files
            .iter()
            .zip(&firsts)
            .filter(|(f, l)| **l == header(f, 1))
            .count();
        if new == 1 {
            break firsts;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(boris),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill boris");
    let _ = traced.child.wait();
    assert_eq!(
        journals(dir.path()),
        1,
        "killed past the commit point: {half:?}"
    );

    // A new Boris started at the top does not look into sub/ until it is touched...
    let mut server = Server::start(
        dir.path(),
        &["--require-view-before-edit=false"],
        "patch-atomicity",
    );
    assert_eq!(journals(dir.path()), 1);
    // ...and a view there finishes the patch before it reads.
    let resp = server.request(
        "tools/call",
        json!({"name": "view", "arguments": {"path": "sub/b.txt", "view_range": [1, 1]}}),
    );
    assert!(
        resp.to_string().contains(&header("sub/b.txt", 1)),
        "the view saw the old file: {resp}"
    );
    server.stop();
    assert_eq!(
        generation_on_disk(dir.path(), &files, false, "after recovery"),
        1
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).ok(),
        Some(content("a.txt", 0))
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}
