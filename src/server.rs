//! The MCP handler: server identity, instructions, the tool list, and the call path that
//! turns every failure (bad arguments, a tool error, even a panic) into an `isError`
//! result the agent can read.

use crate::tools::{self, Call, Ctx, Progress, Shared};
use crate::workspace::Workspace;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestMethod,
    CompleteRequestParams, CompleteResult, GetTaskParams, GetTaskResult, Implementation,
    JsonObject, ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig,
    TASKS_EXTENSION_ID, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::Arc;

/// One MCP session: the server's shared rules and this session's workspace.
#[derive(Debug, Clone)]
pub struct BorisServer {
    ctx: Ctx,
    /// Ends this session's MCP tasks when the last handle on the session goes.
    _session_tasks: Arc<crate::mcp_tasks::SessionTasks>,
    /// Over HTTP, the workspace that requests without a session (the stateless
    /// 2026-07-28 era) share.
    stateless_ws: Option<Arc<Workspace>>,
    /// Whether this session was last shown the code-intelligence tools (`listing`).
    shown: Arc<tools::listing::Shown>,
}

impl BorisServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        let ws = Arc::new(Workspace::new(shared.config.workdir.clone()));
        BorisServer {
            _session_tasks: Arc::new(crate::mcp_tasks::SessionTasks(ws.mcp_tasks.clone())),
            ctx: Ctx { shared, ws },
            stateless_ws: None,
            shown: Default::default(),
        }
    }

    /// A server for one HTTP session, or for one stateless request, which then uses
    /// `stateless_ws`.
    pub fn with_default_workspace(shared: Arc<Shared>, stateless_ws: Arc<Workspace>) -> Self {
        BorisServer {
            stateless_ws: Some(stateless_ws),
            ..Self::new(shared)
        }
    }

    /// The context of one request: its session's workspace, or the shared one for an
    /// HTTP request outside any session.
    fn ctx_for(&self, context: &RequestContext<RoleServer>) -> std::borrow::Cow<'_, Ctx> {
        let sessionless = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some_and(|parts| !parts.headers.contains_key("mcp-session-id"));
        match (&self.stateless_ws, sessionless) {
            (Some(ws), true) => std::borrow::Cow::Owned(Ctx {
                shared: self.ctx.shared.clone(),
                ws: ws.clone(),
            }),
            _ => std::borrow::Cow::Borrowed(&self.ctx),
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
    match &config.sandbox {
        Some(sandbox) => text.push_str(&format!(
            "Commands run confined: {}. A refusal the sandbox caused ends the result with a \
             line starting \"sandbox:\".\n",
            sandbox.status()
        )),
        None => text.push_str("Commands run unconfined (no sandbox).\n"),
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
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        if tools::listing::may_change(&self.ctx.shared)
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        if self.ctx.shared.config.task_after.is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_string(), JsonObject::new());
        }
        ServerConfig::new(capabilities)
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let shared = &self.ctx.shared;
        // With --auth oauth, only the tools the request's token allows (issue 30 §1).
        let allowed = |tools: Vec<rmcp::model::Tool>| -> Vec<rmcp::model::Tool> {
            match grant(&context) {
                Some(grant) => tools
                    .into_iter()
                    .filter(|t| grant.allows(crate::access::scope_for(t)))
                    .collect(),
                None => tools,
            }
        };
        if !tools::listing::may_change(shared) {
            return Ok(ListToolsResult::with_all_items(allowed(
                shared.tools.clone(),
            )));
        }
        let servers = tools::listing::servers_installed(&shared.config);
        if self.shown.settle(servers) {
            // The answer below is already the new list; the notification tells a client
            // that caches the list (or lists on another path) to drop its copy.
            let _ = context.peer.notify_tool_list_changed().await;
        }
        Ok(ListToolsResult::with_all_items(allowed(
            tools::listing::visible(shared, servers),
        )))
    }

    // Boris declares tools and resources (the spill files of cut command output, issue 12
    // §5), nothing else, so what is not declared is not answered either: rmcp's defaults
    // would answer prompts/list and completion/complete with empty results, which
    // disagrees with `server/discover` and `initialize` (issue 14).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Err(McpError::method_not_found::<ListPromptsRequestMethod>())
    }

    /// No resource is listed: the readable ones are the spill files a tool result linked
    /// to, in this session only, and they come and go with the commands.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::default())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::default())
    }

    /// Reads a spill file this session was given a `resource_link` to; read-only, and
    /// nothing else is exposed.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let ctx = self.ctx_for(&context).into_owned();
        let uri = request.uri.clone();
        let not_found = || {
            McpError::resource_not_found(
                format!("no such resource in this session: {uri}"),
                Some(serde_json::json!({"uri": uri})),
            )
        };
        let path = crate::text::file_uri_path(&request.uri).ok_or_else(not_found)?;
        if !ctx.ws.was_offered(&path) {
            return Err(not_found());
        }
        let limit = ctx.shared.config.max_file_size;
        let read =
            tokio::task::spawn_blocking(move || -> std::io::Result<Result<String, String>> {
                let meta = std::fs::metadata(&path)?;
                if meta.len() > limit {
                    return Ok(Err(format!(
                        "{} is {} bytes, over the {limit}-byte limit (--max-file-size); read it in \
                     parts with view and view_range",
                        path.display(),
                        meta.len()
                    )));
                }
                let bytes = std::fs::read(&path)?;
                Ok(Ok(String::from_utf8_lossy(&bytes).into_owned()))
            })
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        match read {
            Ok(Ok(text)) => Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
                vec![ResourceContents::TextResourceContents {
                    uri: request.uri,
                    mime_type: Some("text/plain".into()),
                    text,
                    meta: None,
                }],
            ))),
            Ok(Err(too_large)) => Err(McpError::invalid_params(too_large, None)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(not_found()),
            Err(e) => Err(McpError::internal_error(e.to_string(), None)),
        }
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Err(McpError::method_not_found::<CompleteRequestMethod>())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let ctx = self.ctx_for(&context);
        Ok(GetTaskResult::new(
            ctx.ws.mcp_tasks.get_task(&request.task_id)?,
        ))
    }

    /// Boris's tasks never ask the client for input, so there is nothing to deliver;
    /// an unknown task is still an error.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let ctx = self.ctx_for(&context);
        ctx.ws
            .mcp_tasks
            .update_task(&request.task_id, request.input_responses)
    }

    /// Stops the task's command (its whole process group); the task ends `cancelled`.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let ctx = self.ctx_for(&context);
        ctx.ws.mcp_tasks.cancel_task(&request.task_id)
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.ctx
            .shared
            .tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    /// Runs the call, counted by the drain and ended by it past the grace, and logs one
    /// line for it.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let drain = crate::drain::global();
        let _counted = drain.call_started();
        let started = std::time::Instant::now();
        let tool = request.name.to_string();
        let session = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let ct = context.ct.clone();
        let peer = context.peer.clone();
        let subject = grant(&context).and_then(|g| g.subject.clone());
        // The HTTP layer answers a call beyond the token's scopes with 403 first; this
        // holds for any message that reaches a tool some other way.
        if let Some(grant) = grant(&context)
            && let Some(tool) = self.get_tool(&tool)
            && !grant.allows(crate::access::scope_for(&tool))
        {
            return Err(McpError::invalid_request(
                format!(
                    "insufficient_scope: this tool needs scope {}",
                    crate::access::scope_for(&tool)
                ),
                None,
            ));
        }
        let result = tokio::select! {
            result = self.run_tool(request, context) => result,
            _ = drain.ended().cancelled() => Err(McpError::internal_error(
                crate::drain::SHUTTING_DOWN,
                None,
            )),
        };
        let outcome = crate::call_log::Outcome::of(&result, ct.is_cancelled());
        let known = self.get_tool(&tool).is_some();
        crate::call_log::log(
            session.as_deref(),
            subject.as_deref(),
            &tool,
            known,
            started.elapsed(),
            &outcome,
            crate::call_log::output_bytes(&result),
        );
        self.after_command(&tool, peer);
        result
    }
}

impl BorisServer {
    /// After a command (which may have installed or removed a language server), checks
    /// off the call's path whether the listing changed, and says so (`listing`).
    fn after_command(&self, tool: &str, peer: rmcp::Peer<RoleServer>) {
        let shared = self.ctx.shared.clone();
        let runs_commands = tool_name_in(&shared, tool).is_some_and(|t| t.runs_commands());
        if !runs_commands || !tools::listing::may_change(&shared) {
            return;
        }
        let shown = self.shown.clone();
        tokio::spawn(async move {
            let check = tokio::task::spawn_blocking(move || {
                tools::listing::servers_installed(&shared.config)
            });
            if let Ok(servers) = check.await
                && shown.settle(servers)
            {
                let _ = peer.notify_tool_list_changed().await;
            }
        });
    }

    async fn run_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.get_tool(&name).is_none() {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool {}; this server has: {}",
                    crate::text::quote::quoted(&name),
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
        let ctx = self.ctx_for(&context);
        let config = &ctx.shared.config;
        if let Some(grace) = config.task_after
            && crate::tools::catalogue::may_become_task(config, &name, &args)
            && context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
        {
            let ctx = ctx.into_owned();
            return crate::mcp_tasks::call(ctx, name, args, context.ct.clone(), grace).await;
        }
        let call = Call {
            ct: context.ct.clone(),
            progress: context.meta.get_progress_token().map(|token| Progress {
                peer: context.peer.clone(),
                token,
            }),
            in_task: false,
        };
        match tools::dispatch::dispatch(&ctx, &name, args, call).await {
            Some(result) => Ok(result.into()),
            None => Err(McpError::invalid_params(
                format!("unknown tool {}", crate::text::quote::quoted(&name)),
                None,
            )),
        }
    }
}

/// The tool `name` names in this server's profile.
fn tool_name_in(shared: &Shared, name: &str) -> Option<crate::tool_name::ToolName> {
    crate::tool_name::ToolName::lookup(shared.config.tool_profile.family(), name)
}

/// The grant of the request's OAuth token (`--auth oauth` over HTTP), if any.
fn grant(context: &RequestContext<RoleServer>) -> Option<&crate::access::Grant> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(crate::access::grant_of)
}
