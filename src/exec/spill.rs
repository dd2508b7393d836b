//! The spill directory: one private directory per server process under the temporary
//! directory, for command output too large to hold (and the sessions' private `TMPDIR`s),
//! removed at exit — and the sweep that removes those of servers killed before they could.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where spill files go: one private directory per server process, removed at exit.
#[derive(Debug)]
pub struct SpillDir {
    path: PathBuf,
    counter: AtomicU64,
    /// The directory's `.lock`, locked while this server lives, so that another
    /// server's [`sweep`] leaves the directory alone (None where the filesystem has no
    /// `flock`: then nothing ever sweeps it).
    _lock: Option<nix::fcntl::Flock<std::fs::File>>,
}

/// The file in a spill directory whose lock says its server is alive.
const SPILL_LOCK: &str = ".lock";

impl SpillDir {
    /// Creates `<tmp>/boris-<pid>-<random>` (mode 0700) with its `.lock` held, then
    /// sweeps the spill directories of servers that are gone, on a thread of its own
    /// (the start does not wait for it).
    pub fn create() -> std::io::Result<SpillDir> {
        use std::os::unix::fs::DirBuilderExt;
        let tmp = std::env::temp_dir();
        let path = tmp.join(format!(
            "boris-{}-{}",
            std::process::id(),
            crate::text::sentinel::new_nonce()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(&path)?;
        let path = std::fs::canonicalize(&path)?;
        let lock = lock_spill_dir(&path).ok();
        let own = path.clone();
        let _ = std::thread::Builder::new()
            .name("boris-sweep".into())
            .spawn(move || sweep(&tmp, &own));
        Ok(SpillDir {
            path,
            counter: AtomicU64::new(0),
            _lock: lock,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh file name in the directory: `<prefix>-<n>-<random>`.
    pub fn next(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}-{n}-{}", crate::text::sentinel::new_nonce())
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }

    /// The spill directories of this user's other servers beside this one, as they are
    /// now: their sessions' `TMPDIR`s and output files, which this server's commands
    /// must not read any more than another session's of its own (DEC-124).
    pub fn others(&self) -> Vec<PathBuf> {
        self.path
            .parent()
            .map(|tmp| spill_dirs_beside(tmp, &self.path))
            .unwrap_or_default()
    }
}

/// Makes `dir/.lock` and locks it. The lock is taken on a file of another name, which is
/// then renamed: a sweep that finds `.lock` always finds it locked, never in the instant
/// between its creation and its lock.
fn lock_spill_dir(dir: &Path) -> std::io::Result<nix::fcntl::Flock<std::fs::File>> {
    use nix::fcntl::{Flock, FlockArg};
    use std::os::unix::fs::OpenOptionsExt;
    let staging = dir.join(".lock.new");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&staging)?;
    let held = Flock::lock(file, FlockArg::LockExclusiveNonblock)
        .map_err(|(_, errno)| std::io::Error::from(errno))?;
    std::fs::rename(&staging, dir.join(SPILL_LOCK))?;
    Ok(held)
}

/// Whether `name` is a spill directory's: `boris-<pid>-<8 hex digits>`.
fn is_spill_name(name: &str) -> bool {
    let Some((pid, nonce)) = name
        .strip_prefix("boris-")
        .and_then(|rest| rest.split_once('-'))
    else {
        return false;
    };
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && nonce.len() == 8
        && nonce.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The spill directories in `tmp` but `own`: spill names, this user's, directories
/// (not symlinks) — every other server's of this user, live or gone.
fn spill_dirs_beside(tmp: &Path, own: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return Vec::new();
    };
    // SAFETY: geteuid cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_spill_name))
        .map(|e| e.path())
        .filter(|p| p != own)
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && m.uid() == me))
        .collect()
}

/// Removes from `tmp` the spill directories of servers that are gone — killed, since a
/// server that exits removes its own — and returns how many. A directory is removed
/// when it is this user's (not a symlink), is not `own`, and its `.lock` can be locked:
/// its server's lock went with its process. One without a `.lock` (an older Boris's, or
/// one being made) is left, and so is one whose lock is held. Left behind, they cost
/// more than disk: every confined session's start reads the temporary directory's tree
/// for Unix sockets to hide (`sandbox::jail::mounts::hide_sockets`, DEC-118).
fn sweep(tmp: &Path, own: &Path) -> usize {
    use nix::fcntl::{Flock, FlockArg};
    use std::os::unix::fs::OpenOptionsExt;
    let mut removed = 0;
    for path in spill_dirs_beside(tmp, own) {
        let Ok(lock) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path.join(SPILL_LOCK))
        else {
            continue;
        };
        let Ok(held) = Flock::lock(lock, FlockArg::LockExclusiveNonblock) else {
            continue;
        };
        if std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
        drop(held);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_names_are_recognised_exactly() {
        assert!(is_spill_name("boris-4242-0a1b2c3d"));
        for name in [
            "boris-0a1b2c3d",
            "boris--0a1b2c3d",
            "boris-12-0a1b2c3",
            "boris-12-0a1b2c3dd",
            "boris-12-0a1b2c3g",
            "boris-x2-0a1b2c3d",
            "boris-spec-0a1b2c3d",
            "Boris-12-0a1b2c3d",
        ] {
            assert!(!is_spill_name(name), "{name}");
        }
    }

    #[test]
    fn the_sweep_removes_only_unlocked_spill_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let d = tmp.path().join(name);
            std::fs::create_dir(&d).unwrap();
            d
        };
        // A killed server's: its lock file is there, nobody holds it.
        let dead = dir("boris-1-0000000a");
        std::fs::write(dead.join(SPILL_LOCK), "").unwrap();
        std::fs::write(dead.join("out-1"), "spilled").unwrap();
        // A live server's: locked (another open file description, as another process's).
        let live = dir("boris-2-0000000b");
        let held = lock_spill_dir(&live).unwrap();
        // This server's own, even unlocked; one without a lock; another name.
        let own = dir("boris-3-0000000c");
        std::fs::write(own.join(SPILL_LOCK), "").unwrap();
        let no_lock = dir("boris-4-0000000d");
        let other = dir("boris-notes");
        std::fs::write(other.join(SPILL_LOCK), "").unwrap();
        // A symlink with a spill directory's name, to a directory with an unlocked lock.
        let target = dir("elsewhere");
        std::fs::write(target.join(SPILL_LOCK), "").unwrap();
        let link = tmp.path().join("boris-5-0000000e");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // A lock that is a symlink is not followed.
        let linked_lock = dir("boris-6-0000000f");
        std::os::unix::fs::symlink(target.join(SPILL_LOCK), linked_lock.join(SPILL_LOCK)).unwrap();

        assert_eq!(sweep(tmp.path(), &own), 1);
        assert!(!dead.exists());
        for kept in [&live, &own, &no_lock, &other, &target, &linked_lock] {
            assert!(kept.is_dir(), "{}", kept.display());
        }
        assert!(link.is_symlink() && target.join(SPILL_LOCK).is_file());
        // Once its server is gone, the live one goes too.
        drop(held);
        assert_eq!(sweep(tmp.path(), &own), 1);
        assert!(!live.exists());
    }

    #[test]
    fn a_new_spill_directory_holds_its_lock_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("boris-7-00000010");
        std::fs::create_dir(&d).unwrap();
        let held = lock_spill_dir(&d).unwrap();
        assert!(d.join(SPILL_LOCK).is_file() && !d.join(".lock.new").exists());
        assert_eq!(sweep(tmp.path(), Path::new("/nonexistent")), 0);
        drop(held);
        assert_eq!(sweep(tmp.path(), Path::new("/nonexistent")), 1);
    }
}
