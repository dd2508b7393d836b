//! Filesystem helpers shared by the file tools: the atomic write every edit goes through
//! (DESIGN §7), and the checks that keep a tool from reading a FIFO or a device.

use crate::error::{ErrorCode, ToolError, ToolResult};
use std::collections::HashMap;
use std::fs::{self, File, Metadata};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Mode of files that `create_file` makes (seed 001: "create_file always sets 0644").
pub const NEW_FILE_MODE: u32 = 0o644;

/// Prefix of the temporary files of an atomic write. The full name is
/// `.boris-tmp-<pid>-<random>`: the pid of the writing process, so that a file left
/// behind by a killed process (killed between creating and renaming it) can be told
/// apart from one another process is still writing, and removed (see
/// [`remove_stale_temp_files`]).
pub const TEMP_PREFIX: &str = ".boris-tmp-";

/// How old (by modification time) a dead process's temporary file must be before an
/// atomic write in the same directory removes it.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(5);

/// What kind of thing sits at a path, for tools that must refuse special files without
/// opening them (opening a FIFO blocks until a writer appears).
pub fn describe_special(meta: &Metadata) -> Option<&'static str> {
    let ft = meta.file_type();
    if ft.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_block_device() {
        Some("a block device")
    } else if ft.is_char_device() {
        Some("a character device")
    } else {
        None
    }
}

/// Metadata of an existing regular file, or the error a tool reports.
/// Opened beneath its allowed root and checked by identity (`beneath`).
pub fn regular_file_meta(real: &Path, shown: &Path) -> ToolResult<Metadata> {
    let meta = crate::beneath::metadata(real).map_err(|e| e.into_tool(shown, "read"))?;
    ensure_regular(&meta, shown)?;
    Ok(meta)
}

/// An existing regular file opened for reading beneath its allowed root and checked by
/// identity (`beneath`), with its metadata: one open for what is then read.
pub fn open_regular(real: &Path, shown: &Path) -> ToolResult<(File, Metadata)> {
    let (file, meta) = crate::beneath::open_read(real).map_err(|e| e.into_tool(shown, "read"))?;
    ensure_regular(&meta, shown)?;
    Ok((file, meta))
}

/// Reads what is left of `file` (opened by [`open_regular`]).
pub fn read_open(file: File, shown: &Path, expected_size: u64) -> ToolResult<Vec<u8>> {
    let mut bytes = Vec::with_capacity(expected_size as usize);
    // Through `Take`: `File::read_to_end` would stat the file and seek to learn a size the
    // caller already knows (two system calls of a small edit's dozen); a file that grew
    // since is still read to its end.
    file.take(u64::MAX)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(shown, "read", &e))?;
    Ok(bytes)
}

/// Refuses a directory or a special file, from metadata already at hand.
pub fn ensure_regular(meta: &Metadata, shown: &Path) -> ToolResult<()> {
    if meta.is_dir() {
        return Err(ToolError::invalid(format!(
            "{} is a directory, not a file",
            shown.display()
        )));
    }
    if let Some(kind) = describe_special(meta) {
        return Err(ToolError::invalid(format!(
            "{} is {kind}, not a regular file; it is never read",
            shown.display()
        )));
    }
    Ok(())
}

/// Fails with `FILE_TOO_LARGE` when `size` is over `limit`. `what` names the operation
/// ("view without view_range") and `fix` tells the agent what to do instead.
pub fn check_size(size: u64, limit: u64, shown: &Path, what: &str, fix: &str) -> ToolResult<()> {
    if size > limit {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{} is {size} bytes, over the {limit}-byte limit for {what} (--max-file-size); {fix}",
                shown.display(),
            ),
        ));
    }
    Ok(())
}

/// Reads a whole regular file that is known to be within the size limit.
pub fn read_file(real: &Path, shown: &Path, expected_size: u64) -> ToolResult<Vec<u8>> {
    let (file, _) = open_regular(real, shown)?;
    read_open(file, shown, expected_size)
}

/// The process id, asked once: it names every temporary file.
static PID: LazyLock<u32> = LazyLock::new(std::process::id);

/// The process umask, read once from /proc (`umask(2)` cannot read it without setting
/// it, which would race with other threads). `None` when unknown.
static UMASK: LazyLock<Option<u32>> = LazyLock::new(|| {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Umask:"))?;
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
});

/// Writes `bytes` to `real` so that a reader (or a crash) sees either the old content or
/// the new, never a mix: a temporary file in the same directory, fsync, rename over the
/// target. An existing file keeps its mode and, where the process may set it, its owner;
/// a new file gets [`NEW_FILE_MODE`].
///
/// The directory is not fsynced after the rename. That sync buys durability of the
/// rename, not atomicity: after a power cut without it the name may still point at the
/// old, complete file (the new one was synced before the rename, so it is never seen
/// half-written). It cost a third of a small edit, which agents make by the hundred.
pub fn atomic_write(real: &Path, shown: &Path, bytes: &[u8]) -> ToolResult<()> {
    let existing = match crate::beneath::metadata(real) {
        Ok(meta) => Some(meta),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e.into_tool(shown, "write")),
    };
    atomic_write_over(real, shown, bytes, existing.as_ref())
}

/// [`atomic_write`] with the target's metadata already at hand (`None`: a new file), so
/// an edit that has just read the file does not stat it again.
///
/// The parent directory is opened beneath its allowed root (`beneath`), and the
/// temporary file is created, and renamed over the target, inside that descriptor: a
/// directory swapped along the path after the check cannot carry the write elsewhere.
pub fn atomic_write_over(
    real: &Path,
    shown: &Path,
    bytes: &[u8],
    existing: Option<&Metadata>,
) -> ToolResult<()> {
    let parent = crate::beneath::parent(real).map_err(|e| e.into_tool(shown, "write"))?;
    let mode = existing
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(NEW_FILE_MODE);
    let (tmp_name, mut tmp) = create_temp_at(&parent, mode)
        .map_err(|e| ToolError::io(shown, "create a temporary file next to", &e))?;
    let unlink_tmp = || {
        let _ = nix::unistd::unlinkat(
            &parent.dir,
            tmp_name.as_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    };
    let written = fill(&mut tmp, bytes, mode, existing);
    if let Err(e) = written {
        unlink_tmp();
        return Err(ToolError::io(shown, "write", &e));
    }
    drop(tmp);
    if let Err(e) = nix::fcntl::renameat(
        &parent.dir,
        tmp_name.as_str(),
        &parent.dir,
        parent.name.as_os_str(),
    ) {
        unlink_tmp();
        return Err(ToolError::io(shown, "replace", &e.into()));
    }
    // After the write succeeded, and best effort: it never fails the edit.
    if let Some(dir) = real.parent() {
        sweep_stale_temp_files(dir, &parent.dir);
    }
    Ok(())
}

/// Creates `.boris-tmp-<pid>-<random>` inside `parent`'s directory descriptor, with the
/// final mode where the umask allows.
fn create_temp_at(parent: &crate::beneath::Parent, mode: u32) -> std::io::Result<(String, File)> {
    use nix::fcntl::OFlag;
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let perm = nix::sys::stat::Mode::from_bits_truncate(mode & 0o777);
    let mut tries = 0;
    loop {
        let name = format!(
            "{TEMP_PREFIX}{}-{}",
            *PID,
            crate::text::sentinel::new_nonce()
        );
        match nix::fcntl::openat(&parent.dir, name.as_str(), flags, perm) {
            Ok(fd) => return Ok((name, File::from(fd))),
            Err(nix::errno::Errno::EEXIST) if tries < 8 => tries += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Writes, sets mode and owner, syncs: the temporary file of an atomic write.
fn fill(
    file: &mut File,
    bytes: &[u8],
    mode: u32,
    existing: Option<&Metadata>,
) -> std::io::Result<()> {
    file.write_all(bytes)?;
    // The temporary file is created with the final mode; only what the umask takes
    // away (or special bits, which open(2) may drop) needs a chmod afterwards.
    let created_right = UMASK.is_some_and(|mask| mode & !0o777 == 0 && mode & mask == 0);
    if !created_right {
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    if let Some(meta) = existing {
        // Only root (or the owner, for the group) may change ownership; failing to is
        // not a reason to refuse the edit.
        let _ = std::os::unix::fs::fchown(&*file, Some(meta.uid()), Some(meta.gid()));
    }
    file.sync_all()
}

/// Writes `bytes` to a new file at `path` (it must not exist) and syncs it: a staged
/// file of a multi-file write (`journal`), renamed over its target later. It gets the
/// mode (and, where the process may set it, the owner) of `existing`, else
/// [`NEW_FILE_MODE`], as [`atomic_write`]'s temporary files do. Created inside its
/// parent opened beneath the allowed root (`beneath`).
pub fn write_synced(
    path: &Path,
    shown: &Path,
    bytes: &[u8],
    existing: Option<&Metadata>,
) -> ToolResult<()> {
    use nix::fcntl::OFlag;
    let mode = existing
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(NEW_FILE_MODE);
    let parent = crate::beneath::parent(path)
        .map_err(|e| e.into_tool(shown, "create a temporary file next to"))?;
    let fd = nix::fcntl::openat(
        &parent.dir,
        parent.name.as_os_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::from_bits_truncate(mode & 0o777),
    )
    .map_err(|e| ToolError::io(shown, "create a temporary file next to", &e.into()))?;
    let mut file = File::from(fd);
    fill(&mut file, bytes, mode, existing).map_err(|e| ToolError::io(shown, "write", &e))
}

/// When each directory written to should next be swept for stale temporary files:
/// `None` once a sweep found nothing left to wait for.
static TEMP_SWEEPS: LazyLock<Mutex<HashMap<PathBuf, Option<Instant>>>> =
    LazyLock::new(Mutex::default);

/// [`remove_stale_temp_files`] for `dir`, but not on every write (listing a large
/// directory per edit would cost more than the edit): once per directory per process,
/// plus again at most every [`STALE_TEMP_AGE`] while a dead writer's file is too young to
/// remove. A killed server's leftovers go at the next server's first write there.
fn sweep_stale_temp_files(dir: &Path, dir_fd: &std::os::fd::OwnedFd) {
    let now = Instant::now();
    let due = {
        let Ok(mut sweeps) = TEMP_SWEEPS.lock() else {
            return;
        };
        match sweeps.get(dir) {
            Some(None) => false,
            Some(Some(next)) if now < *next => false,
            _ => {
                // Claimed before the sweep, so concurrent writes do not sweep twice.
                sweeps.insert(dir.to_path_buf(), Some(now + STALE_TEMP_AGE));
                true
            }
        }
    };
    if !due {
        return;
    }
    let again = remove_stale_temp_files_at(dir_fd, STALE_TEMP_AGE);
    if let Ok(mut sweeps) = TEMP_SWEEPS.lock() {
        sweeps.insert(dir.to_path_buf(), again.then_some(now + STALE_TEMP_AGE));
    }
}

/// The pid in a temporary file name `.boris-tmp-<pid>-<random>`, if it is one.
fn temp_file_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?;
    let (pid, random) = rest.split_once('-')?;
    if random.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse::<i32>().ok().filter(|&p| p > 0)
}

/// Removes the temporary files in `dir` that a killed writer left behind: regular files
/// named `.boris-tmp-<pid>-<random>` whose process no longer exists (`kill(pid, 0)`
/// fails with `ESRCH`) and that were last modified more than `min_age` ago. Errors are
/// ignored: this is housekeeping, never a reason to fail a write.
///
/// Why this cannot remove a file someone still needs: only the process that created a
/// temporary file ever renames it (the name is random and never handed out), so once
/// that process is gone the file is garbage. A live process — including a new one that
/// reused the pid, or one owned by another user (`EPERM`) — keeps its files: the check
/// errs on the side of leaving a file. The age check covers what a pid cannot tell: a
/// writer in another pid namespace sharing the directory (a container with a bind
/// mount), whose pid means nothing here, is left alone while it is still writing (each
/// write moves the mtime), and only a file nobody touched for `min_age` goes. Nothing but
/// these names is touched: not the old-style names without a pid, not symlinks or
/// directories, not other programs' files.
///
/// Returns whether a dead writer's file was left only because it is too young, i.e.
/// whether a later sweep may have something to do.
pub fn remove_stale_temp_files(dir: &Path, min_age: Duration) -> bool {
    use nix::fcntl::OFlag;
    let Ok(fd) = crate::beneath::open(
        dir,
        OFlag::O_PATH | OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    ) else {
        return false;
    };
    remove_stale_temp_files_at(&fd, min_age)
}

/// [`remove_stale_temp_files`] in a directory already opened: listed, checked and
/// unlinked through that descriptor, never by path.
fn remove_stale_temp_files_at(dir: &std::os::fd::OwnedFd, min_age: Duration) -> bool {
    use nix::fcntl::AtFlags;
    use std::os::fd::AsRawFd;
    // The listing through the descriptor's /proc link: the directory opened, wherever its
    // name now points.
    let Ok(listing) = fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd())) else {
        return false;
    };
    let mut too_young = false;
    let now = SystemTime::now();
    for entry in listing.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_file_pid) else {
            continue;
        };
        if pid_is_alive(pid) {
            continue;
        }
        let Ok(st) = nix::sys::stat::fstatat(dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW)
        else {
            continue;
        };
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            continue;
        }
        let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(st.st_mtime.max(0) as u64);
        let old_enough = now.duration_since(modified).is_ok_and(|age| age >= min_age);
        if old_enough {
            let _ = nix::unistd::unlinkat(
                dir,
                name.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
        } else {
            too_young = true;
        }
    }
    too_young
}

/// Whether a process with this pid exists (in this pid namespace). Only `ESRCH` counts
/// as dead; `EPERM` means it exists but belongs to someone else.
pub(crate) fn pid_is_alive(pid: i32) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_keeps_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        atomic_write(&p, &p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let q = dir.path().join("new.txt");
        atomic_write(&q, &q, b"n").unwrap();
        assert_eq!(
            fs::metadata(&q).unwrap().permissions().mode() & 0o777,
            NEW_FILE_MODE
        );
    }

    #[test]
    fn temp_file_names_carry_the_pid() {
        assert_eq!(temp_file_pid(".boris-tmp-123-abcDEF"), Some(123));
        assert_eq!(temp_file_pid(".boris-tmp-123-"), None);
        assert_eq!(temp_file_pid(".boris-tmp-abcDEF"), None);
        assert_eq!(temp_file_pid(".boris-tmp-0-x"), None);
        assert_eq!(temp_file_pid(".boris-tmp--5-x"), None);
        assert_eq!(temp_file_pid(".boris-tmp-99999999999-x"), None);
        assert_eq!(temp_file_pid("boris-tmp-1-x"), None);
    }

    /// A pid that is certainly not alive: a child that has been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn stale_temp_files_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let old = SystemTime::now() - Duration::from_secs(60);
        let make = |name: &str, age: SystemTime| {
            let p = dir.path().join(name);
            fs::write(&p, "x").unwrap();
            File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(age)
                .unwrap();
        };
        let stale = format!("{TEMP_PREFIX}{dead}-aaaaaa");
        let fresh = format!("{TEMP_PREFIX}{dead}-bbbbbb");
        let live = format!("{TEMP_PREFIX}{}-cccccc", std::process::id());
        let legacy = format!("{TEMP_PREFIX}dddddd");
        make(&stale, old);
        make(&fresh, SystemTime::now());
        make(&live, old);
        make(&legacy, old);
        let link = format!("{TEMP_PREFIX}{dead}-eeeeee");
        std::os::unix::fs::symlink("x.txt", dir.path().join(&link)).unwrap();
        let p = dir.path().join("x.txt");
        atomic_write(&p, &p, b"new").unwrap();
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let mut want = vec![fresh, live, legacy, link, "x.txt".to_string()];
        want.sort();
        assert_eq!(names, want);
    }

    #[test]
    fn a_directory_is_swept_at_its_first_write_not_at_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.txt");
        atomic_write(&p, &p, b"1").unwrap(); // the sweep: nothing to remove or wait for
        let dead = dead_pid();
        let stale = dir.path().join(format!("{TEMP_PREFIX}{dead}-aaaaaa"));
        fs::write(&stale, "x").unwrap();
        File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        atomic_write(&p, &p, b"2").unwrap();
        assert!(
            stale.exists(),
            "the second write listed the directory again"
        );
        // What decides whether a later sweep is due: a dead writer's file too young to
        // judge means yes, nothing left means no.
        let young = dir.path().join(format!("{TEMP_PREFIX}{dead}-bbbbbb"));
        fs::write(&young, "x").unwrap();
        assert!(remove_stale_temp_files(dir.path(), STALE_TEMP_AGE));
        assert!(!stale.exists() && young.exists());
        fs::remove_file(&young).unwrap();
        assert!(!remove_stale_temp_files(dir.path(), STALE_TEMP_AGE));
    }
}

/// Serialises read-modify-write cycles on the same file, so two concurrent edits of one
/// file (from one session or several) cannot both read the old content and lose one of
/// the changes. Striped by path hash: a fixed, small amount of memory.
#[derive(Debug)]
pub struct PathLocks {
    stripes: Vec<std::sync::Mutex<()>>,
}

impl Default for PathLocks {
    fn default() -> Self {
        PathLocks {
            stripes: (0..64).map(|_| std::sync::Mutex::new(())).collect(),
        }
    }
}

impl PathLocks {
    /// Which lock `path` takes: two paths with the same one are serialised together
    /// (and must be locked through [`PathLocks::lock_many`] when held at once).
    pub fn stripe(&self, path: &Path) -> usize {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        path.hash(&mut h);
        (h.finish() as usize) % self.stripes.len()
    }

    pub fn lock(&self, path: &Path) -> std::sync::MutexGuard<'_, ()> {
        // A panic while holding the lock left no shared data behind it to repair.
        self.stripes[self.stripe(path)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The locks of several files (a multi-file patch), taken in stripe order and each
    /// once: two callers locking overlapping sets cannot deadlock, and two paths on one
    /// stripe do not lock it twice.
    pub fn lock_many<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a Path>,
    ) -> Vec<std::sync::MutexGuard<'_, ()>> {
        let mut stripes: Vec<usize> = paths.into_iter().map(|p| self.stripe(p)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        stripes
            .into_iter()
            .map(|i| self.stripes[i].lock().unwrap_or_else(|p| p.into_inner()))
            .collect()
    }
}
