//! The jail: one process per session that starts every command of that session, confined
//! (issue 18). Boris starts it as `boris __jail` (a re-exec of its own binary, so the jail
//! is a fresh single-threaded process that may allocate between `fork` and `exec`) with
//! the control socket as fd 3, sends [`Request::Setup`], then one [`Request::Spawn`] per
//! command.
//!
//! With namespaces the jail makes a user namespace (the caller's uid and gid mapped to
//! themselves), then mount and PID namespaces (and a network one when the network is
//! off) and forks their PID 1, the *init*, which does the rest: a fresh `/proc` (the
//! server and other sessions are not in it), a private `/dev/shm`, Boris's own files and
//! other sessions' hidden, the Unix sockets outside the writable trees covered (Landlock
//! before ABI 9 does not govern connecting to them), and before every command an unreadable
//! placeholder over each denied file and a read-only bind over git's config and hooks.
//! Each command then confines itself with Landlock (filesystem, TCP, abstract sockets)
//! and drops every capability before `exec`. When init dies — Boris closed the socket or
//! killed it — the kernel kills every process of the namespace: nothing a command started
//! outlives its session, daemon or not.
//!
//! Without namespaces (they are forbidden: Ubuntu 24.04's default, most containers) the
//! jail confines itself once with Landlock, signal scoping included, and its commands
//! share that one domain: they may signal each other, not the server nor other sessions.

use super::wire::{Reply, Request, Setup};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsString};
use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The control socket's descriptor in the jail.
pub const CONTROL_FD: RawFd = 3;

/// The largest message either side sends (a `SOCK_SEQPACKET` packet).
pub const MAX_MESSAGE: usize = 256 * 1024;

/// The jail's `main`: never returns.
pub fn main() -> ! {
    // SAFETY: Boris passes the control socket as fd 3 and nothing else owns it.
    let control = unsafe { OwnedFd::from_raw_fd(CONTROL_FD) };
    let code = match run(&control) {
        Ok(()) => 0,
        Err(e) => {
            let _ = send(&control, &Reply::SetupFailed { error: e });
            1
        }
    };
    std::process::exit(code)
}

fn run(control: &OwnedFd) -> Result<(), String> {
    let (request, _) = receive(control).map_err(|e| format!("no setup: {e}"))?;
    let Some(Request::Setup(setup)) = request else {
        return Err("the first message was not the setup".into());
    };
    let mut notes = Vec::new();
    let mut placeholders = None;
    if setup.namespaces {
        enter_namespaces(&setup)?;
        // Now PID 1 of the new namespace.
        placeholders = Some(init_mounts(&setup, &mut notes)?);
    } else {
        // Orphans (a double fork) are reparented here, so they are reaped and findable.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    }
    let ruleset = if setup.landlock_abi > 0 {
        Some(build_ruleset(&setup, &mut notes)?)
    } else {
        None
    };
    if !setup.namespaces
        && let Some(r) = &ruleset
    {
        // One domain for the whole session: its commands may signal one another.
        restrict(r)?;
    }
    send(control, &Reply::Ready { notes }).map_err(|e| e.to_string())?;
    serve(control, &setup, ruleset.as_ref(), placeholders)
}

/// User namespace first (it grants the rights the others need), then mount, PID and —
/// network off — network; then fork: the child is PID 1 and goes on, this process waits
/// for it and exits with it.
fn enter_namespaces(setup: &Setup) -> Result<(), String> {
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
        return Err(format!(
            "unshare(user): {}",
            std::io::Error::last_os_error()
        ));
    }
    write_proc("/proc/self/setgroups", "deny")?;
    write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
    write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1"))?;
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if !setup.network {
        flags |= libc::CLONE_NEWNET;
    }
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(format!(
            "unshare(mount, pid): {}",
            std::io::Error::last_os_error()
        ));
    }
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            // Init dies with the process that waits for it (Boris kills that one).
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            Ok(())
        }
        child => {
            // The waiter keeps no copy of the socket: Boris sees EOF when init is gone.
            unsafe { libc::close(CONTROL_FD) };
            let mut status = 0;
            while unsafe { libc::waitpid(child, &mut status, 0) } == -1
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
            std::process::exit(0)
        }
    }
}

fn write_proc(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))
}

fn mount(
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
fn bind_read_only(src: &Path, target: &Path) -> std::io::Result<()> {
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
struct Placeholders {
    file: OwnedFd,
    dir: OwnedFd,
}

fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
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
fn fd_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

fn make_placeholders(setup: &Setup) -> std::io::Result<Placeholders> {
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
fn same_object(path: &Path, fd: &OwnedFd) -> bool {
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
fn init_mounts(setup: &Setup, notes: &mut Vec<String>) -> Result<Placeholders, String> {
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
fn socket_places() -> Vec<(PathBuf, usize)> {
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
fn hide_sockets(setup: &Setup, p: &Placeholders, notes: &mut Vec<String>) {
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

fn cover(target: &Path, p: &Placeholders) -> std::io::Result<()> {
    let meta = std::fs::metadata(target)?;
    let src = if meta.is_dir() { &p.dir } else { &p.file };
    bind_read_only(&fd_path(src), target)
}

/// Keeps every denied path under the writable trees under a placeholder, and git's
/// config and hooks under a read-only bind, as the trees change: one walk when the jail
/// starts, with an inotify watch on every directory it visits; then, before each
/// command, only the directories that gained entries are looked at again. Where the
/// watches run out (`fs.inotify.max_user_watches`) or the event queue overflows, it walks
/// everything before every command instead.
struct Protector<'a> {
    setup: &'a Setup,
    deny: crate::scope::Scope,
    placeholders: Placeholders,
    inotify: Option<Inotify>,
    watched: HashMap<WatchDescriptor, PathBuf>,
    covered: HashSet<PathBuf>,
    walk_every_time: bool,
}

impl<'a> Protector<'a> {
    fn new(setup: &'a Setup, placeholders: Placeholders) -> Result<Protector<'a>, String> {
        let deny = crate::scope::Scope::new(Vec::new(), setup.deny_patterns.clone())
            .map_err(|e| format!("the deny list: {e}"))?;
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok();
        let mut p = Protector {
            setup,
            deny,
            placeholders,
            walk_every_time: inotify.is_none(),
            inotify,
            watched: HashMap::new(),
            covered: HashSet::new(),
        };
        for root in &setup.write {
            p.walk(root.clone(), true);
        }
        Ok(p)
    }

    /// Walks `dir`'s tree, protecting what it finds (and watching each directory).
    fn walk(&mut self, dir: PathBuf, watch: bool) {
        let mut stack = vec![dir];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            if watch {
                self.watch(&dir);
            }
            super::paths::scan_dir(
                &dir,
                &self.setup.write,
                &self.deny,
                self.setup.protect_git,
                &mut found,
                &mut stack,
            );
        }
        for (path, kind) in found {
            self.protect(path, kind);
        }
    }

    fn watch(&mut self, dir: &Path) {
        if self.walk_every_time {
            return;
        }
        let Some(inotify) = &self.inotify else {
            return;
        };
        let flags = AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_ONLYDIR
            | AddWatchFlags::IN_DONT_FOLLOW;
        match inotify.add_watch(dir, flags) {
            Ok(wd) => {
                self.watched.insert(wd, dir.to_path_buf());
            }
            // Out of watches: from now on, walk everything before each command.
            Err(nix::errno::Errno::ENOSPC) => self.walk_every_time = true,
            Err(_) => {}
        }
    }

    fn protect(&mut self, path: PathBuf, kind: super::paths::Protect) {
        if self.covered.contains(&path) {
            return;
        }
        let done = match kind {
            super::paths::Protect::Deny => cover(&path, &self.placeholders),
            super::paths::Protect::ReadOnly => bind_read_only(&path, &path),
        };
        if done.is_ok() {
            self.covered.insert(path);
        }
    }

    /// Before a command: protect what appeared since the last one.
    fn before_command(&mut self) {
        if self.walk_every_time {
            self.covered.clear();
            for root in self.setup.write.clone() {
                self.walk(root, false);
            }
            return;
        }
        let Some(inotify) = &self.inotify else {
            return;
        };
        let mut changed: Vec<PathBuf> = Vec::new();
        while let Ok(events) = inotify.read_events() {
            if events.is_empty() {
                break;
            }
            for e in events {
                if e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    self.walk_every_time = true;
                }
                if e.mask.contains(AddWatchFlags::IN_IGNORED) {
                    self.watched.remove(&e.wd);
                    continue;
                }
                let (Some(dir), Some(name)) = (self.watched.get(&e.wd), &e.name) else {
                    continue;
                };
                let path = dir.join(name);
                // A new entry at a covered name: the cover went with the old one.
                self.covered.remove(&path);
                if e.mask.contains(AddWatchFlags::IN_ISDIR) {
                    changed.push(path);
                } else if !changed.contains(dir) {
                    changed.push(dir.clone());
                }
            }
        }
        if self.walk_every_time {
            return self.before_command();
        }
        for path in changed {
            let known = self.watched.values().any(|d| d == &path);
            if known {
                // A directory that gained entries: look at it alone.
                let (mut found, mut subdirs) = (Vec::new(), Vec::new());
                super::paths::scan_dir(
                    &path,
                    &self.setup.write,
                    &self.deny,
                    self.setup.protect_git,
                    &mut found,
                    &mut subdirs,
                );
                for (p, kind) in found {
                    self.protect(p, kind);
                }
            } else if let Some(kind) =
                super::paths::classify(&path, &self.deny, self.setup.protect_git)
            {
                self.protect(path, kind);
            } else {
                // A new directory (made, or moved in): its whole tree.
                self.walk(path, true);
            }
        }
    }
}

fn build_ruleset(setup: &Setup, notes: &mut Vec<String>) -> Result<RulesetCreated, String> {
    let abi = ABI::from(setup.landlock_abi as i32);
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let err = |e: &dyn std::fmt::Display| format!("landlock: {e}");
    let mut ruleset = Ruleset::default()
        // Each right this ABI lacks would only be a smaller promise; `status` says which.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(|e| err(&e))?;
    let network_rules = !setup.network && abi >= ABI::V4;
    if network_rules {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err(&e))?;
    }
    if abi >= ABI::V6 {
        // Without a PID namespace, signal scoping is what keeps the server and other
        // sessions out of reach; with the network off, the network namespace already
        // isolates abstract sockets (and a command's own processes may use them).
        let scopes = match (setup.namespaces, setup.network) {
            (false, _) => Scope::Signal | Scope::AbstractUnixSocket,
            (true, true) => Scope::AbstractUnixSocket.into(),
            (true, false) => BitFlags::EMPTY,
        };
        if !scopes.is_empty() {
            ruleset = ruleset.scope(scopes).map_err(|e| err(&e))?;
        }
    }
    let mut created = ruleset.create().map_err(|e| err(&e))?;
    let mut add = |path: &Path, access| -> Result<(), String> {
        match PathFd::new(path) {
            Ok(fd) => {
                created
                    .as_mut()
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|e| err(&e))?;
                Ok(())
            }
            // A path that does not exist grants nothing.
            Err(_) => Ok(()),
        }
    };
    for path in super::paths::read_rules(&setup.read, &setup.hidden, setup.namespaces) {
        add(&path, read)?;
    }
    for path in &setup.write {
        add(path, all)?;
    }
    add(&setup.tmp(), all)?;
    // Its own output files (read-only: Boris writes them).
    add(&setup.session, read)?;
    let device = AccessFs::from_file(abi) & !AccessFs::Execute;
    for dev in super::paths::DEVICES {
        add(Path::new(dev), device)?;
    }
    add(Path::new("/dev/pts"), device | AccessFs::ReadDir)?;
    add(Path::new("/dev/shm"), all)?;
    if !setup.network && abi < ABI::V4 && !setup.namespaces {
        notes.push(format!(
            "network not blocked (Landlock ABI {} has no TCP rules)",
            setup.landlock_abi
        ));
    }
    Ok(created)
}

fn restrict(ruleset: &RulesetCreated) -> Result<(), String> {
    let status = ruleset
        .try_clone()
        .map_err(|e| format!("landlock: {e}"))?
        .restrict_self()
        .map_err(|e| format!("landlock: {e}"))?;
    if status.ruleset == landlock::RulesetStatus::NotEnforced {
        return Err("landlock: not enforced".into());
    }
    Ok(())
}

fn serve(
    control: &OwnedFd,
    setup: &Setup,
    ruleset: Option<&RulesetCreated>,
    placeholders: Option<Placeholders>,
) -> Result<(), String> {
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    chld.thread_block().map_err(|e| e.to_string())?;
    let sfd = SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .map_err(|e| e.to_string())?;
    let mut protector = match placeholders {
        Some(p) => Some(Protector::new(setup, p)?),
        None => None,
    };
    let mut running: HashMap<i32, u64> = HashMap::new();
    loop {
        let mut fds = [
            libc::pollfd {
                fd: control.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: sfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            continue; // EINTR
        }
        if fds[1].revents != 0 {
            while sfd.read_signal().ok().flatten().is_some() {}
            reap(control, &mut running);
        }
        if fds[0].revents != 0 {
            match receive(control) {
                Ok((
                    Some(Request::Spawn {
                        id,
                        argv,
                        cwd,
                        env,
                        terminal,
                    }),
                    passed,
                )) => {
                    if let Some(p) = protector.as_mut() {
                        p.before_command();
                    }
                    match spawn(
                        control,
                        ruleset.filter(|_| setup.namespaces),
                        id,
                        &argv,
                        &cwd,
                        &env,
                        terminal,
                        &passed,
                    ) {
                        Ok(pid) => {
                            running.insert(pid, id);
                        }
                        Err(error) => {
                            let _ = send(control, &Reply::SpawnFailed { id, error });
                        }
                    }
                }
                Ok((Some(Request::Setup(_)), _)) => {}
                // EOF: Boris is gone or closed the session. Init's death ends the rest.
                Ok((None, _)) => return Ok(()),
                Err(_) => return Ok(()),
            }
        }
    }
}

/// Reaps every child that exited and reports the commands among them.
fn reap(control: &OwnedFd, running: &mut HashMap<i32, u64>) {
    loop {
        let mut status = 0;
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if let Some(id) = running.remove(&pid) {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                -1
            };
            let _ = send(control, &Reply::Exited { id, code });
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn spawn(
    control: &OwnedFd,
    ruleset: Option<&RulesetCreated>,
    id: u64,
    argv: &[OsString],
    cwd: &Path,
    env: &[OsString],
    terminal: bool,
    passed: &[OwnedFd],
) -> Result<i32, String> {
    if passed.len() != 3 {
        return Err(format!("expected 3 descriptors, got {}", passed.len()));
    }
    let cstr = |s: &[u8]| CString::new(s).map_err(|_| "a NUL byte in an argument".to_string());
    let argv_c: Vec<CString> = argv
        .iter()
        .map(|a| cstr(a.as_bytes()))
        .collect::<Result<_, _>>()?;
    let env_c: Vec<CString> = env
        .iter()
        .map(|e| cstr(e.as_bytes()))
        .collect::<Result<_, _>>()?;
    let Some(program) = argv_c.first() else {
        return Err("empty argv".into());
    };
    let cwd_c = cstr(cwd.as_os_str().as_bytes())?;
    let mut argv_p: Vec<*const libc::c_char> = argv_c.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut env_p: Vec<*const libc::c_char> = env_c.iter().map(|a| a.as_ptr()).collect();
    env_p.push(std::ptr::null());
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            let fail = |what: &str| -> ! {
                let error = format!("{what}: {}", std::io::Error::last_os_error());
                let _ = send(control, &Reply::SpawnFailed { id, error });
                unsafe { libc::_exit(127) }
            };
            unsafe {
                let empty: libc::sigset_t = std::mem::zeroed();
                libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                if terminal {
                    libc::setsid();
                } else {
                    libc::setpgid(0, 0);
                }
                for (i, fd) in passed.iter().enumerate() {
                    if libc::dup2(fd.as_raw_fd(), i as RawFd) < 0 {
                        fail("dup2");
                    }
                }
                if terminal && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    fail("the terminal");
                }
                if libc::chdir(cwd_c.as_ptr()) != 0 {
                    fail(&format!("cd {}", cwd.display()));
                }
            }
            if let Some(r) = ruleset
                && let Err(e) = restrict(r)
            {
                let _ = send(control, &Reply::SpawnFailed { id, error: e });
                unsafe { libc::_exit(127) }
            }
            drop_capabilities();
            // The packet's credentials carry this process's pid as Boris sees it.
            if send(control, &Reply::Started { id }).is_err() {
                unsafe { libc::_exit(127) }
            }
            unsafe {
                // Only 0, 1, 2 stay open in the command; the control socket closes at exec.
                libc::fcntl(control.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
                let c = control.as_raw_fd() as libc::c_uint;
                libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, c - 1, 0);
                libc::syscall(libc::SYS_close_range, c + 1, libc::c_uint::MAX, 0);
                libc::execve(program.as_ptr(), argv_p.as_ptr(), env_p.as_ptr());
            }
            fail(&format!("exec {}", argv[0].to_string_lossy()))
        }
        pid => Ok(pid),
    }
}

/// No capability survives into a command, root's included: no `CAP_DAC_OVERRIDE` past a
/// placeholder, no `CAP_SYS_ADMIN` for a mount, no raw sockets past a network rule.
fn drop_capabilities() {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        // Needs CAP_SETPCAP; without it there is nothing to drop but what exec drops.
        libc::prctl(
            libc::PR_SET_SECUREBITS,
            SECBIT_NOROOT
                | SECBIT_NOROOT_LOCKED
                | SECBIT_NO_SETUID_FIXUP
                | SECBIT_NO_SETUID_FIXUP_LOCKED
                | SECBIT_KEEP_CAPS_LOCKED
                | SECBIT_NO_CAP_AMBIENT_RAISE
                | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
            0,
            0,
            0,
        );
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let mut header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &mut header, data.as_ptr());
    }
}

/// Sends one message (no descriptors).
pub fn send(fd: &OwnedFd, reply: &Reply) -> std::io::Result<()> {
    let bytes = reply.encode();
    let n = unsafe {
        libc::send(
            fd.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// One packet off a jail's control socket.
pub(crate) struct Packet {
    /// How many bytes of the buffer it filled (0: end of file).
    pub len: usize,
    /// The descriptors it carried (`SCM_RIGHTS`).
    pub fds: Vec<OwnedFd>,
    /// Its sender's pid as the receiver sees it, where the socket passes credentials.
    pub pid: Option<i32>,
}

/// Receives one packet into `buf` (both sides of the socket use it).
pub(crate) fn recv_packet(fd: &OwnedFd, buf: &mut [u8]) -> std::io::Result<Packet> {
    let mut cmsg = nix::cmsg_space!([RawFd; 3], libc::ucred);
    loop {
        let mut iov = [IoSliceMut::new(buf)];
        match recvmsg::<()>(
            fd.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => {
                let mut packet = Packet {
                    len: msg.bytes,
                    fds: Vec::new(),
                    pid: None,
                };
                if let Ok(cmsgs) = msg.cmsgs() {
                    for c in cmsgs {
                        match c {
                            // SAFETY: the kernel just installed these descriptors for us.
                            ControlMessageOwned::ScmRights(raw) => packet.fds.extend(
                                raw.into_iter().map(|r| unsafe { OwnedFd::from_raw_fd(r) }),
                            ),
                            ControlMessageOwned::ScmCredentials(creds) => {
                                packet.pid = Some(creds.pid())
                            }
                            _ => {}
                        }
                    }
                }
                return Ok(packet);
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receives one request and the descriptors it carries; `None` at end of file.
fn receive(fd: &OwnedFd) -> std::io::Result<(Option<Request>, Vec<OwnedFd>)> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let packet = recv_packet(fd, &mut buf)?;
    if packet.len == 0 {
        return Ok((None, packet.fds));
    }
    let request = Request::decode(&buf[..packet.len])
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    Ok((Some(request), packet.fds))
}
