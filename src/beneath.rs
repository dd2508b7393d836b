//! Opening a checked path without a race (issue 25 §2).
//!
//! [`crate::scope::Scope::resolve`] decides on a path's *name*: it follows every symlink
//! and checks where that leads. Between that check and an open by name, a command
//! running beside the tools can swap a directory along the path for a symlink to
//! outside (`renameat2(RENAME_EXCHANGE)`), and the open follows it. So the file tools
//! never open by name: the resolved path (`real`, which has no symlink and no `..` by
//! construction) is opened beneath a descriptor of the allowed directory holding it,
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` — or,
//! where the kernel lacks `openat2`, one `O_NOFOLLOW` component at a time. A symlink met
//! then was swapped in after the check: the open is tried once more (a swap in a loop
//! may have been undone) and otherwise refused, never followed.
//!
//! What was opened is the object the checked name named at that instant: the kernel
//! walked exactly those names (no symlink, never above the root). The deny list goes by
//! name, so that is the name it is judged by. A file with several links is checked again
//! by identity, its `(dev, inode)` against the denied files' (see
//! [`Policy::denied_inode`]): a hard link is another name for denied bytes.
//!
//! What the name cannot show is a denied directory or file renamed (or exchanged with
//! `RENAME_EXCHANGE`) to an allowed name. The file tools do not look for that after the
//! open (they once read the descriptor's current name from `/proc/self/fd`: a check that
//! sees only a rename undone between the open and the look, at about 4.5 µs an open,
//! issue 25 §2's cost): whoever can make such a rename beats any name check without a
//! race, by renaming and leaving it so. A confined command cannot (a covered path is a
//! mount point; `spec/sandbox/denied-renamed-into-allowed-name.yaml`); with the sandbox
//! off, or Landlock alone, commands read the denied names directly anyway (DEC-100).
//!
//! Writes create their temporary file and rename it inside the parent directory they
//! opened this way ([`crate::fsutil::atomic_write`]), never by path.
//!
//! The process has one policy ([`install`], from the server's configuration). Without
//! one (unit tests, tools run outside a server) paths are opened beneath `/`, still
//! refusing any symlink along them.

use crate::error::{ErrorCode, ToolError};
use crate::scope::Scope;
use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;
use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the set of denied files' inodes is trusted before it is listed again.
const DENIED_INODES_TTL: Duration = Duration::from_secs(10);

/// When the denied files' `(dev, inode)` were listed, and the list.
type DeniedInodes = (Instant, HashSet<(u64, u64)>);

/// The server's path rules, and a descriptor of each directory paths are opened beneath.
pub struct Policy {
    scope: Scope,
    /// Allowed (and read-only) roots, outermost first: a path is opened beneath the first
    /// that holds it.
    anchors: Vec<(PathBuf, OwnedFd)>,
    roots: Vec<PathBuf>,
    /// The read-only roots: the server's temporary root.
    private: Vec<PathBuf>,
    denied_inodes: Mutex<Option<DeniedInodes>>,
}

static POLICY: OnceLock<Policy> = OnceLock::new();

/// `/`, for paths under no root (and when no policy is installed).
static SLASH: LazyLock<Option<OwnedFd>> = LazyLock::new(|| open_dir_by_name(Path::new("/")).ok());

/// Whether `openat2` is missing (ENOSYS): then the component walk is used.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// A test build's switch (the `probe-simulation` feature; a release build has none, as
/// for `BORIS_SANDBOX_PROBE`): with `BORIS_TEST_UNCHECKED_FILE_TOOLS=1` a checked path
/// is opened by name, following symlinks, and what was opened is not checked again —
/// the file tools as they were before this module. An escape case's control turns it
/// on to show its attack succeed without this defence (issue 25 §1).
static UNCHECKED: LazyLock<bool> = LazyLock::new(|| {
    cfg!(feature = "probe-simulation")
        && std::env::var_os("BORIS_TEST_UNCHECKED_FILE_TOOLS").is_some_and(|v| v == "1")
});

/// Sets the process's policy: `scope`'s allowed directories and `read_only` ones are
/// opened now and every later open is made beneath them. Only the first call counts.
pub fn install(scope: &Scope, read_only: &[PathBuf]) {
    let mut roots: Vec<PathBuf> = scope
        .allow_dirs()
        .iter()
        .chain(read_only)
        .cloned()
        .collect();
    roots.sort_by_key(|p| p.components().count());
    let anchors = roots
        .iter()
        .filter_map(|r| open_dir_by_name(r).ok().map(|fd| (r.clone(), fd)))
        .collect();
    let _ = POLICY.set(Policy {
        scope: scope.clone(),
        anchors,
        roots,
        private: read_only.to_vec(),
        denied_inodes: Mutex::default(),
    });
}

fn open_dir_by_name(dir: &Path) -> nix::Result<OwnedFd> {
    nix::fcntl::open(
        dir,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Why an open was refused or failed.
#[derive(Debug)]
pub enum Error {
    /// A symlink or an escape met where the checked path had none: something was
    /// swapped along it after the check.
    Raced,
    /// What was opened is denied (reached through a renamed directory, or a hard link).
    Denied(String),
    Io(std::io::Error),
}

impl From<Errno> for Error {
    fn from(e: Errno) -> Self {
        Error::Io(std::io::Error::from(e))
    }
}

impl Error {
    /// The tool error for `shown`, `action` being what the tool was doing ("read").
    pub fn into_tool(self, shown: &Path, action: &str) -> ToolError {
        match self {
            Error::Raced => ToolError::new(
                ErrorCode::AccessDenied,
                format!(
                    "{} changed while it was being opened to {action}: a symlink or a \
                     directory was swapped in along it after it was checked; nothing was \
                     opened through it. Try again once nothing renames it.",
                    shown.display()
                ),
            ),
            Error::Denied(why) => ToolError::new(
                ErrorCode::AccessDenied,
                format!("{} was not opened: {why}", shown.display()),
            ),
            Error::Io(e) => ToolError::io(shown, action, &e),
        }
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The directory to open `real` beneath and the path relative to it.
fn anchor(real: &Path) -> Result<(BorrowedFd<'static>, &Path)> {
    if let Some(policy) = POLICY.get() {
        for (root, fd) in &policy.anchors {
            if let Ok(rel) = real.strip_prefix(root) {
                return Ok((fd.as_fd(), rel));
            }
        }
    }
    let slash = SLASH.as_ref().ok_or(Error::Io(std::io::Error::other(
        "cannot open the root directory",
    )))?;
    let rel = real.strip_prefix("/").map_err(|_| Error::Raced)?;
    Ok((slash.as_fd(), rel))
}

/// Opens `rel` beneath `dir`, following no symlink and never leaving `dir`.
pub fn open_at(dir: BorrowedFd<'_>, rel: &Path, flags: OFlag, mode: Mode) -> Result<OwnedFd> {
    // A checked path has only plain names; anything else is refused, not interpreted.
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Error::Raced);
    }
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    // `openat2` refuses with `O_PATH` any flag `O_PATH` ignores.
    let flags = if flags.contains(OFlag::O_PATH) {
        flags | OFlag::O_CLOEXEC
    } else {
        flags | OFlag::O_CLOEXEC | OFlag::O_NOCTTY
    };
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let how = OpenHow::new().flags(flags).mode(mode).resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
        match nix::fcntl::openat2(dir, rel, how) {
            Ok(fd) => return Ok(fd),
            Err(Errno::ENOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            // Older container runtimes' seccomp filters refuse openat2 with EPERM: the
            // walk decides (an EPERM of the file itself comes back from it too).
            Err(Errno::EPERM) => {}
            Err(Errno::ELOOP | Errno::EXDEV) => return Err(Error::Raced),
            Err(e) => return Err(e.into()),
        }
    }
    walk(dir, rel, flags, mode)
}

/// [`open_at`] without `openat2`: each directory opened `O_NOFOLLOW | O_DIRECTORY` from
/// the one before.
pub fn walk(dir: BorrowedFd<'_>, rel: &Path, flags: OFlag, mode: Mode) -> Result<OwnedFd> {
    let names: Vec<&std::ffi::OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let Some((last, parents)) = names.split_last() else {
        return Ok(nix::fcntl::openat(dir, ".", flags, mode)?);
    };
    let mut held: Option<OwnedFd> = None;
    for name in parents {
        let at = held.as_ref().map_or(dir, |f| f.as_fd());
        let next = nix::fcntl::openat(
            at,
            *name,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::ELOOP | Errno::ENOTDIR if is_symlink_at(at, name) => Error::Raced,
            e => e.into(),
        })?;
        held = Some(next);
    }
    let at = held.as_ref().map_or(dir, |f| f.as_fd());
    let fd =
        nix::fcntl::openat(at, *last, flags | OFlag::O_NOFOLLOW, mode).map_err(|e| match e {
            Errno::ELOOP => Error::Raced,
            e => e.into(),
        })?;
    // `O_PATH | O_NOFOLLOW` opens a symlink itself instead of failing.
    if flags.contains(OFlag::O_PATH)
        && nix::sys::stat::fstat(&fd).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
    {
        return Err(Error::Raced);
    }
    Ok(fd)
}

fn is_symlink_at(dir: BorrowedFd<'_>, name: &std::ffi::OsStr) -> bool {
    nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// Opens the checked path `real` (absolute, no symlink, no `..`) with `flags`, beneath
/// its root; a race met is retried once, then refused.
pub fn open(real: &Path, flags: OFlag, mode: Mode) -> Result<OwnedFd> {
    if *UNCHECKED {
        return Ok(nix::fcntl::open(real, flags | OFlag::O_CLOEXEC, mode)?);
    }
    let (dir, rel) = anchor(real)?;
    match open_at(dir, rel, flags, mode) {
        Err(Error::Raced) => open_at(dir, rel, flags, mode),
        other => other,
    }
}

/// Opens `real` for reading (`O_NONBLOCK`: a FIFO put there does not block the open; a
/// special file is refused by the caller from the metadata) and checks what was opened.
pub fn open_read(real: &Path) -> Result<(File, Metadata)> {
    let fd = open(real, OFlag::O_RDONLY | OFlag::O_NONBLOCK, Mode::empty())?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(Error::Io)?;
    verify(&meta)?;
    Ok((file, meta))
}

/// The metadata of `real`, without following a symlink swapped in along it.
pub fn metadata(real: &Path) -> Result<Metadata> {
    let file = File::from(open(real, OFlag::O_PATH, Mode::empty())?);
    let meta = file.metadata().map_err(Error::Io)?;
    verify(&meta)?;
    Ok(meta)
}

/// A directory opened beneath its root, and the name of `real` inside it: what a write
/// creates, renames or removes with `*at` calls on that descriptor.
pub struct Parent {
    pub dir: OwnedFd,
    pub name: OsString,
}

/// Opens the parent directory of `real` and checks it.
pub fn parent(real: &Path) -> Result<Parent> {
    let (Some(dir), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(Error::Io(std::io::Error::from(
            std::io::ErrorKind::InvalidInput,
        )));
    };
    let fd = open(dir, OFlag::O_PATH | OFlag::O_DIRECTORY, Mode::empty())?;
    Ok(Parent {
        dir: fd,
        name: name.to_os_string(),
    })
}

/// Whether the file tools' checks are off (a test build's control, [`UNCHECKED`]).
pub fn unchecked() -> bool {
    *UNCHECKED
}

/// Makes `real` and every missing directory above it, beneath its root.
pub fn create_dir_all(real: &Path) -> Result<()> {
    if *UNCHECKED {
        return std::fs::create_dir_all(real).map_err(Error::Io);
    }
    let (root, rel) = anchor(real)?;
    let mut held: Option<OwnedFd> = None;
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            return Err(Error::Raced);
        };
        let at = held.as_ref().map_or(root, |f| f.as_fd());
        let dir_flags = OFlag::O_PATH | OFlag::O_DIRECTORY;
        let next = match open_at(at, Path::new(name), dir_flags, Mode::empty()) {
            Err(e) if e.is_not_found() => {
                match nix::sys::stat::mkdirat(at, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                open_at(at, Path::new(name), dir_flags, Mode::empty())?
            }
            other => other?,
        };
        held = Some(next);
    }
    Ok(())
}

/// Removes the file `real` (not a directory) inside the parent opened beneath its root.
pub fn remove_file(real: &Path) -> Result<()> {
    let p = parent(real)?;
    nix::unistd::unlinkat(
        p.dir.as_fd(),
        p.name.as_os_str(),
        nix::unistd::UnlinkatFlags::NoRemoveDir,
    )?;
    Ok(())
}

/// Renames `from` over `to`, both opened beneath their roots (a staged file over its
/// target, in the same directory or not).
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    let a = parent(from)?;
    let b = parent(to)?;
    nix::fcntl::renameat(
        a.dir.as_fd(),
        a.name.as_os_str(),
        b.dir.as_fd(),
        b.name.as_os_str(),
    )?;
    Ok(())
}

/// Opens for reading a file a walk found (grep): `walked` may pass through a symlink the
/// walk followed, so one met is resolved, checked against the policy and opened by its
/// real path, beneath its root like any other. `None`: not a regular file, refused, or
/// gone.
pub fn open_found(walked: &Path) -> Option<File> {
    let opened = match open_read(walked) {
        Err(Error::Raced) => {
            let real = crate::scope::resolve_links(&crate::scope::RealFs, walked).ok()?;
            if let Some(policy) = POLICY.get() {
                policy.check_name(&real).ok()?;
            }
            open_read(&real).ok()?
        }
        other => other.ok()?,
    };
    let (file, meta) = opened;
    meta.is_file().then_some(file)
}

/// Whether a walk must not enter `path`: the server's temporary root (every session's
/// command output), unless the walk started inside it — only the caller's own
/// session's directory can be resolved there (issue 25, X9).
pub fn is_private(path: &Path, walk_root: &Path) -> bool {
    POLICY.get().is_some_and(|p| {
        p.private
            .iter()
            .any(|d| path.starts_with(d) && !walk_root.starts_with(d))
    })
}

/// Checks an opened file by what it is, beyond the name it was opened by (which passed
/// the deny list and the roots: the scope's check, or a walk's filter): a file with
/// several links may be a denied file's other name.
fn verify(meta: &Metadata) -> Result<()> {
    let Some(policy) = POLICY.get().filter(|_| !*UNCHECKED) else {
        return Ok(());
    };
    if meta.is_file() && meta.nlink() > 1 && policy.denied_inode(meta.dev(), meta.ino()) {
        return Err(Error::Denied(
            "it is a hard link to a file the deny list (--deny-dir) covers".to_string(),
        ));
    }
    Ok(())
}

impl Policy {
    /// Refuses a current name that is denied or outside every root.
    fn check_name(&self, now: &Path) -> Result<()> {
        if let Some(pattern) = self.scope.denied_by(now) {
            return Err(Error::Denied(format!(
                "what it reached is now {}, denied by the pattern {pattern:?} (--deny-dir)",
                now.display()
            )));
        }
        if !self.roots.iter().any(|r| now.starts_with(r)) {
            return Err(Error::Raced);
        }
        Ok(())
    }

    /// Whether `(dev, ino)` is a denied file's. The set is made by listing the allowed
    /// directories for files the deny list covers that have more than one link (only
    /// such a file can be reached by another, allowed, name); it is listed when a file
    /// with several links is first opened and again when older than
    /// [`DENIED_INODES_TTL`]. Most files have one link and never pay for it.
    fn denied_inode(&self, dev: u64, ino: u64) -> bool {
        if self.scope.deny_patterns().is_empty() {
            return false;
        }
        let Ok(mut slot) = self.denied_inodes.lock() else {
            return true;
        };
        let fresh = slot
            .as_ref()
            .is_some_and(|(at, _)| at.elapsed() < DENIED_INODES_TTL);
        if !fresh {
            *slot = Some((Instant::now(), self.list_denied_inodes()));
        }
        slot.as_ref()
            .is_some_and(|(_, set)| set.contains(&(dev, ino)))
    }

    fn list_denied_inodes(&self) -> HashSet<(u64, u64)> {
        let mut set = HashSet::new();
        for root in &self.roots {
            let walk = ignore::WalkBuilder::new(root)
                .standard_filters(false)
                .follow_links(false)
                .build();
            for entry in walk.flatten() {
                if !self.scope.is_denied(entry.path()) {
                    continue;
                }
                if let Ok(m) = entry.path().symlink_metadata()
                    && m.is_file()
                    && m.nlink() > 1
                {
                    set.insert((m.dev(), m.ino()));
                }
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// `ws/d/f.txt` inside, `outside/f.txt` beside it; returns (tempdir, ws, outside).
    fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let (ws, outside) = (root.join("ws"), root.join("outside"));
        fs::create_dir_all(ws.join("d")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(ws.join("d/f.txt"), "inside").unwrap();
        fs::write(outside.join("f.txt"), "OUTSIDE").unwrap();
        (tmp, ws, outside)
    }

    /// What a racing command does between the check and the open: `ws/d` becomes a
    /// symlink to outside.
    fn swap_in_link(ws: &Path, outside: &Path) {
        fs::rename(ws.join("d"), ws.join("d.moved")).unwrap();
        std::os::unix::fs::symlink(outside, ws.join("d")).unwrap();
    }

    #[test]
    fn a_symlink_swapped_in_after_the_check_is_refused_not_followed() {
        let (_tmp, ws, outside) = layout();
        let real = ws.join("d/f.txt"); // checked: no symlink along it
        swap_in_link(&ws, &outside);
        assert!(matches!(open_read(&real), Err(Error::Raced)));
        assert!(matches!(metadata(&real), Err(Error::Raced)));
        // The tools' layer: a read says what happened; a write writes nothing outside.
        let err = crate::fsutil::read_file(&real, &real, 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied, "{}", err.message);
        assert!(err.message.contains("swapped"), "{}", err.message);
        let err = crate::fsutil::atomic_write(&real, &real, b"PLANTED").unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied, "{}", err.message);
        let new = ws.join("d/new.txt");
        assert!(crate::fsutil::atomic_write(&new, &new, b"PLANTED").is_err());
        assert!(create_dir_all(&ws.join("d/sub")).is_err());
        assert!(remove_file(&real).is_err());
        assert_eq!(
            fs::read_to_string(outside.join("f.txt")).unwrap(),
            "OUTSIDE"
        );
        let names: Vec<_> = fs::read_dir(&outside).unwrap().collect();
        assert_eq!(names.len(), 1, "something was created outside");
    }

    #[test]
    fn the_component_walk_refuses_a_swapped_symlink_too() {
        // The fallback for kernels without openat2, driven directly.
        let (_tmp, ws, outside) = layout();
        let root = open_dir_by_name(&ws).unwrap();
        let fd = walk(
            root.as_fd(),
            Path::new("d/f.txt"),
            OFlag::O_RDONLY,
            Mode::empty(),
        );
        assert!(fd.is_ok());
        swap_in_link(&ws, &outside);
        for flags in [OFlag::O_RDONLY, OFlag::O_PATH] {
            let fd = walk(root.as_fd(), Path::new("d/f.txt"), flags, Mode::empty());
            assert!(matches!(fd, Err(Error::Raced)), "{flags:?}: {fd:?}");
        }
        // A symlink as the last component, too (O_PATH would open the link itself).
        std::os::unix::fs::symlink(outside.join("f.txt"), ws.join("last")).unwrap();
        for flags in [OFlag::O_RDONLY, OFlag::O_PATH] {
            let fd = walk(root.as_fd(), Path::new("last"), flags, Mode::empty());
            assert!(matches!(fd, Err(Error::Raced)), "{flags:?}");
            let fd = open_at(root.as_fd(), Path::new("last"), flags, Mode::empty());
            assert!(matches!(fd, Err(Error::Raced)), "{flags:?}");
        }
    }

    #[test]
    fn dotdot_never_leaves_the_directory() {
        let (_tmp, ws, _outside) = layout();
        let root = open_dir_by_name(&ws.join("d")).unwrap();
        for rel in ["../../outside/f.txt", "../d/f.txt", "/etc/passwd"] {
            for opened in [
                open_at(root.as_fd(), Path::new(rel), OFlag::O_RDONLY, Mode::empty()),
                walk(root.as_fd(), Path::new(rel), OFlag::O_RDONLY, Mode::empty()),
            ] {
                assert!(opened.is_err(), "{rel} was opened");
            }
        }
        // A symlink to `..` placed in the directory: refused as any symlink is.
        std::os::unix::fs::symlink("..", ws.join("d/up")).unwrap();
        let opened = open_at(
            root.as_fd(),
            Path::new("up/d/f.txt"),
            OFlag::O_RDONLY,
            Mode::empty(),
        );
        assert!(matches!(opened, Err(Error::Raced)));
    }

    #[test]
    fn writes_happen_inside_the_opened_parent() {
        let (_tmp, ws, _outside) = layout();
        let target = ws.join("d/f.txt");
        crate::fsutil::atomic_write(&target, &target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        let deep = ws.join("a/b/c");
        create_dir_all(&deep).unwrap();
        assert!(deep.is_dir());
        rename(&target, &deep.join("g.txt")).unwrap();
        assert_eq!(fs::read_to_string(deep.join("g.txt")).unwrap(), "new");
        remove_file(&deep.join("g.txt")).unwrap();
        assert!(!deep.join("g.txt").exists());
    }
}
