//! Checking one access token (issue 30 §1): a JWT signed with an asymmetric algorithm by
//! a key of an accepted issuer, or (when configured) any other token through the
//! authorization server's introspection ([`super::introspect`]); then, either way, its
//! claims by the shared [`Rules`]: for this resource (`aud`, RFC 8707; a token without
//! `aud` is refused), within `exp`/`nbf` give or take the clock skew.
//!
//! A JWT that passed is remembered by its SHA-256 for [`VERIFIED_TTL`] (cut at its
//! `exp`), so a session's later requests skip the signature: RSA verification costs a
//! quarter of a millisecond a request (BENCHMARKS.md, issue 30 §5).

use super::claims::{self, Claims, Grant, Issuer, Rules};
use super::introspect::{Cache, digest, positive_lifetime};
use super::keys::IssuerKeys;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a verified JWT's grant is reused without checking its signature again. A key
/// the issuer withdraws stops being trusted at the next key-set fetch; its tokens then
/// work at most this much longer (the bound introspection answers have by default).
pub const VERIFIED_TTL: Duration = Duration::from_secs(60);

/// Asymmetric algorithms only: HMAC would make the issuer's public key a shared secret
/// (anyone could sign with it), and `none` is no signature at all.
const ACCEPTED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

#[derive(Deserialize)]
struct Unverified {
    iss: Option<String>,
}

pub struct Verifier {
    pub rules: Rules,
    pub issuers: Vec<IssuerKeys>,
    /// Set: tokens that are not JWTs (or all, by `--oauth-introspect-all`) are asked of
    /// the authorization server (RFC 7662).
    pub introspection: Option<super::introspect::Introspector>,
    /// Grants of JWTs that verified, by token digest (bounded as introspection's are).
    pub verified: Mutex<Cache>,
}

impl Verifier {
    /// The grant a valid token gives, or why it is refused (for `error_description`;
    /// never the token).
    pub async fn verify(&self, token: &str) -> Result<Grant, String> {
        let header = jsonwebtoken::decode_header(token);
        if let Some(introspection) = &self.introspection
            && (introspection.all || header.is_err())
        {
            return introspection.check(token, &self.rules, &self.issuers).await;
        }
        let digest = digest(token);
        if let Some(Ok(grant)) = self
            .verified
            .lock()
            .ok()
            .and_then(|cache| cache.get(&digest, Instant::now()))
        {
            return Ok(grant);
        }
        let header =
            header.map_err(|_| "not a JWT signed with an accepted algorithm".to_string())?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(format!(
                "algorithm {:?} is not accepted (asymmetric signatures only)",
                header.alg
            ));
        }
        let unverified: Unverified = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|_| "the token's claims are not readable".to_string())?;
        let iss = unverified.iss.ok_or("the token has no issuer (iss)")?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.issuer == iss)
            .ok_or_else(|| format!("issuer {iss:?} is not accepted"))?;
        let key = issuer.key_for(header.kid.as_deref(), header.alg).await?;
        // The signature only: the claims are checked by the rules both paths share.
        let mut validation = Validation::new(header.alg);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.set_required_spec_claims::<&str>(&[]);
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|e| refusal(e.kind()))?;
        let now_secs = claims::now();
        let grant = self.rules.check(&data.claims, Issuer::Required, now_secs)?;
        self.remember(digest, &grant, &data.claims, now_secs, Instant::now());
        Ok(grant)
    }

    /// Keeps a verified token's grant until [`VERIFIED_TTL`] or its `exp`, the earlier.
    fn remember(
        &self,
        digest: [u8; 32],
        grant: &Grant,
        claims: &Claims,
        now_secs: u64,
        now: Instant,
    ) {
        let lifetime = positive_lifetime(VERIFIED_TTL, claims, now_secs);
        if let Ok(mut cache) = self.verified.lock() {
            cache.put(digest, Ok(grant.clone()), now + lifetime, now);
        }
    }
}

fn refusal(kind: &jsonwebtoken::errors::ErrorKind) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::InvalidSignature => "the token's signature does not verify".into(),
        K::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
        _ => "the token is not valid".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verifier whose issuer cannot be reached: any token that needs its keys fails.
    fn verifier() -> Verifier {
        let client = super::super::keys::client().expect("client");
        Verifier {
            rules: Rules {
                resource: "https://boris.example/mcp".into(),
                issuers: vec!["http://127.0.0.1:1".into()],
                clock_skew: Duration::from_secs(30),
            },
            issuers: vec![IssuerKeys::new(
                "http://127.0.0.1:1".into(),
                client,
                Duration::from_secs(3600),
                Duration::from_secs(60),
            )],
            introspection: None,
            verified: Default::default(),
        }
    }

    fn grant() -> Grant {
        Grant {
            subject: Some("alice".into()),
            scopes: vec!["boris:read".into()],
        }
    }

    fn expiring_in(secs: u64, now_secs: u64) -> Claims {
        Claims {
            exp: Some((now_secs + secs).into()),
            ..Claims::default()
        }
    }

    // {"alg":"RS256","kid":"k1"}.{"iss":"http://127.0.0.1:1"}.sig: needs the issuer's keys.
    const TOKEN: &str =
        "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwOi8vMTI3LjAuMC4xOjEifQ.c2ln";

    #[tokio::test]
    async fn a_remembered_token_is_served_without_its_signature_checked_again() {
        let v = verifier();
        let refused = v.verify(TOKEN).await;
        assert!(refused.is_err_and(|e| e.contains("could not be fetched")));
        let now_secs = claims::now();
        v.remember(
            digest(TOKEN),
            &grant(),
            &expiring_in(600, now_secs),
            now_secs,
            Instant::now(),
        );
        assert_eq!(v.verify(TOKEN).await, Ok(grant()));
        // Another token (one byte changed) is not the remembered one.
        let other = TOKEN.replace(".c2ln", ".c2lu");
        assert!(v.verify(&other).await.is_err());
    }

    #[tokio::test]
    async fn a_remembered_token_is_not_served_past_its_exp_or_the_ttl() {
        let v = verifier();
        let now_secs = claims::now();
        let then = Instant::now();
        // Expiring now: kept for no time at all.
        v.remember(
            digest(TOKEN),
            &grant(),
            &expiring_in(0, now_secs),
            now_secs,
            then,
        );
        assert!(v.verify(TOKEN).await.is_err());
        // Kept VERIFIED_TTL at most, even for a token valid for a day: remembered as if
        // verified VERIFIED_TTL + 1 s ago, it is checked again.
        let long_ago = then.checked_sub(VERIFIED_TTL + Duration::from_secs(1));
        if let Some(long_ago) = long_ago {
            v.remember(
                digest(TOKEN),
                &grant(),
                &expiring_in(86_400, now_secs),
                now_secs,
                long_ago,
            );
            assert!(v.verify(TOKEN).await.is_err());
        }
    }
}
