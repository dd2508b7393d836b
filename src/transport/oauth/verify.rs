//! Checking one access token (issue 30 §1): a JWT signed with an asymmetric algorithm by
//! a key of an accepted issuer, for this resource (`aud`, RFC 8707; a token without
//! `aud` is refused), within `exp`/`nbf` give or take the clock skew.

use super::keys::IssuerKeys;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use std::time::Duration;

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

/// Who a token speaks for and what it allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub subject: Option<String>,
    pub scopes: Vec<String>,
}

impl Grant {
    pub fn allows(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

#[derive(Deserialize)]
struct Unverified {
    iss: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    /// RFC 9068 §2.2.3: space-separated.
    scope: Option<String>,
    /// Some issuers (Azure AD, Okta) send `scp`, a string or a list.
    scp: Option<serde_json::Value>,
}

pub struct Verifier {
    pub resource: String,
    pub issuers: Vec<IssuerKeys>,
    pub clock_skew: Duration,
}

impl Verifier {
    /// The grant a valid token gives, or why it is refused (for `error_description`;
    /// never the token).
    pub async fn verify(&self, token: &str) -> Result<Grant, String> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| "not a JWT signed with an accepted algorithm".to_string())?;
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
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.clock_skew.as_secs();
        validation.validate_nbf = true;
        validation.set_audience(&[&self.resource]);
        validation.set_issuer(&[&issuer.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation)
            .map_err(|e| refusal(e.kind(), &self.resource))?;
        Ok(Grant {
            subject: data.claims.sub,
            scopes: scopes(data.claims.scope.as_deref(), data.claims.scp.as_ref()),
        })
    }
}

fn refusal(kind: &jsonwebtoken::errors::ErrorKind, resource: &str) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::InvalidAudience => {
            format!("the token is not for this resource (aud must name {resource})")
        }
        K::MissingRequiredClaim(c) if c == "aud" => {
            format!("the token names no audience (aud must name {resource})")
        }
        K::MissingRequiredClaim(c) => format!("the token has no {c} claim"),
        K::ExpiredSignature => "the token has expired".into(),
        K::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        K::InvalidIssuer => "the token's issuer is not accepted".into(),
        K::InvalidSignature => "the token's signature does not verify".into(),
        K::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
        _ => "the token is not valid".into(),
    }
}

/// The scopes of `scope` (space-separated) and `scp` (a string or a list of strings).
pub fn scopes(scope: Option<&str>, scp: Option<&serde_json::Value>) -> Vec<String> {
    let mut out: Vec<String> = scope
        .unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect();
    match scp {
        Some(serde_json::Value::String(s)) => {
            out.extend(s.split_ascii_whitespace().map(str::to_string))
        }
        Some(serde_json::Value::Array(items)) => {
            out.extend(items.iter().filter_map(|v| v.as_str()).map(str::to_string))
        }
        _ => {}
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_from_either_claim() {
        assert_eq!(
            scopes(Some("boris:read  boris:edit"), None),
            ["boris:edit", "boris:read"]
        );
        assert_eq!(
            scopes(None, Some(&json!(["boris:exec", 3]))),
            ["boris:exec"]
        );
        assert_eq!(scopes(Some("a"), Some(&json!("a b"))), ["a", "b"]);
        assert!(scopes(None, Some(&json!({"x": 1}))).is_empty());
    }
}
