//! The MCP facts the harness speaks by: the two protocol eras, what a client sends at
//! `initialize`, and how a stateless (2026-07-28) request carries what `initialize`
//! would have said. Pure; the sessions, the routes and `boris-spec bench` read them here.

use serde_json::{Map, Value, json};

/// The revision with `initialize` (the one the handshakes send).
pub const SESSION_ERA: &str = "2025-11-25";

/// The 2026-07-28 stateless revision (the one stateless requests send).
pub const STATELESS_ERA: &str = "2026-07-28";

/// Methods the 2026-07-28 revision no longer has: a case using one stays off the
/// stateless routes.
pub const NOT_STATELESS: &[&str] = &[
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The default `initialize` params.
pub fn default_initialize_params() -> Value {
    json!({
        "protocolVersion": SESSION_ERA,
        "capabilities": {},
        "clientInfo": {"name": "boris-spec", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// `initialize` params: a step's own merged over the defaults (top-level keys; a `null`
/// value removes a key).
pub fn initialize_params(over: Option<&Value>) -> Value {
    let mut merged = default_initialize_params();
    if let (Value::Object(base), Some(Value::Object(over))) = (&mut merged, over) {
        for (k, v) in over {
            if v.is_null() {
                base.remove(k);
            } else {
                base.insert(k.clone(), v.clone());
            }
        }
    }
    merged
}

/// `_meta` of a stateless request: the revision and (empty) client capabilities, under
/// whatever the step gives.
pub fn stateless_meta(meta: Option<&Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        json!(STATELESS_ERA),
    );
    m.insert(
        "io.modelcontextprotocol/clientCapabilities".into(),
        json!({}),
    );
    if let Some(Value::Object(given)) = meta {
        m.extend(given.clone());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_params_merge_over_the_defaults() {
        let p = initialize_params(Some(
            &json!({"protocolVersion": "2025-06-18", "capabilities": null}),
        ));
        assert_eq!(p["protocolVersion"], "2025-06-18");
        assert!(p.get("capabilities").is_none());
        assert_eq!(p["clientInfo"]["name"], "boris-spec");
        assert_eq!(initialize_params(None), default_initialize_params());
        let m = stateless_meta(Some(&json!({"progressToken": 1})));
        assert_eq!(m["io.modelcontextprotocol/protocolVersion"], STATELESS_ERA);
        assert_eq!(m["progressToken"], 1);
    }
}
