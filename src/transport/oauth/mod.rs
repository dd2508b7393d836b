//! `--auth oauth` (issue 30 §1, MCP authorization 2026-07-28): Boris as an OAuth resource
//! server. It publishes its protected-resource metadata (RFC 9728), answers a request
//! without a valid token with 401 and a challenge pointing at that metadata, checks JWT
//! access tokens ([`verify`]) and maps their scopes to tools: `boris:read` (tools that only
//! read), `boris:edit` (tools that change files), `boris:exec` (tools that run commands),
//! `boris:metrics` (`/metrics`). A call beyond the token's scopes gets 403
//! `insufficient_scope` naming the scopes needed. The token is never logged nor passed on.

pub mod claims;
pub mod introspect;
pub mod keys;
pub mod verify;

pub use crate::access::{
    EDIT, EXEC, Grant, METRICS, READ, ToolScopes, grant_of, scope_for, tool_scopes,
};
use crate::config::oauth::{METADATA_WELL_KNOWN, OauthConfig};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing::get};
use std::collections::HashMap;
use std::sync::Arc;

/// What a whole coding session needs: the scope of the 401 challenge.
const SESSION_SCOPES: &str = "boris:read boris:edit boris:exec";

pub struct Guard {
    pub config: OauthConfig,
    pub header: Option<HeaderName>,
    pub verifier: verify::Verifier,
    /// Who opened each session: a session is used only with tokens of its subject.
    owners: std::sync::Mutex<Owners>,
}

/// Session id → the subject that opened it, oldest first dropped past [`MAX_OWNERS`].
#[derive(Default)]
struct Owners {
    by_session: HashMap<String, Option<String>>,
    order: std::collections::VecDeque<String>,
}

/// Far more sessions than `--max-sessions` allows at once: the entries of sessions that
/// ended are dropped oldest first.
const MAX_OWNERS: usize = 1 << 16;

impl Owners {
    fn record(&mut self, session: String, subject: Option<String>) {
        if self.by_session.insert(session.clone(), subject).is_none() {
            self.order.push_back(session);
        }
        while self.order.len() > MAX_OWNERS {
            if let Some(old) = self.order.pop_front() {
                self.by_session.remove(&old);
            }
        }
    }

    /// Whether `subject` may use `session`: it opened it, or the session is unknown here
    /// (rmcp then answers as for any unknown session).
    fn allows(&self, session: &str, subject: &Option<String>) -> bool {
        self.by_session
            .get(session)
            .is_none_or(|owner| owner == subject)
    }
}

impl Guard {
    /// The guard for `--auth oauth`; `None` in the other modes.
    pub fn for_auth(auth: &crate::config::Auth) -> Result<Option<Arc<Self>>, String> {
        let crate::config::Auth::Oauth { header, config } = auth else {
            return Ok(None);
        };
        let header = header
            .as_ref()
            .and_then(|h| HeaderName::from_bytes(h.as_bytes()).ok());
        Ok(Some(Arc::new(Self::new(config, header)?)))
    }

    pub fn new(config: &OauthConfig, header: Option<HeaderName>) -> Result<Self, String> {
        let client = keys::client()?;
        let issuers = config
            .issuers
            .iter()
            .map(|i| {
                keys::IssuerKeys::new(
                    i.clone(),
                    client.clone(),
                    config.jwks_ttl,
                    config.jwks_refetch_interval,
                )
            })
            .collect();
        Ok(Self {
            verifier: verify::Verifier {
                rules: claims::Rules {
                    resource: config.resource.clone(),
                    issuers: config.issuers.clone(),
                    clock_skew: config.clock_skew,
                },
                issuers,
                introspection: config
                    .introspection
                    .as_ref()
                    .map(|c| introspect::Introspector::new(c, client.clone())),
                verified: Default::default(),
            },
            config: config.clone(),
            header,
            owners: std::sync::Mutex::default(),
        })
    }

    /// The RFC 9728 metadata document.
    fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.config.resource,
            "authorization_servers": self.config.issuers,
            "scopes_supported": [READ, EDIT, EXEC, METRICS],
            "bearer_methods_supported": ["header"],
            "resource_name": "Boris",
        })
    }

    fn challenge(&self, error: Option<(&str, &str)>, scope: &str) -> HeaderValue {
        challenge(&self.config.metadata_url, error, scope)
    }

    /// 401: no token, or one that does not verify (`reason`).
    fn unauthorized(&self, reason: Option<&str>) -> Response {
        let mut response = (
            StatusCode::UNAUTHORIZED,
            Json(serde_json::json!({
                "error": if reason.is_some() { "invalid_token" } else { "unauthorized" },
                "message": reason.unwrap_or("this server needs an OAuth access token: see the resource_metadata of the WWW-Authenticate header"),
            })),
        )
            .into_response();
        let challenge = self.challenge(reason.map(|r| ("invalid_token", r)), SESSION_SCOPES);
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
        response
    }

    /// 403 `insufficient_scope`: the scopes the token has plus the one `needed`, so that
    /// a client stepping up keeps what it had.
    pub fn insufficient_scope(&self, grant: &Grant, needed: &str, what: &str) -> Response {
        let mut scopes: Vec<&str> = grant.scopes.iter().map(String::as_str).collect();
        scopes.push(needed);
        scopes.sort_unstable();
        scopes.dedup();
        let description = format!("{what} needs scope {needed}");
        let mut response = (
            StatusCode::FORBIDDEN,
            Json(serde_json::json!({"error": "insufficient_scope", "message": description, "scope": needed})),
        )
            .into_response();
        let challenge = self.challenge(
            Some(("insufficient_scope", &description)),
            &scopes.join(" "),
        );
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
        response
    }

    fn presented<'a>(&self, req: &'a Request) -> Option<&'a str> {
        let name = self.header.as_ref().unwrap_or(&header::AUTHORIZATION);
        let value = req.headers().get(name)?.to_str().ok()?.trim();
        match value.split_once(' ') {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => Some(rest.trim()),
            None if self.header.is_some() => Some(value),
            _ => None,
        }
    }
}

/// A `WWW-Authenticate: Bearer` challenge (RFC 6750 §3, RFC 9728 §5.1). Whatever the
/// description says (an issuer or key id comes from the token), the value is one valid
/// header: quotes and backslashes become `'`, other bytes a header cannot carry `?`.
pub fn challenge(metadata_url: &str, error: Option<(&str, &str)>, scope: &str) -> HeaderValue {
    let mut value = format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"{scope}\"");
    if let Some((code, description)) = error {
        let description: String = description
            .chars()
            .map(|c| match c {
                '"' | '\\' => '\'',
                ' '..='~' => c,
                _ => '?',
            })
            .collect();
        value.push_str(&format!(
            ", error=\"{code}\", error_description=\"{description}\""
        ));
    }
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// The metadata routes, open to anyone (no token): the root well-known URL, the one
/// with the resource's path, and `…/mcp` (what a client derives from Boris's own path
/// when a proxy's path differs).
pub fn metadata_routes(guard: Arc<Guard>) -> Router {
    let mut paths = vec![
        METADATA_WELL_KNOWN.to_string(),
        format!("{METADATA_WELL_KNOWN}/mcp"),
    ];
    if !guard.config.resource_path.is_empty() {
        paths.push(format!(
            "{METADATA_WELL_KNOWN}{}",
            guard.config.resource_path
        ));
    }
    paths.sort();
    paths.dedup();
    let mut router = Router::new();
    for path in paths {
        let guard = guard.clone();
        router = router.route(
            &path,
            get(move || {
                let guard = guard.clone();
                async move { Json(guard.metadata()) }
            }),
        );
    }
    router
}

/// The route layer on `/mcp` and `/metrics`: a valid token, its grant put in the
/// request's extensions for the tools (rmcp hands the request's parts to them).
pub async fn require_token(
    State(guard): State<Arc<Guard>>,
    mut req: Request,
    next: Next,
) -> Response {
    if req.method() == Method::OPTIONS {
        return next.run(req).await;
    }
    // Each refusal below comes before the body is read.
    let body_unread = super::http_token::has_body(&req);
    let refusal = |response| super::http_token::refusal(body_unread, response);
    let Some(token) = guard.presented(&req) else {
        return refusal(guard.unauthorized(None));
    };
    let grant = match guard.verifier.verify(token).await {
        Ok(grant) => grant,
        Err(reason) => {
            static FAILURES: super::http_conn::Throttle = super::http_conn::Throttle::new();
            if let Some(held_back) = FAILURES.admit() {
                tracing::warn!(path = req.uri().path(), reason = %reason, held_back, "refused a request: the access token is not valid");
            }
            return refusal(guard.unauthorized(Some(&reason)));
        }
    };
    if req.uri().path() == "/metrics" && !grant.allows(METRICS) {
        return refusal(guard.insufficient_scope(&grant, METRICS, "/metrics"));
    }
    // The token goes no further than here: rmcp and the tools see the grant only.
    for name in [Some(header::AUTHORIZATION), guard.header.clone()]
        .into_iter()
        .flatten()
    {
        req.headers_mut().remove(name);
    }
    // Sessions are bound to the subject that opened them (MCP authorization: a session
    // id is no credential): another user's token gets 404, as for an unknown session.
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let subject = grant.subject.clone();
    if let Some(id) = &session
        && !guard
            .owners
            .lock()
            .is_ok_and(|owners| owners.allows(id, &subject))
    {
        return refusal(
            (
                StatusCode::NOT_FOUND,
                Json(serde_json::json!({"error": "session_not_found", "message": "no such session for this token's subject: initialize a new one"})),
            )
                .into_response(),
        );
    }
    req.extensions_mut().insert(grant);
    let response = next.run(req).await;
    if session.is_none()
        && let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        && let Ok(mut owners) = guard.owners.lock()
    {
        owners.record(id.to_string(), subject);
    }
    response
}

/// A `tools/call` beyond the grant: 403 `insufficient_scope`, before rmcp sees it.
pub fn check_call(
    guard: &Guard,
    scopes: &ToolScopes,
    grant: &Grant,
    tool: &str,
) -> Option<Response> {
    let needed = scopes.get(tool)?;
    (!grant.allows(needed)).then(|| {
        let what = crate::text::quote::head_with_ellipsis(tool, 64);
        guard.insufficient_scope(grant, needed, &format!("tool {what}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_serves_the_subject_that_opened_it() {
        let mut owners = Owners::default();
        let alice = Some("alice".to_string());
        owners.record("s1".into(), alice.clone());
        assert!(owners.allows("s1", &alice));
        assert!(!owners.allows("s1", &Some("bob".into())));
        assert!(!owners.allows("s1", &None));
        assert!(owners.allows("unknown", &None));
        for i in 0..=MAX_OWNERS {
            owners.record(format!("x{i}"), None);
        }
        assert_eq!(owners.by_session.len(), MAX_OWNERS);
        assert!(
            !owners.by_session.contains_key("s1"),
            "the oldest went first"
        );
    }

    #[test]
    fn challenges() {
        let url = "https://b.example/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            challenge(url, None, "boris:read").to_str().unwrap(),
            format!("Bearer resource_metadata=\"{url}\", scope=\"boris:read\"")
        );
        let v = challenge(url, Some(("invalid_token", "no key \"k\\1\" é\n")), "s");
        assert!(
            v.to_str()
                .unwrap()
                .ends_with("error=\"invalid_token\", error_description=\"no key 'k'1' ??\""),
            "{v:?}"
        );
    }

    proptest::proptest! {
        /// Any description (it may quote the token's issuer or key id) makes a valid
        /// header with one quoted description, never the fallback.
        #[test]
        fn any_description_makes_a_valid_challenge(description in "\\PC*") {
            let v = challenge("https://b/.well-known/oauth-protected-resource", Some(("invalid_token", &description)), "boris:read");
            let text = v.to_str().unwrap();
            proptest::prop_assert!(text.contains("error_description=\""));
            proptest::prop_assert_eq!(text.matches('"').count(), 8);
        }
    }
}
