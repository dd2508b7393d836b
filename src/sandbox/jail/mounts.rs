//! What init mounts: the fresh `/proc`, Boris's files and other sessions' hidden under
//! placeholders, Unix sockets covered; the mounts `super::protect::Protector` makes as
//! the writable trees change.

use crate::sandbox::wire::Setup;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub(super) fn mount(
    src: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
) -> std::io::Result<()> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let src = src.and_then(c);
    let target = c(target).ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let fstype = fstype.and_then(|t| CString::new(t).ok());
    let rc = unsafe {
        libc::mount(
            src.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            target.as_ptr(),
            fstype.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            flags,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Binds `src` over `target`, read-only.
pub(super) fn bind_read_only(src: &Path, target: &Path) -> std::io::Result<()> {
    mount(Some(src), target, None, libc::MS_BIND | libc::MS_REC)?;
    mount(
        None,
        target,
        None,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
    )
}

/// An empty file and an empty directory, both mode 000, bound over what a command must
/// not read: opening either fails with "Permission denied" (capabilities are dropped, so
/// root's too). Held open, since the path they were made at may be hidden later.
pub(super) struct Placeholders {
    file: OwnedFd,
    dir: OwnedFd,
}

pub(super) fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        // SAFETY: just opened, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// Where a descriptor can be named as a mount source (once the new /proc is up, or the
/// host's before it).
pub(super) fn fd_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

pub(super) fn make_placeholders(setup: &Setup) -> std::io::Result<Placeholders> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    // In the session's directory, which commands may read but not write; a mode-000
    // file and directory hold nothing to read anyway.
    let file = setup.session.join("denied-file");
    let dir = setup.session.join("denied-dir");
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o000)
        .open(&file)?;
    match std::fs::DirBuilder::new().mode(0o000).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    Ok(Placeholders {
        file: open_path(&file)?,
        dir: open_path(&dir)?,
    })
}

/// Whether `path` still names the object `fd` was opened on.
pub(super) fn same_object(path: &Path, fd: &OwnedFd) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(now) = std::fs::metadata(path) else {
        return false;
    };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    now.dev() == st.st_dev && now.ino() == st.st_ino
}

/// The mounts made once, in init: a fresh /proc; an empty tmpfs over each hidden path
/// (Boris's files, other sessions'); a private /dev/shm; every granted tree the mounts
/// above buried (the session's own directory, read-only, and its TMPDIR) bound back at
/// its place; and a placeholder over every Unix socket outside the writable trees in the
/// places sockets live (Landlock before ABI 9 does not govern connecting to one).
pub(super) fn init_mounts(setup: &Setup, notes: &mut Vec<String>) -> Result<Placeholders, String> {
    // Nothing done here may reach the host's mount table.
    mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE)
        .map_err(|e| format!("making the mounts private: {e}"))?;
    let placeholders = make_placeholders(setup).map_err(|e| format!("placeholders: {e}"))?;
    let tmp = setup.tmp();
    // Everything granted, opened before the mounts that may bury it: (path, fd, writable).
    let granted: Vec<(PathBuf, OwnedFd, bool)> = setup
        .write
        .iter()
        .map(|p| (p, true))
        .chain(setup.read.iter().map(|p| (p, false)))
        .chain(std::iter::once((&setup.session, false)))
        .chain(std::iter::once((&tmp, true)))
        .filter_map(|(p, w)| open_path(p).ok().map(|fd| (p.clone(), fd, w)))
        .collect();
    if let Err(e) = mount(
        Some(Path::new("proc")),
        Path::new("/proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
    ) {
        // A container's /proc with masked entries forbids a fresh one (EPERM).
        notes.push(format!(
            "the server's /proc entries stay visible (a fresh /proc was refused: {e}); their \
             environment and memory are still unreadable"
        ));
    }
    for hidden in &setup.hidden {
        let covered = mount(
            Some(Path::new("tmpfs")),
            hidden,
            Some("tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        );
        if let Err(e) = covered
            && e.kind() != std::io::ErrorKind::NotFound
        {
            notes.push(format!("{} is not hidden: {e}", hidden.display()));
        }
    }
    if let Err(e) = mount(
        Some(Path::new("tmpfs")),
        Path::new("/dev/shm"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
    ) {
        notes.push(format!("/dev/shm is the host's ({e})"));
    }
    // Judged before any is bound back: a read-only bind back would hide what lies below.
    let buried: Vec<bool> = granted
        .iter()
        .map(|(p, fd, _)| !same_object(p, fd))
        .collect();
    let mut read_only_binds: Vec<&Path> = Vec::new();
    for ((path, fd, writable), buried) in granted.iter().zip(buried) {
        // A writable tree below a read-only bind (TMPDIR in the session's directory).
        let under_read_only = read_only_binds
            .iter()
            .any(|r| path.starts_with(r) && path != r);
        if !(buried || *writable && under_read_only) {
            continue;
        }
        let flags = libc::MS_BIND | libc::MS_REC;
        let made = std::fs::create_dir_all(path).and_then(|()| {
            if *writable {
                mount(Some(&fd_path(fd)), path, None, flags)
            } else {
                bind_read_only(&fd_path(fd), path)
            }
        });
        match made {
            Ok(()) if !*writable => read_only_binds.push(path),
            Ok(()) => {}
            Err(e) => notes.push(format!("{} is not reachable ({e})", path.display())),
        }
    }
    hide_sockets(setup, &placeholders, notes);
    Ok(placeholders)
}

/// Where pathname Unix sockets live: runtime directories, temporary ones, the home
/// directory's first levels (a rootless container engine's, an agent's).
pub(super) fn socket_places() -> Vec<(PathBuf, usize)> {
    let mut places: Vec<(PathBuf, usize)> = [
        "/run",
        "/var/run",
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/var/lib/docker",
        "/var/snap",
    ]
    .iter()
    .map(|p| (PathBuf::from(p), 6))
    .collect();
    for var in ["XDG_RUNTIME_DIR", "HOME"] {
        if let Some(dir) = std::env::var_os(var) {
            places.push((PathBuf::from(dir), 3));
        }
    }
    places
}

/// Covers every socket under [`socket_places`] (to their depth) that lies outside the
/// writable trees, so that connecting to it fails.
pub(super) fn hide_sockets(setup: &Setup, p: &Placeholders, notes: &mut Vec<String>) {
    use std::os::unix::fs::FileTypeExt;
    let writable = |path: &Path| setup.write.iter().any(|w| path.starts_with(w));
    let mut failed = 0;
    // A bound on the directories read, so a huge home costs the session's start little.
    let mut budget = 20_000usize;
    for (place, depth) in socket_places() {
        let mut stack = vec![(place, 0usize)];
        while let Some((dir, level)) = stack.pop() {
            if budget == 0 {
                notes.push(
                    "the search for Unix sockets to hide stopped at 20000 directories".into(),
                );
                return;
            }
            budget -= 1;
            if writable(&dir) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if kind.is_socket() && !writable(&path) {
                    if bind_read_only(&fd_path(&p.file), &path).is_err() {
                        failed += 1;
                    }
                } else if kind.is_dir() && level + 1 < depth {
                    stack.push((path, level + 1));
                }
            }
        }
    }
    if failed > 0 {
        notes.push(format!(
            "{failed} Unix sockets outside the writable directories could not be hidden"
        ));
    }
}

pub(super) fn cover(target: &Path, p: &Placeholders) -> std::io::Result<()> {
    let meta = std::fs::metadata(target)?;
    let src = if meta.is_dir() { &p.dir } else { &p.file };
    bind_read_only(&fd_path(src), target)
}
