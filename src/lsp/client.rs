//! One running language server (issue 20 §1): started through the process engine (so it
//! runs in the session's sandbox like any command), spoken to with async-lsp's client
//! main loop over its stdin and stdout, and kept in sync with the files Boris and the
//! agent's commands change.

use super::position::Encoding;
pub use super::shared::Published;
use super::shared::{Pushed, ended, lock, stderr_tail};
pub use super::start::{INITIALIZE_LIMIT, Launch};
use super::start::{Sink, initialize, initialize_params, router, spawn_process};
use crate::exec::{self, Running};
use async_lsp::{MainLoop, ServerSocket};
use lsp_types::notification::{self as note, Notification};
use lsp_types::request::{self as req, Request};
use lsp_types::{ServerCapabilities, Url, WorkspaceFolder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// An open document: what the server was last told it holds.
struct Doc {
    version: i32,
    stamp: Option<crate::text::line_index::FileStamp>,
    text: Arc<str>,
}

/// The text the server has of a document, at a version.
#[derive(Clone)]
pub struct Synced {
    pub uri: Url,
    pub path: PathBuf,
    /// Unique for this server (see [`Server::put`]): the version names this content.
    pub version: i32,
    pub text: Arc<str>,
    /// Whether this call told the server something new (opened or changed it).
    pub changed: bool,
}

pub struct Server {
    pub language: String,
    pub command: String,
    pub root: PathBuf,
    pub pid: i32,
    pub encoding: Encoding,
    pub capabilities: ServerCapabilities,
    socket: ServerSocket,
    process: Running,
    pushed: Arc<Mutex<Pushed>>,
    changed: watch::Receiver<u64>,
    docs: Mutex<HashMap<PathBuf, Doc>>,
    /// The last document version given out, for every document (see [`Server::put`]).
    last_version: AtomicI32,
    /// Whether the server answers `textDocument/diagnostic` (see [`Server::diagnostics`]).
    pull: AtomicU8,
    /// Per document, the last version [`Server::diagnostics`] had an answer for.
    answered: Mutex<HashMap<PathBuf, i32>>,
    /// False once the main loop ended (the server exited or broke the protocol).
    alive: watch::Receiver<bool>,
    /// Counts this server in `/metrics` while it exists.
    _live: crate::metrics::Live,
}

/// [`Server::pull`]: not known yet (asked; "method not found" means no), yes, no.
const PULL_UNKNOWN: u8 = 0;
const PULL_YES: u8 = 1;
const PULL_NO: u8 = 2;

/// Why a request got no answer.
#[derive(Debug)]
pub enum Failure {
    /// The server is gone (crashed, killed): worth one restart.
    Gone,
    /// The server does not know the request ("method not found").
    Unsupported,
    /// No answer within the bound.
    TimedOut,
    /// The server answered with an error.
    Error(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Gone => f.write_str("the language server exited"),
            Failure::Unsupported => f.write_str("the language server does not offer this request"),
            Failure::TimedOut => f.write_str("the language server did not answer in time"),
            Failure::Error(e) => write!(f, "the language server answered with an error: {e}"),
        }
    }
}

impl Server {
    /// Starts the server and initialises it. Runs on the LSP runtime.
    pub async fn start(launch: Launch) -> Result<Server, String> {
        let process = spawn_process(&launch)?;
        let pipes = process
            .take_pipes()
            .ok_or_else(|| "the server's pipes were not made".to_string())?;
        let to_server = tokio::net::unix::pipe::Sender::from_owned_fd(pipes.stdin)
            .map_err(|e| format!("the server's stdin: {e}"))?;
        let from_server = tokio::net::unix::pipe::Receiver::from_owned_fd(pipes.stdout)
            .map_err(|e| format!("the server's stdout: {e}"))?;
        let root_uri = Url::from_directory_path(&launch.root)
            .map_err(|_| format!("{} is not an absolute path", launch.root.display()))?;
        let folder = vec![WorkspaceFolder {
            uri: root_uri.clone(),
            name: launch
                .root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into()),
        }];
        let pushed = Arc::new(Mutex::new(Pushed::default()));
        let (changed_tx, changed) = watch::channel(0u64);
        let sink = Sink {
            pushed: pushed.clone(),
            changed: changed_tx,
            folder: folder.clone(),
        };
        let (mainloop, socket) = MainLoop::new_client(|_| router(sink));
        let (alive_tx, alive) = watch::channel(true);
        tokio::spawn(async move {
            use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
            let ended = mainloop
                .run_buffered(from_server.compat(), to_server.compat_write())
                .await;
            if let Err(e) = ended {
                tracing::debug!(error = %e, "language server connection ended");
            }
            alive_tx.send_replace(false);
        });
        let params = initialize_params(&launch, root_uri, folder);
        let init = initialize(&socket, &alive, &launch.command, &process, params).await?;
        let encoding = Encoding::from_lsp(
            init.capabilities
                .position_encoding
                .as_ref()
                .map(|k| k.as_str()),
        );
        let pull = if init.capabilities.diagnostic_provider.is_some() {
            PULL_YES
        } else {
            PULL_UNKNOWN
        };
        Ok(Server {
            language: launch.language,
            command: launch.command,
            root: launch.root,
            pid: process.pid,
            encoding,
            capabilities: init.capabilities,
            socket,
            process,
            pushed,
            changed,
            docs: Mutex::new(HashMap::new()),
            last_version: AtomicI32::new(0),
            pull: AtomicU8::new(pull),
            answered: Mutex::new(HashMap::new()),
            alive,
            _live: crate::metrics::Live::new(crate::metrics::Gauge::LanguageServers),
        })
    }

    pub fn is_alive(&self) -> bool {
        *self.alive.borrow() && self.process.exited().is_none()
    }

    /// Whether the server reports work in progress (indexing, analysis).
    pub fn busy(&self) -> bool {
        !lock(&self.pushed).progress.is_empty()
    }

    /// The last lines the server wrote on stderr (for an error message).
    pub fn stderr_tail(&self) -> String {
        stderr_tail(&self.process)
    }

    /// Waits until no work is in progress, up to `until`; whether it is idle.
    pub async fn wait_idle(&self, until: Instant) -> bool {
        let mut rx = self.changed.clone();
        loop {
            if !self.busy() {
                return true;
            }
            if !self.is_alive() {
                return false;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return !self.busy();
            }
        }
    }

    /// Sends `R` and waits for its answer up to `until`. A "content modified" answer
    /// (the server's state moved under the request) is retried while time is left.
    pub async fn request<R: Request>(
        &self,
        params: R::Params,
        until: Instant,
    ) -> Result<R::Result, Failure>
    where
        R::Params: Clone,
    {
        loop {
            if !self.is_alive() {
                return Err(Failure::Gone);
            }
            let left = until.saturating_duration_since(Instant::now());
            let mut alive = self.alive.clone();
            let answer = tokio::select! {
                r = tokio::time::timeout(left, self.socket.request::<R>(params.clone())) => r,
                _ = ended(&mut alive) => return Err(Failure::Gone),
            };
            match answer {
                Err(_) => return Err(Failure::TimedOut),
                Ok(Ok(r)) => return Ok(r),
                Ok(Err(async_lsp::Error::Response(e)))
                    if e.code == async_lsp::ErrorCode::CONTENT_MODIFIED
                        && Instant::now() < until =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Ok(Err(async_lsp::Error::ServiceStopped | async_lsp::Error::Eof)) => {
                    return Err(Failure::Gone);
                }
                Ok(Err(async_lsp::Error::Response(e)))
                    if e.code == async_lsp::ErrorCode::METHOD_NOT_FOUND =>
                {
                    return Err(Failure::Unsupported);
                }
                Ok(Err(e)) => return Err(Failure::Error(e.to_string())),
            }
        }
    }

    fn notify<N: Notification>(&self, params: N::Params) -> Result<(), Failure> {
        self.socket.notify::<N>(params).map_err(|_| Failure::Gone)
    }

    /// Makes the server hold `text` for `path` (opening the document, or changing it);
    /// `save` also sends didSave. Returns what the server now holds.
    ///
    /// Every open and every change takes the next number of one counter of the server,
    /// so a version is never given twice, not even to a document closed and opened again:
    /// a (document, version) pair names one content for the server's whole life, which
    /// [`Server::diagnostics`] relies on. The notification is sent under `docs`' lock, so
    /// the versions reach the server in the order they were given.
    pub fn put(
        &self,
        path: &Path,
        language_id: &str,
        text: Arc<str>,
        stamp: Option<crate::text::line_index::FileStamp>,
        save: bool,
    ) -> Result<Synced, Failure> {
        let uri = Url::from_file_path(path).map_err(|_| Failure::Error("not a path".into()))?;
        let mut docs = lock(&self.docs);
        let mut changed = true;
        let version = match docs.get_mut(path) {
            Some(doc) if *doc.text == *text => {
                doc.stamp = stamp;
                changed = false;
                doc.version
            }
            Some(doc) => {
                doc.version = self.next_version();
                doc.text = text.clone();
                doc.stamp = stamp;
                self.notify::<note::DidChangeTextDocument>(
                    lsp_types::DidChangeTextDocumentParams {
                        text_document: lsp_types::VersionedTextDocumentIdentifier {
                            uri: uri.clone(),
                            version: doc.version,
                        },
                        content_changes: vec![lsp_types::TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text: text.to_string(),
                        }],
                    },
                )?;
                doc.version
            }
            None => {
                let version = self.next_version();
                self.notify::<note::DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
                    text_document: lsp_types::TextDocumentItem {
                        uri: uri.clone(),
                        language_id: language_id.to_string(),
                        version,
                        text: text.to_string(),
                    },
                })?;
                docs.insert(
                    path.to_path_buf(),
                    Doc {
                        version,
                        stamp,
                        text: text.clone(),
                    },
                );
                version
            }
        };
        if save {
            self.notify::<note::DidSaveTextDocument>(lsp_types::DidSaveTextDocumentParams {
                text_document: lsp_types::TextDocumentIdentifier { uri: uri.clone() },
                text: None,
            })?;
        }
        Ok(Synced {
            uri,
            path: path.to_path_buf(),
            version,
            text,
            changed,
        })
    }

    fn next_version(&self) -> i32 {
        self.last_version.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Whether the server holds `path` at `version` now.
    fn holds(&self, path: &Path, version: i32) -> bool {
        lock(&self.docs)
            .get(path)
            .is_some_and(|d| d.version == version)
    }

    /// How many documents are open.
    pub fn open_count(&self) -> usize {
        lock(&self.docs).len()
    }

    /// What the server holds of `path`, if it is open.
    pub fn open_text(&self, path: &Path) -> Option<(i32, Arc<str>)> {
        lock(&self.docs)
            .get(path)
            .map(|d| (d.version, d.text.clone()))
    }

    /// The open documents whose file changed on disk since the server was told (a
    /// command wrote them): their paths and stamps now (`None`: gone).
    pub fn stale_docs(&self) -> Vec<(PathBuf, Option<crate::text::line_index::FileStamp>)> {
        lock(&self.docs)
            .iter()
            .filter_map(|(p, d)| {
                let now = std::fs::metadata(p)
                    .ok()
                    .map(|m| crate::text::line_index::FileStamp::of(&m));
                (now != d.stamp).then(|| (p.clone(), now))
            })
            .collect()
    }

    /// Closes a document whose file is gone.
    pub fn close(&self, path: &Path) {
        if lock(&self.docs).remove(path).is_some()
            && let Ok(uri) = Url::from_file_path(path)
        {
            let _ =
                self.notify::<note::DidCloseTextDocument>(lsp_types::DidCloseTextDocumentParams {
                    text_document: lsp_types::TextDocumentIdentifier { uri },
                });
        }
    }

    /// The diagnostics last published for `uri`.
    pub fn published(&self, uri: &Url) -> Option<Published> {
        lock(&self.pushed).diagnostics.get(uri).cloned()
    }

    /// The current change counter (to wait for anything published after now).
    pub fn seq(&self) -> u64 {
        lock(&self.pushed).seq
    }

    /// The diagnostics of `synced`'s document as the server holds it at `synced.version`
    /// (issue 26), waited for up to `until`; `None` when the server gives none for that
    /// version in time. `after_seq`: [`Server::seq`] from before the document was synced.
    ///
    /// What makes them describe exactly that content, whatever calls came before:
    ///
    /// - Pull (LSP 3.17 `textDocument/diagnostic`: pyright, rust-analyzer, gopls), asked
    ///   first of every server until one says "method not found". A server reads its
    ///   messages in order, so the answer describes what it held when it read the request.
    ///   Only Boris changes what it holds, always under `docs`' lock with a version never
    ///   given before ([`Server::put`]): when the document is at `synced.version` both
    ///   before the request is sent and after the answer came, no change came between,
    ///   and the answer is about that content. If it moved on, the answer is dropped:
    ///   `None`, since the version asked about is gone.
    /// - Push (clangd, typescript-language-server), for servers without pull: only a
    ///   publish tagged with exactly `synced.version` counts (an older one is about older
    ///   content, a newer one about newer): the first one for it. A server that tags no
    ///   version (typescript-language-server) cannot say what a publish describes: the
    ///   first one after `after_seq` counts, right when it publishes in the order of the
    ///   changes. The tag is the server's word: pyright tags a publish with the
    ///   document's version when it sends it, and after a change its first publish
    ///   carries the new version with the checker's results for the old content (issue
    ///   26: after `references` had loaded click, every edit was answered one edit late).
    ///   So a server that pulls is never read from its publishes.
    /// - A server that publishes nothing for a version: `None` at `until`; callers say
    ///   the server has not reported, never another version's diagnostics.
    pub async fn diagnostics(
        &self,
        synced: &Synced,
        after_seq: u64,
        until: Instant,
    ) -> Option<Published> {
        let answer = self.diagnostics_of(synced, after_seq, until).await;
        if answer.is_some() {
            lock(&self.answered).insert(synced.path.clone(), synced.version);
        }
        answer
    }

    /// Whether [`Server::diagnostics`] had an answer for `synced`'s version: the server
    /// has checked that content once (the project around it loaded), whatever it would
    /// say now that other files may have changed.
    pub fn has_checked(&self, synced: &Synced) -> bool {
        lock(&self.answered).get(&synced.path) == Some(&synced.version)
    }

    async fn diagnostics_of(
        &self,
        synced: &Synced,
        after_seq: u64,
        until: Instant,
    ) -> Option<Published> {
        while self.pull.load(Ordering::Relaxed) != PULL_NO {
            if !self.holds(&synced.path, synced.version) {
                return None;
            }
            let params = lsp_types::DocumentDiagnosticParams {
                text_document: lsp_types::TextDocumentIdentifier {
                    uri: synced.uri.clone(),
                },
                identifier: None,
                previous_result_id: None,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            match self
                .request::<req::DocumentDiagnosticRequest>(params, until)
                .await
            {
                Ok(lsp_types::DocumentDiagnosticReportResult::Report(
                    lsp_types::DocumentDiagnosticReport::Full(report),
                )) => {
                    self.pull.store(PULL_YES, Ordering::Relaxed);
                    if !self.holds(&synced.path, synced.version) {
                        return None;
                    }
                    return Some(Published {
                        version: Some(synced.version),
                        diagnostics: report.full_document_diagnostic_report.items,
                        seq: self.seq(),
                    });
                }
                // "Unchanged" (Boris names no earlier result; pyright says so of a file
                // it has not loaded yet) or a partial result: no answer yet.
                Ok(_) => {
                    if Instant::now() + Duration::from_millis(100) >= until {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(Failure::Unsupported) => self.pull.store(PULL_NO, Ordering::Relaxed),
                Err(_) => return None,
            }
        }
        self.wait_published(synced, after_seq, until).await
    }

    /// Waits up to `until` for the publish that [`Server::diagnostics`] counts for a
    /// server without pull.
    async fn wait_published(
        &self,
        synced: &Synced,
        after_seq: u64,
        until: Instant,
    ) -> Option<Published> {
        let mut rx = self.changed.clone();
        loop {
            if let Some(p) = self.published(&synced.uri) {
                let fresh = match p.version {
                    Some(v) => v == synced.version,
                    None => p.seq > after_seq,
                };
                if fresh {
                    return Some(p);
                }
            }
            if !self.is_alive() || !self.holds(&synced.path, synced.version) {
                return None;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return None;
            }
        }
    }

    /// Resident memory of the server and the processes it started (tsserver under
    /// typescript-language-server), in bytes; Linux only.
    pub fn rss_bytes(&self) -> Option<u64> {
        process_tree_rss(self.pid)
    }

    /// Asks the server to exit (shutdown, exit), then kills its process group.
    pub async fn stop(&self) {
        let until = Instant::now() + Duration::from_millis(500);
        if self.request::<req::Shutdown>((), until).await.is_ok() {
            let _ = self.notify::<note::Exit>(());
            let mut alive = self.alive.clone();
            let _ = tokio::time::timeout(Duration::from_millis(300), ended(&mut alive)).await;
        }
        self.process.signal_group(nix::sys::signal::Signal::SIGKILL);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The process engine's Running kills the group when it goes; say so first for
        // the processes that left it.
        self.process.signal_group(nix::sys::signal::Signal::SIGKILL);
    }
}

/// VmRSS of `pid` and its descendants, in bytes.
pub fn process_tree_rss(pid: i32) -> Option<u64> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (p, dir) in exec::other_processes() {
        if let Ok(stat) = std::fs::read_to_string(dir.join("stat"))
            && let Some(after) = stat.rsplit_once(')').map(|x| x.1)
            && let Some(ppid) = after.split_whitespace().nth(1).and_then(|s| s.parse().ok())
        {
            children.entry(ppid).or_default().push(p);
        }
    }
    let mut total = 0u64;
    let mut found = false;
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{p}/status"))
            && let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            total += kb * 1024;
            found = true;
        }
        stack.extend(children.get(&p).into_iter().flatten());
    }
    found.then_some(total)
}
