//! The request headers checked before anything else (issue 27 §3): `Origin` read as a URL
//! origin and nothing more, `Origin` and `Host` present at most once, and `Host` checked
//! on `/health` too (rmcp checks it on `/mcp` only), so a DNS-rebinding page learns
//! nothing, not even that a Boris listens.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::Ipv6Addr;
use std::sync::Arc;

/// A browser origin: `scheme://host[:port]`, host lowercased (an IPv6 host keeps its
/// brackets), the port made explicit where the scheme has a default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: Option<u16>,
}

/// The port of an allowed-origin entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortRule {
    /// `:*`, or no port written: any port (as rmcp reads entries).
    Any,
    Is(u16),
}

/// Splits `scheme://host[:port]` with nothing else allowed: no path (not even `/`), no
/// user info, query or fragment, a bracketed host only if it is an IPv6 address, a port
/// only of digits (or `*` when `wildcard`).
fn split(value: &str, wildcard: bool) -> Option<(String, String, Option<&str>)> {
    let (scheme, rest) = value.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (addr, after) = v6.split_once(']')?;
        addr.parse::<Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{}]", addr.to_ascii_lowercase()), port)
    } else {
        let (host, port) = match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        };
        let host_ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        if !host_ok {
            return None;
        }
        (host.to_ascii_lowercase(), port)
    };
    if let Some(p) = port {
        let digits = !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
        if !(digits && p.parse::<u16>().is_ok() || wildcard && p == "*") {
            return None;
        }
    }
    Some((scheme.to_ascii_lowercase(), host, port))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Parses an `Origin` header value (other than `null`) strictly.
pub fn parse_origin(value: &str) -> Option<Origin> {
    let (scheme, host, port) = split(value, false)?;
    let port = match port {
        Some(p) => Some(p.parse().ok()?),
        None => default_port(&scheme),
    };
    Some(Origin { scheme, host, port })
}

/// Whether `entry` is a valid `--allowed-origin` value: `null`, or an origin whose port
/// may be `*`.
pub fn valid_origin_entry(entry: &str) -> bool {
    entry == "null" || split(entry, true).is_some()
}

/// Whether the `Origin` value `origin` matches an allowed entry: same scheme and host,
/// and the entry's port, any port for `:*` or an entry without one. `null` only if
/// `null` is allowed.
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    if origin == "null" {
        return allowed.iter().any(|a| a == "null");
    }
    let Some(origin) = parse_origin(origin) else {
        return false;
    };
    allowed.iter().any(|entry| {
        let Some((scheme, host, port)) = split(entry, true) else {
            return false;
        };
        let rule = match port {
            None | Some("*") => PortRule::Any,
            Some(p) => match p.parse() {
                Ok(p) => PortRule::Is(p),
                Err(_) => return false,
            },
        };
        scheme == origin.scheme
            && host == origin.host
            && match rule {
                PortRule::Any => true,
                PortRule::Is(p) => origin.port == Some(p),
            }
    })
}

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
    // Each refusal here comes before the body is read (DEC-signin-a).
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

    fn allowed() -> Vec<String> {
        [
            "http://localhost:*",
            "http://127.0.0.1:*",
            "http://[::1]:*",
            "https://app.example.com",
            "http://devbox:8080",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        let a = allowed();
        assert!(origin_allowed("http://localhost:5173", &a));
        assert!(origin_allowed("http://[::1]:3000", &a));
        assert!(origin_allowed("http://127.0.0.1", &a));
        assert!(origin_allowed("https://APP.example.com", &a));
        assert!(origin_allowed("http://devbox:8080", &a));
        for refused in [
            "http://[::1]evil:5",
            "http://127.0.0.1:80/evil",
            "http://127.0.0.1/",
            "http://user@localhost:1",
            "http://localhost:1?x",
            "http://localhost:99999",
            "http://localhost:+80",
            "http://[::1",
            "http://[evil]:1",
            "http://devbox:9090",
            "http://evil.example",
            "https://localhost.evil.example",
            "null",
            "garbage",
            "",
        ] {
            assert!(!origin_allowed(refused, &a), "{refused:?} was allowed");
        }
    }

    #[test]
    fn origin_entries() {
        assert!(valid_origin_entry("http://devbox:*"));
        assert!(valid_origin_entry("https://app.example.com"));
        assert!(valid_origin_entry("null"));
        assert!(!valid_origin_entry("https://app.example.com/"));
        assert!(!valid_origin_entry("app.example.com"));
    }

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

    proptest::proptest! {
        #[test]
        fn a_valid_entry_allows_itself_and_only_bare_origins(
            entry in "(http|https|ftp)://([a-zA-Z0-9.-]{1,8}|\\[::1\\])(:[0-9]{1,5})?",
            origin in "[a-z]{1,5}://[a-zA-Z0-9.:/@?#\\[\\]-]{0,16}",
        ) {
            let allowed = vec![entry.clone()];
            if valid_origin_entry(&entry) {
                proptest::prop_assert!(origin_allowed(&entry, &allowed), "{entry:?}");
            }
            if origin_allowed(&origin, &allowed) {
                let rest = origin.split_once("://").map_or("", |(_, r)| r);
                proptest::prop_assert!(!rest.contains(['/', '@', '?', '#']), "{origin:?}");
            }
        }

        #[test]
        fn an_allowed_origin_is_exactly_its_parts(s in "[a-z]{1,5}://[a-z0-9.\\[\\]:/@-]{0,20}") {
            if let Some(o) = parse_origin(&s) {
                let port = o.port.map(|p| format!(":{p}")).unwrap_or_default();
                let rebuilt = format!("{}://{}{}", o.scheme, o.host, port);
                proptest::prop_assert!(origin_allowed(&s, &[rebuilt]));
                proptest::prop_assert!(!s.contains('/') || s.matches('/').count() == 2);
                proptest::prop_assert!(!s.contains('@'));
            }
        }
    }
}
