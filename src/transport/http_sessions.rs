//! How many MCP sessions may live at once over HTTP (issue 27 §2), and the `DELETE` of a
//! session that does not exist. Sessions cost memory and a workspace each, and rmcp
//! creates one for every `initialize` with no limit.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;

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
}

impl SessionGate {
    pub fn new(sessions: Arc<LocalSessionManager>, max: usize) -> Arc<Self> {
        Arc::new(Self {
            sessions,
            max,
            creating: tokio::sync::Mutex::new(()),
        })
    }

    async fn open(&self) -> usize {
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
    let _creating = gate.creating.lock().await;
    let open = gate.open().await;
    if open >= gate.max {
        tracing::warn!(
            open,
            limit = gate.max,
            "refused a new session over --max-sessions"
        );
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32000,
                "message": format!(
                    "too many open sessions ({open}, --max-sessions {}): try again in \
                     {RETRY_AFTER_SECS} s, or end a session (DELETE /mcp)",
                    gate.max
                )
            }
        });
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        return response;
    }
    // rmcp has put the session in its table by the time the response head exists.
    next.run(req).await
}
