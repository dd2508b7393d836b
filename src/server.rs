//! The MCP handler: server identity, instructions, the tool list, and the call path that
//! turns every failure (bad arguments, a tool error, even a panic) into an `isError`
//! result the agent can read.

use crate::tools::{self, Ctx, Shared};
use crate::workspace::Workspace;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::Arc;

/// One MCP session: the server's shared rules and this session's workspace.
#[derive(Debug, Clone)]
pub struct BorisServer {
    ctx: Ctx,
}

impl BorisServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        let ws = Arc::new(Workspace::new(shared.config.workdir.clone()));
        BorisServer {
            ctx: Ctx { shared, ws },
        }
    }

    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }
}

/// What the agent is told at `initialize`: where it is and what it may touch.
pub fn instructions(shared: &Shared) -> String {
    let config = &shared.config;
    let mut text = String::from(
        "Boris gives you coding tools over MCP. Paths may be absolute or relative to the \
         working directory.\n",
    );
    text.push_str(&format!(
        "Working directory: {}\n",
        config.workdir.display()
    ));
    let allowed: Vec<String> = shared
        .scope
        .allow_dirs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    text.push_str(&format!(
        "Allowed directories (file tools): {}\n",
        allowed.join(", ")
    ));
    if shared.scope.deny_patterns().is_empty() {
        text.push_str("Denied patterns: none\n");
    } else {
        text.push_str(&format!(
            "Denied patterns: {}\n",
            shared.scope.deny_patterns().join(", ")
        ));
    }
    if shared.require_view {
        text.push_str(
            "View a file before you edit or overwrite it; if it changed on disk since, view it again.\n",
        );
    }
    text.push_str(
        "Tool failures come back as results whose text starts with an error code in brackets, \
         e.g. [PATH_NOT_FOUND], followed by what to do.",
    );
    text
}

impl ServerHandler for BorisServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            // Set explicitly: rmcp's default reports rmcp's own name and version.
            .with_server_info(
                Implementation::new("boris", env!("CARGO_PKG_VERSION"))
                    .with_title("Boris")
                    .with_description("Coding tools for AI agents over MCP"),
            )
            .with_instructions(instructions(&self.ctx.shared))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.ctx.shared.tools.clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.ctx
            .shared
            .tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.get_tool(&name).is_none() {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool {name:?}; this server has: {}",
                    self.ctx
                        .shared
                        .tools
                        .iter()
                        .map(|t| t.name.as_ref())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let ctx = self.ctx.clone();
        // File tools do blocking I/O: keep it off the async workers. A panic in a tool
        // surfaces here as a JoinError, and becomes a result instead of a call that never
        // answers.
        let tool_name = name.clone();
        let joined =
            tokio::task::spawn_blocking(move || tools::dispatch(&ctx, &tool_name, args)).await;
        let result = match joined {
            Ok(Some(result)) => result,
            Ok(None) => {
                return Err(McpError::invalid_params(
                    format!("unknown tool {name:?}"),
                    None,
                ));
            }
            Err(join_error) => panic_result(&name, join_error),
        };
        Ok(result.into())
    }
}

/// The result a panicking tool call returns.
pub fn panic_result(tool: &str, err: tokio::task::JoinError) -> CallToolResult {
    let detail = match err.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string()),
        Err(_) => "the call was cancelled".to_string(),
    };
    tracing::error!(tool, %detail, "tool call panicked");
    CallToolResult::error(vec![ContentBlock::text(format!(
        "[INTERNAL_ERROR] the {tool} tool failed unexpectedly ({detail}). Files are written \
         atomically, so none was left half-written. This is a bug in Boris; please report it."
    ))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_call_becomes_an_error_result() {
        let err = tokio::task::spawn_blocking(|| panic!("boom"))
            .await
            .unwrap_err();
        let r = panic_result("view", err);
        assert_eq!(r.is_error, Some(true));
        let text = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(
            text.starts_with("[INTERNAL_ERROR] the view tool failed unexpectedly (boom)"),
            "{text}"
        );
    }
}
