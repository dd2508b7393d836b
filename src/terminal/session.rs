//! One interactive session: starting it, writing to it, waiting for it to answer, and
//! what each call reports.

use super::probe;
use super::screen::Screen;
use crate::exec::tasks::{Kind, Task, Tasks};
use crate::exec::{self, Exit, Io, Limits, OutputHook, Running, Spawn};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

/// What to start.
pub struct StartSpec<'a> {
    /// Run by `shell -c`; empty: the shell itself (interactive on a terminal).
    pub command: &'a str,
    pub cwd: &'a Path,
    /// A pseudo-terminal (`true`) or pipes.
    pub tty: bool,
    pub shell: &'a Path,
    pub login: bool,
    pub rows: u16,
    pub cols: u16,
    /// The command's environment (over Boris's own).
    pub env: &'a [(String, String)],
    /// Where a script too long for an argument is written.
    pub scratch: &'a Path,
    pub jail: Option<&'a crate::sandbox::client::Jail>,
    /// Where the raw output goes once it outgrows memory (its spill file).
    pub output_file: PathBuf,
}

/// The environment of a terminal session: a terminal's (`TERM=xterm-256color`, a real
/// editor and pager: the user's own, else `vi` and `less`), then the `--env` entries.
/// Unlike one-shot commands it keeps no non-interactive defaults: a person-sized
/// program is what a terminal session is for. `host` reads Boris's own environment.
pub fn terminal_env(
    extra: &[(String, String)],
    host: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env = vec![("TERM".to_string(), "xterm-256color".to_string())];
    for (var, default) in [("EDITOR", "vi"), ("VISUAL", "vi"), ("PAGER", "less")] {
        if host(var).is_none_or(|v| v.is_empty()) {
            env.push((var.to_string(), default.to_string()));
        }
    }
    for (k, v) in extra {
        env.retain(|(key, _)| key != k);
        env.push((k.clone(), v.clone()));
    }
    env
}

/// Why a call found the program waiting for input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// The kernel says it is blocked reading the terminal (or stdin).
    Reading,
    /// A prompt-like last line and no output for [`PROMPT_QUIET`].
    Prompt,
}

/// Where a session stands when a call answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The program has ended; `reason` when Boris stopped it.
    Exited {
        code: i32,
        reason: Option<String>,
    },
    Waiting(Waiting),
    /// Still working when the yield time passed.
    Running,
}

/// A listing of a process group: the group, its processes, when it was made.
pub(super) type Members = (i32, Vec<i32>, Instant);

/// Input the program has to take: sent by a call, or the terminal's answer to a query.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub(super) at: Instant,
    /// It holds a lone Escape (see `wait::ESCAPE_QUIET`).
    pub(super) escape: bool,
    /// The foreground threads' switch counts just before it was written.
    pub(super) marks: Option<probe::Marks>,
}

/// One live session.
pub struct Session {
    pub id: String,
    pub task: Arc<Task>,
    pub tty: bool,
    /// The terminal's master (to write to and resize); `None` for pipes.
    pub(super) master: Option<pty_process::blocking::Pty>,
    pub(super) input: probe::Input,
    pub(super) screen: Arc<Mutex<Screen>>,
    pub(super) output_seq: watch::Receiver<u64>,
    pub(super) last_output: Arc<Mutex<Instant>>,
    /// When the terminal last answered one of the program's queries: like input, the
    /// program owes a reaction to it.
    pub(super) last_reply: Arc<Mutex<Option<Sent>>>,
    last_used: Mutex<Instant>,
    /// The foreground group's processes as last listed, and when: a listing scans all of
    /// /proc, so a look within [`MEMBERS_FRESH`] of one reuses it.
    pub(super) members: Arc<Mutex<Option<Members>>>,
    /// One call at a time; a new call first asks the one in progress to answer now.
    pub(super) turn: tokio::sync::Mutex<()>,
    pub(super) preempted: AtomicU64,
    pub(super) preempt: Notify,
    /// The end was reported in an answer: the session can be forgotten.
    pub end_reported: AtomicBool,
    /// An answer named the raw output file: it stays for the session.
    named_output: AtomicBool,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A pseudo-terminal: in the session's own devpts when its jail has one (issue 25 §5,
/// X8), else the host's.
fn open_pty(
    jail: Option<&crate::sandbox::client::Jail>,
) -> std::io::Result<(pty_process::blocking::Pty, pty_process::blocking::Pts)> {
    if let Some((master, slave)) = jail.map(|j| j.open_terminal()).transpose()?.flatten() {
        // SAFETY: the jail opened these as a pseudo-terminal's master and its slave.
        return Ok(unsafe {
            (
                pty_process::blocking::Pty::from_fd(master),
                pty_process::blocking::Pts::from_fd(slave),
            )
        });
    }
    let (pty, pts) = pty_process::blocking::open().map_err(std::io::Error::other)?;
    if jail.is_some() {
        // Landlock alone: the host's devpts, which every command may open by path. Mode
        // 000 keeps this one to the command holding it (capabilities are dropped in the
        // sandbox, root's too); `/dev/tty` still reaches it as its controlling terminal.
        nix::sys::stat::fchmod(pts.as_fd(), nix::sys::stat::Mode::empty())?;
    }
    Ok((pty, pts))
}

/// Starts a session and registers its process as task `id` in `tasks`.
pub fn start(spec: StartSpec<'_>, id: String, tasks: &Tasks) -> std::io::Result<Arc<Session>> {
    let screen = Arc::new(Mutex::new(Screen::new(spec.rows, spec.cols, !spec.tty)));
    let (seq_tx, seq_rx) = watch::channel(0u64);
    let last_output = Arc::new(Mutex::new(Instant::now()));
    let pty = if spec.tty {
        Some(open_pty(spec.jail)?)
    } else {
        None
    };
    // Where the terminal's answers to the program's queries are written.
    let answer_to = match &pty {
        Some((pty, _)) => Some(pty.as_fd().try_clone_to_owned()?),
        None => None,
    };
    let last_reply: Arc<Mutex<Option<Sent>>> = Arc::default();
    let hook: OutputHook = {
        let (screen, last_output, last_reply) =
            (screen.clone(), last_output.clone(), last_reply.clone());
        Arc::new(move |chunk: &[u8]| {
            let replies = {
                let mut screen = lock(&screen);
                screen.feed(chunk);
                screen.take_replies()
            };
            if let Some(fd) = &answer_to
                && !replies.is_empty()
            {
                // The program waits for the answer: mark its threads first.
                let group = foreground_of(fd.as_fd(), -1);
                let pids = if group > 0 {
                    probe::members(group)
                } else {
                    Vec::new()
                };
                let marks = Some(probe::switch_marks(&pids)).filter(|m| !m.is_empty());
                let at = Instant::now();
                let deadline = at + Duration::from_millis(100);
                let _ = exec::write_until(fd.as_fd(), &replies, deadline);
                *lock(&last_reply) = Some(Sent {
                    at,
                    escape: false,
                    marks,
                });
            }
            *lock(&last_output) = Instant::now();
            seq_tx.send_modify(|n| *n += 1);
        })
    };
    let (io, master, rdev) = if let Some((pty, pts)) = pty {
        pty.resize(pty_process::Size::new(spec.rows, spec.cols))
            .map_err(std::io::Error::other)?;
        let slave = pts.as_fd().try_clone_to_owned()?;
        drop(pts);
        let rdev = nix::sys::stat::fstat(slave.as_fd())?.st_rdev;
        let reader = pty.as_fd().try_clone_to_owned()?;
        let io = Io::Terminal {
            slave,
            master: reader,
            on_output: hook,
        };
        (io, Some(pty), Some(rdev))
    } else {
        (Io::Pipes { on_output: hook }, None, None)
    };
    let limits = |name: &str| Limits {
        head_bytes: 64 * 1024,
        tail_bytes: 64 * 1024,
        spill_after: 64 * 1024,
        spill_path: spec.output_file.with_file_name(name),
        spill_max: 1 << 30,
        clean_chars: None,
    };
    let file_name = spec
        .output_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output.log".into());
    let running = Running::spawn(Spawn {
        shell: spec.shell,
        script: spec.command,
        login: spec.login,
        cwd: spec.cwd,
        stdout: limits(&file_name),
        // Unused: both streams arrive as one.
        stderr: limits(&format!("{file_name}.unused")),
        env: spec.env,
        scratch: spec.scratch,
        jail: spec.jail,
        io,
    })?;
    if let Some(pty) = &master {
        // The reader shares this description: it copes with `EAGAIN`.
        exec::set_nonblocking(pty.as_fd())?;
    }
    let input = match rdev {
        Some(rdev) => probe::Input::Terminal { rdev },
        None => probe::Input::Pipe {
            ino: running.input_inode().unwrap_or(0),
        },
    };
    let shown_command = if spec.command.is_empty() {
        spec.shell.display().to_string()
    } else {
        spec.command.to_string()
    };
    let task = tasks.adopt_kind(Kind::Terminal, id.clone(), shown_command, running, None);
    Ok(Arc::new(Session {
        id,
        task,
        tty: spec.tty,
        master,
        input,
        screen,
        output_seq: seq_rx,
        last_output,
        last_reply,
        last_used: Mutex::new(Instant::now()),
        members: Arc::default(),
        turn: tokio::sync::Mutex::new(()),
        preempted: AtomicU64::new(0),
        preempt: Notify::new(),
        end_reported: AtomicBool::new(false),
        named_output: AtomicBool::new(false),
    }))
}

impl Session {
    /// Time since the last call touched the session.
    pub fn idle_for(&self) -> Duration {
        lock(&self.last_used).elapsed()
    }

    pub(super) fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    pub fn exited(&self) -> bool {
        self.task.is_done()
    }

    /// Records that an answer named the raw output file.
    pub fn name_output(&self) {
        self.named_output.store(true, Ordering::SeqCst);
    }

    pub fn named_output(&self) -> bool {
        self.named_output.load(Ordering::SeqCst)
    }

    pub(super) fn current_status(&self) -> Status {
        match self.task.running.exited() {
            Some(Exit { code }) if self.task.is_done() => Status::Exited {
                code,
                reason: self.task.stopped_reason(),
            },
            _ => Status::Running,
        }
    }
}

/// The foreground process group of the terminal whose master is `master`, else
/// `fallback`.
pub(super) fn foreground_of(master: std::os::fd::BorrowedFd<'_>, fallback: i32) -> i32 {
    use std::os::fd::AsRawFd;
    // SAFETY: tcgetpgrp only reads the descriptor's terminal.
    match unsafe { libc::tcgetpgrp(master.as_raw_fd()) } {
        pgrp if pgrp > 0 => pgrp,
        _ => fallback,
    }
}

/// Runs blocking work (a write that may wait, /proc reads) off the async thread.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_env_defaults_and_overrides() {
        let none = |_: &str| None;
        let env = terminal_env(&[], none);
        assert!(env.contains(&("TERM".into(), "xterm-256color".into())));
        assert!(env.contains(&("EDITOR".into(), "vi".into())));
        assert!(env.contains(&("PAGER".into(), "less".into())));
        // The user's own editor is left alone; --env wins over everything.
        let host = |k: &str| (k == "EDITOR").then(|| "nano".to_string());
        let env = terminal_env(&[("TERM".into(), "screen".into())], host);
        assert!(!env.iter().any(|(k, _)| k == "EDITOR"));
        assert!(env.contains(&("TERM".into(), "screen".into())));
        assert!(
            !env.iter()
                .any(|(k, v)| k == "TERM" && v == "xterm-256color")
        );
    }
}
