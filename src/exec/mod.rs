//! The process engine behind both bash profiles (DESIGN §6): spawn the shell in its own
//! process group with stdin from /dev/null, drain stdout and stderr into bounded
//! [`Capture`]s on reader threads, and stop the whole group on timeout, cancellation or
//! shutdown. Every group Boris starts is registered so that shutdown can kill what is
//! still running: no orphans.

pub mod capture;
mod leftovers;
pub mod procfs;
mod spill;
pub mod tasks;
mod wiring;

use wiring::{Wiring, jailed_env, shell_argv};
pub use wiring::{set_nonblocking, unread_bytes, write_until};

pub use crate::sandbox::exit::Exit;
pub use leftovers::Leftovers;
pub use spill::SpillDir;

pub use capture::{Capture, Limits};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::HashSet;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Grace between SIGTERM and SIGKILL on a timeout (seed 000 D4).
pub const TERM_GRACE: Duration = Duration::from_secs(5);

/// How long an exit may take to be reported after SIGKILL.
const KILL_REPORT_LIMIT: Duration = Duration::from_secs(5);

/// How long the readers may take to see end-of-file once the shell has exited, before
/// leftover members of the group are signalled.
const DRAIN_GRACE: Duration = Duration::from_millis(50);

/// Every shell Boris starts carries `BORIS_PROCESS_TAG=<boris pid>-<n>` in its
/// environment, and so does everything it starts: a process that leaves the process
/// group (`setsid`, a double fork into a new session) can still be found and killed.
pub const TAG_VAR: &str = "BORIS_PROCESS_TAG";

/// Kills every live process whose environment holds `TAG_VAR=` followed by `prefix`
/// (a whole tag, or `<boris pid>-` for all of them). Returns how many. Linux only.
pub fn sweep_tagged(prefix: &str) -> usize {
    let needle = format!("{TAG_VAR}={prefix}");
    let mut killed = 0;
    for (pid, dir) in other_processes() {
        let Ok(environ) = std::fs::read(dir.join("environ")) else {
            continue;
        };
        let tagged = environ.split(|&b| b == 0).any(|v| {
            v.starts_with(needle.as_bytes())
                // A whole tag must not match a longer one (`-1` vs `-12`).
                && (prefix.ends_with('-') || v.len() == needle.len())
        });
        if tagged && nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
            killed += 1;
        }
    }
    killed
}

/// Every process but this one, as `(pid, /proc/<pid>)`. Empty where there is no /proc.
pub fn other_processes() -> impl Iterator<Item = (i32, PathBuf)> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .into_iter()
        .flat_map(|entries| entries.flatten())
        .filter_map(move |e| {
            let pid = e.file_name().to_str()?.parse::<i32>().ok()?;
            (pid != me).then(|| (pid, e.path()))
        })
}

/// Process groups started and not yet known to be gone.
static LIVE_GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn live_groups() -> MutexGuard<'static, Option<HashSet<i32>>> {
    LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Cancelled once the server is shutting down (stdin closed, SIGINT/SIGTERM): every
/// tool call watches it besides its own cancellation, so nothing holds the exit.
pub fn shutdown_token() -> &'static tokio_util::sync::CancellationToken {
    static TOKEN: std::sync::OnceLock<tokio_util::sync::CancellationToken> =
        std::sync::OnceLock::new();
    TOKEN.get_or_init(tokio_util::sync::CancellationToken::new)
}

/// Begins shutdown: in-flight calls are cancelled and every process group is killed.
pub fn begin_shutdown() {
    shutdown_token().cancel();
    kill_all_groups();
}

/// Kills every process group Boris started that may still be running (shutdown), and
/// every process that escaped its group.
pub fn kill_all_groups() {
    let groups: Vec<i32> = live_groups()
        .as_ref()
        .map(|g| g.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    sweep_tagged(&format!("{}-", std::process::id()));
}

/// Which shell runs commands: `/bin/bash` when present, else `/bin/sh` (seed 003
/// "Shell detection at startup").
pub fn detect_shell() -> PathBuf {
    if Path::new("/bin/bash").exists() {
        PathBuf::from("/bin/bash")
    } else {
        PathBuf::from("/bin/sh")
    }
}

/// What to run.
pub struct Spawn<'a> {
    pub shell: &'a Path,
    /// What `shell -c` runs; empty: the shell itself (interactive on a terminal, reading
    /// its commands from stdin on pipes).
    pub script: &'a str,
    /// `-l`: a login shell (reads the profile files first).
    pub login: bool,
    pub cwd: &'a Path,
    pub stdout: Limits,
    pub stderr: Limits,
    /// Set in the command's environment ([`command_env`]).
    pub env: &'a [(String, String)],
    /// Where a script too long for the argument list is written for the shell to read.
    pub scratch: &'a Path,
    /// The session's sandbox, which starts the shell confined (issue 18); `None`: the
    /// shell is Boris's own child, unconfined.
    pub jail: Option<&'a crate::sandbox::client::Jail>,
    /// How the shell's stdin, stdout and stderr are wired.
    pub io: Io,
}

/// Called with every chunk of an interactive session's output, on its reader thread.
pub type OutputHook = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// How a command's standard streams are wired.
pub enum Io {
    /// stdin `/dev/null`; stdout and stderr each into its capture (the command tools).
    Captured,
    /// A terminal session (issue 19 §1): stdin, stdout and stderr are the pseudo-terminal's
    /// slave end, and the shell leads a session of its own with it as its controlling
    /// terminal (`setsid` + `TIOCSCTTY`), so job control, Ctrl-C and full-screen programs
    /// work. Its output, read from `master` (the caller keeps another descriptor of the
    /// master to write to and resize), goes into the stdout capture and to `on_output`.
    Terminal {
        slave: OwnedFd,
        master: OwnedFd,
        on_output: OutputHook,
    },
    /// An interactive session on pipes: stdin a pipe Boris writes ([`Running::write_input`]),
    /// stdout and stderr one pipe, in the order written (as a terminal shows them), into
    /// the stdout capture and to `on_output`.
    Pipes { on_output: OutputHook },
    /// stdin and stdout are pipes its caller talks a protocol through
    /// ([`Running::take_pipes`]); stderr is still captured, bounded (language servers,
    /// issue 20).
    Piped,
}

/// The caller's ends of an [`Io::Piped`] process's stdin and stdout.
#[derive(Debug)]
pub struct Pipes {
    pub stdin: OwnedFd,
    pub stdout: OwnedFd,
}

/// The environment every command gets, so that programs which would wait for a person
/// fail at once instead (a command's stdin is `/dev/null`, but an editor or a pager
/// opens the terminal, or waits on a TTY that is not there, until the timeout). Each
/// entry, and why:
///
/// - `GIT_EDITOR`, `EDITOR`, `VISUAL` = `false`: `git commit` without `-m`,
///   `git rebase -i`, `crontab -e`… exit non-zero at once with the program's own message
///   (git: "There was a problem with the editor 'false'… use -m or -F").
/// - `GIT_PAGER`, `PAGER`, `MANPAGER` = `cat`: `git log`, `man` print and exit instead
///   of waiting in `less`.
/// - `GIT_TERMINAL_PROMPT=0`: git fails instead of asking for a username or password.
/// - `TERM=dumb`: no full-screen UI, no cursor movement, no colour escapes in output.
/// - `NO_COLOR=1`: the convention (no-color.org) for "no ANSI colours".
/// - `DEBIAN_FRONTEND=noninteractive`: apt and dpkg take defaults instead of asking.
/// - `PIP_NO_INPUT=1`: pip fails instead of prompting.
///
/// `--env KEY=VALUE` entries are added after these and win.
pub const NON_INTERACTIVE_ENV: &[(&str, &str)] = &[
    ("GIT_EDITOR", "false"),
    ("EDITOR", "false"),
    ("VISUAL", "false"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
];

/// [`NON_INTERACTIVE_ENV`] with the user's `--env` entries applied over it.
pub fn command_env(extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = NON_INTERACTIVE_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in extra {
        env.retain(|(key, _)| key != k);
        env.push((k.clone(), v.clone()));
    }
    env
}

/// Scripts longer than this are not passed as an argument: Linux refuses a single
/// argument over 128 KiB (MAX_ARG_STRLEN) with "Argument list too long".
pub const MAX_INLINE_SCRIPT_BYTES: usize = 64 * 1024;

/// A running (or finished) shell and its captured output.
pub struct Running {
    pub pid: i32,
    pub stdout: Arc<Mutex<Capture>>,
    pub stderr: Arc<Mutex<Capture>>,
    pub started: Instant,
    exit: watch::Receiver<Option<Exit>>,
    open_streams: watch::Receiver<usize>,
    stop_readers: Arc<AtomicBool>,
    /// The call has returned while processes it left still hold its output: the readers
    /// drain it (so they get no SIGPIPE) and keep none of it.
    detached: Arc<AtomicBool>,
    /// Readers that, detached, have read all that was written before and now drop.
    caught_up: Arc<AtomicUsize>,
    /// [`Running::release`]d: what is left of the group is the session's to kill.
    released: AtomicBool,
    /// Bytes read so far on both streams, for progress notifications.
    pub activity: Arc<AtomicU64>,
    /// This shell's [`TAG_VAR`] value.
    tag: String,
    /// Reads taken off a pipe and not yet delivered to their capture and hook: with the
    /// kernel's buffer empty too, everything written so far has been seen.
    in_flight: Arc<AtomicUsize>,
    /// The shell leads a session of its own (a terminal): signals go to every process
    /// group of the session, since an interactive shell puts each job in its own.
    own_session: bool,
    /// The write end of stdin ([`Io::Pipes`]); `None` once closed or for other modes.
    stdin: Mutex<Option<std::fs::File>>,
    /// Another descriptor of the output pipe's read end ([`Io::Pipes`]), to ask the
    /// kernel how much is still unread.
    output: Option<OwnedFd>,
    /// An [`Io::Piped`] process's stdin and stdout, until taken.
    pipes: Mutex<Option<Pipes>>,
}

pub fn lock(c: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

/// A long script goes to a file the shell sources: `exit N`, traps and `$?` behave
/// exactly as with `-c`, and the argument list stays short. `None` for a short one.
fn long_script_file(spec: &Spawn<'_>) -> std::io::Result<Option<tempfile::TempPath>> {
    if spec.script.len() <= MAX_INLINE_SCRIPT_BYTES {
        return Ok(None);
    }
    let mut f = tempfile::Builder::new()
        .prefix("script-")
        .suffix(".sh")
        .tempfile_in(spec.scratch)?;
    std::io::Write::write_all(f.as_file_mut(), spec.script.as_bytes())?;
    Ok(Some(f.into_temp_path()))
}

/// The shell started by Boris itself (no jail), in a process group of its own, or
/// leading a session on the terminal the caller opened.
fn spawn_unconfined(
    argv: &[std::ffi::OsString],
    spec: &Spawn<'_>,
    tag: &str,
    wiring: &mut Wiring,
    own_session: bool,
) -> std::io::Result<std::process::Child> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        // The bearer token and the introspection client's secret are Boris's secrets,
        // not the command's.
        .env(TAG_VAR, tag);
    for secret in crate::secret_env::ALL {
        cmd.env_remove(secret);
    }
    let [stdin, stdout, stderr] = wiring.child_stdio()?;
    cmd.stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    if own_session {
        // pty-process makes the child a session leader with the terminal as
        // its controlling terminal before exec.
        let slave = wiring.slave_for_session()?;
        // SAFETY: `slave` is the slave end of the pseudo-terminal the caller
        // opened (`Io::Terminal`).
        let pts = unsafe { pty_process::blocking::Pts::from_fd(slave) };
        pty_process::blocking::Command::from(cmd)
            .spawn(pts)
            .map_err(|e| std::io::Error::other(e.to_string()))
    } else {
        cmd.process_group(0);
        cmd.spawn()
    }
}

/// The shell's exit reported on `exit_tx`, and the script file removed once it
/// exited: Boris's own child is reaped by a waiter thread (so it never lingers as a
/// zombie); a jailed one is reaped by the jail, which reports its exit itself.
fn watch_exit(
    waiter: Option<std::process::Child>,
    script_file: Option<tempfile::TempPath>,
    exit_tx: watch::Sender<Option<Exit>>,
    exit_rx: &watch::Receiver<Option<Exit>>,
) -> std::io::Result<()> {
    match waiter {
        Some(mut child) => {
            std::thread::Builder::new()
                .name("boris-waiter".into())
                .spawn(move || {
                    let code = match child.wait() {
                        Ok(status) => {
                            use std::os::unix::process::ExitStatusExt;
                            status
                                .code()
                                .or_else(|| status.signal().map(|s| 128 + s))
                                .unwrap_or(-1)
                        }
                        Err(_) => -1,
                    };
                    drop(script_file);
                    let _ = exit_tx.send(Some(Exit { code }));
                })?;
        }
        None => {
            if let Some(file) = script_file {
                let mut rx = exit_rx.clone();
                std::thread::Builder::new()
                    .name("boris-script".into())
                    .spawn(move || {
                        while rx.borrow_and_update().is_none() {
                            if futures::executor::block_on(rx.changed()).is_err() {
                                break;
                            }
                        }
                        drop(file);
                    })?;
            }
        }
    }
    Ok(())
}

impl Running {
    pub fn spawn(mut spec: Spawn<'_>) -> std::io::Result<Running> {
        static NEXT_TAG: AtomicU64 = AtomicU64::new(0);
        let tag = format!(
            "{}-{}",
            std::process::id(),
            NEXT_TAG.fetch_add(1, Ordering::Relaxed)
        );
        let script_file = long_script_file(&spec)?;
        let argv = shell_argv(&spec, script_file.as_deref());
        let own_session = matches!(spec.io, Io::Terminal { .. });
        let mut wiring = Wiring::new(std::mem::replace(&mut spec.io, Io::Captured))?;
        let (exit_tx, exit_rx) = watch::channel(None);
        let (pid, waiter): (i32, Option<std::process::Child>) = match spec.jail {
            Some(jail) => {
                let stdio = wiring.child_stdio()?;
                let env = jailed_env(jail, &spec, &tag);
                let pid = jail.spawn(argv, spec.cwd, env, stdio, own_session, exit_tx.clone())?;
                (pid, None)
            }
            None => {
                let child = spawn_unconfined(&argv, &spec, &tag, &mut wiring, own_session)?;
                (child.id() as i32, Some(child))
            }
        };
        // Our copies of the child's ends go, so that the readers see the end of the
        // output once the child's side is closed.
        let Wiring {
            readers,
            stdin,
            output,
            on_output,
            protocol,
            ..
        } = wiring.into_parent();
        // Removed once the shell has exited (the waiter below owns it).
        let script_file = script_file;
        live_groups().get_or_insert_with(HashSet::new).insert(pid);

        let stdout = Arc::new(Mutex::new(Capture::new(spec.stdout)));
        let stderr = Arc::new(Mutex::new(Capture::new(spec.stderr)));
        let stop_readers = Arc::new(AtomicBool::new(false));
        let detached = Arc::new(AtomicBool::new(false));
        let caught_up = Arc::new(AtomicUsize::new(0));
        let activity = Arc::new(AtomicU64::new(0));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let (open_tx, open_rx) = watch::channel(2usize);
        let open_tx = Arc::new(open_tx);

        let [out_pipe, err_pipe] = readers;
        for (pipe, capture) in [(out_pipe, &stdout), (err_pipe, &stderr)] {
            let sink = Sink {
                detached: detached.clone(),
                caught_up: caught_up.clone(),
                capture: capture.clone(),
                hook: on_output.clone(),
                activity: activity.clone(),
                in_flight: in_flight.clone(),
            };
            let (stop, open_tx) = (stop_readers.clone(), open_tx.clone());
            std::thread::Builder::new()
                .name("boris-reader".into())
                .spawn(move || {
                    if let Some(pipe) = pipe {
                        pump(pipe, &sink, &stop);
                    }
                    open_tx.send_modify(|n| *n = n.saturating_sub(1));
                })?;
        }

        watch_exit(waiter, script_file, exit_tx, &exit_rx)?;

        Ok(Running {
            pid,
            stdout,
            stderr,
            started: Instant::now(),
            exit: exit_rx,
            open_streams: open_rx,
            stop_readers,
            detached,
            caught_up,
            released: AtomicBool::new(false),
            activity,
            tag,
            in_flight,
            own_session,
            stdin: Mutex::new(stdin),
            output,
            pipes: Mutex::new(protocol),
        })
    }

    /// An [`Io::Piped`] process's stdin and stdout (once).
    pub fn take_pipes(&self) -> Option<Pipes> {
        self.pipes.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The exit, once the shell has exited.
    pub fn exited(&self) -> Option<Exit> {
        *self.exit.borrow()
    }

    /// Waits for the shell to exit.
    pub async fn wait(&self) -> Exit {
        let mut rx = self.exit.clone();
        loop {
            if let Some(exit) = *rx.borrow_and_update() {
                return exit;
            }
            if rx.changed().await.is_err() {
                return Exit { code: -1 };
            }
        }
    }

    /// Signals the shell's process group — for a terminal session, every process group
    /// of its session (an interactive shell puts each job in a group of its own).
    pub fn signal_group(&self, signal: Signal) -> bool {
        let sent = killpg(Pid::from_raw(self.pid), signal).is_ok();
        if self.own_session {
            procfs::signal_session(self.pid, signal) || sent
        } else {
            sent
        }
    }

    /// Whether any process of the group (of the session, for a terminal) is still alive.
    pub fn group_alive(&self) -> bool {
        killpg(Pid::from_raw(self.pid), None).is_ok()
            || (self.own_session && procfs::session_alive(self.pid))
    }

    /// SIGTERM to the group, up to `grace` for the shell to exit, then SIGKILL to the
    /// group (seed 000 D4). A terminal session first gets a hangup, as when a terminal
    /// window closes: an interactive shell ignores SIGTERM but exits on SIGHUP.
    pub async fn terminate(&self, grace: Duration) -> Exit {
        if self.own_session {
            self.signal_group(Signal::SIGHUP);
            self.signal_group(Signal::SIGCONT);
        }
        self.signal_group(Signal::SIGTERM);
        let exit = match tokio::time::timeout(grace, self.wait()).await {
            Ok(exit) => exit,
            Err(_) => {
                self.signal_group(Signal::SIGKILL);
                // Whoever reports the exit (a session's jail) may itself be gone or
                // wedged: the call never waits on it forever (issue 25 §5, S1).
                tokio::time::timeout(KILL_REPORT_LIMIT, self.wait())
                    .await
                    .unwrap_or(Exit { code: 128 + 9 })
            }
        };
        self.signal_group(Signal::SIGKILL);
        exit
    }

    /// After the shell has exited: no process of the group outlives the call, and the
    /// readers stop even if a process outside the group still holds a pipe open.
    pub async fn finish(&self) {
        if !self.streams_closed_within(DRAIN_GRACE).await && self.group_alive() {
            self.signal_group(Signal::SIGTERM);
            if !self.streams_closed_within(Duration::from_millis(200)).await {
                self.signal_group(Signal::SIGKILL);
                self.streams_closed_within(Duration::from_millis(200)).await;
            }
        }
        // Members that closed their output (`sleep 100 >/dev/null &`) still go.
        self.signal_group(Signal::SIGKILL);
        // So do processes that left the group; finding them means reading /proc, so it
        // happens off the call's path.
        let tag = self.tag.clone();
        tokio::task::spawn_blocking(move || sweep_tagged(&tag));
        self.stop_readers.store(true, Ordering::Relaxed);
        self.streams_closed_within(Duration::from_millis(500)).await;
        if let Some(groups) = live_groups().as_mut() {
            groups.remove(&self.pid);
        }
    }

    async fn streams_closed_within(&self, limit: Duration) -> bool {
        let mut rx = self.open_streams.clone();
        tokio::time::timeout(limit, rx.wait_for(|n| *n == 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Whether every output stream has reached its end (the readers are done).
    pub fn output_closed(&self) -> bool {
        *self.open_streams.borrow() == 0
    }

    /// Waits up to `limit` for the readers to deliver the last of the output (a reader
    /// on a loaded machine may still be working through its last chunks when the
    /// process is gone).
    pub async fn output_delivered_within(&self, limit: Duration) -> bool {
        self.streams_closed_within(limit).await
    }

    /// Whether no read taken off an output pipe is still on its way to its capture and
    /// hook.
    pub fn nothing_in_flight(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0
    }

    /// Bytes of output the kernel holds that no reader has taken yet ([`Io::Pipes`]).
    pub fn output_unread(&self) -> usize {
        self.output
            .as_ref()
            .map_or(0, |fd| unread_bytes(fd.as_fd()))
    }

    /// Writes `bytes` to the session's stdin ([`Io::Pipes`]) until `deadline`; returns how
    /// many were written (fewer when the program stopped reading).
    pub fn write_input(&self, bytes: &[u8], deadline: Instant) -> std::io::Result<usize> {
        let guard = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
        let Some(stdin) = guard.as_ref() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin is closed",
            ));
        };
        write_until(stdin.as_fd(), bytes, deadline)
    }

    /// Closes the session's stdin ([`Io::Pipes`]): the program reads end-of-file.
    pub fn close_input(&self) -> bool {
        self.stdin
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .is_some()
    }

    /// The inode of the stdin pipe ([`Io::Pipes`]), while it is open: what a process
    /// reading it has open.
    pub fn input_inode(&self) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        let guard = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref()?.metadata().ok().map(|m| m.ino())
    }

    /// Whether the session's stdin is still open ([`Io::Pipes`]).
    pub fn input_open(&self) -> bool {
        self.stdin
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A call abandoned half-way (its future dropped) must not leave the group alive.
        let released = self.released.load(Ordering::Relaxed);
        if self.exited().is_none() || (!released && self.group_alive()) {
            self.signal_group(Signal::SIGKILL);
        }
        self.stop_readers.store(true, Ordering::Relaxed);
        if let Some(groups) = live_groups().as_mut() {
            groups.remove(&self.pid);
        }
    }
}

pub(crate) trait ReadFd: Read + AsFd + Send {}
impl<T: Read + AsFd + Send> ReadFd for T {}

/// One end of a child's output pipe (or a terminal's master).
pub(crate) type Pipe = Box<dyn ReadFd>;

/// Where a reader thread delivers what it reads.
struct Sink {
    detached: Arc<AtomicBool>,
    caught_up: Arc<AtomicUsize>,
    capture: Arc<Mutex<Capture>>,
    hook: Option<OutputHook>,
    activity: Arc<AtomicU64>,
    in_flight: Arc<AtomicUsize>,
}

/// Copies a pipe into its capture (and hook) until end-of-file, waking every 100 ms to
/// notice `stop` (a pipe held open by an escaped process never ends). A terminal's
/// master reports the end as `EIO` once no process holds the slave.
fn pump(mut pipe: Box<dyn ReadFd>, sink: &Sink, stop: &AtomicBool) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut buf = vec![0u8; 64 * 1024];
    // Detached, once everything written before is read: what comes after is dropped.
    let mut dropping = false;
    loop {
        if !dropping && sink.detached.load(Ordering::Relaxed) && unread_bytes(pipe.as_fd()) == 0 {
            dropping = true;
            sink.caught_up.fetch_add(1, Ordering::SeqCst);
        }
        let ready = {
            let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(100u16))
        };
        match ready {
            Ok(0) => {
                if stop.load(Ordering::Relaxed) && !dropping {
                    break;
                }
                continue;
            }
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        // Counted before the read: a waiter that finds the kernel's buffer empty and
        // nothing in flight knows every byte written so far has been delivered.
        sink.in_flight.fetch_add(1, Ordering::SeqCst);
        let read = pipe.read(&mut buf);
        let go_on = match read {
            Ok(0) => false,
            Ok(_) if dropping => true,
            Ok(n) => {
                lock(&sink.capture).push(&buf[..n]);
                if let Some(hook) = &sink.hook {
                    hook(&buf[..n]);
                }
                sink.activity.fetch_add(n as u64, Ordering::Relaxed);
                true
            }
            Err(e) => matches!(
                e.kind(),
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
            ),
        };
        sink.in_flight.fetch_sub(1, Ordering::SeqCst);
        if !go_on {
            break;
        }
    }
}
