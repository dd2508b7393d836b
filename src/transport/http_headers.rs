//! The request headers checked before anything else (issue 27 §3): `Origin` read as a URL
//! origin and nothing more, `Origin` and `Host` present at most once, and `Host` checked
//! on `/health` too (rmcp checks it on `/mcp` only), so a DNS-rebinding page learns
//! nothing, not even that a Boris listens.

use crate::config::origin::origin_allowed;
use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Whether a `Host` value names an allowed host (`None`: any host is allowed). The port
/// is not compared unless the entry has one, as rmcp compares.
pub fn host_allowed(value: &str, allowed: Option<&[String]>) -> bool {
    let Some(allowed) = allowed else {
        return true;
    };
    let Ok(authority) = value.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    if authority.as_str().contains('@') {
        return false;
    }
    let norm = |h: &str| {
        h.trim_matches(|c| c == '[' || c == ']')
            .to_ascii_lowercase()
    };
    let host = norm(authority.host());
    allowed.iter().any(|entry| {
        let (entry_host, entry_port) = match entry.parse::<axum::http::uri::Authority>() {
            Ok(a) => (norm(a.host()), a.port_u16()),
            Err(_) => (norm(entry), None),
        };
        entry_host == host && entry_port.is_none_or(|p| authority.port_u16() == Some(p))
    })
}

/// What the header screen needs to know.
pub struct HeaderPolicy {
    pub origins: Arc<Vec<String>>,
    /// `None`: any `Host` (bound beyond loopback with no `--allowed-host`).
    pub hosts: Option<Vec<String>>,
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let error = if status == StatusCode::FORBIDDEN {
        "forbidden"
    } else {
        "bad_request"
    };
    (
        status,
        Json(serde_json::json!({"error": error, "message": message})),
    )
        .into_response()
}

fn count(headers: &HeaderMap, name: &HeaderName) -> usize {
    headers.get_all(name).iter().count()
}

/// Outermost layer: 400 for a repeated `Origin` or `Host` (which one would count is
/// ambiguous: rmcp reads the first, a proxy may read the last); 403 for a foreign
/// `Origin` on `/mcp` (the CORS preflight included) and for a foreign `Host` on `/health` and `/ready`.
pub async fn screen_headers(
    State(policy): State<Arc<HeaderPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    let headers = req.headers();
    // Each refusal here comes before the body is read (DEC-102).
    let closing =
        |response| super::http_token::refusal(super::http_token::has_body(&req), response);
    if count(headers, &header::ORIGIN) > 1 || count(headers, &header::HOST) > 1 {
        return closing(refuse(
            StatusCode::BAD_REQUEST,
            "a request may carry one Origin and one Host header",
        ));
    }
    let path = req.uri().path();
    let foreign_origin = path.starts_with("/mcp")
        && headers
            .get(header::ORIGIN)
            .is_some_and(|o| !o.to_str().is_ok_and(|o| origin_allowed(o, &policy.origins)));
    if foreign_origin {
        return closing(refuse(
            StatusCode::FORBIDDEN,
            "this Origin is not allowed (see --allowed-origin)",
        ));
    }
    if path == "/health" || path == "/ready" {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
            .or_else(|| req.uri().authority().map(|a| a.to_string()));
        let ok = match host {
            Some(h) => host_allowed(&h, policy.hosts.as_deref()),
            None => policy.hosts.is_none(),
        };
        if !ok {
            return closing(refuse(
                StatusCode::FORBIDDEN,
                "this Host is not allowed (see --allowed-host)",
            ));
        }
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let loopback = ["localhost", "127.0.0.1", "::1", "[::1]"].map(String::from);
        assert!(host_allowed("localhost:8080", Some(&loopback)));
        assert!(host_allowed("[::1]:8080", Some(&loopback)));
        assert!(host_allowed("127.0.0.1", Some(&loopback)));
        assert!(!host_allowed("evil.example", Some(&loopback)));
        assert!(!host_allowed("user@localhost", Some(&loopback)));
        assert!(!host_allowed("", Some(&loopback)));
        assert!(host_allowed("anything", None));
    }
}
