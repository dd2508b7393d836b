//! Streamable HTTP at `/mcp` (rmcp's service inside axum), `GET /health`, and an
//! optional bearer token. Each MCP session gets its own workspace.

use crate::server::BorisServer;
use crate::tools::Shared;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::IpAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub fn router(shared: Arc<Shared>, token: Option<String>, ct: CancellationToken) -> Router {
    let config = &shared.config;
    let mut http_config =
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    if !is_loopback(&config.host) {
        // Beyond loopback the Host header cannot be predicted; DNS-rebinding protection
        // via Host only makes sense on loopback.
        http_config = http_config.disable_allowed_hosts();
    }
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(config.session_idle_timeout);
    let factory_shared = shared.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(BorisServer::new(factory_shared.clone())),
        Arc::new(sessions),
        http_config,
    );
    let protected = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(
            token.map(Arc::<str>::from),
            require_bearer,
        ));
    Router::new()
        .route(
            "/health",
            get(|| async { Json(serde_json::json!({"status": "ok"})) }),
        )
        .merge(protected)
}

pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

async fn require_bearer(
    State(token): State<Option<Arc<str>>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(expected) = token else {
        return next.run(req).await;
    };
    if req.method() == axum::http::Method::OPTIONS {
        return next.run(req).await;
    }
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    if presented.is_some_and(|p| constant_time_eq(p.as_bytes(), expected.as_bytes())) {
        return next.run(req).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        Json(serde_json::json!({"error": "unauthorized", "message": "a valid bearer token is required"})),
    )
        .into_response()
}

/// Compares in time that depends only on the lengths, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub async fn serve(shared: Arc<Shared>, token: Option<String>) -> anyhow::Result<()> {
    let config = &shared.config;
    let addr = format!("{}:{}", config.host, config.port);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    if !is_loopback(&config.host) && token.is_none() {
        tracing::warn!(%bound, "listening beyond loopback without a bearer token: anyone who can reach this port can run tools");
    }
    tracing::info!(%bound, "serving MCP over streamable HTTP at /mcp");
    let ct = CancellationToken::new();
    let app = router(shared, token, ct.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            crate::transport::shutdown_signal().await;
            ct.cancel();
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names() {
        assert!(is_loopback("127.0.0.1"));
        assert!(is_loopback("::1"));
        assert!(is_loopback("[::1]"));
        assert!(is_loopback("localhost"));
        assert!(!is_loopback("0.0.0.0"));
        assert!(!is_loopback("10.1.2.3"));
    }

    #[test]
    fn token_compare() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
