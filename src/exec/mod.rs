//! The process engine behind both bash profiles (DESIGN §6): spawn the shell in its own
//! process group with stdin from /dev/null, drain stdout and stderr into bounded
//! [`Capture`]s on reader threads, and stop the whole group on timeout, cancellation or
//! shutdown. Every group Boris starts is registered so that shutdown can kill what is
//! still running: no orphans.

pub mod capture;
pub mod exit;
pub mod tasks;

pub use exit::Exit;

pub use capture::{Capture, Limits};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::HashSet;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Grace between SIGTERM and SIGKILL on a timeout (seed 000 D4).
pub const TERM_GRACE: Duration = Duration::from_secs(5);

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
    pub script: &'a str,
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
    /// How its stdin and stdout are connected.
    pub io: Io,
}

/// How a spawned process's stdin and stdout are connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// stdin from `/dev/null`, stdout captured like stderr (commands).
    Captured,
    /// stdin and stdout are pipes its caller talks through ([`Running::take_pipes`]);
    /// stderr is still captured, bounded (language servers, issue 20).
    Piped,
}

/// The caller's ends of an [`Io::Piped`] process's stdin and stdout.
#[derive(Debug)]
pub struct Pipes {
    pub stdin: std::os::fd::OwnedFd,
    pub stdout: std::os::fd::OwnedFd,
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
    /// Bytes read so far on both streams, for progress notifications.
    pub activity: Arc<AtomicU64>,
    /// This shell's [`TAG_VAR`] value.
    tag: String,
    /// An [`Io::Piped`] process's stdin and stdout, until taken.
    pipes: Mutex<Option<Pipes>>,
}

pub fn lock(c: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

impl Running {
    pub fn spawn(spec: Spawn<'_>) -> std::io::Result<Running> {
        static NEXT_TAG: AtomicU64 = AtomicU64::new(0);
        let tag = format!(
            "{}-{}",
            std::process::id(),
            NEXT_TAG.fetch_add(1, Ordering::Relaxed)
        );
        // A long script goes to a file the shell sources: `exit N`, traps and `$?` behave
        // exactly as with `-c`, and the argument list stays short.
        let script_file = if spec.script.len() > MAX_INLINE_SCRIPT_BYTES {
            let mut f = tempfile::Builder::new()
                .prefix("script-")
                .suffix(".sh")
                .tempfile_in(spec.scratch)?;
            std::io::Write::write_all(f.as_file_mut(), spec.script.as_bytes())?;
            Some(f.into_temp_path())
        } else {
            None
        };
        let (exit_tx, exit_rx) = watch::channel(None);
        // For a piped process: its stdin's read end and stdout's write end go to it, the
        // other ends stay here.
        let piped = match spec.io {
            Io::Captured => None,
            Io::Piped => {
                let (in_r, in_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
                let (out_r, out_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
                Some((
                    (in_r, out_w),
                    Pipes {
                        stdin: in_w,
                        stdout: out_r,
                    },
                ))
            }
        };
        let (child_ends, ours) = match piped {
            Some((theirs, ours)) => (Some(theirs), Some(ours)),
            None => (None, None),
        };
        let (pid, pipes, waiter): (i32, [Option<Pipe>; 2], Option<std::process::Child>) =
            match spec.jail {
                Some(jail) => {
                    let (pid, pipes) = spawn_jailed(
                        jail,
                        &spec,
                        script_file.as_deref(),
                        &tag,
                        exit_tx.clone(),
                        child_ends,
                    )?;
                    (pid, pipes, None)
                }
                None => {
                    let mut cmd = Command::new(spec.shell);
                    match &script_file {
                        Some(path) => cmd.arg("-c").arg(r#". "$0""#).arg(path.as_os_str()),
                        None => cmd.arg("-c").arg(spec.script),
                    };
                    match child_ends {
                        Some((stdin, stdout)) => {
                            cmd.stdin(Stdio::from(stdin)).stdout(Stdio::from(stdout))
                        }
                        None => cmd.stdin(Stdio::null()).stdout(Stdio::piped()),
                    };
                    cmd.current_dir(spec.cwd)
                        .envs(spec.env.iter().map(|(k, v)| (k, v)))
                        .stderr(Stdio::piped())
                        // The bearer token is Boris's secret, not the command's.
                        .env_remove("BORIS_TOKEN")
                        .env(TAG_VAR, &tag)
                        .process_group(0);
                    let mut child = cmd.spawn()?;
                    let pipes = [
                        child.stdout.take().map(|p| Box::new(p) as Pipe),
                        child.stderr.take().map(|p| Box::new(p) as Pipe),
                    ];
                    (child.id() as i32, pipes, Some(child))
                }
            };
        // Removed once the shell has exited (the waiter below owns it).
        let script_file = script_file;
        live_groups().get_or_insert_with(HashSet::new).insert(pid);

        let stdout = Arc::new(Mutex::new(Capture::new(spec.stdout)));
        let stderr = Arc::new(Mutex::new(Capture::new(spec.stderr)));
        let stop_readers = Arc::new(AtomicBool::new(false));
        let activity = Arc::new(AtomicU64::new(0));
        let streams = pipes.iter().filter(|p| p.is_some()).count();
        let (open_tx, open_rx) = watch::channel(streams);
        let open_tx = Arc::new(open_tx);

        let [out_pipe, err_pipe] = pipes;
        for (pipe, capture) in [(out_pipe, &stdout), (err_pipe, &stderr)] {
            let Some(pipe) = pipe else {
                continue;
            };
            let (capture, stop, activity, open_tx) = (
                capture.clone(),
                stop_readers.clone(),
                activity.clone(),
                open_tx.clone(),
            );
            std::thread::Builder::new()
                .name("boris-reader".into())
                .spawn(move || {
                    pump(pipe, &capture, &stop, &activity);
                    open_tx.send_modify(|n| *n = n.saturating_sub(1));
                })?;
        }

        match waiter {
            Some(mut child) => {
                std::thread::Builder::new()
                    .name("boris-waiter".into())
                    .spawn(move || {
                        // Reaping the shell here means it never lingers as a zombie.
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
            // The jail reaps it and reports its exit; the script file goes once it did.
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

        Ok(Running {
            pid,
            stdout,
            stderr,
            started: Instant::now(),
            exit: exit_rx,
            open_streams: open_rx,
            stop_readers,
            activity,
            tag,
            pipes: Mutex::new(ours),
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

    pub fn signal_group(&self, signal: Signal) -> bool {
        killpg(Pid::from_raw(self.pid), signal).is_ok()
    }

    /// Whether any process of the group is still alive.
    pub fn group_alive(&self) -> bool {
        killpg(Pid::from_raw(self.pid), None).is_ok()
    }

    /// SIGTERM to the group, up to `grace` for the shell to exit, then SIGKILL to the
    /// group (seed 000 D4).
    pub async fn terminate(&self, grace: Duration) -> Exit {
        self.signal_group(Signal::SIGTERM);
        let exit = match tokio::time::timeout(grace, self.wait()).await {
            Ok(exit) => exit,
            Err(_) => {
                self.signal_group(Signal::SIGKILL);
                self.wait().await
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
}

/// Starts the shell through the session's jail: pipes for its output, `/dev/null` for its
/// input, the environment Boris would give it, plus `TMPDIR`. Returns the shell's pid and
/// the read ends of its pipes.
fn spawn_jailed(
    jail: &crate::sandbox::client::Jail,
    spec: &Spawn<'_>,
    script_file: Option<&Path>,
    tag: &str,
    exit: watch::Sender<Option<Exit>>,
    piped: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
) -> std::io::Result<(i32, [Option<Pipe>; 2])> {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let (err_r, err_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let (stdin, stdout, out_r) = match piped {
        Some((stdin, stdout)) => (stdin, stdout, None),
        None => {
            let (out_r, out_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
            let null = std::os::fd::OwnedFd::from(std::fs::File::open("/dev/null")?);
            (null, out_w, Some(out_r))
        }
    };
    let mut argv: Vec<OsString> = vec![spec.shell.as_os_str().to_owned(), "-c".into()];
    match script_file {
        Some(path) => {
            argv.push(r#". "$0""#.into());
            argv.push(path.as_os_str().to_owned());
        }
        None => argv.push(spec.script.into()),
    }
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| k != "BORIS_TOKEN" && k != "TMPDIR")
        .collect();
    let mut set = |k: &str, v: OsString| {
        vars.retain(|(key, _)| key != k);
        vars.push((k.into(), v));
    };
    for (k, v) in spec.env {
        set(k, v.into());
    }
    set(TAG_VAR, tag.into());
    set("TMPDIR", jail.tmpdir().into_os_string());
    let env = vars
        .into_iter()
        .map(|(k, v)| {
            let mut e = k.into_vec();
            e.push(b'=');
            e.extend(v.into_vec());
            OsString::from_vec(e)
        })
        .collect();
    let pid = jail.spawn(argv, spec.cwd, env, [stdin, stdout, err_w], false, exit)?;
    Ok((
        pid,
        [
            out_r.map(|r| Box::new(std::fs::File::from(r)) as Pipe),
            Some(Box::new(std::fs::File::from(err_r)) as Pipe),
        ],
    ))
}

impl Drop for Running {
    fn drop(&mut self) {
        // A call abandoned half-way (its future dropped) must not leave the group alive.
        if self.exited().is_none() || self.group_alive() {
            self.signal_group(Signal::SIGKILL);
        }
        self.stop_readers.store(true, Ordering::Relaxed);
        if let Some(groups) = live_groups().as_mut() {
            groups.remove(&self.pid);
        }
    }
}

trait ReadFd: Read + AsFd + Send {}
impl<T: Read + AsFd + Send> ReadFd for T {}

/// One end of a child's output pipe.
type Pipe = Box<dyn ReadFd>;

/// Copies a pipe into its capture until end-of-file, waking every 100 ms to notice
/// `stop` (a pipe held open by an escaped process never ends).
fn pump(
    mut pipe: Box<dyn ReadFd>,
    capture: &Mutex<Capture>,
    stop: &AtomicBool,
    activity: &AtomicU64,
) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let ready = {
            let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::from(100u16))
        };
        match ready {
            Ok(0) => {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                continue;
            }
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                lock(capture).push(&buf[..n]);
                activity.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
}

/// Where spill files go: one private directory per server process, removed at exit.
#[derive(Debug)]
pub struct SpillDir {
    path: PathBuf,
    counter: AtomicU64,
}

impl SpillDir {
    /// Creates `<tmp>/boris-<pid>-<random>` (mode 0700).
    pub fn create() -> std::io::Result<SpillDir> {
        use std::os::unix::fs::DirBuilderExt;
        let path = std::env::temp_dir().join(format!(
            "boris-{}-{}",
            std::process::id(),
            crate::text::sentinel::new_nonce()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(&path)?;
        let path = std::fs::canonicalize(&path)?;
        Ok(SpillDir {
            path,
            counter: AtomicU64::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh file name in the directory: `<prefix>-<n>-<random>`.
    pub fn next(&self, prefix: &str) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}-{n}-{}", crate::text::sentinel::new_nonce())
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
