//! How HTTP clients authenticate (issue 30 §1): `--auth token|oauth|none` and
//! `--token-header`.
//!
//! Pure: the flags, whether a token was given and where Boris listens become an [`Auth`]
//! or the one-line error that stops the start. Serving beyond loopback with no
//! authentication is refused unless `--auth none` says so: until now Boris only warned,
//! and a warning in a container's log is read after the fact.

use super::values::is_loopback;

/// `--auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// A bearer token (`--token` or `--generate-token`).
    Token,
    /// OAuth access tokens from `--oauth-issuer` servers, for the resource `--public-url`.
    Oauth,
    /// No authentication: anyone who reaches the port can run commands (for a server
    /// behind a network policy or a proxy that authenticates).
    None,
}

/// Flattened into [`super::Cli`].
#[derive(Debug, Clone, clap::Args)]
pub struct AuthArgs {
    /// How HTTP clients authenticate: token (a bearer token, --token or --generate-token)
    /// or none. Default: token when a token is given; without one, none on loopback, and
    /// beyond loopback Boris refuses to start unless `--auth none` is said.
    #[arg(long, env = "BORIS_AUTH", value_enum, value_name = "MODE")]
    pub auth: Option<AuthMode>,

    /// The request header that carries the token, for a router that strips
    /// `Authorization` (agent-sandbox's does): `X-Boris-Token: <token>` (`Bearer <token>`
    /// is accepted too). Default: `Authorization: Bearer <token>`.
    #[arg(long, env = "BORIS_TOKEN_HEADER", value_name = "NAME")]
    pub token_header: Option<String>,

    #[command(flatten)]
    pub oauth: super::oauth::OauthArgs,
}

/// What the HTTP transport checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// A bearer token; `header` names the header it comes in when not `Authorization`
    /// (lowercase, a valid header name).
    Token { header: Option<String> },
    /// None; `explicit` when `--auth none` was said (beyond loopback it must be).
    None { explicit: bool },
    /// OAuth access tokens (`--auth oauth`); `header` as for `Token`.
    Oauth {
        header: Option<String>,
        config: Box<super::oauth::OauthConfig>,
    },
}

impl Auth {
    /// The header a client sends the token in, as a client writes it.
    pub fn header_shown(&self) -> &str {
        match self {
            Auth::Token { header: Some(h) }
            | Auth::Oauth {
                header: Some(h), ..
            } => h,
            _ => "Authorization",
        }
    }
}

/// Headers a proxy consumes or rewrites: a token there would not arrive, or would be
/// taken for something else.
const UNUSABLE_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "content-type",
    "cookie",
];

/// Resolves the flags. `token_given`: `--token` or `--generate-token`; `http`: the
/// transport is HTTP (on stdio nothing is checked).
pub fn resolve(args: &AuthArgs, token_given: bool, host: &str, http: bool) -> Result<Auth, String> {
    let header = match &args.token_header {
        None => None,
        Some(name) => Some(header_name(name)?),
    };
    let o = &args.oauth;
    if args.auth != Some(AuthMode::Oauth) && (!o.issuers.is_empty() || o.public_url.is_some()) {
        return Err(
            "--oauth-issuer and --public-url are for --auth oauth: say --auth oauth".into(),
        );
    }
    if args.auth != Some(AuthMode::Oauth)
        && (o.client_id.is_some()
            || o.client_secret_file.is_some()
            || o.introspection_url.is_some()
            || o.introspect_all)
    {
        return Err("--oauth-client-id, --oauth-client-secret-file, --oauth-introspection-url and --oauth-introspect-all are for --auth oauth: say --auth oauth".into());
    }
    let auth = match (args.auth, token_given) {
        (Some(AuthMode::Oauth), _) => Auth::Oauth {
            header,
            config: Box::new(super::oauth::resolve(&args.oauth, token_given)?),
        },
        (Some(AuthMode::Token) | None, true) => Auth::Token { header },
        (Some(AuthMode::Token), false) => {
            return Err(
                "--auth token needs a token: give --token (or BORIS_TOKEN) or --generate-token"
                    .into(),
            );
        }
        (Some(AuthMode::None), true) => {
            return Err(
                "--auth none contradicts --token and --generate-token: say one or the other".into(),
            );
        }
        (Some(AuthMode::None), false) => Auth::None { explicit: true },
        (None, false) => Auth::None { explicit: false },
    };
    if let (Auth::None { .. }, Some(_)) = (&auth, &args.token_header) {
        return Err("--token-header names where the token comes, but no token is required: give --token or --generate-token".into());
    }
    if http && !is_loopback(host) && auth == (Auth::None { explicit: false }) {
        return Err(format!(
            "Boris would listen on {host} (beyond loopback) with no authentication, so anyone \
             who reaches the port could run commands: give --token or --generate-token, or say \
             --auth none to serve without one (behind a network policy or an authenticating proxy)"
        ));
    }
    Ok(auth)
}

/// A header name a client can send the token in, lowercase.
fn header_name(name: &str) -> Result<String, String> {
    let lower = name.trim().to_ascii_lowercase();
    if axum::http::HeaderName::from_bytes(lower.as_bytes()).is_err() {
        return Err(format!(
            "invalid value {name:?} for --token-header: not an HTTP header name"
        ));
    }
    if UNUSABLE_HEADERS.contains(&lower.as_str()) {
        return Err(format!(
            "invalid value {name:?} for --token-header: a proxy consumes or rewrites that header"
        ));
    }
    Ok(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(auth: Option<AuthMode>, header: Option<&str>) -> AuthArgs {
        AuthArgs {
            auth,
            token_header: header.map(str::to_string),
            oauth: super::super::oauth::tests::args(&[], None),
        }
    }

    #[test]
    fn a_token_means_token_mode() {
        let a = resolve(&args(None, None), true, "0.0.0.0", true).unwrap();
        assert_eq!(a, Auth::Token { header: None });
        assert_eq!(a.header_shown(), "Authorization");
        let a = resolve(&args(None, Some("X-Boris-Token")), true, "0.0.0.0", true).unwrap();
        assert_eq!(a.header_shown(), "x-boris-token");
    }

    #[test]
    fn no_authentication_beyond_loopback_must_be_said() {
        let e = resolve(&args(None, None), false, "0.0.0.0", true).unwrap_err();
        assert!(e.contains("--auth none"), "{e}");
        assert_eq!(
            resolve(&args(Some(AuthMode::None), None), false, "0.0.0.0", true),
            Ok(Auth::None { explicit: true })
        );
        for host in ["127.0.0.1", "::1", "[::1]", "localhost"] {
            assert_eq!(
                resolve(&args(None, None), false, host, true),
                Ok(Auth::None { explicit: false })
            );
        }
        // stdio listens nowhere.
        assert!(resolve(&args(None, None), false, "0.0.0.0", false).is_ok());
    }

    #[test]
    fn contradictions_are_refused() {
        assert!(resolve(&args(Some(AuthMode::Token), None), false, "127.0.0.1", true).is_err());
        assert!(resolve(&args(Some(AuthMode::None), None), true, "127.0.0.1", true).is_err());
        assert!(resolve(&args(None, Some("x-token")), false, "127.0.0.1", true).is_err());
    }

    #[test]
    fn the_token_header_must_be_one_a_proxy_passes() {
        for bad in [
            "",
            "bad header",
            "Connection",
            "host",
            "Proxy-Authorization",
            "Cookie",
        ] {
            assert!(
                resolve(&args(None, Some(bad)), true, "127.0.0.1", true).is_err(),
                "{bad:?}"
            );
        }
    }
}
