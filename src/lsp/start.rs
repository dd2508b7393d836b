//! How a language server is started and spoken to (issue 20 §1): its process run by the
//! process engine (in the session's jail when there is one), the client's capabilities,
//! the router that answers the server's requests and keeps what it pushes, and the
//! `initialize` handshake. [`super::client::Server`] holds the running server.

use super::shared::{Published, Pushed, ended, lock, stderr_tail};
use crate::exec::{self, Io, Running, Spawn};
use async_lsp::ServerSocket;
use async_lsp::router::Router;
use lsp_types::notification as note;
use lsp_types::request as req;
use lsp_types::{
    ClientCapabilities, InitializeParams, InitializeResult, NumberOrString, ProgressParamsValue,
    Url, WorkDoneProgress, WorkspaceFolder,
};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// How long a server may take to answer `initialize` before it is given up (calls never
/// wait this long: they answer `indexing` at their own bound and the start goes on).
pub const INITIALIZE_LIMIT: Duration = Duration::from_secs(120);

/// What Boris needs to start a server.
pub struct Launch {
    pub language: String,
    pub command: String,
    pub root: PathBuf,
    pub shell: PathBuf,
    pub env: Vec<(String, String)>,
    pub jail: Option<Arc<crate::sandbox::client::Jail>>,
    /// Where the process engine may write a scratch file.
    pub scratch: PathBuf,
}

/// The router state: where pushed things go.
pub(super) struct Sink {
    pub(super) pushed: Arc<Mutex<Pushed>>,
    pub(super) changed: watch::Sender<u64>,
    pub(super) folder: Vec<WorkspaceFolder>,
}

impl Sink {
    fn bump(&self, p: &mut Pushed) {
        p.seq += 1;
        let seq = p.seq;
        self.changed.send_replace(seq);
    }
}

fn token_key(t: &NumberOrString) -> String {
    match t {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.clone(),
    }
}

pub(super) fn router(sink: Sink) -> Router<Sink> {
    let mut r = Router::new(sink);
    r.notification::<note::PublishDiagnostics>(|s, p| {
        tracing::debug!(uri = %p.uri, version = ?p.version, count = p.diagnostics.len(), "diagnostics published");
        let mut pushed = lock(&s.pushed);
        let seq = pushed.seq + 1;
        pushed.diagnostics.insert(
            p.uri,
            Published {
                version: p.version,
                diagnostics: p.diagnostics,
                seq,
            },
        );
        s.bump(&mut pushed);
        ControlFlow::Continue(())
    })
    .notification::<note::Progress>(|s, p| {
        let ProgressParamsValue::WorkDone(w) = p.value;
        let mut pushed = lock(&s.pushed);
        let key = token_key(&p.token);
        match w {
            WorkDoneProgress::Begin(_) => {
                pushed.progress.insert(key);
            }
            WorkDoneProgress::End(_) => {
                pushed.progress.remove(&key);
            }
            WorkDoneProgress::Report(_) => return ControlFlow::Continue(()),
        }
        s.bump(&mut pushed);
        ControlFlow::Continue(())
    })
    // Logs, telemetry, messages: nothing a call needs.
    .unhandled_notification(|_, _| ControlFlow::Continue(()))
    .request::<req::WorkDoneProgressCreate, _>(|_, _| async { Ok(()) })
    .request::<req::RegisterCapability, _>(|_, _| async { Ok(()) })
    .request::<req::UnregisterCapability, _>(|_, _| async { Ok(()) })
    .request::<req::WorkspaceConfiguration, _>(|_, p| {
        // Every section at its default.
        let n = p.items.len();
        async move { Ok(vec![serde_json::Value::Null; n]) }
    })
    .request::<req::WorkspaceFoldersRequest, _>(|s, _| {
        let folders = s.folder.clone();
        async move { Ok(Some(folders)) }
    })
    .request::<req::ShowMessageRequest, _>(|_, _| async { Ok(None) })
    .request::<req::ApplyWorkspaceEdit, _>(|_, _| async {
        // Boris applies edits itself, through its own checks.
        Ok(lsp_types::ApplyWorkspaceEditResponse {
            applied: false,
            failure_reason: Some("the client applies no edits it did not ask for".into()),
            failed_change: None,
        })
    })
    // Refresh requests and anything newer: acknowledged.
    .unhandled_request(|_, _| async { Ok(serde_json::Value::Null) });
    r
}

fn capabilities() -> ClientCapabilities {
    serde_json::from_value(serde_json::json!({
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
        "window": {"workDoneProgress": true},
        "workspace": {
            "workspaceFolders": true,
            "configuration": true,
            "symbol": {"symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()}},
            "workspaceEdit": {"documentChanges": true}
        },
        "textDocument": {
            "synchronization": {"didSave": true, "dynamicRegistration": false},
            "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
            // Pull diagnostics (see `Server::diagnostics`); pyright offers them only to a
            // client that takes dynamic registration, and then stops publishing.
            "diagnostic": {"dynamicRegistration": true, "relatedDocumentSupport": false},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "documentSymbol": {
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()}
            },
            "rename": {"prepareSupport": false},
            "callHierarchy": {}
        }
    }))
    .unwrap_or_default()
}

/// The server's process: its command run by the shell (in the session's jail if
/// there is one), stdin and stdout piped for the protocol, stderr kept for errors.
pub(super) fn spawn_process(launch: &Launch) -> Result<Running, String> {
    let stderr_limits = |name: &str| exec::Limits {
        head_bytes: 8 * 1024,
        tail_bytes: 8 * 1024,
        spill_after: 8 * 1024,
        spill_path: launch.scratch.join(name),
        spill_max: 0,
        clean_chars: None,
    };
    let mut env = launch.env.clone();
    if let Some(jail) = &launch.jail {
        // A server caches (clangd's index, gopls' module data) under the user's cache
        // directory, which the sandbox does not let it write: the session's TMPDIR.
        env.push((
            "XDG_CACHE_HOME".into(),
            jail.host_tmp().join("cache").display().to_string(),
        ));
    }
    let script = format!("exec {}", launch.command);
    // The sandbox starts the server with a round trip to the session's supervisor (up
    // to its start limit): off the runtime's worker, so other servers' I/O and every
    // call's timers go on meanwhile.
    tokio::task::block_in_place(|| {
        Running::spawn(Spawn {
            shell: &launch.shell,
            script: &script,
            cwd: &launch.root,
            stdout: stderr_limits("lsp-stdout"),
            stderr: stderr_limits("lsp-stderr"),
            env: &env,
            scratch: &launch.scratch,
            jail: launch.jail.as_deref(),
            io: Io::Piped,
            login: false,
        })
    })
    .map_err(|e| format!("could not start `{}`: {e}", launch.command))
}

pub(super) fn initialize_params(
    launch: &Launch,
    root_uri: Url,
    folder: Vec<WorkspaceFolder>,
) -> InitializeParams {
    #[allow(deprecated)] // root_uri: older servers read it rather than the folders.
    InitializeParams {
        // A server watches this pid and exits when it is gone; inside the sandbox's
        // PID namespace Boris's pid names nothing (typescript-language-server quit
        // after 3 s), and the sandbox kills the server with the session anyway.
        process_id: launch.jail.is_none().then(std::process::id),
        root_uri: Some(root_uri),
        capabilities: capabilities(),
        workspace_folders: Some(folder),
        client_info: Some(lsp_types::ClientInfo {
            name: "boris".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        ..Default::default()
    }
}

/// `initialize` asked and answered, then `initialized` sent; or why not: the server
/// exited first (with what it said on stderr), refused, or did not answer in time.
pub(super) async fn initialize(
    socket: &ServerSocket,
    alive: &watch::Receiver<bool>,
    command: &str,
    process: &Running,
    params: InitializeParams,
) -> Result<InitializeResult, String> {
    let mut alive_wait = alive.clone();
    let init = tokio::select! {
        r = tokio::time::timeout(INITIALIZE_LIMIT, socket.request::<req::Initialize>(params)) => r,
        _ = ended(&mut alive_wait) => {
            // Give the reader a moment to collect what it said on stderr.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return Err(format!(
                "`{command}` exited during start-up{}",
                stderr_tail(process)
            ));
        }
    };
    let init = match init {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Err(format!(
                "`{command}` failed to initialize: {e}{}",
                stderr_tail(process)
            ));
        }
        Err(_) => {
            return Err(format!(
                "`{command}` did not answer initialize within {} s",
                INITIALIZE_LIMIT.as_secs()
            ));
        }
    };
    socket
        .notify::<note::Initialized>(lsp_types::InitializedParams {})
        .map_err(|e| format!("`{command}`: {e}"))?;
    Ok(init)
}
