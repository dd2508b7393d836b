//! Streamable HTTP (DESIGN §3): rmcp's service at `/mcp` inside axum, `GET /health` and
//! `GET /ready`, an
//! optional bearer token, Host and Origin checks against DNS rebinding, CORS for browser
//! clients, a request body cap, header read timeouts, and a graceful shutdown. Each MCP
//! session gets its own workspace; stateless (2026-07-28) requests share the server's
//! default one.

use super::{
    framing, http_budget, http_conn, http_headers, http_ready, http_sessions, http_token, oauth,
};

pub use crate::config::origin::{origin_allowed, valid_origin_entry};
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

/// How long connections get to close once the drain is over and the sessions are gone.
const CONNECTIONS_CLOSE: Duration = Duration::from_secs(1);
/// How long, at most, the answers being written get before the sessions are cancelled.
const ANSWERS_OUT: Duration = Duration::from_millis(100);

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

pub fn router(
    shared: Arc<Shared>,
    token: Option<String>,
    ct: CancellationToken,
) -> anyhow::Result<Router> {
    let config = &shared.config;
    let guard = oauth::Guard::for_auth(&config.auth).map_err(anyhow::Error::msg)?;
    let scopes = Arc::new(oauth::tool_scopes(&shared.tools));
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|s| s.to_string()).collect();
    origins.extend(config.allowed_origins.iter().cloned());
    let origins = Arc::new(origins);
    let cap = http_conn::body_cap(config.max_file_size);
    let mut http_config = StreamableHttpServerConfig::default()
        .with_cancellation_token(ct.child_token())
        .with_allowed_origins(origins.iter().cloned())
        // Big enough for create_file at --max-file-size, as JSON encoders escape text.
        .with_max_request_body_bytes(cap);
    let hosts = allowed_hosts(config);
    http_config = match &hosts {
        Some(hosts) => http_config.with_allowed_hosts(hosts.iter().cloned()),
        None => http_config.disable_allowed_hosts(),
    };
    let header_policy = Arc::new(http_headers::HeaderPolicy {
        origins: origins.clone(),
        hosts,
    });

    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(config.session_idle_timeout);
    let sessions = Arc::new(sessions);
    let gate = http_sessions::SessionGate::new(
        sessions.clone(),
        usize::try_from(config.http_limits.max_sessions).unwrap_or(usize::MAX),
    );
    http_sessions::return_memory_when_sessions_end(gate.clone(), ct.child_token());
    // Stateless requests have no session to keep state in: they share this workspace.
    let default_ws = Arc::new(Workspace::new(config.workdir.clone()));
    let readiness = Arc::new(http_ready::Readiness {
        workdir: config.workdir.clone(),
        confined: config.sandbox.is_some(),
    });
    let factory_shared = shared.clone();
    let mcp = StreamableHttpService::new(
        move || {
            Ok(BorisServer::with_default_workspace(
                factory_shared.clone(),
                default_ws.clone(),
            ))
        },
        sessions,
        http_config,
    );
    let protected = Router::new()
        .route(
            "/metrics",
            get(http_sessions::metrics).with_state(gate.clone()),
        )
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(
            gate,
            http_sessions::gate_sessions,
        ))
        .layer(middleware::from_fn_with_state(
            Screen {
                cap,
                budget: http_budget::BodyBudget::new(cap),
                oauth: guard.clone().map(|g| (g, scopes)),
            },
            screen_messages,
        ))
        .layer(middleware::from_fn(delete_answers_ok));
    // Only on /mcp and /metrics: any other path is 404 without a token, so a client
    // probing for OAuth discovery documents learns there are none (issue 30 §1).
    let (protected, discovery) = match &guard {
        Some(guard) => (
            protected.route_layer(middleware::from_fn_with_state(
                guard.clone(),
                oauth::require_token,
            )),
            oauth::metadata_routes(guard.clone()),
        ),
        None => (
            protected.route_layer(middleware::from_fn_with_state(
                token.map(|token| http_token::TokenCheck::new(token, &config.auth)),
                http_token::require_bearer,
            )),
            Router::new(),
        ),
    };
    Ok(Router::new()
        .route(
            "/health",
            get(|| async { Json(serde_json::json!({"status": "ok"})) }),
        )
        .route("/ready", get(http_ready::ready).with_state(readiness))
        .merge(protected)
        .merge(discovery)
        // Before authentication, so that a preflight is answered without a token.
        .layer(cors(
            origins.clone(),
            http_token::token_header(&config.auth),
        ))
        // Outermost: a foreign page gets 403 even for its preflight.
        .layer(middleware::from_fn_with_state(
            header_policy,
            http_headers::screen_headers,
        )))
}

/// What [`screen_messages`] needs: the body cap and budget, and in `--auth oauth` the
/// guard and the scope each tool needs.
#[derive(Clone)]
struct Screen {
    cap: usize,
    budget: Arc<http_budget::BodyBudget>,
    oauth: Option<(Arc<oauth::Guard>, Arc<oauth::ToolScopes>)>,
}

/// Past this many bytes a body over the cap is no longer read, only answered.
const MAX_SCANNED_BODY_BYTES: usize = 1 << 30;

/// Reads a POSTed JSON-RPC body and decides it as stdio decides a line
/// ([`framing::classify`]): a body that is not JSON gets `400` with `-32700`; a request
/// whose params do not fit its method gets `-32602` with its id; a body over the cap gets
/// `413` with `-32600` and the request's id (found while the rest streams past). rmcp
/// would answer these with a plain-text 415 or 413 that no client can tie to its request.
/// Everything else goes on to rmcp unchanged.
async fn screen_messages(State(screen): State<Screen>, req: Request, next: Next) -> Response {
    let Screen { cap, budget, oauth } = screen;
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
    let client = req
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.ip());
    let mut reservation = http_budget::Reservation::new(&budget, client);
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
        } else if reservation.grow_to(collected.len() + chunk.len()) {
            collected.extend_from_slice(&chunk);
        } else {
            tracing::warn!(%client, "refused a request body: too many big bodies being read at once");
            let mut response = (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(serde_json::json!({"error": "overloaded", "message": "too many large request bodies are being read at once; try again"})),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
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
        framing::Inbound::Message(message) => {
            let mut parts = parts;
            if let rmcp::model::ClientJsonRpcMessage::Request(r) = &*message
                && let rmcp::model::ClientRequest::CallToolRequest(call) = &r.request
                && let Some((guard, scopes)) = &oauth
                && let Some(grant) = oauth::grant_of(&parts)
                && let Some(refusal) = oauth::check_call(guard, scopes, grant, &call.params.name)
            {
                return refusal;
            }
            if let rmcp::model::ClientJsonRpcMessage::Request(r) = &*message
                && matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_))
            {
                let id = serde_json::to_value(&r.id).unwrap_or_default();
                parts
                    .extensions
                    .insert(http_sessions::InitializeRequest(id));
            }
            // The bytes stay counted until rmcp has parsed and dropped them.
            let body = http_conn::HoldingBody::new(
                axum::body::Body::from(collected),
                Box::new(reservation),
            );
            next.run(Request::from_parts(parts, axum::body::Body::new(body)))
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

fn cors(origins: Arc<Vec<String>>, token_header: Option<HeaderName>) -> CorsLayer {
    let mut allowed = vec![
        header::CONTENT_TYPE,
        header::AUTHORIZATION,
        header::ACCEPT,
        HeaderName::from_static("mcp-session-id"),
        HeaderName::from_static("mcp-protocol-version"),
        HeaderName::from_static("last-event-id"),
        // The 2026-07-28 stateless requests name their method and target.
        HeaderName::from_static("mcp-method"),
        HeaderName::from_static("mcp-name"),
    ];
    // A browser may send the token in the header --token-header names.
    allowed.extend(token_header);
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin.to_str().is_ok_and(|o| origin_allowed(o, &origins))
        }))
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers(allowed)
        .expose_headers([
            HeaderName::from_static("mcp-session-id"),
            header::WWW_AUTHENTICATE,
        ])
        .max_age(Duration::from_secs(600))
}

/// The `Host` values accepted: bound to loopback, the loopback names and
/// `--allowed-host`; beyond loopback, `--allowed-host` or (`None`) any, since the names
/// clients use there cannot be guessed.
fn allowed_hosts(config: &crate::config::Config) -> Option<Vec<String>> {
    let mut hosts = config.allowed_hosts.clone();
    if is_loopback(&config.host) {
        hosts.extend(LOOPBACK_HOSTS.iter().map(|s| s.to_string()));
    }
    (!hosts.is_empty()).then_some(hosts)
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
pub fn start_banner(
    bound: SocketAddr,
    token: Option<&str>,
    generated: bool,
    auth: &crate::config::Auth,
) -> String {
    let send = match auth {
        crate::config::Auth::Token { header: Some(h) } => format!("`{h}: <token>`"),
        _ => "`Authorization: Bearer <token>`".to_string(),
    };
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
            "boris: a bearer token is required (generated): send {send}\nbearer token: {token}"
        ),
        (Some(_), false) => format!("boris: a bearer token is required (--token): send {send}"),
        (None, _) if matches!(auth, crate::config::Auth::Oauth { .. }) => {
            "boris: an OAuth access token is required (--auth oauth)".to_string()
        }
        (None, _) => "boris: no bearer token required (--token or --generate-token to require one)"
            .to_string(),
    };
    format!("{url}\n{auth}")
}

pub use crate::config::is_loopback;

/// The router as a hyper service on one connection: each request counts as activity
/// on `watch` until its response body is done, and its body must arrive within
/// `body_timeout`.
fn watched_service(
    app: Router,
    peer: SocketAddr,
    watch: http_conn::ConnWatch,
    answers: Arc<crate::drain::Count>,
    body_timeout: Duration,
) -> impl hyper::service::Service<
    hyper::Request<hyper::body::Incoming>,
    Response = Response,
    Error = std::convert::Infallible,
    Future = impl Future<Output = Result<Response, std::convert::Infallible>> + Send,
> + Clone {
    use hyper::service::Service as _;
    let app = hyper_util::service::TowerToHyperService::new(app);
    hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
        let in_flight = watch.begin();
        // Answers being written, which the shutdown lets out first; a GET is the standalone
        // event stream, which ends only with its session.
        let answer = (req.method() != hyper::Method::GET)
            .then(|| crate::drain::Count::enter(answers.clone()));
        let mut req = req.map(|body| http_conn::DeadlineBody::new(body, body_timeout));
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        let response = app.call(req);
        async move {
            let response = response.await?;
            Ok(response.map(|body| {
                axum::body::Body::new(http_conn::HoldingBody::new(
                    body,
                    Box::new((in_flight, answer)),
                ))
            }))
        }
    })
}

/// Serves until SIGINT/SIGTERM: then drains ([`crate::drain`]: no new sessions, running calls
/// get `--shutdown-grace`), stops accepting, cancels the sessions (which drops their
/// workspaces and so kills their background tasks), gives connections a second to
/// close, and returns.
pub async fn serve(shared: Arc<Shared>, token: Option<String>) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto;
    use hyper_util::server::graceful::GracefulShutdown;

    let signal = crate::transport::ShutdownSignal::listen();
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
        // Only with `--auth none` said (without it the configuration is refused).
        tracing::warn!(%bound, "listening beyond loopback with --auth none: anyone who can reach this port can run commands");
    }
    // Whatever the log level, and before the `bound=` line harnesses wait for: what a
    // user needs to point a client at this server.
    let banner = start_banner(bound, token.as_deref(), config.generate_token, &config.auth);
    // Never the token where a command could read it back (issue 25 §5, X10).
    let banner = crate::token_out::divert(
        banner,
        token.as_deref(),
        config.generate_token,
        shared.spill.path(),
    );
    let _ = writeln!(std::io::stderr(), "{banner}");
    tracing::info!(%bound, "serving MCP over streamable HTTP at /mcp");

    let limits = &config.http_limits;
    let nofile = http_conn::descriptor_limit();
    let conn_cap = limits.connection_cap(nofile);
    if (conn_cap as u64) < limits.max_connections {
        tracing::info!(
            connections = conn_cap,
            descriptors = nofile,
            "at most this many HTTP connections: three quarters of the descriptor limit"
        );
    }
    let conns = http_conn::ConnLimits::new(
        conn_cap,
        usize::try_from(limits.max_connections_per_ip).unwrap_or(usize::MAX),
    );
    let timeouts = http_conn::Timeouts::from(limits);
    let grace = limits.shutdown_grace;
    let ct = CancellationToken::new();
    let app = router(shared, token, ct.clone())?;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(timeouts.http2_keepalive))
        .keep_alive_timeout(timeouts.http2_keepalive);
    let graceful = GracefulShutdown::new();
    let answers = Arc::new(crate::drain::Count::default());
    // Connections are still accepted while the drain runs: sessions send their calls'
    // follow-ups, and a balancer must see /ready answer 503.
    let shutdown = async {
        signal.recv().await;
        crate::drain::global().run(grace).await;
    };
    tokio::pin!(shutdown);
    let accept_failures = http_conn::Throttle::default();
    let refusals = http_conn::Throttle::default();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, don't spin, and
                        // don't flood the log.
                        if let Some(held_back) = accept_failures.admit() {
                            tracing::warn!(error = %e, held_back, "accept failed");
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let permit = match conns.admit(peer.ip()) {
                    Ok(permit) => permit,
                    Err(why) => {
                        if let Some(held_back) = refusals.admit() {
                            tracing::warn!(client = %peer.ip(), ?why, open = conns.open(), held_back, "refused a connection over the cap");
                        }
                        // Best effort, never waiting: the socket's buffer is empty.
                        let _ = stream.try_write(&http_conn::refusal_response(why));
                        continue;
                    }
                };
                // Small SSE writes must not wait for the client's delayed ACK.
                let _ = stream.set_nodelay(true);
                let watch = http_conn::ConnWatch::default();
                let service = watched_service(app.clone(), peer, watch.clone(), answers.clone(), timeouts.body);
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    let _permit = permit;
                    tokio::select! {
                        _ = conn => {}
                        // Dropping the connection closes it.
                        _ = watch.expired(timeouts.header, timeouts.idle) => {
                            tracing::debug!(client = %peer, "closed an idle connection");
                        }
                    }
                });
            }
            _ = &mut shutdown => {
                tracing::info!("drained, shutting down");
                break;
            }
        }
    }
    drop(listener);
    // The answers of the calls that just ended are on their way: let them out first
    // (at most ANSWERS_OUT: a response that never ends must not hold the exit).
    let _ = tokio::time::timeout(ANSWERS_OUT, answers.zero()).await;
    ct.cancel();
    crate::exec::begin_shutdown();
    if tokio::time::timeout(CONNECTIONS_CLOSE, graceful.shutdown())
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
        use crate::config::Auth;
        let bearer = Auth::Token { header: None };
        let banner = start_banner(
            "127.0.0.1:8080".parse().unwrap(),
            Some("abc"),
            true,
            &bearer,
        );
        assert!(banner.contains("http://127.0.0.1:8080/mcp"), "{banner}");
        assert!(banner.contains("\nbearer token: abc"), "{banner}");
        assert!(
            banner.contains("send `Authorization: Bearer <token>`"),
            "{banner}"
        );
        let own = Auth::Token {
            header: Some("x-boris-token".into()),
        };
        let banner = start_banner("[::1]:9".parse().unwrap(), Some("abc"), false, &own);
        assert!(banner.contains("send `x-boris-token: <token>`"), "{banner}");
        assert!(banner.contains("http://[::1]:9/mcp"), "{banner}");
        assert!(
            banner.contains("required (--token)") && !banner.contains("abc"),
            "{banner}"
        );
        let none = Auth::None { explicit: true };
        let banner = start_banner("0.0.0.0:8080".parse().unwrap(), None, false, &none);
        assert!(banner.contains("all IPv4 interfaces"), "{banner}");
        assert!(banner.contains("no bearer token required"), "{banner}");
    }

    #[test]
    fn body_cap_fits_the_largest_file() {
        assert_eq!(framing::message_cap(10 << 20), (60 << 20) + (1 << 20));
        assert_eq!(framing::message_cap(1), 4 << 20);
        assert_eq!(http_conn::body_cap(10 << 20), (30 << 20) + (1 << 20));
        assert_eq!(http_conn::body_cap(1), 4 << 20);
    }
}
