//! An issuer's signing keys (issue 30 §1): found through its metadata (RFC 8414, then
//! OpenID discovery), fetched from its `jwks_uri`, kept for `--oauth-jwks-ttl`, and
//! fetched again early when a token names a key id the set lacks (a rotation) — at most
//! once per `--oauth-jwks-refetch-interval`, so forged key ids cannot flood the issuer.

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey};
use std::time::{Duration, Instant};

/// The most bytes read from a metadata document or a key set.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// How long one fetch may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The HTTP client for discovery and keys: rustls with ring, the system's roots, no
/// redirects (a key set is where the issuer's metadata says, not where a redirect goes).
pub fn client() -> Result<reqwest::Client, String> {
    // Err: a provider is already installed, which is as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .connect_timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot set up the HTTP client for OAuth discovery: {e}"))
}

pub struct IssuerKeys {
    pub issuer: String,
    client: reqwest::Client,
    ttl: Duration,
    refetch_interval: Duration,
    state: tokio::sync::Mutex<State>,
}

/// What Boris uses of an issuer's metadata (RFC 8414 §2, OpenID Discovery §3).
#[derive(Debug, Clone, Default)]
struct Metadata {
    jwks_uri: Option<String>,
    introspection_endpoint: Option<String>,
}

#[derive(Default)]
struct State {
    metadata: Option<Metadata>,
    /// When the metadata was last asked for: a failed discovery is retried at most once
    /// per refetch interval.
    last_discovery: Option<Instant>,
    keys: Option<JwkSet>,
    fetched: Option<Instant>,
    last_attempt: Option<Instant>,
    /// Fetches made (metadata and key set together count one), for the tests' log.
    fetches: u64,
}

impl IssuerKeys {
    pub fn new(
        issuer: String,
        client: reqwest::Client,
        ttl: Duration,
        refetch_interval: Duration,
    ) -> Self {
        Self {
            issuer,
            client,
            ttl,
            refetch_interval,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The key that verifies a token with this header's `kid` and `alg`.
    pub async fn key_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, String> {
        let mut state = self.state.lock().await;
        let fresh = state.fetched.is_some_and(|t| t.elapsed() < self.ttl);
        let mut fetched_now = false;
        if !fresh && self.may_fetch(&state) {
            self.refresh(&mut state).await;
            fetched_now = true;
        }
        if let Some(key) = state.keys.as_ref().and_then(|k| find(k, kid, alg)) {
            return key;
        }
        // An unknown key id: the issuer may have rotated its keys since the last fetch.
        if !fetched_now && self.may_fetch(&state) {
            self.refresh(&mut state).await;
        }
        match state.keys.as_ref() {
            None => Err(format!(
                "the keys of issuer {} could not be fetched",
                self.issuer
            )),
            Some(keys) => find(keys, kid, alg).unwrap_or_else(|| {
                Err(match kid {
                    Some(kid) => format!("no key {kid:?} among issuer {}'s keys", self.issuer),
                    None => "the token names no key (kid) and the issuer has more than one".into(),
                })
            }),
        }
    }

    fn may_fetch(&self, state: &State) -> bool {
        state
            .last_attempt
            .is_none_or(|t| t.elapsed() >= self.refetch_interval)
    }

    /// Fetches the key set (and the metadata first, once). A failure keeps the keys
    /// already held: an issuer briefly down does not lock every user out, and a key it
    /// withdrew stays trusted only until the next successful fetch.
    async fn refresh(&self, state: &mut State) {
        state.last_attempt = Some(Instant::now());
        state.fetches += 1;
        let result = async {
            let uri =
                self.metadata(state).await?.jwks_uri.ok_or_else(|| {
                    format!("issuer {}'s metadata names no jwks_uri", self.issuer)
                })?;
            let body = self.get(&uri).await?;
            serde_json::from_slice::<JwkSet>(&body)
                .map_err(|e| format!("the key set at {uri} is not a JWKS: {e}"))
        }
        .await;
        match result {
            Ok(keys) => {
                tracing::info!(issuer = %self.issuer, keys = keys.keys.len(), fetches = state.fetches, "fetched the issuer's keys");
                state.keys = Some(keys);
                state.fetched = Some(Instant::now());
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, error = %e, "cannot fetch the issuer's keys")
            }
        }
    }

    /// The issuer's introspection endpoint (RFC 8414 §2, RFC 7662 §4), from its metadata.
    pub async fn introspection_endpoint(&self) -> Result<String, String> {
        let mut state = self.state.lock().await;
        self.metadata(&mut state).await?.introspection_endpoint.ok_or_else(|| {
            format!(
                "issuer {}'s metadata names no introspection_endpoint: give --oauth-introspection-url",
                self.issuer
            )
        })
    }

    /// The metadata, discovered once; a failed discovery is retried at most once per
    /// refetch interval (tokens arriving meanwhile are refused: fail closed).
    async fn metadata(&self, state: &mut State) -> Result<Metadata, String> {
        if let Some(m) = &state.metadata {
            return Ok(m.clone());
        }
        if state
            .last_discovery
            .is_some_and(|t| t.elapsed() < self.refetch_interval)
        {
            return Err(format!(
                "issuer {}'s metadata could not be fetched (retried at most every {} s)",
                self.issuer,
                self.refetch_interval.as_secs()
            ));
        }
        state.last_discovery = Some(Instant::now());
        let found = self.discover().await?;
        state.metadata = Some(found.clone());
        Ok(found)
    }

    /// The issuer's metadata, from the first document that answers and names this issuer
    /// (RFC 8414 §3.3: a document for another issuer is not used).
    async fn discover(&self) -> Result<Metadata, String> {
        let mut errors = Vec::new();
        for url in metadata_urls(&self.issuer) {
            let doc = match self.get(&url).await {
                Ok(body) => body,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let doc: serde_json::Value = match serde_json::from_slice(&doc) {
                Ok(v) => v,
                Err(e) => {
                    errors.push(format!("{url}: not JSON: {e}"));
                    continue;
                }
            };
            if doc.get("issuer").and_then(|v| v.as_str()) != Some(self.issuer.as_str()) {
                errors.push(format!("{url}: names another issuer"));
                continue;
            }
            let endpoint = |name: &str| -> Result<Option<String>, String> {
                match doc.get(name).and_then(|v| v.as_str()) {
                    None => Ok(None),
                    Some(u) => crate::config::oauth::checked_url(name, u).map(|_| Some(u.into())),
                }
            };
            return Ok(Metadata {
                jwks_uri: endpoint("jwks_uri")?,
                introspection_endpoint: endpoint("introspection_endpoint")?,
            });
        }
        Err(format!(
            "no metadata for issuer {}: {}",
            self.issuer,
            errors.join("; ")
        ))
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        read_capped(url, self.client.get(url).send().await).await
    }
}

/// An HTTP client error with its causes ("error sending request: … Connection refused").
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// A successful response's body, at most [`MAX_DOCUMENT_BYTES`]; errors name `url` (never
/// a request's body: an introspected token is sent there).
pub async fn read_capped(
    url: &str,
    response: reqwest::Result<reqwest::Response>,
) -> Result<Vec<u8>, String> {
    let mut response = response.map_err(|e| format!("{url}: {}", describe(e)))?;
    if !response.status().is_success() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url}: {}", describe(e)))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url}: over {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Where an issuer's metadata may be: RFC 8414's well-known name inserted before the
/// issuer's path, then OpenID's appended to it.
pub fn metadata_urls(issuer: &str) -> Vec<String> {
    let issuer = issuer.trim_end_matches('/');
    let mut urls = Vec::new();
    if let Ok(url) = url::Url::parse(issuer) {
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        urls.push(format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        ));
    }
    urls.push(format!("{issuer}/.well-known/openid-configuration"));
    urls
}

/// The key for `kid` (or, without one, the set's only signing key) usable with `alg`.
fn find(keys: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Result<DecodingKey, String>> {
    let usable = |k: &&Jwk| {
        k.common
            .public_key_use
            .as_ref()
            .is_none_or(|u| *u == jsonwebtoken::jwk::PublicKeyUse::Signature)
            && k.common.key_algorithm.is_none_or(|a| a == alg.into())
    };
    let key = match kid {
        Some(kid) => keys
            .keys
            .iter()
            .filter(usable)
            .find(|k| k.common.key_id.as_deref() == Some(kid))?,
        None => {
            let mut candidates = keys.keys.iter().filter(usable);
            let only = candidates.next()?;
            if candidates.next().is_some() {
                return None;
            }
            only
        }
    };
    Some(
        DecodingKey::from_jwk(key)
            .map_err(|e| format!("the issuer's key {kid:?} is unusable: {e}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JWKS as providers publish it: RSA keys (a 2048-bit modulus made up of one byte
    /// repeated: parsing needs no real key) with `kid`, `alg` and `use`.
    fn set(keys: &[(&str, Option<&str>, Option<&str>)]) -> JwkSet {
        let n = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            [0xC3u8; 256],
        );
        let keys: Vec<serde_json::Value> = keys
            .iter()
            .map(|(kid, alg, usage)| {
                let mut k = serde_json::json!({"kty": "RSA", "kid": kid, "n": n, "e": "AQAB"});
                if let Some(alg) = alg {
                    k["alg"] = (*alg).into();
                }
                if let Some(usage) = usage {
                    k["use"] = (*usage).into();
                }
                k
            })
            .collect();
        serde_json::from_value(serde_json::json!({ "keys": keys })).unwrap()
    }

    #[test]
    fn the_key_is_picked_by_kid_alg_and_use() {
        let keys = set(&[
            ("a", Some("RS256"), Some("sig")),
            ("b", None, None),
            ("enc", None, Some("enc")),
        ]);
        assert!(matches!(
            find(&keys, Some("a"), Algorithm::RS256),
            Some(Ok(_))
        ));
        assert!(
            find(&keys, Some("a"), Algorithm::RS384).is_none(),
            "alg differs"
        );
        assert!(matches!(
            find(&keys, Some("b"), Algorithm::PS256),
            Some(Ok(_))
        ));
        assert!(
            find(&keys, Some("enc"), Algorithm::RS256).is_none(),
            "an encryption key"
        );
        assert!(find(&keys, Some("zz"), Algorithm::RS256).is_none());
        // No kid: only when one key could be meant.
        assert!(find(&keys, None, Algorithm::RS512).is_some_and(|k| k.is_ok()));
        assert!(
            find(&keys, None, Algorithm::RS256).is_none(),
            "a and b both fit"
        );
    }

    #[test]
    fn metadata_urls_for_issuers_with_and_without_a_path() {
        assert_eq!(
            metadata_urls("https://idp.example.com"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server",
                "https://idp.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://idp.example.com/realms/dev/"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server/realms/dev",
                "https://idp.example.com/realms/dev/.well-known/openid-configuration"
            ]
        );
    }
}
