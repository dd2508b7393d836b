//! Checking one access token (issue 30 §1): a JWT signed with an asymmetric algorithm by
//! a key of an accepted issuer, or (when configured) any other token through the
//! authorization server's introspection ([`super::introspect`]); then, either way, its
//! claims by the shared [`Rules`]: for this resource (`aud`, RFC 8707; a token without
//! `aud` is refused), within `exp`/`nbf` give or take the clock skew.

use super::claims::{self, Claims, Grant, Issuer, Rules};
use super::keys::IssuerKeys;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;

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
        self.rules
            .check(&data.claims, Issuer::Required, claims::now())
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
