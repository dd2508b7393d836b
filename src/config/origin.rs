//! Browser origins and the `--allowed-origin` entries they are matched against (issue 27
//! §3): pure, so the flag's validation (here, in `config`) and the HTTP layer's check
//! (`transport::http_headers`) share one reading of an origin.

use std::net::Ipv6Addr;

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
