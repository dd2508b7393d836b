//! Code intelligence from real language servers (issue 20): one server per language and
//! workspace root per session, started lazily on the first request that needs it,
//! restarted once if it dies, killed with the session.
//!
//! - `servers`: which server covers which file (pure), `--lsp` entries.
//! - `position`: a model's line and symbol name to an LSP position and back (pure).
//! - `format`: diagnostics, deltas, locations, text edits (pure).
//! - `client`: one running server (the process, async-lsp's main loop, document sync).
//! - `after_edit`: the diagnostics an edit introduced, for every edit tool.
//!
//! All protocol work runs on one runtime of its own (`runtime()`), so a slow server
//! never holds the MCP transport's thread; tools wait on it from their blocking threads
//! with a bound and the call's cancellation.

pub mod after_edit;
pub mod client;
pub mod format;
pub mod position;
pub mod servers;
mod shared;
mod start;

use client::{Launch, Server};
use servers::Language;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How a result came about, said at its end (issue 20 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// The server was up and idle.
    Ready,
    /// The server was starting or indexing when the call's wait ran out: the answer may
    /// miss what it has not read yet.
    Indexing,
    /// Some of the answer is missing (a server did not answer, a list was cut).
    Partial,
    /// No server could answer.
    Unavailable,
}

impl Readiness {
    pub fn as_str(self) -> &'static str {
        match self {
            Readiness::Ready => "ready",
            Readiness::Indexing => "indexing",
            Readiness::Partial => "partial",
            Readiness::Unavailable => "unavailable",
        }
    }
}

/// The runtime every language server's I/O runs on. Two workers: one task that blocks
/// (a sandboxed start, a slow pipe) must not stall every other server's I/O and timers.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("boris-lsp")
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("cannot start the language-server runtime: {e}"))
    })
}

/// How long past its own deadline a call waits for the language-server runtime before it
/// answers anyway ([`block_on`]).
pub const BACKSTOP_GRACE: Duration = Duration::from_secs(2);

/// Why [`block_on`] gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The call was cancelled (or the server shuts down).
    Cancelled,
    /// The future had not ended [`BACKSTOP_GRACE`] after `until`, or it panicked.
    Overran,
}

/// Runs `fut` on the LSP runtime and blocks this (non-async) thread until it ends, `ct`
/// is cancelled, or `until` + [`BACKSTOP_GRACE`] passes.
///
/// Every future given here honours `until` itself; the backstop is what makes "no call
/// hangs" hold even when it does not — a wedged runtime, a server that stops reading its
/// pipe — since it is measured on this thread's clock, not on the runtime's timers.
pub fn block_on<T: Send + 'static>(
    ct: &tokio_util::sync::CancellationToken,
    until: Instant,
    fut: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, Stopped> {
    // How often the waiting thread looks at the cancellation token.
    const POLL: Duration = Duration::from_millis(25);
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let task = runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    let backstop = until + BACKSTOP_GRACE;
    let stopped = loop {
        if ct.is_cancelled() {
            break Stopped::Cancelled;
        }
        let left = backstop.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break Stopped::Overran;
        }
        match rx.recv_timeout(left.min(POLL)) {
            Ok(out) => return Ok(out),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break Stopped::Overran,
        }
    };
    task.abort();
    match stopped {
        // The client's choice (or the server's shutdown): nothing went wrong.
        Stopped::Cancelled => {
            tracing::debug!("a call was cancelled while it waited for its language server")
        }
        Stopped::Overran => {
            tracing::warn!("a call stopped waiting for its language server past its deadline")
        }
    }
    Err(stopped)
}

#[derive(Clone)]
enum SlotState {
    Starting,
    Ready(Arc<Server>),
    Failed(String),
}

/// One language and root: its server, or why there is none.
struct Slot {
    state: watch::Sender<SlotState>,
    command: String,
    /// Restarts after a crash (at most one).
    restarts: AtomicU32,
    /// Why the server before a restart went away.
    last_crash: Mutex<Option<String>>,
}

/// A session's language servers.
#[derive(Default)]
pub struct Lsp {
    slots: Mutex<HashMap<(String, PathBuf), Arc<Slot>>>,
}

impl std::fmt::Debug for Lsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lsp").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What starting a server takes, from the tool's side.
pub struct StartEnv {
    pub shell: PathBuf,
    pub env: Vec<(String, String)>,
    /// The session's sandbox (started now if it was not), or why it cannot be.
    pub jail: Result<Option<Arc<crate::sandbox::client::Jail>>, String>,
    pub scratch: PathBuf,
}

/// Why no server answers for a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoServer {
    /// No language covers the file's extension (or it is turned off): not an error for
    /// an edit, which then says nothing.
    NotCovered,
    /// The language's server is not installed.
    Missing { language: String, hint: String },
    /// It could not start, or died twice.
    Failed { language: String, error: String },
    /// It is still starting (initialize has not answered within the call's bound).
    Starting { language: String, command: String },
}

impl NoServer {
    pub fn readiness(&self) -> Readiness {
        match self {
            NoServer::Starting { .. } => Readiness::Indexing,
            _ => Readiness::Unavailable,
        }
    }

    pub fn message(&self, file: &Path) -> String {
        match self {
            NoServer::NotCovered => format!(
                "no language server covers {} (built in: Python, TypeScript/JavaScript, Go, \
                 Rust, C/C++ by extension; --lsp NAME:EXT=COMMAND adds one)",
                file.display()
            ),
            NoServer::Missing { language, hint } => {
                format!("no {language} language server is installed: {hint}")
            }
            NoServer::Failed { language, error } => {
                format!("the {language} language server is unavailable: {error}")
            }
            NoServer::Starting { language, command } => format!(
                "the {language} language server ({command}) is still starting; it goes on in \
                 the background, so try again in a few seconds"
            ),
        }
    }
}

/// Finds `program` the way a shell would: a path with a `/` as it is, else on `PATH`.
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| executable(p))
    })
}

/// The command that runs `lang`'s server here: the first of its commands whose program
/// is installed.
pub fn command_for(lang: &Language) -> Result<String, NoServer> {
    if lang.commands.is_empty() {
        return Err(NoServer::NotCovered);
    }
    lang.commands
        .iter()
        .find(|c| find_program(servers::program(c)).is_some())
        .cloned()
        .ok_or_else(|| NoServer::Missing {
            language: lang.name.clone(),
            hint: format!(
                "looked for {} on PATH; {}",
                lang.commands
                    .iter()
                    .map(|c| servers::program(c))
                    .collect::<Vec<_>>()
                    .join(", "),
                lang.install_hint
            ),
        })
}

/// One line per language for `--check-config`: which server each would run.
pub fn summary(langs: &[Language]) -> String {
    langs
        .iter()
        .map(|l| match command_for(l) {
            Ok(c) => format!("{} ({})", l.name, servers::program(&c)),
            Err(NoServer::NotCovered) => format!("{} (off)", l.name),
            Err(_) => format!("{} (not installed)", l.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One server of the session, as `language_servers` reports it.
pub struct ServerReport {
    pub language: String,
    pub command: String,
    pub root: PathBuf,
    pub state: String,
    pub pid: Option<i32>,
    pub rss: Option<u64>,
    pub restarts: u32,
    pub open_files: usize,
}

impl Lsp {
    /// The server for `language` at `root`, starting it if none runs (or restarting it
    /// once if it died); waits up to `until` for it to be ready.
    pub async fn server(
        &self,
        lang: &Language,
        root: &Path,
        start: impl FnOnce() -> StartEnv,
        until: Instant,
    ) -> Result<Arc<Server>, NoServer> {
        let key = (lang.name.clone(), root.to_path_buf());
        let slot = {
            let mut slots = lock(&self.slots);
            let existing = slots.get(&key).cloned();
            let restart = match &existing {
                None => true,
                Some(slot) => {
                    let dead = match &*slot.state.borrow() {
                        SlotState::Ready(s) => !s.is_alive(),
                        _ => false,
                    };
                    if dead {
                        let crash = match &*slot.state.borrow() {
                            SlotState::Ready(s) => {
                                format!("`{}` exited{}", s.command, s.stderr_tail())
                            }
                            _ => String::new(),
                        };
                        *lock(&slot.last_crash) = Some(crash.clone());
                        if slot.restarts.fetch_add(1, Ordering::Relaxed) >= 1 {
                            slot.state.send_replace(SlotState::Failed(format!(
                                "it exited again after a restart ({crash}); a new session \
                                 starts it afresh"
                            )));
                            false
                        } else {
                            tracing::warn!(language = %lang.name, %crash, "language server exited; restarting it once");
                            true
                        }
                    } else {
                        false
                    }
                }
            };
            if restart {
                let command = command_for(lang)?;
                let slot = match existing {
                    Some(slot) => {
                        slot.state.send_replace(SlotState::Starting);
                        slot
                    }
                    None => {
                        let slot = Arc::new(Slot {
                            state: watch::channel(SlotState::Starting).0,
                            command: command.clone(),
                            restarts: AtomicU32::new(0),
                            last_crash: Mutex::new(None),
                        });
                        slots.insert(key.clone(), slot.clone());
                        slot
                    }
                };
                let env = start();
                let launch = match env.jail {
                    Ok(jail) => Some(Launch {
                        language: lang.name.clone(),
                        command: command.clone(),
                        root: root.to_path_buf(),
                        shell: env.shell,
                        env: env.env,
                        jail,
                        scratch: env.scratch,
                    }),
                    Err(e) => {
                        slot.state.send_replace(SlotState::Failed(e));
                        None
                    }
                };
                if let Some(launch) = launch {
                    let weak = Arc::downgrade(&slot);
                    tracing::info!(language = %lang.name, %command, root = %root.display(), "starting a language server");
                    tokio::spawn(async move {
                        let started = Server::start(launch).await;
                        let Some(slot) = weak.upgrade() else {
                            // The session ended while it started: it goes now.
                            return;
                        };
                        match started {
                            Ok(server) => {
                                slot.state.send_replace(SlotState::Ready(Arc::new(server)))
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "a language server failed to start");
                                slot.state.send_replace(SlotState::Failed(e))
                            }
                        };
                    });
                }
                slot
            } else {
                existing.expect("an existing slot when not starting")
            }
        };
        let mut rx = slot.state.subscribe();
        let left = until.saturating_duration_since(Instant::now());
        let settled =
            tokio::time::timeout(left, rx.wait_for(|s| !matches!(s, SlotState::Starting))).await;
        let state = match settled {
            Ok(Ok(s)) => s.clone(),
            _ => SlotState::Starting,
        };
        match state {
            SlotState::Ready(s) => Ok(s),
            SlotState::Starting => Err(NoServer::Starting {
                language: lang.name.clone(),
                command: slot.command.clone(),
            }),
            SlotState::Failed(error) => Err(NoServer::Failed {
                language: lang.name.clone(),
                error,
            }),
        }
    }

    /// The running servers (for a workspace-wide search without a file).
    pub fn running(&self) -> Vec<Arc<Server>> {
        lock(&self.slots)
            .values()
            .filter_map(|s| match &*s.state.borrow() {
                SlotState::Ready(s) if s.is_alive() => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every server of the session and its state, memory included.
    pub fn report(&self) -> Vec<ServerReport> {
        let mut out: Vec<ServerReport> = lock(&self.slots)
            .iter()
            .map(|((language, root), slot)| {
                let restarts = slot.restarts.load(Ordering::Relaxed).min(1);
                let (state, pid, rss, open_files) = match &*slot.state.borrow() {
                    SlotState::Starting => ("starting".to_string(), None, None, 0),
                    SlotState::Failed(e) => (format!("unavailable: {e}"), None, None, 0),
                    SlotState::Ready(s) if !s.is_alive() => {
                        (format!("exited{}", s.stderr_tail()), None, None, 0)
                    }
                    SlotState::Ready(s) => (
                        if s.busy() { "indexing" } else { "ready" }.to_string(),
                        Some(s.pid),
                        s.rss_bytes(),
                        s.open_count(),
                    ),
                };
                ServerReport {
                    language: language.clone(),
                    command: slot.command.clone(),
                    root: root.clone(),
                    state,
                    pid,
                    rss,
                    restarts,
                    open_files,
                }
            })
            .collect();
        out.sort_by(|a, b| (&a.language, &a.root).cmp(&(&b.language, &b.root)));
        out
    }

    /// Stops every server (shutdown and exit, then kill): the session is ending.
    pub fn stop_all(&self) {
        let servers: Vec<Arc<Server>> = lock(&self.slots)
            .drain()
            .filter_map(|(_, s)| match &*s.state.borrow() {
                SlotState::Ready(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        if servers.is_empty() {
            return;
        }
        // Politely, briefly, off the caller's thread; the kill follows either way.
        runtime().spawn(async move {
            for s in &servers {
                s.stop().await;
            }
        });
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        // Each server's process group is killed as its last handle goes.
        self.stop_all();
    }
}

/// A duration in whole seconds or milliseconds, for messages.
pub fn seconds(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_util::sync::CancellationToken;

    #[test]
    fn block_on_answers_at_the_backstop_when_the_future_ignores_its_deadline() {
        // A future that never ends, as a wedged server connection would: the call still
        // answers, just after its deadline and the grace.
        let until = Instant::now() + Duration::from_millis(50);
        let started = Instant::now();
        let out = block_on(
            &CancellationToken::new(),
            until,
            std::future::pending::<()>(),
        );
        assert_eq!(out, Err(Stopped::Overran));
        let took = started.elapsed();
        assert!(
            took >= BACKSTOP_GRACE,
            "answered before the backstop: {took:?}"
        );
    }

    #[test]
    fn block_on_stops_at_cancellation_and_returns_what_ends() {
        let ct = CancellationToken::new();
        let later = ct.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            later.cancel();
        });
        let until = Instant::now() + Duration::from_secs(600);
        assert_eq!(
            block_on(&ct, until, std::future::pending::<()>()),
            Err(Stopped::Cancelled)
        );
        let ct = CancellationToken::new();
        let until = Instant::now() + Duration::from_secs(600);
        assert_eq!(block_on(&ct, until, async { 7 }), Ok(7));
    }
}
