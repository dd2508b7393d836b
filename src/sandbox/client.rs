//! Boris's side of a session's jail: start it, ask it to run commands, hear of their ends.

use super::Sandbox;
use super::exit::Exit;
use super::jail::{CONTROL_FD, MAX_MESSAGE};
use super::wire::{Reply, Request, Setup};
use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, sendmsg, setsockopt, socketpair,
    sockopt,
};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::watch;

/// How long a jail may take to set up, and a command to be started.
const START_LIMIT: Duration = Duration::from_secs(10);

type Ack = mpsc::Sender<Result<i32, String>>;
type TerminalAck = mpsc::Sender<Result<(OwnedFd, OwnedFd), String>>;

#[derive(Default)]
struct Waiting {
    /// Spawns not yet acknowledged.
    acks: HashMap<u64, Ack>,
    /// Pseudo-terminals asked for and not yet answered.
    terminals: HashMap<u64, TerminalAck>,
    /// Commands running: where their exit goes.
    exits: HashMap<u64, watch::Sender<Option<Exit>>>,
    /// The jail is gone: later spawns fail at once.
    closed: bool,
}

/// One session's jail.
pub struct Jail {
    control: OwnedFd,
    outer: Mutex<Child>,
    waiting: Arc<Mutex<Waiting>>,
    next_id: AtomicU64,
    /// The jail has namespaces: a devpts instance of its own, where terminals are
    /// opened. Without (Landlock alone) it is a supervisor that ends its session's
    /// processes on SIGTERM (DEC-122).
    namespaces: bool,
    /// The session's TMPDIR.
    tmp: PathBuf,
    /// What did not hold when it was set up (the jail's own notes).
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Jail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jail")
            .field("tmp", &self.tmp)
            .finish_non_exhaustive()
    }
}

fn lock(w: &Mutex<Waiting>) -> std::sync::MutexGuard<'_, Waiting> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}

impl Jail {
    /// Starts a jail for a session whose private directory is `session_dir` (its TMPDIR
    /// is `session_dir/tmp`); `hidden` are paths no command may see (Boris's own files).
    pub fn start(
        sandbox: &Sandbox,
        session_dir: &Path,
        hidden: Vec<PathBuf>,
    ) -> std::io::Result<Jail> {
        use std::os::unix::fs::DirBuilderExt;
        let tmp = session_dir.join("tmp");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(&tmp)?;
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        // Every packet then carries its sender's pid, as this process sees it.
        setsockopt(&ours, sockopt::PassCred, &true)?;
        let theirs_raw = theirs.as_raw_fd();
        let program = super::jail_program()
            .ok_or_else(|| std::io::Error::other("Boris cannot run itself as the jail"))?;
        let mut cmd = Command::new(program);
        cmd.arg(super::JAIL_ARG)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // SAFETY: dup2 and fcntl are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if theirs_raw == CONTROL_FD {
                    if libc::fcntl(CONTROL_FD, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(theirs_raw, CONTROL_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let outer = cmd.spawn()?;
        drop(theirs);
        let mut hidden = hidden;
        if !sandbox.support.namespaces {
            // Landlock alone: a denied path outside the writable trees is left out of the
            // read rules, as Boris's own files are (issue 25 §4, X6).
            hidden.extend(super::paths::denied_outside(
                &sandbox.policy.deny_patterns,
                &sandbox.policy.write,
            ));
        }
        let setup = Setup {
            landlock_abi: sandbox.support.landlock_abi,
            namespaces: sandbox.support.namespaces,
            network: sandbox.policy.network,
            read: sandbox.policy.read.clone(),
            hidden,
            write: sandbox.policy.write.clone(),
            session: session_dir.to_path_buf(),
            deny_patterns: sandbox.policy.deny_patterns.clone(),
            protect_git: sandbox.policy.protect_git,
        };
        send(&ours, &Request::Setup(setup).encode(), &[])?;
        let mut jail = Jail {
            control: ours,
            outer: Mutex::new(outer),
            waiting: Arc::new(Mutex::new(Waiting::default())),
            next_id: AtomicU64::new(1),
            namespaces: sandbox.support.namespaces,
            tmp,
            notes: Vec::new(),
        };
        match receive_within(&jail.control, START_LIMIT)? {
            Some((Reply::Ready { notes }, _, _)) => jail.notes = notes,
            Some((Reply::SetupFailed { error }, _, _)) => {
                return Err(std::io::Error::other(format!(
                    "the sandbox could not be set up: {error}"
                )));
            }
            Some((other, _, _)) => {
                return Err(std::io::Error::other(format!(
                    "unexpected first reply {other:?}"
                )));
            }
            None => {
                return Err(std::io::Error::other(
                    "the sandbox process ended while setting up",
                ));
            }
        }
        let control = jail.control.try_clone()?;
        let waiting = jail.waiting.clone();
        std::thread::Builder::new()
            .name("boris-jail".into())
            .spawn(move || listen(control, waiting))?;
        Ok(jail)
    }

    /// Whether the jail is gone (killed, or its spawner killed by a command): the session
    /// then starts a new one rather than fail every later command (issue 25 §5, S1).
    pub fn has_ended(&self) -> bool {
        lock(&self.waiting).closed
    }

    /// A pseudo-terminal (master, slave) of the session's own devpts instance, or `None`
    /// where the jail has none (Landlock alone: the caller opens one on the host's, mode
    /// 000, which a command of the same user can change back: no boundary, DEC-123).
    pub fn open_terminal(&self) -> std::io::Result<Option<(OwnedFd, OwnedFd)>> {
        if !self.namespaces {
            return Ok(None);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        {
            let mut w = lock(&self.waiting);
            if w.closed {
                return Err(std::io::Error::other(
                    "the session's sandbox process has ended",
                ));
            }
            w.terminals.insert(id, tx);
        }
        let forget = || lock(&self.waiting).terminals.remove(&id);
        if let Err(e) = send(&self.control, &Request::OpenTerminal { id }.encode(), &[]) {
            forget();
            return Err(e);
        }
        match rx.recv_timeout(START_LIMIT) {
            Ok(Ok(pair)) => Ok(Some(pair)),
            Ok(Err(e)) => Err(std::io::Error::other(e)),
            Err(_) => {
                forget();
                Err(std::io::Error::other(
                    "the sandbox did not open the terminal in time",
                ))
            }
        }
    }

    /// The session's TMPDIR: the same path inside the sandbox and on the host (where
    /// Boris writes files for commands to read).
    pub fn host_tmp(&self) -> &Path {
        &self.tmp
    }

    /// Starts `argv` confined; returns its pid (as Boris sees it: the process group to
    /// signal) once it runs. `stdio` are its stdin, stdout and stderr.
    pub fn spawn(
        &self,
        argv: Vec<OsString>,
        cwd: &Path,
        env: Vec<OsString>,
        stdio: [OwnedFd; 3],
        terminal: bool,
        exit: watch::Sender<Option<Exit>>,
    ) -> std::io::Result<i32> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        {
            let mut w = lock(&self.waiting);
            if w.closed {
                return Err(std::io::Error::other(
                    "the session's sandbox process has ended",
                ));
            }
            w.acks.insert(id, tx);
            w.exits.insert(id, exit);
        }
        let request = Request::Spawn {
            id,
            argv,
            cwd: cwd.to_path_buf(),
            env,
            terminal,
        };
        let fds: Vec<RawFd> = stdio.iter().map(|f| f.as_raw_fd()).collect();
        let sent = send(&self.control, &request.encode(), &fds);
        drop(stdio);
        let forget = |w: &Mutex<Waiting>| {
            let mut w = lock(w);
            w.acks.remove(&id);
            w.exits.remove(&id);
        };
        if let Err(e) = sent {
            forget(&self.waiting);
            return Err(e);
        }
        match rx.recv_timeout(START_LIMIT) {
            Ok(Ok(pid)) => Ok(pid),
            Ok(Err(e)) => {
                forget(&self.waiting);
                Err(std::io::Error::other(e))
            }
            Err(_) => {
                forget(&self.waiting);
                Err(std::io::Error::other(
                    "the sandbox did not start the command in time",
                ))
            }
        }
    }
}

/// How long a supervisor gets to kill its session's processes (it gives up after 2 s).
const SUPERVISOR_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

impl Drop for Jail {
    fn drop(&mut self) {
        // Init dies with its waiter (PR_SET_PDEATHSIG), and the kernel kills every process
        // of its PID namespace with it.
        // Without namespaces the jail is a supervisor that kills every process below it
        // when asked with SIGTERM, a process that dropped its tag too (DEC-122); it is
        // killed outright if it has not ended in time.
        let mut outer = self.outer.lock().unwrap_or_else(|p| p.into_inner());
        if !self.namespaces {
            unsafe { libc::kill(outer.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + SUPERVISOR_GRACE;
            while matches!(outer.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        let _ = outer.kill();
        let _ = outer.wait();
    }
}

/// Reads the jail's replies until it ends.
fn listen(control: OwnedFd, waiting: Arc<Mutex<Waiting>>) {
    while let Ok(Some((reply, pid, fds))) = receive(&control) {
        let mut w = lock(&waiting);
        match reply {
            Reply::Terminal { id } => {
                let pair = <[OwnedFd; 2]>::try_from(fds)
                    .map(|[master, slave]| (master, slave))
                    .map_err(|fds| format!("expected 2 descriptors, got {}", fds.len()));
                if let Some(ack) = w.terminals.remove(&id) {
                    let _ = ack.send(pair);
                }
            }
            Reply::Started { id } => {
                if let (Some(ack), Some(pid)) = (w.acks.remove(&id), pid) {
                    let _ = ack.send(Ok(pid));
                }
            }
            Reply::SpawnFailed { id, error } => {
                if let Some(ack) = w.acks.remove(&id) {
                    let _ = ack.send(Err(error));
                    w.exits.remove(&id);
                } else if let Some(ack) = w.terminals.remove(&id) {
                    let _ = ack.send(Err(error));
                } else {
                    // Failed after it was reported started (exec): its exit follows.
                    tracing::warn!(%error, "a sandboxed command failed to start");
                }
            }
            Reply::Exited { id, code } => {
                if let Some(exit) = w.exits.remove(&id) {
                    let _ = exit.send(Some(Exit { code }));
                }
            }
            Reply::Ready { .. } | Reply::SetupFailed { .. } => {}
        }
    }
    let mut w = lock(&waiting);
    w.closed = true;
    for (_, ack) in w.acks.drain() {
        let _ = ack.send(Err("the session's sandbox process ended".into()));
    }
    for (_, ack) in w.terminals.drain() {
        let _ = ack.send(Err("the session's sandbox process ended".into()));
    }
    // Their processes died with the jail's namespace (or are reaped by nobody Boris knows).
    for (_, exit) in w.exits.drain() {
        let _ = exit.send(Some(Exit { code: 128 + 9 }));
    }
}

fn send(fd: &OwnedFd, bytes: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    let iov = [IoSlice::new(bytes)];
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
    loop {
        match sendmsg::<()>(fd.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None) {
            Ok(_) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

type Received = (Reply, Option<i32>, Vec<OwnedFd>);

fn receive_within(fd: &OwnedFd, limit: Duration) -> std::io::Result<Option<Received>> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().min(i32::MAX as u128) as i32;
    if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
        return Err(std::io::Error::other(
            "the sandbox process did not answer in time",
        ));
    }
    receive(fd)
}

/// One reply, the pid its sender had (the credentials the kernel attached) and the
/// descriptors it carried.
fn receive(fd: &OwnedFd) -> std::io::Result<Option<Received>> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let packet = super::jail::recv_packet(fd, &mut buf)?;
    if packet.len == 0 {
        return Ok(None);
    }
    let reply = Reply::decode(&buf[..packet.len])
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    Ok(Some((reply, packet.pid, packet.fds)))
}
