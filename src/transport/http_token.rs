//! The bearer token of `--auth token` (DESIGN §3, issue 30 §1): where a request presents
//! it (`Authorization: Bearer`, or the header `--token-header` names), the check in time
//! that does not depend on where it differs, and the 401 with failures logged, throttled
//! and without what was presented. `--auth oauth` checks tokens in `oauth/` instead.

use super::http_conn;
use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::sync::Arc;

/// The token and where it comes: `Authorization: Bearer <token>`, or the header
/// `--token-header` names (issue 30 §1), never the query string.
pub struct TokenCheck {
    token: Arc<str>,
    /// `None`: `Authorization`.
    header: Option<HeaderName>,
}

impl TokenCheck {
    pub fn new(token: String, auth: &crate::config::Auth) -> Arc<Self> {
        Arc::new(Self {
            token: token.into(),
            header: token_header(auth),
        })
    }
}

/// The header `--token-header` names, if any (validated with the configuration).
pub fn token_header(auth: &crate::config::Auth) -> Option<HeaderName> {
    match auth {
        crate::config::Auth::Token { header: Some(h) }
        | crate::config::Auth::Oauth {
            header: Some(h), ..
        } => HeaderName::from_bytes(h.as_bytes()).ok(),
        _ => None,
    }
}

/// The token a request presents. In `Authorization` it must be `Bearer <token>` (the
/// scheme in any case); in a header of its own, the token alone or `Bearer <token>`.
fn presented_token<'a>(req: &'a Request, check: &TokenCheck) -> Option<&'a str> {
    let name = check.header.as_ref().unwrap_or(&header::AUTHORIZATION);
    let value = req.headers().get(name)?.to_str().ok()?.trim();
    match value.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => Some(rest.trim()),
        Some(_) => None,
        None if check.header.is_some() => Some(value),
        None => None,
    }
}

pub async fn require_bearer(
    State(check): State<Option<Arc<TokenCheck>>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(check) = check else {
        return next.run(req).await;
    };
    if req.method() == Method::OPTIONS {
        return next.run(req).await;
    }
    let presented = presented_token(&req, &check);
    let body_unread = has_body(&req);
    if presented.is_some_and(|p| constant_time_eq(p.as_bytes(), check.token.as_bytes())) {
        return next.run(req).await;
    }
    let header_name = check.header.as_ref().unwrap_or(&header::AUTHORIZATION);
    // Rate-limited, and never what was presented: a near miss would leak the token.
    static FAILURES: http_conn::Throttle = http_conn::Throttle::new();
    if let Some(held_back) = FAILURES.admit() {
        let client = req
            .extensions()
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip().to_string())
            .unwrap_or_default();
        let reason = match (req.headers().get(header_name), presented) {
            (None, _) => "no token header",
            (Some(_), None) => "not a bearer token",
            (Some(_), Some(_)) => "wrong token",
        };
        tracing::warn!(%client, path = req.uri().path(), reason, held_back, "refused a request: authentication failed");
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        Json(serde_json::json!({
            "error": "unauthorized",
            "message": if check.header.is_some() {
                format!("this server needs `{header_name}: <token>` (see --token and --token-header)")
            } else {
                "this server needs `Authorization: Bearer <token>` (see --token)".to_string()
            }
        })),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    refusal(body_unread, response)
}

/// Whether a request carries a body (one the refusal below will not read).
pub fn has_body(req: &Request) -> bool {
    req.headers().contains_key(header::TRANSFER_ENCODING)
        || req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// A refusal answered before the request's body is read says `Connection: close` when
/// there is a body: hyper closes such a connection once the answer is written (it drains
/// only what already arrived), and a client that was not told reuses it for its next
/// request and gets "server disconnected" — the MCP SDK's OAuth flow fetches the metadata
/// right after the 401 (tests/refusal_keepalive.rs).
pub fn refusal(body_unread: bool, mut response: Response) -> Response {
    if body_unread {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Compares in time that depends only on the lengths, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_compare() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
