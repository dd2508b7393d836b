//! What a caller may do: the grant an access token gave (`--auth oauth`, issue 30 §1) and
//! the scope each tool needs. Below both the server, which lists and calls tools by it,
//! and the HTTP transport, which finds the grant: neither imports the other for it.

use rmcp::model::Tool;
use std::collections::HashMap;

pub const READ: &str = "boris:read";
pub const EDIT: &str = "boris:edit";
pub const EXEC: &str = "boris:exec";
pub const METRICS: &str = "boris:metrics";

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

/// The scope a tool needs, from its annotations: read-only tools `boris:read`, tools
/// that run commands (open world) `boris:exec`, other writing tools `boris:edit`. A tool
/// without annotations is taken as running commands: the strictest.
pub fn scope_for(tool: &Tool) -> &'static str {
    match &tool.annotations {
        Some(a) if a.read_only_hint == Some(true) => READ,
        Some(a) if a.open_world_hint == Some(false) => EDIT,
        _ => EXEC,
    }
}

/// The scope each tool needs, by tool name.
pub type ToolScopes = HashMap<String, &'static str>;

/// The scope each tool of the server needs, by name.
pub fn tool_scopes(tools: &[Tool]) -> ToolScopes {
    tools
        .iter()
        .map(|t| (t.name.to_string(), scope_for(t)))
        .collect()
}

/// The grant a request's token gave, if the server runs `--auth oauth`.
pub fn grant_of(parts: &axum::http::request::Parts) -> Option<&Grant> {
    parts.extensions.get::<Grant>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ToolAnnotations;

    fn tool(read_only: Option<bool>, open_world: Option<bool>) -> Tool {
        let mut t = Tool::new("t", "d", std::sync::Arc::new(serde_json::Map::new()));
        let mut a = ToolAnnotations::new();
        a.read_only_hint = read_only;
        a.open_world_hint = open_world;
        t.annotations = Some(a);
        t
    }

    #[test]
    fn a_tools_scope_follows_its_annotations() {
        assert_eq!(scope_for(&tool(Some(true), Some(false))), READ);
        assert_eq!(scope_for(&tool(Some(false), Some(false))), EDIT);
        assert_eq!(scope_for(&tool(Some(false), Some(true))), EXEC);
        assert_eq!(scope_for(&tool(None, None)), EXEC);
        let mut bare = tool(None, None);
        bare.annotations = None;
        assert_eq!(scope_for(&bare), EXEC);
    }

    #[test]
    fn a_grant_allows_exactly_its_scopes() {
        let g = Grant {
            subject: None,
            scopes: vec![READ.to_string()],
        };
        assert!(g.allows(READ));
        assert!(!g.allows(EDIT));
        assert!(!g.allows("boris:rea"));
    }
}
