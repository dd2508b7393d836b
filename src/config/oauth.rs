//! `--auth oauth` (issue 30 §1): Boris as an OAuth resource server. The flags become an
//! [`OauthConfig`] or the one-line error that stops the start. Pure: no network here.

use std::path::PathBuf;
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

    /// With --auth oauth: the client id Boris authenticates with at the authorization
    /// server's token introspection endpoint (RFC 7662). Given, tokens that are not JWTs
    /// (opaque tokens) are checked by introspection. Its secret comes from the env var
    /// BORIS_OAUTH_CLIENT_SECRET or --oauth-client-secret-file, never from a flag.
    #[arg(
        long = "oauth-client-id",
        env = "BORIS_OAUTH_CLIENT_ID",
        value_name = "ID"
    )]
    pub client_id: Option<String>,

    /// A file holding the introspection client's secret (its first line), e.g. a mounted
    /// Kubernetes secret. The other way to give it: the env var BORIS_OAUTH_CLIENT_SECRET.
    #[arg(
        long = "oauth-client-secret-file",
        env = "BORIS_OAUTH_CLIENT_SECRET_FILE",
        value_name = "PATH"
    )]
    pub client_secret_file: Option<PathBuf>,

    /// The token introspection endpoint (RFC 7662). Default: the `introspection_endpoint`
    /// of the --oauth-issuer's metadata. https only, except on loopback.
    #[arg(
        long = "oauth-introspection-url",
        env = "BORIS_OAUTH_INTROSPECTION_URL",
        value_name = "URL"
    )]
    pub introspection_url: Option<String>,

    /// Introspect every token, JWTs too (for a provider that revokes tokens before they
    /// expire). Default: only tokens that are not JWTs.
    #[arg(long = "oauth-introspect-all", env = "BORIS_OAUTH_INTROSPECT_ALL", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub introspect_all: bool,

    /// The most seconds an introspection answer `active: true` is reused before the
    /// authorization server is asked again (never past the token's `exp`).
    #[arg(
        long = "oauth-introspection-ttl",
        env = "BORIS_OAUTH_INTROSPECTION_TTL",
        value_name = "SECS",
        default_value_t = 60
    )]
    pub introspection_ttl: u64,

    /// The secret of BORIS_OAUTH_CLIENT_SECRET, filled in from the environment (no flag:
    /// a flag's value shows in `ps`).
    #[arg(skip)]
    pub client_secret_env: Option<Secret>,
}

/// The env var holding the introspection client's secret; never passed to commands.
pub const CLIENT_SECRET_ENV: &str = crate::secret_env::OAUTH_CLIENT_SECRET;

/// A secret that never shows in a `Debug` print (configurations are logged).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Token introspection (RFC 7662), configured by `--oauth-client-id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntrospectionConfig {
    /// `--oauth-introspection-url`; `None`: the issuer's `introspection_endpoint`.
    pub endpoint: Option<String>,
    pub client_id: String,
    pub client_secret: Secret,
    /// Every token, not only those that are not JWTs.
    pub all: bool,
    /// The longest an active answer is reused.
    pub ttl: Duration,
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
    /// Set: tokens that are not JWTs are introspected.
    pub introspection: Option<IntrospectionConfig>,
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
        introspection: introspection(args)?,
    })
}

/// The introspection settings: none without `--oauth-client-id`; refused when half
/// given (a secret or an endpoint without a client id, a client id without a secret).
fn introspection(args: &OauthArgs) -> Result<Option<IntrospectionConfig>, String> {
    let secret = match (&args.client_secret_env, &args.client_secret_file) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "the introspection client's secret is given twice: keep {CLIENT_SECRET_ENV} or --oauth-client-secret-file"
            ));
        }
        (Some(secret), None) if secret.0.is_empty() => {
            return Err(format!("{CLIENT_SECRET_ENV} is empty"));
        }
        (Some(secret), None) => Some(secret.clone()),
        (None, Some(path)) => Some(secret_from_file(path)?),
        (None, None) => None,
    };
    let Some(client_id) = args.client_id.clone() else {
        let given = [
            (secret.is_some(), "a client secret"),
            (
                args.introspection_url.is_some(),
                "--oauth-introspection-url",
            ),
            (args.introspect_all, "--oauth-introspect-all"),
        ];
        return match given.iter().find(|(is, _)| *is) {
            Some((_, what)) => Err(format!(
                "{what} is for token introspection, which needs --oauth-client-id (the client Boris authenticates as)"
            )),
            None => Ok(None),
        };
    };
    if client_id.is_empty() || client_id.chars().any(char::is_control) {
        return Err("invalid value for --oauth-client-id: empty or with control characters".into());
    }
    let Some(client_secret) = secret else {
        return Err(format!(
            "--oauth-client-id needs its secret: set {CLIENT_SECRET_ENV} or give --oauth-client-secret-file (never a flag: it would show in ps)"
        ));
    };
    if args.introspection_url.is_none() && args.issuers.len() > 1 {
        return Err("token introspection with several --oauth-issuer needs --oauth-introspection-url: an opaque token does not say which issuer made it".into());
    }
    if let Some(url) = &args.introspection_url {
        checked_url("--oauth-introspection-url", url)?;
    }
    Ok(Some(IntrospectionConfig {
        endpoint: args.introspection_url.clone(),
        client_id,
        client_secret,
        all: args.introspect_all,
        ttl: Duration::from_secs(args.introspection_ttl),
    }))
}

/// The first line of the secret file, without its line end.
fn secret_from_file(path: &std::path::Path) -> Result<Secret, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "invalid value {} for --oauth-client-secret-file: {e}",
            path.display()
        )
    })?;
    let secret = text.lines().next().unwrap_or("").to_string();
    if secret.is_empty() {
        return Err(format!(
            "invalid value {} for --oauth-client-secret-file: the file's first line is empty",
            path.display()
        ));
    }
    Ok(Secret(secret))
}

/// An absolute https URL (http only to a loopback host), with no query or fragment (RFC
/// 8707 §2 and RFC 8414 §2 forbid them in a resource and an issuer).
pub(crate) fn checked_url(flag: &str, value: &str) -> Result<Url, String> {
    let url = Url::parse(value).map_err(|e| format!("invalid value {value:?} for {flag}: {e}"))?;
    let host = url.host_str().unwrap_or("");
    match url.scheme() {
        "https" => {}
        "http" if super::values::is_loopback(host) => {}
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
pub(super) mod tests {
    use super::*;

    /// The flags at their defaults, with `issuers` and `public` (also for auth.rs's tests).
    pub(in crate::config) fn args(issuers: &[&str], public: Option<&str>) -> OauthArgs {
        OauthArgs {
            issuers: issuers.iter().map(|s| s.to_string()).collect(),
            public_url: public.map(str::to_string),
            oauth_clock_skew: 30,
            oauth_jwks_ttl: 300,
            oauth_jwks_refetch_interval: 10,
            client_id: None,
            client_secret_file: None,
            introspection_url: None,
            introspect_all: false,
            introspection_ttl: 60,
            client_secret_env: None,
        }
    }

    #[test]
    fn introspection_needs_a_client_id_and_one_secret() {
        let base = || args(&["https://idp"], Some("https://b/mcp"));
        assert_eq!(resolve(&base(), false).unwrap().introspection, None);
        let mut a = base();
        a.client_id = Some("boris".into());
        let e = resolve(&a, false).unwrap_err();
        assert!(e.contains(CLIENT_SECRET_ENV) && e.contains("ps"), "{e}");
        a.client_secret_env = Some(Secret("s3".into()));
        let c = resolve(&a, false).unwrap().introspection.unwrap();
        assert_eq!(
            (c.endpoint, c.client_id.as_str(), c.all),
            (None, "boris", false)
        );
        assert_eq!(format!("{:?}", c.client_secret), "Secret(…)");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "from-file\n").unwrap();
        a.client_secret_file = Some(file.clone());
        assert!(resolve(&a, false).unwrap_err().contains("given twice"));
        a.client_secret_env = None;
        let c = resolve(&a, false).unwrap().introspection.unwrap();
        assert_eq!(c.client_secret, Secret("from-file".into()));
        std::fs::write(&file, "\n").unwrap();
        assert!(resolve(&a, false).unwrap_err().contains("empty"));
        a.client_secret_file = Some(dir.path().join("missing"));
        assert!(
            resolve(&a, false)
                .unwrap_err()
                .contains("--oauth-client-secret-file")
        );
    }

    #[test]
    fn half_given_introspection_is_refused() {
        let base = || args(&["https://idp"], Some("https://b/mcp"));
        let mut a = base();
        a.client_secret_env = Some(Secret("s".into()));
        assert!(
            resolve(&a, false)
                .unwrap_err()
                .contains("needs --oauth-client-id")
        );
        let mut a = base();
        a.introspection_url = Some("https://idp/introspect".into());
        assert!(
            resolve(&a, false)
                .unwrap_err()
                .contains("needs --oauth-client-id")
        );
        let mut a = base();
        a.introspect_all = true;
        assert!(
            resolve(&a, false)
                .unwrap_err()
                .contains("needs --oauth-client-id")
        );
        let mut a = args(&["https://a", "https://b"], Some("https://b/mcp"));
        a.client_id = Some("boris".into());
        a.client_secret_env = Some(Secret("s".into()));
        assert!(
            resolve(&a, false)
                .unwrap_err()
                .contains("--oauth-introspection-url")
        );
        a.introspection_url = Some("http://idp.example/introspect".into());
        assert!(resolve(&a, false).unwrap_err().contains("loopback"));
        a.introspection_url = Some("https://idp.example/introspect".into());
        assert!(resolve(&a, false).is_ok());
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
