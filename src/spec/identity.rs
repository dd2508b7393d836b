//! The identity provider of the auth pack (issue 30 §3): a real OAuth provider the
//! harness starts for each case that `requires: [identity-provider]`, and asks for
//! tokens of the shapes the case names (`idp_token` steps).
//!
//! The provider is a command (`--identity-provider`, [`IDP_VAR`]): the repository's
//! `tests/auth/idp_fixture.mjs` runs npm `oauth2-mock-server` (pinned by
//! `tests/auth/install.sh`), and `boris-spec fixture identity-provider` prints it. Its
//! protocol is small enough for another wrapper to speak: one line `{"issuer": URL}` on
//! stdout once it serves; tokens from the provider's own token endpoint
//! (`client_credentials`, with a `fixture` field saying which claims to change and
//! whether to forge the result); `POST {issuer}/fixture/rotate` for a new signing key.
//! The harness never signs anything itself: every good token is the provider's.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::http::{Request, send};

/// The environment twin of `boris-spec run --identity-provider CMD`.
pub const IDP_VAR: &str = "BORIS_SPEC_IDP";

/// The provider wrapper shipped with the suite (printed by `boris-spec fixture
/// identity-provider`).
pub const FIXTURE_SCRIPT: &str = include_str!("../../tests/auth/idp_fixture.mjs");

/// How long a provider gets to say it serves (Node starts in well under a second; a
/// loaded CI machine may take several).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// What an `idp_token` step asks for: the provider's token for `aud` with `scope`, with
/// claims changed, or forged from it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSpec {
    /// Kept as `{saved:NAME}` for later steps.
    pub save: String,
    /// The token's `scope` (space-separated; default: none).
    #[serde(default)]
    pub scope: Option<String>,
    /// The audience: one resource or a list (default: the resource the adapter gives
    /// the server, filled in by `Adapter::adapt`).
    #[serde(default)]
    pub aud: Option<Audience>,
    /// Claims set over the provider's (`null` removes one: `{aud: null}`).
    #[serde(default)]
    pub claims: Map<String, Value>,
    /// `exp` this many seconds from now (negative: already expired).
    #[serde(default)]
    pub exp_in: Option<i64>,
    /// `nbf` this many seconds from now (positive: not valid yet).
    #[serde(default)]
    pub nbf_in: Option<i64>,
    /// What an attacker makes of the provider's token instead.
    #[serde(default)]
    pub forge: Option<Forgery>,
    /// Rotate the provider's signing key first (the token carries a `kid` the server's
    /// cached key set lacks).
    #[serde(default)]
    pub rotate_key: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

/// Tokens no provider issues, made from one it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forgery {
    /// `alg: none`, no signature.
    AlgNone,
    /// HS256 keyed with the provider's public key (the algorithm-confusion attack).
    HmacPublicKey,
    /// The payload changed (subject, scope) under the original signature.
    ChangedPayload,
}

impl TokenSpec {
    pub fn validate(&self) -> Result<(), String> {
        super::model::check_session_name(&self.save)
            .map_err(|e| format!("idp_token: {}", e.replace("session name", "saved name")))
    }

    /// Expands the placeholders of its values (`{resource}`, `{scope.read}`, …).
    pub fn expand(&mut self, p: &super::model::Placeholders) {
        self.scope = self.scope.as_deref().map(|s| p.expand(s));
        self.aud = match self.aud.take() {
            Some(Audience::One(a)) => Some(Audience::One(p.expand(&a))),
            Some(Audience::Many(v)) => {
                Some(Audience::Many(v.iter().map(|a| p.expand(a)).collect()))
            }
            None => None,
        };
        for v in self.claims.values_mut() {
            *v = p.expand_value(v);
        }
    }

    /// The token request's form fields (pure, for the unit tests): `aud` once per
    /// audience (none given: the provider's default, no `aud`), and the `fixture`
    /// instructions as JSON.
    pub fn form(&self) -> Vec<(String, String)> {
        let mut out = vec![("grant_type".into(), "client_credentials".into())];
        if let Some(s) = &self.scope {
            out.push(("scope".into(), s.clone()));
        }
        let auds = match &self.aud {
            None => vec![],
            Some(Audience::One(a)) => vec![a.clone()],
            Some(Audience::Many(v)) => v.clone(),
        };
        out.extend(auds.into_iter().map(|a| ("aud".to_string(), a)));
        let mut fixture = Map::new();
        if !self.claims.is_empty() {
            fixture.insert("claims".into(), Value::Object(self.claims.clone()));
        }
        if let Some(s) = self.exp_in {
            fixture.insert("exp_in".into(), json!(s));
        }
        if let Some(s) = self.nbf_in {
            fixture.insert("nbf_in".into(), json!(s));
        }
        if let Some(f) = self.forge {
            let name = match f {
                Forgery::AlgNone => "alg-none",
                Forgery::HmacPublicKey => "hmac-public-key",
                Forgery::ChangedPayload => "changed-payload",
            };
            fixture.insert("forge".into(), json!(name));
        }
        if !fixture.is_empty() {
            out.push(("fixture".into(), Value::Object(fixture).to_string()));
        }
        out
    }
}

/// An adapter's `oauth:` block: how its server runs as an OAuth resource server. A case
/// that `requires: [identity-provider]` runs only on a server whose adapter has one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OauthMode {
    /// Arguments that make the server a resource server trusting the issuer
    /// `{idp.issuer}`, for the resource `{resource}`; added before the case's own.
    pub args: Vec<String>,
    /// The resource URI (RFC 8707) the server is told it is: the audience of good
    /// tokens and the metadata's `resource`.
    #[serde(default = "default_resource")]
    pub resource: String,
    /// The server's scope names for reading, editing and running commands.
    pub scopes: Scopes,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scopes {
    pub read: String,
    pub edit: String,
    pub exec: String,
}

/// The resource a server is told it is unless its adapter says otherwise: no one
/// answers there, which is the point (the harness talks to the server's real address;
/// the resource is a name tokens are bound to).
pub const DEFAULT_RESOURCE: &str = "https://mcp.example/mcp";

fn default_resource() -> String {
    DEFAULT_RESOURCE.into()
}

/// The well-known name of RFC 9728 protected-resource metadata.
const METADATA: &str = "/.well-known/oauth-protected-resource";

impl OauthMode {
    /// The placeholders the auth pack's cases use: `{resource}`, `{resource.metadata}`
    /// (the metadata's absolute URL: the well-known name between the host and the
    /// resource's path, RFC 9728 §3.1), `{resource.path}` (the resource's path, so a
    /// case asks for `/.well-known/oauth-protected-resource{resource.path}`),
    /// `{scope.read}`, `{scope.edit}`, `{scope.exec}` and `{scope.all}` (the three, each
    /// once).
    pub fn placeholders(&self) -> Result<super::model::Placeholders, String> {
        let url = url::Url::parse(&self.resource)
            .map_err(|e| format!("oauth.resource `{}`: {e}", self.resource))?;
        let path = url.path().trim_end_matches('/');
        let origin = url.origin().ascii_serialization();
        let metadata_path = format!("{METADATA}{path}");
        let mut all: Vec<&str> = Vec::new();
        for s in [&self.scopes.read, &self.scopes.edit, &self.scopes.exec] {
            for one in s.split_whitespace() {
                if !all.contains(&one) {
                    all.push(one);
                }
            }
        }
        Ok(super::model::Placeholders::default()
            .with("{resource.path}", path)
            .with("{resource.metadata}", &format!("{origin}{metadata_path}"))
            .with("{resource}", &self.resource)
            .with("{scope.read}", &self.scopes.read)
            .with("{scope.edit}", &self.scopes.edit)
            .with("{scope.exec}", &self.scopes.exec)
            .with("{scope.all}", &all.join(" ")))
    }
}

/// A running provider; dropping it kills its process group.
pub struct IdentityProvider {
    child: Child,
    issuer: String,
    /// `host:port` of the issuer, for the harness's HTTP client.
    addr: String,
    /// The issuer URL's path (a provider may serve under one).
    base_path: String,
}

impl IdentityProvider {
    /// Starts `cmd` (by `/bin/sh -c`, in its own process group) and waits for its
    /// `{"issuer": …}` line.
    pub fn start(cmd: &str) -> Result<IdentityProvider, String> {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the identity provider `{cmd}`: {e}"))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            if let Some(out) = stdout {
                let _ = BufReader::new(out).read_line(&mut line);
            }
            let _ = tx.send(line);
        });
        let mut provider = IdentityProvider {
            child,
            issuer: String::new(),
            addr: String::new(),
            base_path: String::new(),
        };
        let line = match rx.recv_timeout(START_TIMEOUT) {
            Ok(l) => l,
            Err(_) => {
                return Err(format!(
                    "the identity provider `{cmd}` said nothing within {} s",
                    START_TIMEOUT.as_secs()
                ));
            }
        };
        let issuer = serde_json::from_str::<Value>(line.trim())
            .ok()
            .and_then(|v| v.get("issuer").and_then(Value::as_str).map(String::from));
        let Some(issuer) = issuer else {
            let mut err = String::new();
            if let Some(mut e) = stderr {
                provider.kill();
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return Err(format!(
                "the identity provider `{cmd}` did not print {{\"issuer\": URL}} (it printed {:?}); its stderr: {}",
                line.trim(),
                super::display::stderr_tail(&err, 10)
            ));
        };
        let url = url::Url::parse(&issuer)
            .map_err(|e| format!("the identity provider's issuer `{issuer}`: {e}"))?;
        let host = url.host_str().unwrap_or("127.0.0.1");
        let port = url.port_or_known_default().unwrap_or(80);
        if url.scheme() != "http" {
            return Err(format!(
                "the identity provider's issuer `{issuer}` is not http:// (the harness speaks plain HTTP to it)"
            ));
        }
        provider.addr = format!("{host}:{port}");
        provider.base_path = url.path().trim_end_matches('/').to_string();
        provider.issuer = issuer;
        // Its stderr is not read further: drain it so a chatty provider never blocks.
        if let Some(mut e) = stderr {
            thread::spawn(move || std::io::copy(&mut e, &mut std::io::sink()));
        }
        Ok(provider)
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// A token as `spec` says.
    pub fn mint(&self, spec: &TokenSpec, timeout: Duration) -> Result<String, String> {
        if spec.rotate_key {
            self.post(
                "/fixture/rotate",
                "application/json",
                b"{}".to_vec(),
                timeout,
            )?;
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(spec.form())
            .finish();
        let answer = self.post(
            "/token",
            "application/x-www-form-urlencoded",
            body.into_bytes(),
            timeout,
        )?;
        answer
            .get("access_token")
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| format!("the identity provider gave no access_token: {answer}"))
    }

    fn post(
        &self,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Value, String> {
        let req = Request {
            method: "POST".into(),
            path: format!("{}{path}", self.base_path),
            headers: vec![
                ("Host".into(), self.addr.clone()),
                ("Content-Type".into(), content_type.into()),
            ],
            body,
        };
        let resp = send(&self.addr, &req, timeout)
            .map_err(|e| format!("identity provider {path}: {e}"))?;
        if resp.status != 200 {
            return Err(format!(
                "identity provider {path}: HTTP {}: {}",
                resp.status,
                resp.body_text().chars().take(300).collect::<String>()
            ));
        }
        serde_json::from_slice(&resp.body)
            .map_err(|e| format!("identity provider {path}: not JSON ({e})"))
    }

    fn kill(&mut self) {
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for IdentityProvider {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> TokenSpec {
        yaml_serde::from_str(yaml).unwrap()
    }

    #[test]
    fn the_form_lists_scope_and_every_audience() {
        let f = spec("{save: t, scope: 'a b', aud: 'https://r.example/mcp'}").form();
        assert_eq!(
            f,
            vec![
                ("grant_type".to_string(), "client_credentials".to_string()),
                ("scope".into(), "a b".into()),
                ("aud".into(), "https://r.example/mcp".into()),
            ]
        );
        let f = spec("{save: t, aud: [x, y]}").form();
        let auds: Vec<_> = f
            .iter()
            .filter(|(k, _)| k == "aud")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(auds, ["x", "y"]);
    }

    #[test]
    fn the_fixture_field_carries_claims_times_and_forgery() {
        let f = spec("{save: t, claims: {aud: null, sub: bob}, exp_in: -600, nbf_in: 5, forge: hmac-public-key}")
            .form();
        let fixture: Value =
            serde_json::from_str(&f.iter().find(|(k, _)| k == "fixture").unwrap().1).unwrap();
        assert_eq!(
            fixture,
            json!({"claims": {"aud": null, "sub": "bob"}, "exp_in": -600, "nbf_in": 5, "forge": "hmac-public-key"})
        );
        assert!(!spec("{save: t}").form().iter().any(|(k, _)| k == "fixture"));
    }

    #[test]
    fn unknown_fields_and_bad_names_are_refused() {
        assert!(yaml_serde::from_str::<TokenSpec>("{save: t, forge: guess}").is_err());
        assert!(yaml_serde::from_str::<TokenSpec>("{save: t, scopes: a}").is_err());
        assert!(spec("{save: 'no spaces'}").validate().is_err());
        assert!(spec("{save: good}").validate().is_ok());
    }

    #[test]
    fn the_oauth_placeholders_follow_rfc_9728() {
        let mode: OauthMode = yaml_serde::from_str(
            "{args: [--auth, oauth], resource: 'https://h.example:8443/x/mcp', scopes: {read: 'r', edit: 'r e', exec: 'x'}}",
        )
        .unwrap();
        let p = mode.placeholders().unwrap();
        assert_eq!(
            p.expand("{resource.metadata}|{resource.path}|{resource}|{scope.all}"),
            "https://h.example:8443/.well-known/oauth-protected-resource/x/mcp|\
             /x/mcp|https://h.example:8443/x/mcp|r e x"
        );
        let mode: OauthMode =
            yaml_serde::from_str("{args: [], scopes: {read: a, edit: b, exec: c}}").unwrap();
        assert_eq!(mode.resource, DEFAULT_RESOURCE);
        assert!(yaml_serde::from_str::<OauthMode>("{args: [], scopes: {read: a}}").is_err());
    }

    #[test]
    fn a_command_that_prints_no_issuer_is_refused_with_its_stderr() {
        let e = IdentityProvider::start("echo hello; echo oops >&2")
            .err()
            .unwrap();
        assert!(e.contains("did not print") && e.contains("hello"), "{e}");
        let e = IdentityProvider::start("echo '{\"issuer\": \"https://x.example\"}'")
            .err()
            .unwrap();
        assert!(e.contains("not http://"), "{e}");
    }
}
