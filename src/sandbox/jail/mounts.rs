//! What init mounts: the fresh `/proc`, Boris's files and other sessions' hidden under
//! placeholders, Unix sockets covered; the mounts `super::protect::Protector` makes as
//! the writable trees change.

use crate::sandbox::wire::Setup;
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
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

/// Whose `/dev/shm` the commands see. The jail's own tmpfs is writable like the session's
/// TMPDIR; the host's is shared with every program of the user (POSIX shared memory,
/// semaphores), so it is outside the writable directories unless `--sandbox-write` names
/// it (DEC-120).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shm {
    Private,
    Host,
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
pub(super) fn init_mounts(
    setup: &Setup,
    notes: &mut Vec<String>,
) -> Result<(Placeholders, Shm), String> {
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
    let shm = match mount(
        Some(Path::new("tmpfs")),
        Path::new("/dev/shm"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
    ) {
        Ok(()) => Shm::Private,
        Err(e) => {
            notes.push(format!(
                "/dev/shm is the host's ({e}): commands cannot write there"
            ));
            Shm::Host
        }
    };
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
    read_only_outside(setup, shm, notes);
    Ok((placeholders, shm))
}

/// Makes every mount read-only but the writable trees, the fresh `/proc` and the private
/// `/dev/shm` (DEC-123). Landlock governs a file's contents, not its mode, times or
/// extended attributes, so a command could otherwise change those on any file its user
/// owns outside the writable trees (`chmod u+s`, `chmod 644 ~/.ssh/id_ed25519`): a
/// read-only mount refuses them (EROFS). Each writable tree is first bound onto itself,
/// so the mount around it can be read-only while it is not; later mounts (placeholders,
/// `/dev/pts`) are made after this and keep their own flags.
fn read_only_outside(setup: &Setup, shm: Shm, notes: &mut Vec<String>) {
    let mut writable: Vec<PathBuf> = setup.write.clone();
    writable.push(setup.tmp());
    // Parents first: a nested tree is bound inside its parent's new mount.
    writable.sort();
    writable.dedup();
    for tree in &writable {
        if let Err(e) = mount(Some(tree), tree, None, libc::MS_BIND | libc::MS_REC)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            notes.push(format!("{} is not writable ({e})", tree.display()));
        }
    }
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        notes
            .push("file modes outside the writable directories not protected: no mountinfo".into());
        return;
    };
    let exempt = |p: &Path| {
        p == Path::new("/proc")
            || (shm == Shm::Private && p == Path::new("/dev/shm"))
            || writable.iter().any(|w| p.starts_with(w))
    };
    let mut failed = Vec::new();
    for (point, read_only) in mount_points(&info) {
        if read_only || exempt(&point) {
            continue;
        }
        if let Err(e) = set_read_only(&point) {
            if e.raw_os_error() == Some(libc::ENOSYS) {
                notes.push(
                    "file modes outside the writable directories not protected (mount_setattr \
                     needs Linux 5.12)"
                        .into(),
                );
                return;
            }
            failed.push(format!("{} ({e})", point.display()));
        }
    }
    if !failed.is_empty() {
        notes.push(format!(
            "file modes not protected under {}",
            failed.join(", ")
        ));
    }
}

/// Each mount point in `/proc/self/mountinfo` text (its fifth field, octal escapes
/// undone) and whether it is read-only already (its sixth).
fn mount_points(info: &str) -> Vec<(PathBuf, bool)> {
    info.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let point = fields.nth(4)?;
            let options = fields.next()?;
            let read_only = options.split(',').any(|o| o == "ro");
            Some((
                PathBuf::from(OsString::from_vec(unescape_octal(point))),
                read_only,
            ))
        })
        .collect()
}

/// `\040` → a space, as mountinfo writes spaces, tabs, newlines and backslashes.
fn unescape_octal(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// `mount_setattr(2)` with `MOUNT_ATTR_RDONLY` on the one mount at `point`: unlike a
/// remount it leaves the mount's other flags (nosuid, nodev, locked ones) alone.
fn set_read_only(point: &Path) -> std::io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 0x1;
    let c = CString::new(point.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            0 as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_read_with_their_escapes_and_read_only_flag() {
        let info = "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 0:5 / /dev ro,nosuid - devtmpfs udev rw\n\
                    41 22 0:40 / /home/u/My\\040Drive rw - fuse x rw\n\
                    bad line\n";
        assert_eq!(
            mount_points(info),
            vec![
                (PathBuf::from("/"), false),
                (PathBuf::from("/dev"), true),
                (PathBuf::from("/home/u/My Drive"), false),
            ]
        );
        assert_eq!(unescape_octal("a\\134b\\011"), b"a\\b\t".to_vec());
        assert_eq!(unescape_octal("tail\\04"), b"tail\\04".to_vec());
    }
}
