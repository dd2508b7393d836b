//! The claims of an access token, checked the same way whoever vouched for them (issue
//! 30 §1): the JWT path (after the signature verified) and the introspection path (after
//! the authorization server answered `active: true`, RFC 7662 §2.2) both end here. `iss`
//! must be an accepted issuer, `aud` must name this resource (RFC 8707; none is refused),
//! `exp` is required and `exp`/`nbf` hold within the clock skew. Pure: the time is given.

pub use crate::access::Grant;
use serde::Deserialize;
use std::time::Duration;

/// The claims both paths read: a JWT's payload or an introspection answer (RFC 7662
/// §2.2 uses the same names). Loose types: a claim of the wrong type is refused by
/// [`Rules::check`] with a reason, not by the parser with none.
#[derive(Debug, Default, Deserialize)]
pub struct Claims {
    pub iss: Option<serde_json::Value>,
    pub sub: Option<serde_json::Value>,
    /// A string or a list of strings (RFC 7519 §4.1.3).
    pub aud: Option<serde_json::Value>,
    pub exp: Option<serde_json::Value>,
    pub nbf: Option<serde_json::Value>,
    /// RFC 9068 §2.2.3, RFC 7662 §2.2: space-separated.
    pub scope: Option<serde_json::Value>,
    /// Some issuers (Azure AD, Okta) send `scp`, a string or a list.
    pub scp: Option<serde_json::Value>,
}

/// What a token's claims must satisfy.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The canonical resource URI `aud` must name.
    pub resource: String,
    /// The accepted issuers, compared exactly.
    pub issuers: Vec<String>,
    pub clock_skew: Duration,
}

/// Whether `iss` must be present: a JWT names its issuer (its keys are chosen by it); an
/// introspection answer may leave it out (the server asked is the issuer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issuer {
    Required,
    IfPresent,
}

impl Rules {
    /// The grant the claims give at `now` (seconds since the epoch), or why they do not
    /// (for `error_description`: never the token).
    pub fn check(&self, claims: &Claims, issuer: Issuer, now: u64) -> Result<Grant, String> {
        match (&claims.iss, issuer) {
            (None, Issuer::Required) => return Err("the token has no issuer (iss)".into()),
            (None, Issuer::IfPresent) => {}
            (Some(iss), _) => {
                let accepted = iss
                    .as_str()
                    .is_some_and(|iss| self.issuers.iter().any(|i| i == iss));
                if !accepted {
                    return Err(format!("issuer {iss} is not accepted"));
                }
            }
        }
        let resource = &self.resource;
        let names_resource = match &claims.aud {
            None => {
                return Err(format!(
                    "the token names no audience (aud must name {resource})"
                ));
            }
            Some(serde_json::Value::String(aud)) => aud == resource,
            Some(serde_json::Value::Array(auds)) => {
                auds.iter().any(|a| a.as_str() == Some(resource))
            }
            Some(_) => false,
        };
        if !names_resource {
            return Err(format!(
                "the token is not for this resource (aud must name {resource})"
            ));
        }
        let skew = self.clock_skew.as_secs();
        let exp = numeric_date("exp", claims.exp.as_ref())?.ok_or("the token has no exp claim")?;
        if exp.saturating_add(skew) < now {
            return Err("the token has expired".into());
        }
        if let Some(nbf) = numeric_date("nbf", claims.nbf.as_ref())?
            && nbf > now.saturating_add(skew)
        {
            return Err("the token is not valid yet (nbf)".into());
        }
        let subject = match &claims.sub {
            None => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("the token's sub is not a string".into()),
        };
        Ok(Grant {
            subject,
            scopes: scopes(claims.scope.as_ref(), claims.scp.as_ref()),
        })
    }
}

/// A NumericDate (RFC 7519 §2: seconds, possibly with a fraction), floored.
pub fn numeric_date(name: &str, value: Option<&serde_json::Value>) -> Result<Option<u64>, String> {
    match value {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| *f >= 0.0 && f.is_finite())
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| format!("the token's {name} is not a date")),
    }
}

/// The seconds since the epoch now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The scopes of `scope` (space-separated) and `scp` (a string or a list of strings).
pub fn scopes(scope: Option<&serde_json::Value>, scp: Option<&serde_json::Value>) -> Vec<String> {
    let mut out = Vec::new();
    for claim in [scope, scp].into_iter().flatten() {
        match claim {
            serde_json::Value::String(s) => {
                out.extend(s.split_ascii_whitespace().map(str::to_string))
            }
            serde_json::Value::Array(items) => {
                out.extend(items.iter().filter_map(|v| v.as_str()).map(str::to_string))
            }
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: u64 = 1_800_000_000;

    fn rules() -> Rules {
        Rules {
            resource: "https://b.example/mcp".into(),
            issuers: vec!["https://idp.example".into()],
            clock_skew: Duration::from_secs(30),
        }
    }

    fn claims(v: serde_json::Value) -> Claims {
        serde_json::from_value(v).unwrap()
    }

    fn good() -> serde_json::Value {
        json!({"iss": "https://idp.example", "aud": "https://b.example/mcp", "exp": NOW + 60,
               "sub": "alice", "scope": "boris:read boris:edit"})
    }

    fn with(field: &str, value: serde_json::Value) -> Claims {
        let mut v = good();
        if value.is_null() {
            v.as_object_mut().unwrap().remove(field);
        } else {
            v[field] = value;
        }
        claims(v)
    }

    #[test]
    fn a_good_token_gives_its_subject_and_scopes() {
        let grant = rules()
            .check(&claims(good()), Issuer::Required, NOW)
            .unwrap();
        assert_eq!(grant.subject.as_deref(), Some("alice"));
        assert_eq!(grant.scopes, ["boris:edit", "boris:read"]);
    }

    #[test]
    fn each_claim_is_checked() {
        let r = rules();
        let refused = |c: Claims, issuer, why: &str| {
            let e = r.check(&c, issuer, NOW).unwrap_err();
            assert!(e.contains(why), "{e} lacks {why}");
        };
        refused(with("iss", json!(null)), Issuer::Required, "no issuer");
        assert!(
            r.check(&with("iss", json!(null)), Issuer::IfPresent, NOW)
                .is_ok()
        );
        refused(
            with("iss", json!("https://evil")),
            Issuer::IfPresent,
            "not accepted",
        );
        refused(with("iss", json!(7)), Issuer::IfPresent, "not accepted");
        refused(
            with("aud", json!(null)),
            Issuer::Required,
            "names no audience",
        );
        refused(
            with("aud", json!("https://b.example/mcp/")),
            Issuer::Required,
            "not for this resource",
        );
        refused(
            with("aud", json!(["a", "b"])),
            Issuer::Required,
            "not for this resource",
        );
        assert!(
            r.check(
                &with("aud", json!(["a", "https://b.example/mcp"])),
                Issuer::Required,
                NOW
            )
            .is_ok()
        );
        refused(with("exp", json!(null)), Issuer::Required, "no exp");
        refused(with("exp", json!("soon")), Issuer::Required, "not a date");
        refused(with("exp", json!(NOW - 31)), Issuer::Required, "expired");
        assert!(
            r.check(&with("exp", json!(NOW - 30)), Issuer::Required, NOW)
                .is_ok(),
            "within the skew"
        );
        refused(
            with("nbf", json!(NOW + 31)),
            Issuer::Required,
            "not valid yet",
        );
        assert!(
            r.check(&with("nbf", json!(NOW + 30)), Issuer::Required, NOW)
                .is_ok()
        );
        refused(with("sub", json!(1)), Issuer::Required, "sub");
    }

    #[test]
    fn scopes_from_either_claim() {
        assert_eq!(
            scopes(Some(&json!("boris:read  boris:edit")), None),
            ["boris:edit", "boris:read"]
        );
        assert_eq!(
            scopes(None, Some(&json!(["boris:exec", 3]))),
            ["boris:exec"]
        );
        assert_eq!(scopes(Some(&json!("a")), Some(&json!("a b"))), ["a", "b"]);
        assert!(scopes(None, Some(&json!({"x": 1}))).is_empty());
    }

    proptest::proptest! {
        /// Whatever an answer holds, checking it never panics, and a grant is given only
        /// when `aud` names the resource and `exp` is present.
        #[test]
        fn any_claims_are_checked_without_panic(
            aud in proptest::option::of("[a-z:/.]{0,24}"),
            exp in proptest::option::of(proptest::num::i64::ANY),
            nbf in proptest::option::of(proptest::num::f64::ANY),
        ) {
            let mut v = json!({"iss": "https://idp.example"});
            if let Some(aud) = &aud { v["aud"] = json!(aud); }
            if let Some(exp) = exp { v["exp"] = json!(exp); }
            if let Some(nbf) = nbf { v["nbf"] = json!(nbf); }
            let c: Claims = serde_json::from_value(v).unwrap();
            if rules().check(&c, Issuer::IfPresent, NOW).is_ok() {
                proptest::prop_assert_eq!(aud.as_deref(), Some("https://b.example/mcp"));
                proptest::prop_assert!(exp.is_some_and(|e| e >= 0 && e as u64 + 30 >= NOW));
            }
        }
    }
}
