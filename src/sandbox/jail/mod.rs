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

mod confine;
mod devpts;
mod mounts;
mod protect;
mod socket;
mod supervise;

use super::wire::{Reply, Request, Setup};
use confine::{build_ruleset, drop_capabilities, restrict};
use landlock::RulesetCreated;
use mounts::{Placeholders, Shm, init_mounts};
use protect::Protector;
use socket::receive;
pub(crate) use socket::recv_packet;
pub use socket::send;
use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

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
    let mut shm = Shm::Host;
    if setup.namespaces {
        enter_namespaces(&setup)?;
        // Now PID 1 of the new namespace.
        let (made, private) = init_mounts(&setup, &mut notes)?;
        placeholders = Some(made);
        shm = private;
        if let Err(e) = devpts::mount_private() {
            notes.push(format!("terminals: the host's /dev/pts is shared ({e})"));
        }
    } else {
        // Commands may signal the spawner; the supervisor above it they cannot (S1).
        supervise::fork_spawner(CONTROL_FD)?;
        // Orphans (a double fork) are reparented here, so they are reaped and findable.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    }
    let ruleset = if setup.landlock_abi > 0 {
        Some(build_ruleset(&setup, shm, &mut notes)?)
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
            // Denied files covered as they appear, not at the next command (X7).
            libc::pollfd {
                fd: protector.as_ref().and_then(|p| p.fd()).unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, -1) } < 0 {
            continue; // EINTR
        }
        // Before reaping: what a command made is protected before its end is reported.
        if (fds[1].revents != 0 || fds[2].revents != 0)
            && let Some(p) = protector.as_mut()
        {
            p.on_events(!running.is_empty());
        }
        if fds[1].revents != 0 {
            while sfd.read_signal().ok().flatten().is_some() {}
            reap(control, &mut running);
            if running.is_empty()
                && let Some(p) = protector.as_mut()
            {
                p.settle();
            }
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
                Ok((Some(Request::OpenTerminal { id }), _)) => devpts::answer(control, id),
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
