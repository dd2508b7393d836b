//! The answer of an authorization server's token introspection endpoint (issue 30 §1,
//! RFC 7662 §2.2), as Boris judges it: no panic on any body; a grant only for an answer
//! that is a JSON object with `"active": true` and an `aud` naming the resource; an active
//! answer kept no longer than the TTL.
#![no_main]
use boris::transport::oauth::claims::Rules;
use boris::transport::oauth::introspect::judge;
use libfuzzer_sys::fuzz_target;
use std::time::Duration;

const RESOURCE: &str = "https://boris.example/mcp";

fuzz_target!(|data: &[u8]| {
    let rules = Rules {
        resource: RESOURCE.into(),
        issuers: vec!["https://idp.example".into()],
        clock_skew: Duration::from_secs(30),
    };
    let ttl = Duration::from_secs(60);
    let Ok((outcome, keep)) = judge(data, &rules, ttl, 1_800_000_000) else {
        return;
    };
    if outcome.is_ok() {
        let v: serde_json::Value = serde_json::from_slice(data).expect("judged JSON");
        assert_eq!(v["active"], serde_json::Value::Bool(true));
        let aud = &v["aud"];
        assert!(
            aud == RESOURCE
                || aud
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == RESOURCE))
        );
        assert!(keep <= ttl);
    }
});
