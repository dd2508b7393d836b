//! Opaque access tokens (issue 30 §1): asked of the authorization server's introspection
//! endpoint (RFC 7662), Boris authenticating as a client (HTTP Basic, RFC 6749 §2.3.1).
//! The answer must be `active: true`; its claims then pass the same [`Rules`] as a JWT's.
//!
//! Answers are cached under the token's SHA-256 (the token itself is not kept): an
//! active one until the earlier of its `exp` and `--oauth-introspection-ttl`, a refusal
//! [`NEGATIVE_TTL`]; each kind at most [`CACHE_CAP`] entries, oldest dropped first, so a
//! flood of random tokens neither grows memory nor evicts the users' active entries.
//! Calls to the server are rate-limited ([`RATE_PER_SEC`], burst [`BURST`]): past it, an
//! unknown token is refused (fail closed) and the server is not asked.

use super::claims::{Claims, Grant, Issuer, Rules, now};
use super::keys::IssuerKeys;
use crate::config::oauth::{IntrospectionConfig, Secret};
use crate::transport::http_conn::Throttle;
use serde::Deserialize;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a refusal (inactive, or claims that do not pass) is reused: long enough that
/// a client retrying a dead token does not reach the server each time, short enough that
/// a token refused by a clock hiccup or a just-finished grant works again soon.
pub const NEGATIVE_TTL: Duration = Duration::from_secs(10);
/// Entries per kind (active, refused): some 300 bytes each, under 2.5 MB for both full,
/// and far more tokens than a team uses within a TTL.
pub const CACHE_CAP: usize = 4096;
/// Introspection calls per second, sustained: new tokens arrive as users sign in or
/// refresh (minutes apart each), so even hundreds of users stay far below; a flood of
/// random tokens reaches the authorization server at this rate and no more.
pub const RATE_PER_SEC: f64 = 20.0;
/// Calls allowed at once above the rate: a fleet of clients reconnecting together.
pub const BURST: f64 = 100.0;

pub struct Introspector {
    /// Every token, not only those that are not JWTs.
    pub all: bool,
    endpoint: Option<String>,
    client_id: String,
    client_secret: Secret,
    ttl: Duration,
    client: reqwest::Client,
    cache: Mutex<Cache>,
    budget: Mutex<Bucket>,
    /// Calls made, for the log.
    calls: std::sync::atomic::AtomicU64,
}

/// RFC 7662 §2.2: `active` plus the token's claims, under their JWT names.
#[derive(Deserialize)]
struct Answer {
    active: Option<serde_json::Value>,
    #[serde(flatten)]
    claims: Claims,
}

impl Introspector {
    pub fn new(config: &IntrospectionConfig, client: reqwest::Client) -> Self {
        Self {
            all: config.all,
            endpoint: config.endpoint.clone(),
            client_id: config.client_id.clone(),
            client_secret: config.client_secret.clone(),
            ttl: config.ttl,
            client,
            cache: Mutex::new(Cache::default()),
            budget: Mutex::new(Bucket::new(RATE_PER_SEC, BURST, Instant::now())),
            calls: Default::default(),
        }
    }

    /// The grant the token gives, from the cache or the authorization server. `issuers`:
    /// the one whose metadata names the endpoint when no `--oauth-introspection-url`.
    pub async fn check(
        &self,
        token: &str,
        rules: &Rules,
        issuers: &[IssuerKeys],
    ) -> Result<Grant, String> {
        let key = digest(token);
        if let Some(outcome) = self
            .cache
            .lock()
            .ok()
            .and_then(|c| c.get(&key, Instant::now()))
        {
            return outcome;
        }
        let admitted = self
            .budget
            .lock()
            .is_ok_and(|mut b| b.admit(Instant::now()));
        if !admitted {
            static RATE: Throttle = Throttle::new();
            warn(
                &RATE,
                None,
                "too many tokens to introspect: refused one without asking the authorization server",
            );
            return Err(
                "the authorization server is being asked too often: retry in a moment".into(),
            );
        }
        let judged = match self.ask(token, issuers).await {
            Ok((endpoint, body)) => judge(&body, rules, self.ttl, now())
                .map_err(|e| format!("{endpoint}: not an introspection answer: {e}")),
            Err(detail) => Err(detail),
        };
        let (outcome, lifetime) = match judged {
            Ok(judged) => judged,
            Err(detail) => {
                // Not cached: the server may be back for the next request.
                static FAILURES: Throttle = Throttle::new();
                warn(
                    &FAILURES,
                    Some(&detail),
                    "cannot introspect an access token: refused it (fail closed)",
                );
                return Err("the authorization server could not check the token".into());
            }
        };
        if let Ok(mut cache) = self.cache.lock() {
            let now = Instant::now();
            cache.put(key, outcome.clone(), now + lifetime, now);
        }
        outcome
    }

    /// POSTs the token to the endpoint; the endpoint and the answer's body, or what went
    /// wrong (for the log).
    async fn ask(&self, token: &str, issuers: &[IssuerKeys]) -> Result<(String, Vec<u8>), String> {
        let endpoint = match (&self.endpoint, issuers.first()) {
            (Some(url), _) => url.clone(),
            (None, Some(issuer)) => issuer.introspection_endpoint().await?,
            (None, None) => return Err("no introspection endpoint".into()),
        };
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        // RFC 6749 §2.3.1: the id and secret form-encoded before Basic's base64.
        let encode =
            |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let request = self
            .client
            .post(&endpoint)
            .basic_auth(encode(&self.client_id), Some(encode(&self.client_secret.0)))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body);
        let calls = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        tracing::debug!(endpoint = %endpoint, calls, "introspecting an access token");
        let body = super::keys::read_capped(&endpoint, request.send().await).await?;
        Ok((endpoint, body))
    }
}

/// At most one warning a second of each kind (a flood of bad tokens would fill the log
/// otherwise; apart, so a flood's warnings do not hide a provider going down).
fn warn(throttle: &Throttle, detail: Option<&str>, message: &'static str) {
    if let Some(held_back) = throttle.admit() {
        tracing::warn!(error = detail.unwrap_or(""), held_back, "{message}");
    }
}

/// What an introspection answer's body says (RFC 7662 §2.2) at `now_secs`: the outcome
/// and how long to keep it (an active answer up to `ttl`, cut at the token's `exp`; a
/// refusal [`NEGATIVE_TTL`]). `Err`: the body is no answer (not a JSON object), which is
/// the server failing, not the token. Pure.
pub fn judge(
    body: &[u8],
    rules: &Rules,
    ttl: Duration,
    now_secs: u64,
) -> Result<(Outcome, Duration), String> {
    let answer: Answer = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    if answer.active != Some(serde_json::Value::Bool(true)) {
        let refusal = "the token is not active (revoked, expired or unknown to its issuer)";
        return Ok((Err(refusal.into()), NEGATIVE_TTL));
    }
    Ok(
        match rules.check(&answer.claims, Issuer::IfPresent, now_secs) {
            Ok(grant) => (Ok(grant), positive_lifetime(ttl, &answer.claims, now_secs)),
            Err(refusal) => (Err(refusal), NEGATIVE_TTL),
        },
    )
}

/// How long an active answer is reused: the TTL, cut at the token's `exp`.
pub fn positive_lifetime(ttl: Duration, claims: &Claims, now_secs: u64) -> Duration {
    let until_exp = super::claims::numeric_date("exp", claims.exp.as_ref())
        .ok()
        .flatten()
        .map_or(Duration::ZERO, |exp| {
            Duration::from_secs(exp.saturating_sub(now_secs))
        });
    ttl.min(until_exp)
}

pub(super) fn digest(token: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

pub type Outcome = Result<Grant, String>;

/// Answers by token digest: active and refused ones apart, each bounded.
#[derive(Default)]
pub struct Cache {
    active: Bounded,
    refused: Bounded,
}

impl Cache {
    pub fn get(&self, key: &[u8; 32], now: Instant) -> Option<Outcome> {
        self.active
            .get(key, now)
            .or_else(|| self.refused.get(key, now))
    }

    /// Keeps `outcome` until `until`; an answer of the other kind for the same token is
    /// expired at `now` (a token refused, then active, is not refused from the cache).
    pub fn put(&mut self, key: [u8; 32], outcome: Outcome, until: Instant, now: Instant) {
        let (this, other) = match outcome {
            Ok(_) => (&mut self.active, &mut self.refused),
            Err(_) => (&mut self.refused, &mut self.active),
        };
        if let Some(entry) = other.map.get_mut(&key) {
            entry.1 = entry.1.min(now);
        }
        this.put(key, outcome, until);
    }

    pub fn len(&self) -> (usize, usize) {
        (self.active.map.len(), self.refused.map.len())
    }
}

/// An expired entry stays until it is replaced or is the oldest: `order` then always
/// holds each key of `map` once, and eviction is exact.
#[derive(Default)]
struct Bounded {
    map: HashMap<[u8; 32], (Outcome, Instant)>,
    order: VecDeque<[u8; 32]>,
}

impl Bounded {
    fn get(&self, key: &[u8; 32], now: Instant) -> Option<Outcome> {
        let (outcome, until) = self.map.get(key)?;
        (*until > now).then(|| outcome.clone())
    }

    fn put(&mut self, key: [u8; 32], outcome: Outcome, until: Instant) {
        if self.map.insert(key, (outcome, until)).is_none() {
            self.order.push_back(key);
        }
        while self.map.len() > CACHE_CAP {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.map.remove(&old);
        }
    }
}

/// A token bucket: `rate` a second, at most `burst` saved up.
pub struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    pub fn new(rate: f64, burst: f64, now: Instant) -> Self {
        Self {
            rate,
            burst,
            tokens: burst,
            last: now,
        }
    }

    pub fn admit(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now.max(self.last);
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;
    use serde_json::json;

    fn grant() -> Outcome {
        Ok(Grant {
            subject: Some("a".into()),
            scopes: vec![],
        })
    }

    #[test]
    fn the_cache_keeps_answers_until_their_time() {
        let t0 = Instant::now();
        let mut c = Cache::default();
        c.put(digest("good"), grant(), t0 + Duration::from_secs(60), t0);
        c.put(digest("bad"), Err("inactive".into()), t0 + NEGATIVE_TTL, t0);
        assert_eq!(c.get(&digest("good"), t0), Some(grant()));
        assert_eq!(c.get(&digest("bad"), t0), Some(Err("inactive".into())));
        assert_eq!(c.get(&digest("other"), t0), None);
        assert_eq!(c.get(&digest("bad"), t0 + NEGATIVE_TTL), None, "expired");
        c.put(digest("bad"), grant(), t0 + NEGATIVE_TTL * 2, t0);
        assert_eq!(
            c.get(&digest("bad"), t0 + NEGATIVE_TTL),
            Some(grant()),
            "replaced"
        );
    }

    #[test]
    fn a_flood_of_refused_tokens_is_bounded_and_keeps_the_active_ones() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(60);
        let mut c = Cache::default();
        c.put(digest("user"), grant(), later, t0);
        for i in 0..3 * CACHE_CAP {
            c.put(
                digest(&format!("random{i}")),
                Err("inactive".into()),
                later,
                t0,
            );
        }
        assert_eq!(c.len(), (1, CACHE_CAP));
        assert_eq!(c.get(&digest("user"), t0), Some(grant()));
        assert_eq!(c.get(&digest("random0"), t0), None, "the oldest went first");
        assert!(
            c.get(&digest(&format!("random{}", 3 * CACHE_CAP - 1)), t0)
                .is_some()
        );
        assert_eq!(c.refused.order.len(), CACHE_CAP);
    }

    #[test]
    fn the_bucket_allows_the_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut b = Bucket::new(20.0, 100.0, t0);
        assert_eq!((0..150).filter(|_| b.admit(t0)).count(), 100);
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!((0..150).filter(|_| b.admit(t1)).count(), 20);
        let t2 = t1 + Duration::from_secs(3600);
        assert_eq!(
            (0..150).filter(|_| b.admit(t2)).count(),
            100,
            "never more than the burst"
        );
    }

    #[test]
    fn an_active_answer_is_kept_until_the_earlier_of_ttl_and_exp() {
        let ttl = Duration::from_secs(60);
        let at = |exp: serde_json::Value| {
            let c: Claims = serde_json::from_value(json!({ "exp": exp })).unwrap();
            positive_lifetime(ttl, &c, 1000)
        };
        assert_eq!(at(json!(5000)), ttl);
        assert_eq!(at(json!(1010)), Duration::from_secs(10));
        assert_eq!(
            at(json!(990)),
            Duration::ZERO,
            "within the skew: accepted, not kept"
        );
        assert_eq!(at(json!("x")), Duration::ZERO);
    }

    proptest::proptest! {
        // Each case makes up to 9000 puts (past the cap): a few cases cover it.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Whatever the puts and lookups, each kind holds at most CACHE_CAP entries, its
        /// queue names each of them once, and a lookup returns only what was put last.
        #[test]
        fn the_cache_stays_bounded(ops in proptest::collection::vec((0u16..6000, proptest::bool::ANY, 0u64..20), 0..9000)) {
            let t0 = Instant::now();
            let mut c = Cache::default();
            let mut last = HashMap::new();
            for (i, (token, active, secs)) in ops.iter().enumerate() {
                let key = digest(&token.to_string());
                let outcome: Outcome = if *active { grant() } else { Err(format!("r{i}")) };
                c.put(key, outcome.clone(), t0 + Duration::from_secs(*secs), t0);
                last.insert(key, outcome);
            }
            let (a, r) = c.len();
            proptest::prop_assert!(a <= CACHE_CAP && r <= CACHE_CAP);
            proptest::prop_assert_eq!(c.active.order.len(), a);
            proptest::prop_assert_eq!(c.refused.order.len(), r);
            for (key, outcome) in &last {
                if let Some(got) = c.get(key, t0) {
                    proptest::prop_assert_eq!(&got, outcome);
                }
            }
        }

        /// Any body: no panic; a grant only for `"active": true` and an `aud` naming the
        /// resource, kept no longer than the TTL (the fuzz target `introspection_answer`
        /// checks the same on raw bytes).
        #[test]
        fn any_answer_is_judged_safely(
            active in proptest::option::of(proptest::prop_oneof![proptest::bool::ANY.prop_map(serde_json::Value::from), "[a-z]{0,5}".prop_map(serde_json::Value::from)]),
            aud in proptest::option::of(proptest::prop_oneof![proptest::strategy::Just("https://b/mcp".to_string()), "[a-z:/]{0,12}"]),
            exp in proptest::option::of(0u64..3000),
        ) {
            let rules = Rules { resource: "https://b/mcp".into(), issuers: vec![], clock_skew: Duration::from_secs(30) };
            let mut v = json!({});
            if let Some(a) = &active { v["active"] = a.clone(); }
            if let Some(a) = &aud { v["aud"] = json!(a); }
            if let Some(e) = exp { v["exp"] = json!(e); }
            let ttl = Duration::from_secs(60);
            let (outcome, keep) = judge(v.to_string().as_bytes(), &rules, ttl, 1000).unwrap();
            if outcome.is_ok() {
                proptest::prop_assert_eq!(active, Some(json!(true)));
                proptest::prop_assert_eq!(aud.as_deref(), Some("https://b/mcp"));
                proptest::prop_assert!(keep <= ttl);
            } else {
                proptest::prop_assert_eq!(keep, NEGATIVE_TTL);
            }
        }

        /// Over any schedule, the bucket admits at most the burst plus the rate times the
        /// time elapsed.
        #[test]
        fn the_bucket_never_exceeds_burst_plus_rate(steps in proptest::collection::vec((0u64..200, 1usize..50), 1..100)) {
            let t0 = Instant::now();
            let mut b = Bucket::new(RATE_PER_SEC, BURST, t0);
            let (mut now, mut admitted) = (t0, 0usize);
            for (ms, tries) in steps {
                now += Duration::from_millis(ms);
                admitted += (0..tries).filter(|_| b.admit(now)).count();
            }
            let allowed = BURST + RATE_PER_SEC * (now - t0).as_secs_f64();
            proptest::prop_assert!(admitted as f64 <= allowed + 1e-6, "{} > {}", admitted, allowed);
        }
    }

    #[test]
    fn answers_are_judged() {
        let rules = Rules {
            resource: "https://b/mcp".into(),
            issuers: vec!["https://idp".into()],
            clock_skew: Duration::from_secs(30),
        };
        let ttl = Duration::from_secs(60);
        let judged = |v: serde_json::Value| judge(v.to_string().as_bytes(), &rules, ttl, 1000);
        let (outcome, keep) = judged(json!({"active": true, "aud": "https://b/mcp", "exp": 1030, "sub": "s", "scope": "boris:read"})).unwrap();
        assert_eq!(outcome.unwrap().scopes, ["boris:read"]);
        assert_eq!(keep, Duration::from_secs(30));
        let (outcome, keep) =
            judged(json!({"active": false, "aud": "https://b/mcp", "exp": 9999})).unwrap();
        assert!(outcome.unwrap_err().contains("not active"));
        assert_eq!(keep, NEGATIVE_TTL);
        let (outcome, _) =
            judged(json!({"active": true, "aud": "https://x/mcp", "exp": 9999})).unwrap();
        assert!(outcome.unwrap_err().contains("not for this resource"));
        assert!(
            judge(b"<html>", &rules, ttl, 1000).is_err(),
            "no answer: a server failure"
        );
        assert!(judge(b"[1]", &rules, ttl, 1000).is_err());
    }

    #[test]
    fn an_answer_needs_active_true() {
        let a: Answer = serde_json::from_value(json!({"active": "true", "aud": "x"})).unwrap();
        assert_ne!(a.active, Some(json!(true)));
        let a: Answer = serde_json::from_value(json!({"active": true, "scope": "s"})).unwrap();
        assert_eq!(a.active, Some(json!(true)));
        assert_eq!(a.claims.scope, Some(json!("s")));
    }
}
