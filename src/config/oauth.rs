//! `--auth oauth` (issue 30 §1): Boris as an OAuth resource server. The flags become an
//! [`OauthConfig`] or the one-line error that stops the start. Pure: no network here.

use std::time::Duration;
use url::Url;

/// The OAuth flags, flattened into [`super::AuthArgs`].
#[derive(Debug, Clone, clap::Args)]
pub struct OauthArgs {
    /// With --auth oauth: an authorization server whose access tokens Boris accepts (its
    /// issuer URL, as in the tokens' `iss`; repeatable or comma-separated). Its keys are
    /// found through its metadata (RFC 8414 or OpenID discovery). https only, except on
    /// loopback (for tests).
    #[arg(
        long = "oauth-issuer",
        env = "BORIS_OAUTH_ISSUER",
        value_name = "URL",
        value_delimiter = ','
    )]
    pub issuers: Vec<String>,

    /// With --auth oauth: the URL clients reach the MCP endpoint at (e.g.
    /// `https://boris.example.com/mcp`): the resource tokens must name in `aud` (RFC 8707)
    /// and the `resource` of the protected-resource metadata (RFC 9728).
    #[arg(long, env = "BORIS_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,

    /// Seconds of clock difference allowed when checking a token's `exp` and `nbf`.
    #[arg(
        long,
        env = "BORIS_OAUTH_CLOCK_SKEW",
        value_name = "SECS",
        default_value_t = 30
    )]
    pub oauth_clock_skew: u64,

    /// Seconds an issuer's keys (JWKS) are used before they are fetched again.
    #[arg(
        long,
        env = "BORIS_OAUTH_JWKS_TTL",
        value_name = "SECS",
        default_value_t = 300
    )]
    pub oauth_jwks_ttl: u64,

    /// The fewest seconds between two fetches of an issuer's keys caused by a token
    /// whose key id (`kid`) is unknown (after a key rotation): a stream of forged key ids
    /// cannot make Boris hammer the issuer.
    #[arg(
        long,
        env = "BORIS_OAUTH_JWKS_REFETCH_INTERVAL",
        value_name = "SECS",
        default_value_t = 10
    )]
    pub oauth_jwks_refetch_interval: u64,
}

/// What `--auth oauth` checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OauthConfig {
    /// The issuers, as given (no trailing-slash normalisation: `iss` is compared exactly).
    pub issuers: Vec<String>,
    /// The canonical resource URI (`--public-url`, without a trailing slash).
    pub resource: String,
    /// Where the protected-resource metadata is for this resource (RFC 9728 §3.1: the
    /// well-known name inserted before the resource's path).
    pub metadata_url: String,
    /// The resource's path (`/mcp` for `https://host/mcp`), empty for a root resource.
    pub resource_path: String,
    pub clock_skew: Duration,
    pub jwks_ttl: Duration,
    pub jwks_refetch_interval: Duration,
}

/// The well-known name of the protected-resource metadata (RFC 9728 §3).
pub const METADATA_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Checks the flags for `--auth oauth`. `token_given`: `--token` or `--generate-token`.
pub fn resolve(args: &OauthArgs, token_given: bool) -> Result<OauthConfig, String> {
    if token_given {
        return Err(
            "--auth oauth contradicts --token and --generate-token: the tokens come from the \
             --oauth-issuer servers"
                .into(),
        );
    }
    if args.issuers.is_empty() {
        return Err("--auth oauth needs --oauth-issuer URL (the authorization server whose tokens Boris accepts)".into());
    }
    for issuer in &args.issuers {
        checked_url("--oauth-issuer", issuer)?;
    }
    let Some(public) = &args.public_url else {
        return Err("--auth oauth needs --public-url URL: the URL clients reach /mcp at, which tokens must name as their audience".into());
    };
    let url = checked_url("--public-url", public)?;
    let resource = public.trim_end_matches('/').to_string();
    let resource_path = url.path().trim_end_matches('/').to_string();
    let origin = url.origin().ascii_serialization();
    let metadata_url = format!("{origin}{METADATA_WELL_KNOWN}{resource_path}");
    Ok(OauthConfig {
        issuers: args.issuers.clone(),
        resource,
        metadata_url,
        resource_path,
        clock_skew: Duration::from_secs(args.oauth_clock_skew),
        jwks_ttl: Duration::from_secs(args.oauth_jwks_ttl),
        jwks_refetch_interval: Duration::from_secs(args.oauth_jwks_refetch_interval),
    })
}

/// An absolute https URL (http only to a loopback host), with no query or fragment (RFC
/// 8707 §2 and RFC 8414 §2 forbid them in a resource and an issuer).
pub(crate) fn checked_url(flag: &str, value: &str) -> Result<Url, String> {
    let url = Url::parse(value).map_err(|e| format!("invalid value {value:?} for {flag}: {e}"))?;
    let host = url.host_str().unwrap_or("");
    match url.scheme() {
        "https" => {}
        "http" if super::auth::is_loopback(host) => {}
        "http" => {
            return Err(format!(
                "invalid value {value:?} for {flag}: http is allowed only on loopback (tokens and keys would cross the network in the clear); use https"
            ));
        }
        other => {
            return Err(format!(
                "invalid value {value:?} for {flag}: scheme {other:?}, not https"
            ));
        }
    }
    if host.is_empty()
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
    {
        return Err(format!(
            "invalid value {value:?} for {flag}: needs a host and no query, fragment or user"
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(issuers: &[&str], public: Option<&str>) -> OauthArgs {
        OauthArgs {
            issuers: issuers.iter().map(|s| s.to_string()).collect(),
            public_url: public.map(str::to_string),
            oauth_clock_skew: 30,
            oauth_jwks_ttl: 300,
            oauth_jwks_refetch_interval: 10,
        }
    }

    #[test]
    fn metadata_url_inserts_the_well_known_name_before_the_path() {
        let c = resolve(
            &args(
                &["https://idp.example.com/realms/x"],
                Some("https://boris.example.com/mcp"),
            ),
            false,
        )
        .unwrap();
        assert_eq!(c.resource, "https://boris.example.com/mcp");
        assert_eq!(
            c.metadata_url,
            "https://boris.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(c.resource_path, "/mcp");
        let c = resolve(
            &args(&["https://idp"], Some("https://b.example:8443/")),
            false,
        )
        .unwrap();
        assert_eq!(c.resource, "https://b.example:8443");
        assert_eq!(
            c.metadata_url,
            "https://b.example:8443/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn http_only_on_loopback() {
        assert!(
            resolve(
                &args(
                    &["http://127.0.0.1:9000"],
                    Some("http://localhost:8080/mcp")
                ),
                false
            )
            .is_ok()
        );
        let e = resolve(
            &args(&["http://idp.example.com"], Some("https://b/mcp")),
            false,
        )
        .unwrap_err();
        assert!(e.contains("loopback"), "{e}");
        let e = resolve(&args(&["https://idp"], Some("http://10.0.0.1/mcp")), false).unwrap_err();
        assert!(e.contains("loopback"), "{e}");
    }

    #[test]
    fn what_is_missing_or_contradictory_is_refused() {
        assert!(resolve(&args(&[], Some("https://b/mcp")), false).is_err());
        assert!(resolve(&args(&["https://idp"], None), false).is_err());
        assert!(resolve(&args(&["https://idp"], Some("https://b/mcp")), true).is_err());
        for bad in [
            "https://b/mcp?x=1",
            "https://b/mcp#f",
            "ftp://b/mcp",
            "b/mcp",
            "https://u@b/mcp",
        ] {
            assert!(
                resolve(&args(&["https://idp"], Some(bad)), false).is_err(),
                "{bad}"
            );
        }
    }
}
