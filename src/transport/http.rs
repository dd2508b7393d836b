//! Streamable HTTP (DESIGN §3): rmcp's service at `/mcp` inside axum, `GET /health`, an
//! optional bearer token, Host and Origin checks against DNS rebinding, CORS for browser
//! clients, a request body cap, header read timeouts, and a graceful shutdown. Each MCP
//! session gets its own workspace; stateless (2026-07-28) requests share the server's
//! default one.

use crate::server::BorisServer;
use crate::tools::Shared;
use crate::workspace::Workspace;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// A client must send its request headers within this time (slowloris protection).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long in-flight requests get to finish once shutdown begins.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Browser origins that are always allowed: pages served from this machine.
const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

pub fn router(shared: Arc<Shared>, token: Option<String>, ct: CancellationToken) -> Router {
    let config = &shared.config;
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|s| s.to_string()).collect();
    origins.extend(config.allowed_origins.iter().cloned());
    let mut http_config = StreamableHttpServerConfig::default()
        .with_cancellation_token(ct.child_token())
        .with_allowed_origins(origins)
        // Big enough for create_file at --max-file-size, JSON escaping included.
        .with_max_request_body_bytes(body_cap(config.max_file_size));
    http_config = if !config.allowed_hosts.is_empty() {
        let mut hosts: Vec<String> = config.allowed_hosts.clone();
        if is_loopback(&config.host) {
            hosts.extend(LOOPBACK_HOSTS.iter().map(|s| s.to_string()));
        }
        http_config.with_allowed_hosts(hosts)
    } else if is_loopback(&config.host) {
        http_config.with_allowed_hosts(LOOPBACK_HOSTS.iter().copied())
    } else {
        // Beyond loopback the names clients use cannot be guessed; --allowed-host
        // narrows them.
        http_config.disable_allowed_hosts()
    };

    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(config.session_idle_timeout);
    // Stateless requests have no session to keep state in: they share this workspace.
    let default_ws = Arc::new(Workspace::new(config.workdir.clone()));
    let factory_shared = shared.clone();
    let mcp = StreamableHttpService::new(
        move || {
            Ok(BorisServer::with_default_workspace(
                factory_shared.clone(),
                default_ws.clone(),
            ))
        },
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
        // Outermost, so that a preflight is answered before authentication.
        .layer(cors())
}

fn body_cap(max_file_size: u64) -> usize {
    let cap = max_file_size
        .saturating_mul(2)
        .saturating_add(1 << 20)
        .max(4 << 20);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

fn cors() -> CorsLayer {
    CorsLayer::new()
        // rmcp answers a foreign Origin with 403 on the request itself.
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            header::ACCEPT,
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([HeaderName::from_static("mcp-session-id")])
        .max_age(Duration::from_secs(600))
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
    if req.method() == Method::OPTIONS {
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
    let mut response = (
        StatusCode::UNAUTHORIZED,
        Json(serde_json::json!({
            "error": "unauthorized",
            "message": "this server needs `Authorization: Bearer <token>` (see --token)"
        })),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Compares in time that depends only on the lengths, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Serves until SIGINT/SIGTERM: then stops accepting, cancels the sessions (which drops
/// their workspaces and so kills their background tasks), gives in-flight connections
/// a few seconds, and returns.
pub async fn serve(shared: Arc<Shared>, token: Option<String>) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto;
    use hyper_util::server::graceful::GracefulShutdown;

    let config = &shared.config;
    let addr = format!("{}:{}", config.host, config.port);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    if !is_loopback(&config.host) && token.is_none() {
        tracing::warn!(%bound, "listening beyond loopback without a bearer token: anyone who can reach this port can run commands (use --token or --generate-token)");
    }
    tracing::info!(%bound, "serving MCP over streamable HTTP at /mcp");

    let ct = CancellationToken::new();
    let app = router(shared, token, ct.clone());
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let shutdown = crate::transport::shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(conn) => conn,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, don't spin.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let service = hyper_util::service::TowerToHyperService::new(app.clone());
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut shutdown => {
                tracing::info!("signal received, shutting down");
                break;
            }
        }
    }
    drop(listener);
    ct.cancel();
    crate::exec::begin_shutdown();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some connections were still open after the shutdown grace");
    }
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

    #[test]
    fn body_cap_fits_the_largest_file() {
        assert_eq!(body_cap(10 << 20), (20 << 20) + (1 << 20));
        assert_eq!(body_cap(1), 4 << 20);
    }
}
