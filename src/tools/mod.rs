//! The tools, one module each, and the table that registers them from the configuration.
//!
//! Every tool is a plain function `fn(&Ctx, Args) -> ToolResult<CallToolResult>`; the
//! server deserialises arguments here so that a wrong type or a missing field is an
//! `[INVALID_INPUT]` tool result (DESIGN §5) rather than rmcp's untagged message.

pub mod bash;
pub mod claude_code;
pub mod create;
pub mod edit;
pub mod editor;
pub mod glob;
pub mod grep;
pub mod insert;
pub mod pipe;
pub mod tasks;
pub mod undo;
pub mod view;

use crate::config::{BashProfile, Config, ToolProfile, ViewBeforeEdit};
use crate::error::{ToolError, ToolResult};
use crate::scope::{Scope, ScopedPath};
use crate::workspace::Workspace;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, ProgressToken, Tool,
    ToolAnnotations,
};
use rmcp::{Peer, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What every session of one server shares: the configuration and the path rules.
#[derive(Debug)]
pub struct Shared {
    pub config: Config,
    pub scope: Scope,
    /// View-before-edit, with `auto` settled against the registered tools.
    pub require_view: bool,
    /// The tools this server registers, in `tools/list` order.
    pub tools: Vec<Tool>,
    /// One edit of a given file at a time, across every session.
    pub edit_locks: crate::fsutil::PathLocks,
    /// The shell bash runs (`/bin/bash`, else `/bin/sh`), detected at start.
    pub shell: std::path::PathBuf,
    /// Where bash's spill files go; readable by view and grep whatever the allow list.
    pub spill: crate::exec::SpillDir,
    /// The environment every command gets: non-interactive defaults plus `--env`.
    pub command_env: Vec<(String, String)>,
}

impl Shared {
    pub fn new(config: Config) -> Result<Self, String> {
        let spill = crate::exec::SpillDir::create()
            .map_err(|e| format!("cannot create a directory for command output: {e}"))?;
        let scope = Scope::new(config.allow_dirs.clone(), config.deny_patterns.clone())?
            .with_read_only(spill.path().to_path_buf());
        let tools = catalogue(&config);
        let can_view = tools
            .iter()
            .any(|t| matches!(t.name.as_ref(), "view" | "str_replace_editor" | "Read"));
        let require_view = match config.require_view_before_edit {
            ViewBeforeEdit::True => true,
            ViewBeforeEdit::False => false,
            // An agent that cannot view could never satisfy the rule.
            ViewBeforeEdit::Auto => can_view,
        };
        let command_env = crate::exec::command_env(&config.env);
        Ok(Shared {
            config,
            scope,
            require_view,
            tools,
            edit_locks: Default::default(),
            shell: crate::exec::detect_shell(),
            command_env,
            spill,
        })
    }
}

/// One tool call's view of the server: shared rules plus this session's workspace.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub shared: Arc<Shared>,
    pub ws: Arc<Workspace>,
}

impl Ctx {
    /// Resolves a path a tool will write (or read and then write). With the sandbox on,
    /// git's config and hooks are refused as the sandbox refuses them to commands
    /// (issue 18): both agree on what may run later, outside it.
    pub fn resolve(&self, path: &str) -> ToolResult<ScopedPath> {
        let scoped = self.shared.scope.resolve(&self.ws.cwd(), path)?;
        if let Some(sandbox) = &self.shared.config.sandbox
            && sandbox.policy.protect_git
            && (crate::sandbox::paths::is_git_protected(&scoped.real)
                || crate::sandbox::paths::is_git_protected(&scoped.shown))
        {
            return Err(crate::error::ToolError::new(
                crate::error::ErrorCode::AccessDenied,
                format!(
                    "{} is git metadata (config or hooks), which git runs outside the sandbox \
                     the next time the user runs it; it is read-only here \
                     (--sandbox-allow-git-config allows writing it)",
                    scoped.shown.display()
                ),
            ));
        }
        Ok(scoped)
    }

    /// Resolves a path a tool only reads (`view`, `grep`, `glob`). Besides the allowed
    /// directories, bash's spill files are readable here, wherever they live.
    pub fn resolve_read(&self, path: &str) -> ToolResult<ScopedPath> {
        self.shared.scope.resolve_read(&self.ws.cwd(), path)
    }

    /// Where a command output file named `name` goes: with the sandbox on, this
    /// session's directory, which its commands may read and no other session's can;
    /// otherwise the server's.
    pub fn spill_file(&self, name: &str) -> std::path::PathBuf {
        if self.shared.config.sandbox.is_some() {
            self.ws.session_dir(&self.shared.spill).join(name)
        } else {
            self.shared.spill.file(name)
        }
    }

    pub fn max_file_size(&self) -> u64 {
        self.shared.config.max_file_size
    }
}

/// The tools to register, by name, sorted as `tools/list` shows them.
fn catalogue(config: &Config) -> Vec<Tool> {
    if config.tool_profile == ToolProfile::ClaudeCode {
        return claude_code_catalogue(config);
    }
    let mut tools = if config.anthropic_compat {
        vec![editor::tool()]
    } else {
        vec![
            view::tool(),
            edit::tool(),
            edit::multi_tool(),
            create::tool(),
            undo::tool(),
        ]
    };
    match config.bash_profile {
        BashProfile::Boris => {
            tools.extend([bash::tool(), tasks::output_tool(), tasks::stop_tool()])
        }
        BashProfile::Pipe => tools.push(pipe::tool()),
    }
    tools.extend([
        grep::tool(config.anthropic_compat),
        glob::tool(config.anthropic_compat),
    ]);
    // The task tools only make sense next to bash.
    let bash_enabled = config.tool_enabled("bash");
    tools.retain(|t| {
        config.tool_enabled(&t.name)
            && (bash_enabled || !matches!(t.name.as_ref(), "task_output" | "task_stop"))
    });
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    mark_task_tools(config, &mut tools);
    tools
}

/// Marks the tools whose calls may become MCP tasks.
fn mark_task_tools(config: &Config, tools: &mut [Tool]) {
    if config.task_after.is_some() {
        // The tasks extension has no per-tool field; say which tools may answer with a
        // task (for clients that declare the extension), in the `_meta` of each.
        for tool in tools.iter_mut() {
            let args = JsonObject::new();
            if crate::mcp_tasks::eligible(config.bash_profile, &tool.name, &args) {
                let mut meta = rmcp::model::MetaObject::default();
                meta.0.insert(
                    crate::mcp_tasks::TOOL_META_KEY.into(),
                    serde_json::Value::String("optional".into()),
                );
                tool.meta = Some(meta);
            }
        }
    }
}

/// What the tool Boris calls `boris` is named in this server's profile, for notices
/// that tell the model which tool to call next.
pub fn tool_name(config: &Config, boris: &'static str) -> &'static str {
    if config.tool_profile != ToolProfile::ClaudeCode {
        return boris;
    }
    match boris {
        "task_output" => "TaskOutput",
        "task_stop" => "TaskStop",
        "view" => "Read",
        "grep" => "Grep",
        "bash" => "Bash",
        other => other,
    }
}

/// The claude-code profile's tools, by the same rules: `--disable-tools` (by either name,
/// `Bash` or `bash`), the task tools only beside Bash, sorted by name.
fn claude_code_catalogue(config: &Config) -> Vec<Tool> {
    let enabled =
        |name: &str| config.tool_enabled(name) && config.tool_enabled(&name.to_lowercase());
    let bash_enabled = enabled("Bash");
    let mut tools = claude_code::tools();
    tools.retain(|t| {
        enabled(&t.name) && (bash_enabled || !matches!(t.name.as_ref(), "TaskOutput" | "TaskStop"))
    });
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    mark_task_tools(config, &mut tools);
    tools
}

/// What one call carries besides its arguments: its cancellation (MCP
/// `notifications/cancelled`, or a dropped HTTP stream) and, when the client asked for
/// them, a way to send progress notifications.
#[derive(Clone, Default)]
pub struct Call {
    pub ct: CancellationToken,
    pub progress: Option<Progress>,
    /// The call may run as an MCP task (the client declared the tasks extension): the
    /// task, not `--hand-off-after`, is how it outlives the client's deadline.
    pub in_task: bool,
}

/// Sends `notifications/progress` for one request, echoing its token.
#[derive(Clone)]
pub struct Progress {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
}

impl Progress {
    pub async fn notify(&self, progress: f64, message: Option<String>) {
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        if let Some(m) = message {
            param = param.with_message(m);
        }
        // A client that went away cannot be told anything; the call itself carries on
        // until it is cancelled.
        let _ = self.peer.notify_progress(param).await;
    }
}

/// Runs the tool `name`, or returns `None` when this server does not register it.
/// Every outcome, including a panic inside the tool, is a result the client can read.
pub async fn dispatch(
    ctx: &Ctx,
    name: &str,
    args: JsonObject,
    mut call: Call,
) -> Option<CallToolResult> {
    if !ctx.shared.tools.iter().any(|t| t.name == name) {
        return None;
    }
    // The call stops on its own cancellation or on server shutdown, whichever comes
    // first.
    let request_ct = std::mem::replace(&mut call.ct, crate::exec::shutdown_token().child_token());
    let linked = call.ct.clone();
    let link = tokio::spawn(async move {
        request_ct.cancelled().await;
        linked.cancel();
    });
    let _unlink = AbortOnDrop(link.abort_handle());
    let outcome = match name {
        "bash" => match ctx.shared.config.bash_profile {
            BashProfile::Boris => {
                guarded(name, async {
                    let args = parse(name, args)?;
                    bash::run(ctx, args, &call).await
                })
                .await
            }
            BashProfile::Pipe => {
                guarded(name, async {
                    let args = parse(name, args)?;
                    pipe::run(ctx, args, &call).await
                })
                .await
            }
        },
        "task_output" | "TaskOutput" => {
            guarded(name, async { tasks::output(ctx, parse(name, args)?).await }).await
        }
        "task_stop" | "TaskStop" => {
            guarded(name, async { tasks::stop(ctx, parse(name, args)?).await }).await
        }
        "Bash" => {
            guarded(name, async {
                let args = parse(name, args)?;
                bash::run(ctx, args, &call).await
            })
            .await
        }
        _ => {
            // Blocking filesystem work stays off the async workers; a panic surfaces as
            // a JoinError.
            let (ctx, tool, ct) = (ctx.clone(), name.to_string(), call.ct.clone());
            match tokio::task::spawn_blocking(move || dispatch_blocking(&ctx, &tool, args, &ct))
                .await
            {
                Ok(Some(outcome)) => outcome,
                Ok(None) => return None,
                Err(join_error) => {
                    return Some(panic_result(name, join_error.try_into_panic().ok()));
                }
            }
        }
    };
    Some(outcome.unwrap_or_else(|e| e.to_result()))
}

/// Aborts a helper task when the call that spawned it ends.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The tools that do blocking filesystem work.
fn dispatch_blocking(
    ctx: &Ctx,
    name: &str,
    args: JsonObject,
    ct: &CancellationToken,
) -> Option<ToolResult<CallToolResult>> {
    let compat = ctx.shared.config.anthropic_compat;
    Some(match name {
        "view" => parse(name, args).and_then(|a| view::run(ctx, a, !compat)),
        "str_replace" => parse(name, args).and_then(|a| edit::run(ctx, a)),
        "multi_edit" => parse(name, args).and_then(|a| edit::run_multi(ctx, a)),
        "undo_edit" => parse(name, args).and_then(|a| undo::run(ctx, a)),
        "create_file" => parse(name, args).and_then(|a| create::run(ctx, a)),
        "str_replace_editor" => parse(name, args).and_then(|a| editor::run(ctx, a)),
        "grep" => parse(name, args).and_then(|a| grep::run(ctx, a, ct)),
        "glob" => parse(name, args).and_then(|a| glob::run(ctx, a, compat, ct)),
        "Read" => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::read(ctx, a)),
        ),
        "Edit" => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::edit(ctx, a)),
        ),
        "MultiEdit" => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::multi_edit(ctx, a)),
        ),
        "Write" => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::write(ctx, a)),
        ),
        "NotebookEdit" => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::notebook_edit(ctx, a)),
        ),
        "Grep" => parse(name, args).and_then(|a| grep::run(ctx, a, ct)),
        "Glob" => parse(name, args).and_then(|a| glob::run(ctx, a, true, ct)),
        _ => return None,
    })
}

/// Runs an async tool body, turning a panic into a result.
pub async fn guarded<F>(tool: &str, fut: F) -> ToolResult<CallToolResult>
where
    F: std::future::Future<Output = ToolResult<CallToolResult>>,
{
    use futures::FutureExt as _;
    match std::panic::AssertUnwindSafe(fut).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(payload) => Ok(panic_result(tool, Some(payload))),
    }
}

/// The result a panicking tool call returns.
pub fn panic_result(tool: &str, payload: Option<Box<dyn std::any::Any + Send>>) -> CallToolResult {
    let detail = payload
        .as_ref()
        .and_then(|p| {
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
        })
        .unwrap_or_else(|| "unknown panic".to_string());
    tracing::error!(tool, %detail, "tool call panicked");
    CallToolResult::error(vec![ContentBlock::text(format!(
        "[INTERNAL_ERROR] the {tool} tool failed unexpectedly ({detail}). Files are written \
         atomically, so none was left half-written. This is a bug in Boris; please report it."
    ))])
}

/// Deserialises a tool's arguments; any mismatch is `[INVALID_INPUT]`.
/// The message names the argument at fault (`path: invalid type: integer `5`, expected
/// a string`), so an agent knows which one to fix.
pub fn parse<T: DeserializeOwned>(tool: &str, args: JsonObject) -> ToolResult<T> {
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ToolError::invalid(format!("invalid arguments for {tool}: {inner}"))
        } else {
            ToolError::invalid(format!("invalid arguments for {tool}: {path}: {inner}"))
        }
    })
}

pub fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

/// A tool definition from its argument type (whose doc comments become the schema's
/// descriptions).
pub fn define<T: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    let mut schema = (*rmcp::handler::server::common::schema_for_type::<T>()).clone();
    portable_schema(&mut schema);
    Tool::new(name, description, Arc::new(schema))
        .with_title(title)
        .with_annotations(annotations)
}

/// Rewrites a generated input schema into the plain shape every client reads: an
/// optional parameter is one that is not `required`, with a plain `type` — not
/// `["string", "null"]` with `default: null`, which is how schemars spells `Option<T>`
/// and which clients (the MCP Inspector among them) flag as unportable. Integer formats
/// that are not JSON Schema's (`uint64`, `int64`, `uint`) go too; `minimum` says the
/// rest. Nested object schemas (array items, sub-objects) get the same treatment. Every
/// `$ref` is replaced by the definition it names and `$defs` goes (issue 21 §4): Gemini's
/// API, Copilot CLI and opencode reject or mangle references.
pub fn portable_schema(schema: &mut JsonObject) {
    inline_references(schema);
    use serde_json::Value;
    const RUST_FORMATS: &[&str] = &[
        "uint", "uint8", "uint16", "uint32", "uint64", "int", "int8", "int16", "int32", "int64",
        "double", "float",
    ];
    fn clean(node: &mut Value) {
        let Value::Object(obj) = node else {
            return;
        };
        if let Some(Value::Array(types)) = obj.get("type") {
            let kept: Vec<Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .cloned()
                .collect();
            if kept.len() == 1 {
                obj.insert("type".into(), kept[0].clone());
            } else if kept.len() != types.len() {
                obj.insert("type".into(), Value::Array(kept));
            }
        }
        // `Option<Enum>` comes as `anyOf: [{enum…}, {type: null}]`.
        if let Some(Value::Array(any)) = obj.get("anyOf") {
            let kept: Vec<Value> = any
                .iter()
                .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
                .cloned()
                .collect();
            if kept.len() == 1 && kept.len() != any.len() {
                obj.remove("anyOf");
                if let Value::Object(inner) = &kept[0] {
                    for (k, v) in inner {
                        obj.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
        if obj.get("default") == Some(&Value::Null) {
            obj.remove("default");
        }
        if obj
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| RUST_FORMATS.contains(&f))
        {
            obj.remove("format");
        }
        for key in ["properties", "$defs", "definitions"] {
            if let Some(Value::Object(children)) = obj.get_mut(key) {
                for child in children.values_mut() {
                    clean(child);
                }
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(child) = obj.get_mut(key) {
                clean(child);
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(children)) = obj.get_mut(key) {
                for child in children {
                    clean(child);
                }
            }
        }
    }
    let mut root = Value::Object(std::mem::take(schema));
    clean(&mut root);
    if let Value::Object(obj) = root {
        *schema = obj;
    }
}

/// Replaces each `{"$ref": "#/$defs/Name"}` (or `#/definitions/Name`) by the definition,
/// recursively, and drops the definitions. A reference that would recurse more than 16
/// deep is left as it is (no tool's arguments are recursive).
fn inline_references(schema: &mut JsonObject) {
    use serde_json::Value;
    let mut defs = JsonObject::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.remove(key) {
            defs.extend(d);
        }
    }
    if defs.is_empty() {
        return;
    }
    fn resolve(node: &mut Value, defs: &JsonObject, depth: usize) {
        match node {
            Value::Object(obj) => {
                let target = obj
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| {
                        r.strip_prefix("#/$defs/")
                            .or_else(|| r.strip_prefix("#/definitions/"))
                    })
                    .and_then(|name| defs.get(name))
                    .cloned();
                if let (Some(Value::Object(def)), true) = (target, depth < 16) {
                    obj.remove("$ref");
                    // Keywords beside the reference (a description) win over the definition's.
                    for (k, v) in def {
                        obj.entry(k).or_insert(v);
                    }
                    resolve(node, defs, depth + 1);
                    return;
                }
                for child in obj.values_mut() {
                    resolve(child, defs, depth);
                }
            }
            Value::Array(items) => {
                for child in items {
                    resolve(child, defs, depth);
                }
            }
            _ => {}
        }
    }
    let mut root = Value::Object(std::mem::take(schema));
    resolve(&mut root, &defs, 0);
    if let Value::Object(obj) = root {
        *schema = obj;
    }
}

pub fn read_only(title: &str) -> ToolAnnotations {
    let mut a = ToolAnnotations::with_title(title);
    a.read_only_hint = Some(true);
    a.destructive_hint = Some(false);
    a.idempotent_hint = Some(true);
    a.open_world_hint = Some(false);
    a
}

/// A tool that runs arbitrary commands: it can do anything, anywhere.
pub fn runs_commands(title: &str) -> ToolAnnotations {
    let mut a = writes(title, false);
    a.open_world_hint = Some(true);
    a
}

pub fn writes(title: &str, idempotent: bool) -> ToolAnnotations {
    let mut a = ToolAnnotations::with_title(title);
    a.read_only_hint = Some(false);
    a.destructive_hint = Some(true);
    a.idempotent_hint = Some(idempotent);
    a.open_world_hint = Some(false);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_portable() {
        use serde_json::json;
        let mut s = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "default": null},
                "b": {"type": ["integer", "null"], "format": "uint64", "minimum": 0},
                "c": {"anyOf": [{"enum": ["x", "y"], "type": "string"}, {"type": "null"}], "description": "d"},
                "d": {"type": "array", "items": {"type": "object", "properties": {"e": {"type": ["boolean", "null"]}}}}
            },
            "required": []
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        portable_schema(&mut s);
        assert_eq!(
            serde_json::Value::Object(s),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string"},
                    "b": {"type": "integer", "minimum": 0},
                    "c": {"enum": ["x", "y"], "type": "string", "description": "d"},
                    "d": {"type": "array", "items": {"type": "object", "properties": {"e": {"type": "boolean"}}}}
                },
                "required": []
            })
        );
    }

    #[test]
    fn references_are_inlined() {
        use serde_json::json;
        let mut s = json!({
            "type": "object",
            "properties": {"edits": {"type": "array", "items": {"$ref": "#/$defs/One", "description": "one edit"}}},
            "$defs": {"One": {"type": "object", "description": "d", "properties": {"x": {"$ref": "#/$defs/X"}}}, "X": {"type": "string"}}
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        portable_schema(&mut s);
        assert_eq!(
            serde_json::Value::Object(s),
            json!({
                "type": "object",
                "properties": {"edits": {"type": "array", "items": {"type": "object", "description": "one edit", "properties": {"x": {"type": "string"}}}}}
            })
        );
    }

    /// No registered tool, in any profile, has a nullable or multi-typed parameter, or a
    /// `$ref` a client would have to resolve.
    #[test]
    fn every_tool_schema_is_plain() {
        fn walk(v: &serde_json::Value, at: &str) {
            if let Some(obj) = v.as_object() {
                assert!(!obj.get("type").is_some_and(|t| t.is_array()), "{at}: {v}");
                assert_ne!(obj.get("default"), Some(&serde_json::Value::Null), "{at}");
                for key in ["$ref", "$defs", "definitions"] {
                    assert!(!obj.contains_key(key), "{at}: {key} in {v}");
                }
                for (k, child) in obj {
                    walk(child, &format!("{at}.{k}"));
                }
            }
        }
        for tool in [
            view::tool(),
            edit::tool(),
            edit::multi_tool(),
            create::tool(),
            undo::tool(),
            editor::tool(),
            bash::tool(),
            tasks::output_tool(),
            tasks::stop_tool(),
            pipe::tool(),
            grep::tool(false),
            grep::tool(true),
            glob::tool(false),
            glob::tool(true),
        ]
        .into_iter()
        .chain(claude_code::tools())
        {
            walk(
                &serde_json::Value::Object((*tool.input_schema).clone()),
                &tool.name,
            );
        }
    }

    #[tokio::test]
    async fn a_panicking_call_becomes_an_error_result() {
        let err = tokio::task::spawn_blocking(|| panic!("boom"))
            .await
            .unwrap_err();
        let r = panic_result("view", err.try_into_panic().ok());
        assert_eq!(r.is_error, Some(true));
        let text = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(
            text.starts_with("[INTERNAL_ERROR] the view tool failed unexpectedly (boom)"),
            "{text}"
        );
        let r = guarded("bash", async { panic!("async boom") })
            .await
            .unwrap();
        let text = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.contains("(async boom)"), "{text}");
    }
}
