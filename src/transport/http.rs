//! Streamable HTTP (DESIGN §3): rmcp's service at `/mcp` inside axum, `GET /health`, an
//! optional bearer token, Host and Origin checks against DNS rebinding, CORS for browser
//! clients, a request body cap, header read timeouts, and a graceful shutdown. Each MCP
//! session gets its own workspace; stateless (2026-07-28) requests share the server's
//! default one.

use super::framing;
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
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
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
    let origins = Arc::new(origins);
    let cap = framing::message_cap(config.max_file_size);
    let mut http_config = StreamableHttpServerConfig::default()
        .with_cancellation_token(ct.child_token())
        .with_allowed_origins(origins.iter().cloned())
        // Big enough for create_file at --max-file-size, JSON escaping included.
        .with_max_request_body_bytes(cap);
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
        .layer(middleware::from_fn_with_state(cap, screen_messages))
        .layer(middleware::from_fn(delete_answers_ok))
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
        // Before authentication, so that a preflight is answered without a token.
        .layer(cors(origins.clone()))
        // Outermost: a foreign page gets 403 even for its preflight.
        .layer(middleware::from_fn_with_state(
            origins,
            reject_foreign_origin,
        ))
}

/// 403 for any request to `/mcp` whose `Origin` is not allowed (rmcp checks the real
/// requests too; this also covers the CORS preflight).
async fn reject_foreign_origin(
    State(origins): State<Arc<Vec<String>>>,
    req: Request,
    next: Next,
) -> Response {
    let foreign = req.uri().path().starts_with("/mcp")
        && req
            .headers()
            .get(header::ORIGIN)
            .is_some_and(|o| !o.to_str().is_ok_and(|o| origin_allowed(o, &origins)));
    if foreign {
        return (
            StatusCode::FORBIDDEN,
            Json(serde_json::json!({"error": "forbidden", "message": "this Origin is not allowed (see --allowed-origin)"})),
        )
            .into_response();
    }
    next.run(req).await
}

/// Whether `origin` (`scheme://host[:port]`) matches an allowed entry: same scheme and
/// host (case-insensitive), and the same port, `:*` for any port, or no port in the
/// entry for any port (as rmcp reads entries).
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    fn split(o: &str) -> Option<(String, String, Option<String>)> {
        let (scheme, rest) = o.split_once("://")?;
        let rest = rest.trim_end_matches('/');
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (h, after) = v6.split_once(']')?;
            (
                format!("[{h}]"),
                after.strip_prefix(':').map(str::to_string),
            )
        } else {
            match rest.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p.to_string())),
                None => (rest.to_string(), None),
            }
        };
        Some((scheme.to_ascii_lowercase(), host.to_ascii_lowercase(), port))
    }
    if origin == "null" {
        return allowed.iter().any(|a| a == "null");
    }
    let Some((scheme, host, port)) = split(origin) else {
        return false;
    };
    let port = port.unwrap_or_else(|| if scheme == "https" { "443" } else { "80" }.to_string());
    allowed.iter().filter_map(|a| split(a)).any(|(s, h, p)| {
        s == scheme && h == host && p.as_deref().is_none_or(|p| p == "*" || p == port)
    })
}

/// Past this many bytes a body over the cap is no longer read, only answered.
const MAX_SCANNED_BODY_BYTES: usize = 1 << 30;

/// Reads a POSTed JSON-RPC body and decides it as stdio decides a line
/// ([`framing::classify`]): a body that is not JSON gets `400` with `-32700`; a request
/// whose params do not fit its method gets `-32602` with its id; a body over the cap gets
/// `413` with `-32600` and the request's id (found while the rest streams past). rmcp
/// would answer these with a plain-text 415 or 413 that no client can tie to its request.
/// Everything else goes on to rmcp unchanged.
async fn screen_messages(State(cap): State<usize>, req: Request, next: Next) -> Response {
    use futures::StreamExt as _;
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if req.method() != Method::POST || !is_json {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut collected: Vec<u8> = Vec::new();
    let mut oversize: Option<framing::IdScanner> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                return (
                    StatusCode::BAD_REQUEST,
                    format!("cannot read the request body: {e}"),
                )
                    .into_response();
            }
        };
        if let Some(scanner) = oversize.as_mut() {
            scanner.feed(&chunk);
            if scanner.seen > MAX_SCANNED_BODY_BYTES {
                break;
            }
        } else if collected.len().saturating_add(chunk.len()) > cap {
            let mut scanner = framing::IdScanner::new();
            scanner.feed(&collected);
            scanner.feed(&chunk);
            collected = Vec::new();
            oversize = Some(scanner);
        } else {
            collected.extend_from_slice(&chunk);
        }
    }
    if let Some(scanner) = oversize {
        tracing::warn!(
            size = scanner.seen,
            limit = cap,
            "refused a message over the size limit"
        );
        let reply = framing::too_large(scanner.id(), scanner.seen, cap);
        return json_reply(StatusCode::PAYLOAD_TOO_LARGE, reply);
    }
    match framing::classify(&collected) {
        framing::Inbound::Message(_) => {
            next.run(Request::from_parts(
                parts,
                axum::body::Body::from(collected),
            ))
            .await
        }
        framing::Inbound::Reply(reply) => {
            // An answer to a request the client can match: a normal JSON response.
            // Input that is not a request at all: 400, as the other SDKs answer it.
            let status = if reply.code == framing::INVALID_PARAMS {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            json_reply(status, reply)
        }
        // A malformed notification or response: accepted, as any notification is.
        framing::Inbound::Ignore => StatusCode::ACCEPTED.into_response(),
    }
}

fn json_reply(status: StatusCode, reply: framing::Reply) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        reply.body,
    )
        .into_response()
}

/// rmcp answers a session's `DELETE` with 202 Accepted; clients expect 200 (the Python
/// SDK logs "Session termination failed: 202"). The session is closed by then.
async fn delete_answers_ok(req: Request, next: Next) -> Response {
    let is_delete = req.method() == Method::DELETE;
    let mut response = next.run(req).await;
    if is_delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

fn cors(origins: Arc<Vec<String>>) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin.to_str().is_ok_and(|o| origin_allowed(o, &origins))
        }))
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

/// The addresses for `--host` when it needs no resolver: an IP literal (IPv6 with or
/// without brackets) or `localhost` (127.0.0.1, then ::1). `None`: ask the resolver.
pub fn literal_addrs(host: &str, port: u16) -> Option<Vec<SocketAddr>> {
    if host.eq_ignore_ascii_case("localhost") {
        return Some(vec![
            SocketAddr::new(IpAddr::from([127, 0, 0, 1]), port),
            SocketAddr::new(IpAddr::from(std::net::Ipv6Addr::LOCALHOST), port),
        ]);
    }
    let ip = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .parse::<IpAddr>()
        .ok()?;
    Some(vec![SocketAddr::new(ip, port)])
}

/// The lines printed on stderr once the HTTP server listens: the endpoint's URL (for an
/// unspecified address, that it listens on every interface), and whether a bearer token
/// is needed, with the token itself when Boris generated it.
pub fn start_banner(bound: SocketAddr, token: Option<&str>, generated: bool) -> String {
    let port = bound.port();
    let url = if bound.ip().is_unspecified() {
        let family = if bound.is_ipv4() {
            "IPv4"
        } else {
            "IPv6 (and, where the system maps them, IPv4)"
        };
        format!(
            "boris: listening on all {family} interfaces, port {port}: MCP at http://<this host>:{port}/mcp \
             (from this machine: http://{}/mcp)",
            SocketAddr::new(
                if bound.is_ipv4() {
                    IpAddr::from([127, 0, 0, 1])
                } else {
                    IpAddr::from(std::net::Ipv6Addr::LOCALHOST)
                },
                port
            )
        )
    } else {
        // SocketAddr's Display puts an IPv6 address in brackets, as a URL needs.
        format!("boris: MCP at http://{bound}/mcp (health check: http://{bound}/health)")
    };
    let auth = match (token, generated) {
        (Some(token), true) => format!(
            "boris: a bearer token is required (generated): send `Authorization: Bearer <token>`\nbearer token: {token}"
        ),
        (Some(_), false) => {
            "boris: a bearer token is required (--token): send `Authorization: Bearer <token>`"
                .to_string()
        }
        (None, _) => "boris: no bearer token required (--token or --generate-token to require one)"
            .to_string(),
    };
    format!("{url}\n{auth}")
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
    // Literal addresses and `localhost` are bound without the system resolver: a static
    // glibc binary has no NSS in an empty container, so `getaddrinfo` would fail there.
    let listener = match literal_addrs(&config.host, config.port) {
        Some(addrs) => tokio::net::TcpListener::bind(&addrs[..]).await,
        None => tokio::net::TcpListener::bind(&addr).await,
    }
    .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr()?;
    if !is_loopback(&config.host) && token.is_none() {
        tracing::warn!(%bound, "listening beyond loopback without a bearer token: anyone who can reach this port can run commands (use --token or --generate-token)");
    }
    // Whatever the log level, and before the `bound=` line harnesses wait for: what a
    // user needs to point a client at this server.
    let banner = start_banner(bound, token.as_deref(), config.generate_token);
    // Never the token where a command could read it back (issue 25 §5, X10).
    let banner = crate::token_out::divert(
        banner,
        token.as_deref(),
        config.generate_token,
        shared.spill.path(),
    );
    let _ = writeln!(std::io::stderr(), "{banner}");
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
                    // Small SSE writes must not wait for the client's delayed ACK.
                    Ok((stream, peer)) => {
                        let _ = stream.set_nodelay(true);
                        (stream, peer)
                    }
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
    fn literal_hosts_need_no_resolver() {
        let v4: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let v6: SocketAddr = "[::1]:8080".parse().unwrap();
        assert_eq!(literal_addrs("localhost", 8080), Some(vec![v4, v6]));
        assert_eq!(literal_addrs("127.0.0.1", 8080), Some(vec![v4]));
        assert_eq!(literal_addrs("::1", 8080), Some(vec![v6]));
        assert_eq!(literal_addrs("[::1]", 8080), Some(vec![v6]));
        assert_eq!(literal_addrs("devbox.lan", 8080), None);
    }

    #[test]
    fn the_start_banner_gives_the_url_and_the_token() {
        let banner = start_banner("127.0.0.1:8080".parse().unwrap(), Some("abc"), true);
        assert!(banner.contains("http://127.0.0.1:8080/mcp"), "{banner}");
        assert!(banner.contains("\nbearer token: abc"), "{banner}");
        let banner = start_banner("[::1]:9".parse().unwrap(), Some("abc"), false);
        assert!(banner.contains("http://[::1]:9/mcp"), "{banner}");
        assert!(
            banner.contains("required (--token)") && !banner.contains("abc"),
            "{banner}"
        );
        let banner = start_banner("0.0.0.0:8080".parse().unwrap(), None, false);
        assert!(banner.contains("all IPv4 interfaces"), "{banner}");
        assert!(banner.contains("no bearer token required"), "{banner}");
    }

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
    fn origins() {
        let allowed: Vec<String> = LOOPBACK_ORIGINS
            .iter()
            .map(|s| s.to_string())
            .chain([
                "https://app.example.com".to_string(),
                "http://devbox:8080".to_string(),
            ])
            .collect();
        assert!(origin_allowed("http://localhost:5173", &allowed));
        assert!(origin_allowed("http://[::1]:3000", &allowed));
        assert!(origin_allowed("https://APP.example.com", &allowed));
        assert!(origin_allowed("http://devbox:8080", &allowed));
        assert!(!origin_allowed("http://devbox:9090", &allowed));
        assert!(!origin_allowed("http://evil.example", &allowed));
        assert!(!origin_allowed("https://localhost.evil.example", &allowed));
        assert!(!origin_allowed("null", &allowed));
        assert!(!origin_allowed("garbage", &allowed));
    }

    #[test]
    fn body_cap_fits_the_largest_file() {
        assert_eq!(framing::message_cap(10 << 20), (60 << 20) + (1 << 20));
        assert_eq!(framing::message_cap(1), 4 << 20);
    }
}
