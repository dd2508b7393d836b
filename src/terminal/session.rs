//! One interactive session: starting it, writing to it, waiting for it to answer, and
//! what each call reports.

use super::keys::{self, Input, PipeAction};
use super::probe;
use super::screen::{Screen, Update};
use super::wait::{Sent, Settled};
use crate::exec::tasks::{Kind, Task, Tasks};
use crate::exec::{self, Exit, Io, Limits, OutputHook, Running, Spawn};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

/// The longest a write may wait for a program to take its input.
const MAX_WRITE_WAIT: Duration = Duration::from_secs(5);

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

/// A call's answer, for the tool layer to word.
#[derive(Debug, Clone)]
pub struct Report {
    pub id: String,
    pub status: Status,
    pub update: Update,
    /// The raw output file, once the output outgrew memory.
    pub output_file: Option<PathBuf>,
    pub tty: bool,
    /// Rows and columns.
    pub size: (u16, u16),
    /// Bytes of input that could not be written (the program stopped reading).
    pub unwritten: usize,
    /// A pipe session's stdin was closed (Ctrl-D).
    pub input_closed: bool,
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
    turn: tokio::sync::Mutex<()>,
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
                let group = super::wait::foreground_of(fd.as_fd(), -1);
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

    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// Takes this session's turn, first asking a call still waiting on it to answer now.
    async fn take_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.preempted.fetch_add(1, Ordering::SeqCst);
        self.preempt.notify_waiters();
        let guard = self.turn.lock().await;
        self.touch();
        guard
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

    /// Writes `input` (text and keys), then waits as [`Session::read`] does.
    pub async fn write(
        &self,
        input: &[Input],
        wait: Duration,
        budget: usize,
        ct: &CancellationToken,
    ) -> std::io::Result<Report> {
        let _turn = self.take_turn().await;
        let mut unwritten = 0;
        let mut sent = None;
        if !self.exited() && !input.is_empty() {
            let marks = self.marks().await;
            sent = Some(Sent {
                at: Instant::now(),
                escape: keys::holds_lone_escape(input),
                marks,
            });
            unwritten = self.send(input, wait).await?;
        }
        let status = self.settle(wait, sent, ct).await;
        Ok(self.report(status, budget, false, unwritten))
    }

    /// What is new, after waiting up to `wait` for the program to exit or wait for
    /// input. `whole`: the whole current screen rather than what changed on it.
    pub async fn read(
        &self,
        wait: Duration,
        budget: usize,
        whole: bool,
        ct: &CancellationToken,
    ) -> Report {
        let _turn = self.take_turn().await;
        let status = self.settle(wait, None, ct).await;
        self.report(status, budget, whole, 0)
    }

    /// Resizes the terminal (the kernel tells the program with SIGWINCH), then waits as
    /// [`Session::read`] does. `None` for a pipe session.
    pub async fn resize(
        &self,
        rows: u16,
        cols: u16,
        wait: Duration,
        budget: usize,
        ct: &CancellationToken,
    ) -> Option<std::io::Result<Report>> {
        let master = self.master.as_ref()?;
        let _turn = self.take_turn().await;
        let marks = self.marks().await;
        lock(&self.screen).resize(rows, cols);
        if let Err(e) = master.resize(pty_process::Size::new(rows, cols)) {
            return Some(Err(std::io::Error::other(e)));
        }
        let sent = Sent {
            at: Instant::now(),
            escape: false,
            marks,
        };
        let status = self.settle(wait, Some(sent), ct).await;
        Some(Ok(self.report(status, budget, false, 0)))
    }

    /// Stops the program (hangup, then SIGTERM, then SIGKILL to every process of the
    /// session) and reports its last output.
    pub async fn stop(&self, reason: &str, budget: usize) -> Report {
        let _turn = self.take_turn().await;
        self.task.stop(reason).await;
        self.report(Settled::Status(self.current_status()), budget, false, 0)
    }

    /// Sends input; returns how many bytes could not be written in time.
    async fn send(&self, input: &[Input], wait: Duration) -> std::io::Result<usize> {
        let deadline = Instant::now() + wait.clamp(Duration::from_millis(100), MAX_WRITE_WAIT);
        if let Some(master) = &self.master {
            let bytes = keys::terminal_bytes(input, lock(&self.screen).modes());
            let fd = master.as_fd().try_clone_to_owned()?;
            let written = blocking(move || {
                exec::write_until(fd.as_fd(), &bytes, deadline).map(|n| bytes.len() - n)
            })
            .await?;
            return Ok(written);
        }
        let mut unwritten = 0;
        for action in keys::pipe_actions(input) {
            match action {
                PipeAction::Bytes(bytes) => {
                    let task = self.task.clone();
                    let len = bytes.len();
                    let n = blocking(move || task.running.write_input(&bytes, deadline)).await;
                    match n {
                        Ok(n) => unwritten += len - n,
                        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => unwritten += len,
                        Err(e) => return Err(e),
                    }
                }
                PipeAction::Signal(signal) => {
                    self.task.running.signal_group(signal);
                }
                PipeAction::CloseInput => {
                    self.task.running.close_input();
                }
            }
        }
        Ok(unwritten)
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

    fn report(&self, settled: Settled, budget: usize, whole: bool, unwritten: usize) -> Report {
        self.touch();
        let status = match settled {
            Settled::Status(s) => s,
            Settled::CutShort => self.current_status(),
        };
        let (update, size) = {
            let mut screen = lock(&self.screen);
            (screen.take_update(budget, whole), screen.size())
        };
        if matches!(status, Status::Exited { .. }) {
            self.end_reported.store(true, Ordering::SeqCst);
        }
        let output_file = if update.omitted > 0 {
            exec::lock(&self.task.running.stdout)
                .spill_path()
                .map(Path::to_path_buf)
        } else {
            None
        };
        Report {
            id: self.id.clone(),
            status,
            update,
            output_file,
            tty: self.tty,
            size,
            unwritten,
            input_closed: !self.tty && !self.task.running.input_open(),
        }
    }

    /// Stops the session once it has been idle for `idle` (`None`: never), calling
    /// `forget` when it is gone (stopped, or ended and left unread that long).
    pub fn watch_idle(
        self: &Arc<Self>,
        idle: Option<Duration>,
        forget: impl FnOnce() + Send + 'static,
    ) {
        let Some(idle) = idle else {
            return;
        };
        let session = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(s) = session.upgrade() else { return };
                // A call waiting on the session is use: idle time counts from its end.
                if s.turn.try_lock().is_err() {
                    drop(s);
                    tokio::time::sleep(idle).await;
                    continue;
                }
                let left = idle.saturating_sub(s.idle_for());
                if left.is_zero() {
                    if !s.exited() {
                        let reason = format!(
                            "stopped after {}s without a call (--terminal-idle-timeout)",
                            idle.as_secs()
                        );
                        tracing::info!(session = %s.id, "terminal session idle: stopping it");
                        s.task.stop(&reason).await;
                    }
                    drop(s);
                    forget();
                    return;
                }
                drop(s);
                tokio::time::sleep(left).await;
            }
        });
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
