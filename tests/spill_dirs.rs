//! A killed server's spill directory is removed by the next server to start (DEC-118):
//! a server that exits removes its own `boris-<pid>-<nonce>` under the temporary
//! directory, but one killed with SIGKILL cannot, and every confined session's start
//! reads the temporary directory's tree for Unix sockets to hide — 5,668 such
//! directories left by killed servers made that 3× slower on a developer's machine.

use crate::common::Server;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The spill directories under `tmp`.
fn spill_dirs(tmp: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(tmp)
        .expect("read tmp")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("boris-"))
        })
        .collect();
    dirs.sort();
    dirs
}

fn start(work: &Path, tmp: &Path) -> Server {
    let tmp = tmp.to_str().expect("a UTF-8 temporary directory");
    Server::start_with_env(work, &[], "spill-dirs-test", &[("TMPDIR", tmp)])
}

#[test]
fn a_killed_servers_spill_directory_is_swept_by_the_next_server() {
    let work = tempfile::tempdir().expect("workdir");
    let tmp = tempfile::tempdir().expect("tmp");
    // Left alone whatever happens: not a spill directory's name, and one without a lock
    // (an older Boris's, or one being made).
    let other = tmp.path().join("boris-notes");
    let unlocked = tmp.path().join("boris-1-0000abcd");
    std::fs::create_dir(&other).expect("mkdir");
    std::fs::create_dir(&unlocked).expect("mkdir");

    let mut killed = start(work.path(), tmp.path());
    let alive = start(work.path(), tmp.path());
    let before = spill_dirs(tmp.path());
    assert_eq!(
        before.len(),
        4,
        "two servers' spill directories and two others: {before:?}"
    );
    killed.child.kill().expect("SIGKILL");
    killed.child.wait().expect("reaped");
    let killed_dir = tmp.path().join(format!("boris-{}-", killed.child.id()));
    let killed_dir = before
        .iter()
        .find(|d| {
            d.to_string_lossy()
                .starts_with(&*killed_dir.to_string_lossy())
        })
        .expect("the killed server's directory")
        .clone();
    assert!(killed_dir.is_dir(), "SIGKILL leaves the directory behind");

    // The next server to start sweeps it; the live server's stays.
    let next = start(work.path(), tmp.path());
    let deadline = Instant::now() + Duration::from_secs(10);
    while killed_dir.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !killed_dir.exists(),
        "the killed server's directory was not swept"
    );
    let after = spill_dirs(tmp.path());
    assert_eq!(
        after.len(),
        4,
        "the live servers' and the two others: {after:?}"
    );
    assert!(other.is_dir() && unlocked.is_dir());

    // Servers that exit remove their own.
    alive.stop();
    next.stop();
    let left = spill_dirs(tmp.path());
    assert_eq!(left, vec![unlocked, other]);
}
