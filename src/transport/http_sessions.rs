//! How many MCP sessions may live at once over HTTP (issue 27 §2), and the `DELETE` of a
//! session that does not exist. Sessions cost memory and a workspace each, and rmcp
//! creates one for every `initialize` with no limit.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;
use std::time::Duration;

/// What a client over the session cap is told to wait before it tries again.
pub const RETRY_AFTER_SECS: u64 = 10;

/// Put on a request by the message screen when its body is an `initialize` request:
/// the request's id.
#[derive(Clone, Debug)]
pub struct InitializeRequest(pub serde_json::Value);

pub struct SessionGate {
    pub sessions: Arc<LocalSessionManager>,
    pub max: usize,
    /// Held from the count to the new session's entry in the table, so that concurrent
    /// `initialize` requests cannot all pass the same count.
    creating: tokio::sync::Mutex<()>,
    /// Sessions opened so far (initialize answered 200).
    opened: std::sync::atomic::AtomicUsize,
}

impl SessionGate {
    pub fn new(sessions: Arc<LocalSessionManager>, max: usize) -> Arc<Self> {
        Arc::new(Self {
            sessions,
            max,
            creating: tokio::sync::Mutex::new(()),
            opened: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    pub async fn open(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }

    async fn exists(&self, id: &str) -> bool {
        self.sessions
            .sessions
            .read()
            .await
            .keys()
            .any(|k| k.as_ref() == id)
    }
}

fn session_id(req: &Request) -> Option<&str> {
    req.headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
}

/// Innermost before rmcp: an `initialize` that would open a session past
/// `--max-sessions` gets 503 with `Retry-After` and a JSON-RPC error carrying its id;
/// a `DELETE` of a session the server does not have gets 404, as any other request for
/// it does (rmcp answers it 202).
pub async fn gate_sessions(
    State(gate): State<Arc<SessionGate>>,
    req: Request,
    next: Next,
) -> Response {
    if req.method() == Method::DELETE {
        if let Some(id) = session_id(&req)
            && !gate.exists(id).await
        {
            return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        }
        return next.run(req).await;
    }
    let Some(InitializeRequest(id)) = req.extensions().get::<InitializeRequest>().cloned() else {
        return next.run(req).await;
    };
    if session_id(&req).is_some() {
        return next.run(req).await;
    }
    if crate::drain::global().draining() {
        return refuse_session(
            id,
            "the server is shutting down and takes no new sessions: open one on another instance"
                .to_string(),
        );
    }
    let _creating = gate.creating.lock().await;
    let open = gate.open().await;
    if open >= gate.max {
        tracing::warn!(
            open,
            limit = gate.max,
            "refused a new session over --max-sessions"
        );
        return refuse_session(
            id,
            format!(
                "too many open sessions ({open}, --max-sessions {}): try again in \
                 {RETRY_AFTER_SECS} s, or end a session (DELETE /mcp)",
                gate.max
            ),
        );
    }
    // rmcp has put the session in its table by the time the response head exists.
    let response = next.run(req).await;
    if response.status() == StatusCode::OK {
        gate.opened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    response
}

/// `GET /metrics` (behind the token): the text exposition, with the sessions open now.
pub async fn metrics(State(gate): State<Arc<SessionGate>>) -> Response {
    let text = crate::metrics::global().render(gate.open().await);
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

/// 503 with `Retry-After` and a JSON-RPC error carrying the initialize's id.
fn refuse_session(id: serde_json::Value, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32000, "message": message}
    });
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// How often the session count is looked at to decide whether to give memory back.
const TRIM_CHECK: Duration = Duration::from_secs(10);

/// Gives the memory of ended sessions back to the system (issue 27 §2). Measured on the
/// release build (BENCHMARKS.md): a flood of 26,481 sessions took the server to 1.3 GiB,
/// and 60 s after they were reaped it still held 1.3 GiB; with this trim, 19 MiB (a
/// `malloc_trim(0)` through gdb had shown the same on a debug build).
/// The memory was free inside glibc's per-thread arenas, not leaked: glibc returns a
/// non-main arena's free pages only from the top of a heap, and session state freed
/// across tokio's worker threads leaves them scattered. So when a check finds that
/// sessions ended since the last one (open then + opened since > open now), the arenas
/// are trimmed (off the runtime's threads; a few milliseconds). musl has no such arenas
/// and no `malloc_trim`.
pub fn return_memory_when_sessions_end(
    gate: Arc<SessionGate>,
    ct: tokio_util::sync::CancellationToken,
) {
    use std::sync::atomic::Ordering;
    tokio::spawn(async move {
        let (mut last_open, mut last_opened) = (0usize, 0usize);
        loop {
            tokio::select! {
                _ = ct.cancelled() => return,
                _ = tokio::time::sleep(TRIM_CHECK) => {}
            }
            let opened = gate.opened.load(Ordering::Relaxed);
            let open = gate.open().await;
            if open < last_open + (opened - last_opened) {
                let _ = tokio::task::spawn_blocking(trim).await;
            }
            (last_open, last_opened) = (open, opened);
        }
    });
}

fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}
