//! How a command's standard streams are wired (the modes of [`Io`]), and the raw
//! descriptor calls interactive sessions need: a non-blocking write with a deadline,
//! what the kernel still holds unread.

use super::{Io, OutputHook, Pipe, Pipes, Spawn, TAG_VAR};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Instant;

/// Bytes waiting to be read on `fd` (a pipe's read end or a terminal's master), as the
/// kernel counts them (`FIONREAD`); 0 when it cannot say.
pub fn unread_bytes(fd: std::os::fd::BorrowedFd<'_>) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n) };
    if rc == 0 { n.max(0) as usize } else { 0 }
}

/// Writes `bytes` to a non-blocking `fd`, waiting for room until `deadline`; returns how
/// many were written. A reader that went away is `BrokenPipe` (or, on a terminal, `EIO`).
pub fn write_until(
    fd: std::os::fd::BorrowedFd<'_>,
    bytes: &[u8],
    deadline: Instant,
) -> std::io::Result<usize> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut written = 0;
    while written < bytes.len() {
        match nix::unistd::write(fd, &bytes[written..]) {
            Ok(n) => written += n,
            Err(nix::errno::Errno::EINTR) => {}
            Err(nix::errno::Errno::EAGAIN) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
                let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
                match poll(
                    &mut fds,
                    PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
                ) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(written)
}

/// Sets `O_NONBLOCK` on `fd`'s open file description.
pub fn set_nonblocking(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// `shell [-l] [-c SCRIPT | -c '. "$0"' FILE]`, or the bare shell for an empty script.
pub(super) fn shell_argv(spec: &Spawn<'_>, script_file: Option<&Path>) -> Vec<std::ffi::OsString> {
    let mut argv = vec![spec.shell.as_os_str().to_owned()];
    let quiet_login = spec.login && !spec.script.is_empty() && is_bash(spec.shell);
    if spec.login && !quiet_login {
        argv.push("-l".into());
    }
    let prelude = if quiet_login { QUIET_LOGIN } else { "" };
    match script_file {
        Some(path) => {
            argv.push("-c".into());
            argv.push(format!(r#"{prelude}. "$0""#).into());
            argv.push(path.as_os_str().to_owned());
        }
        None if spec.script.is_empty() => {}
        None => {
            argv.push("-c".into());
            argv.push(format!("{prelude}{}", spec.script).into());
        }
    }
    argv
}

/// A login shell's profiles, read as `bash -l` reads them (`/etc/profile`, then the first
/// of `~/.bash_profile`, `~/.bash_login`, `~/.profile`), with their stderr dropped: a
/// profile's complaints (`pyenv: cannot rehash: …/shims isn't writable` where the sandbox
/// refuses the write) are not the command's output, confined or not (issue 25 §7, S5).
/// What the profiles set and define stays; `shopt login_shell` reads off.
const QUIET_LOGIN: &str = "{ if [ -r /etc/profile ]; then . /etc/profile; fi; \
    for __boris_p in ~/.bash_profile ~/.bash_login ~/.profile; do \
    if [ -r \"$__boris_p\" ]; then . \"$__boris_p\"; break; fi; done; \
    unset __boris_p; } 2>/dev/null </dev/null\n";

fn is_bash(shell: &Path) -> bool {
    shell.file_name().is_some_and(|n| n == "bash")
}

/// The descriptors of one spawn: the child's standard streams, and Boris's ends.
pub(super) struct Wiring {
    /// The child's stdin, stdout and stderr (taken by [`Wiring::child_stdio`]).
    child: Option<[OwnedFd; 3]>,
    /// A terminal's slave end, for the unconfined spawn that makes it the controlling
    /// terminal.
    slave: Option<OwnedFd>,
    pub(super) readers: [Option<Pipe>; 2],
    pub(super) stdin: Option<std::fs::File>,
    pub(super) output: Option<OwnedFd>,
    pub(super) on_output: Option<OutputHook>,
    /// Boris's ends of an [`Io::Piped`] process's stdin and stdout.
    pub(super) protocol: Option<Pipes>,
}

impl Wiring {
    pub(super) fn new(io: Io) -> std::io::Result<Wiring> {
        use nix::fcntl::OFlag;
        let pipe = || nix::unistd::pipe2(OFlag::O_CLOEXEC);
        let file = |fd: OwnedFd| Some(Box::new(std::fs::File::from(fd)) as Pipe);
        Ok(match io {
            Io::Captured => {
                let null = OwnedFd::from(std::fs::File::open("/dev/null")?);
                let (out_r, out_w) = pipe()?;
                let (err_r, err_w) = pipe()?;
                Wiring {
                    child: Some([null, out_w, err_w]),
                    slave: None,
                    readers: [file(out_r), file(err_r)],
                    stdin: None,
                    output: None,
                    on_output: None,
                    protocol: None,
                }
            }
            Io::Terminal {
                slave,
                master,
                on_output,
            } => Wiring {
                child: Some([slave.try_clone()?, slave.try_clone()?, slave.try_clone()?]),
                slave: Some(slave),
                readers: [file(master), None],
                stdin: None,
                output: None,
                on_output: Some(on_output),
                protocol: None,
            },
            Io::Pipes { on_output } => {
                let (in_r, in_w) = pipe()?;
                let (out_r, out_w) = pipe()?;
                // Boris's end only: a program that stops reading must not block a call.
                set_nonblocking(in_w.as_fd())?;
                Wiring {
                    child: Some([in_r, out_w.try_clone()?, out_w]),
                    slave: None,
                    readers: [file(out_r.try_clone()?), None],
                    stdin: Some(std::fs::File::from(in_w)),
                    output: Some(out_r),
                    on_output: Some(on_output),
                    protocol: None,
                }
            }
            Io::Piped => {
                let (in_r, in_w) = pipe()?;
                let (out_r, out_w) = pipe()?;
                let (err_r, err_w) = pipe()?;
                Wiring {
                    child: Some([in_r, out_w, err_w]),
                    slave: None,
                    readers: [None, file(err_r)],
                    stdin: None,
                    output: None,
                    on_output: None,
                    protocol: Some(Pipes {
                        stdin: in_w,
                        stdout: out_r,
                    }),
                }
            }
        })
    }

    pub(super) fn child_stdio(&mut self) -> std::io::Result<[OwnedFd; 3]> {
        self.child
            .take()
            .ok_or_else(|| std::io::Error::other("the child's streams were already given"))
    }

    pub(super) fn slave_for_session(&mut self) -> std::io::Result<OwnedFd> {
        self.slave
            .take()
            .ok_or_else(|| std::io::Error::other("no terminal to lead"))
    }

    /// Boris's side only: the child's ends are closed here.
    pub(super) fn into_parent(mut self) -> Wiring {
        self.child = None;
        self.slave = None;
        self
    }
}

/// The environment of a jailed command: Boris's own without its secrets, the command
/// environment over it, the process tag and the session's `TMPDIR`.
pub(super) fn jailed_env(
    jail: &crate::sandbox::client::Jail,
    spec: &Spawn<'_>,
    tag: &str,
) -> Vec<std::ffi::OsString> {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k != "TMPDIR" && !crate::secret_env::ALL.iter().any(|s| k == s))
        .collect();
    let mut set = |k: &str, v: OsString| {
        vars.retain(|(key, _)| key != k);
        vars.push((k.into(), v));
    };
    for (k, v) in spec.env {
        set(k, v.into());
    }
    set(TAG_VAR, tag.into());
    set("TMPDIR", jail.host_tmp().as_os_str().to_os_string());
    vars.into_iter()
        .map(|(k, v)| {
            let mut e = k.into_vec();
            e.push(b'=');
            e.extend(v.into_vec());
            OsString::from_vec(e)
        })
        .collect()
}
