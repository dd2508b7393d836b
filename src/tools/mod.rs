//! The tools, one module each, and the table that registers them from the configuration.
//!
//! Every tool is a plain function `fn(&Ctx, Args) -> ToolResult<CallToolResult>`; the
//! server deserialises arguments here so that a wrong type or a missing field is an
//! `[INVALID_INPUT]` tool result (DESIGN §5) rather than rmcp's untagged message.

pub mod apply_patch;
pub mod bash;
pub mod claude_code;
pub mod claude_code_lsp;
pub mod code;
pub mod codex;
pub mod codex_exec;
pub mod create;
pub mod diagnostics;
pub mod edit;
pub mod editor;
pub mod gemini_cli;
pub mod glob;
pub mod grep;
pub mod insert;
pub mod listing;
pub mod navigate;
pub mod pipe;
pub mod rename;
pub mod schema;
pub mod shell;
pub mod tasks;
pub mod terminal;
pub mod undo;
pub mod view;

use crate::config::{BashProfile, Config, ToolProfile, ViewBeforeEdit};
use crate::error::{ToolError, ToolResult};
use crate::scope::{Scope, ScopedPath};
use crate::tool_name::{TaskSupport, ToolName};
use crate::workspace::Workspace;
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, ProgressToken, Tool,
};
use rmcp::{Peer, RoleServer};
pub use schema::{define, portable_schema, read_only, runs_commands, writes};
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
        let scope = Scope::new(config.allow_dirs.clone(), config.deny_patterns.clone())?;
        // Every file tool opens what it checked beneath these directories (issue 25 §2).
        crate::beneath::install(&scope, &[spill.path().to_path_buf()]);
        let tools = catalogue(&config);
        let family = config.tool_profile.family();
        let can_view = tools.iter().any(|t| {
            matches!(
                ToolName::lookup(family, &t.name),
                Some(
                    ToolName::View
                        | ToolName::StrReplaceEditor
                        | ToolName::CcRead
                        | ToolName::GmReadFile
                        | ToolName::CxReadFile
                )
            )
        });
        let require_view = match config.require_view_before_edit {
            ViewBeforeEdit::True => true,
            ViewBeforeEdit::False => false,
            // An agent that cannot view could never satisfy the rule.
            ViewBeforeEdit::Auto => can_view,
        };
        let command_env = crate::exec::command_env(&config.env);
        // A patch a killed Boris left half-applied in an allowed directory is finished
        // (or undone) before the first call (`journal`).
        for dir in scope.allow_dirs() {
            crate::journal::recover_once(dir);
        }
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
        self.refuse_other_sessions(&scoped)?;
        finish_interrupted_patches(&scoped);
        if let Some(sandbox) = &self.shared.config.sandbox
            && sandbox.policy.protect_git
            && (crate::sandbox::gitconfig::file_tools_refuse(&scoped.real, &sandbox.policy.write)
                || crate::sandbox::gitconfig::file_tools_refuse(
                    &scoped.shown,
                    &sandbox.policy.write,
                ))
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
    /// directories, this session's own command output files are readable here, wherever
    /// they live — and no other session's (issue 25, X9).
    pub fn resolve_read(&self, path: &str) -> ToolResult<ScopedPath> {
        let own = self.ws.existing_session_dir();
        let scoped = self.shared.scope.resolve_read(&self.ws.cwd(), path, own)?;
        self.refuse_other_sessions(&scoped)?;
        finish_interrupted_patches(&scoped);
        Ok(scoped)
    }

    /// The server's temporary root holds every session's command output and `TMPDIR`:
    /// a file tool sees only this session's directory in it, even where an allowed
    /// directory (`--allow-dir /tmp`) holds the root (issue 25, X9).
    fn refuse_other_sessions(&self, scoped: &ScopedPath) -> ToolResult<()> {
        let root = self.shared.spill.path();
        let own = self.ws.existing_session_dir();
        if !scoped.real.starts_with(root) || own.is_some_and(|o| scoped.real.starts_with(o)) {
            return Ok(());
        }
        Err(crate::error::ToolError::new(
            crate::error::ErrorCode::AccessDenied,
            format!(
                "{} is in Boris's temporary directory, which holds other sessions' command                  output; only this session's own files there are readable{}",
                scoped.shown.display(),
                own.map(|o| format!(" ({})", o.display()))
                    .unwrap_or_default()
            ),
        ))
    }

    /// Whether a walk (grep, glob, listings) may enter `dir`: not the server's temporary
    /// root, except this session's own directory in it.
    pub fn walk_may_enter(&self, dir: &std::path::Path) -> bool {
        let root = self.shared.spill.path();
        if !dir.starts_with(root) {
            return true;
        }
        match self.ws.existing_session_dir() {
            Some(own) => dir.starts_with(own) || own.starts_with(dir),
            None => false,
        }
    }

    /// Where a command output file named `name` goes: this session's directory, which
    /// its commands may read (with the sandbox on) and no other session's can.
    pub fn spill_file(&self, name: &str) -> std::path::PathBuf {
        // Always this session's directory: the file tools read only their own session's
        // output (issue 25, X9), with the sandbox on or off.
        self.ws.session_dir(&self.shared.spill).join(name)
    }

    pub fn max_file_size(&self) -> u64 {
        self.shared.config.max_file_size
    }
}

/// The first time this process touches a directory, what a killed Boris left of a
/// multi-file patch there is finished or undone (`journal`), so no tool sees half of it.
fn finish_interrupted_patches(path: &ScopedPath) {
    if let Some(dir) = path.real.parent() {
        crate::journal::recover_once(dir);
    }
}

/// The tools to register, by name, sorted as `tools/list` shows them.
fn catalogue(config: &Config) -> Vec<Tool> {
    let mut tools = profile_catalogue(config);
    tools.iter_mut().for_each(schema::trim_for_model);
    tools
}

/// The profile's tools, before `trim_for_model`.
fn profile_catalogue(config: &Config) -> Vec<Tool> {
    match config.tool_profile {
        ToolProfile::ClaudeCode => return claude_code_catalogue(config),
        ToolProfile::GeminiCli => {
            let mut tools = gemini_cli::tools();
            tools.push(apply_patch::tool());
            keep_enabled(config, Some(ToolName::GmShell), &mut tools);
            return tools;
        }
        ToolProfile::Codex => {
            let mut tools = codex::tools();
            tools.extend(codex_exec::tools());
            tools.push(apply_patch::codex_tool());
            keep_enabled(config, Some(ToolName::CxExecCommand), &mut tools);
            return tools;
        }
        ToolProfile::Default | ToolProfile::AnthropicCompat => {}
    }
    let mut tools = if config.anthropic_compat() {
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
    // The terminal tools come and go together, beside a shell (see keep_enabled).
    let terminals = !config.anthropic_compat()
        && config.tool_enabled(ToolName::Bash)
        && config.tool_enabled(ToolName::TerminalStart)
        && config.group_selected(ToolName::TerminalStart);
    match config.bash_profile {
        BashProfile::Boris => tools.extend([
            bash::tool(),
            tasks::output_tool_with(terminals),
            tasks::stop_tool(),
        ]),
        BashProfile::Pipe => tools.push(pipe::tool()),
    }
    if !config.anthropic_compat() {
        tools.extend(terminal::tools());
    }
    tools.extend([
        grep::tool(config.anthropic_compat()),
        glob::tool(config.anthropic_compat()),
        apply_patch::tool(),
    ]);
    tools.extend(code_tools());
    keep_enabled(config, Some(ToolName::Bash), &mut tools);
    tools
}

/// Drops the tools `--disable-tools` names, and the task tools when the shell is off
/// (they only make sense next to it); sorts the rest by name and marks those whose calls
/// may become MCP tasks.
fn keep_enabled(config: &Config, shell: Option<ToolName>, tools: &mut Vec<Tool>) {
    let shell_enabled = shell.is_some_and(|s| config.tool_enabled(s));
    // The task tools read the shell's background commands: only beside a listed shell.
    let shell_listed = shell_enabled && shell.is_some_and(|s| config.group_selected(s));
    let family = config.tool_profile.family();
    // The terminal tools run commands too: a server without a shell has none, and they
    // come and go as a family with terminal_start.
    let terminals_enabled = shell_enabled && config.tool_enabled(ToolName::TerminalStart);
    tools.retain(|t| match ToolName::lookup(family, &t.name) {
        Some(name) => {
            config.tool_enabled(name)
                && config.group_selected(name)
                && (shell_listed || !name.is_task_tool())
                && (terminals_enabled || !name.is_terminal_tool())
                && (shell_enabled || !name.is_codex_exec_tool())
        }
        None => true,
    });
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    mark_task_tools(config, tools);
}

/// Marks the tools whose calls may become MCP tasks.
fn mark_task_tools(config: &Config, tools: &mut [Tool]) {
    if config.task_after.is_some() {
        // The tasks extension has no per-tool field; say which tools may answer with a
        // task (for clients that declare the extension), in the `_meta` of each.
        for tool in tools.iter_mut() {
            let args = JsonObject::new();
            if may_become_task(config, &tool.name, &args) {
                let mut meta = rmcp::model::MetaObject::default();
                meta.0.insert(
                    TASK_SUPPORT_META_KEY.into(),
                    serde_json::Value::String("optional".into()),
                );
                tool.meta = Some(meta);
            }
        }
    }
}

/// The tool `_meta` key that marks a tool whose calls may become MCP tasks.
pub const TASK_SUPPORT_META_KEY: &str = "boris/taskSupport";

/// Whether a call of `tool` with `args` may become an MCP task: commands and searches,
/// which can run for minutes; not edits or views, which are quick and whose effect the
/// agent should see at once. A `run_in_background` call already answers at once (the pipe
/// profile's bash has no background).
pub fn may_become_task(config: &Config, tool: &str, args: &JsonObject) -> bool {
    let Some(tool) = ToolName::lookup(config.tool_profile.family(), tool) else {
        return false;
    };
    let profile = config.bash_profile;
    match tool.task_support() {
        TaskSupport::Never => false,
        TaskSupport::Always => true,
        TaskSupport::UnlessBackground => {
            (tool == ToolName::Bash && profile == BashProfile::Pipe)
                || args.get("run_in_background").and_then(|v| v.as_bool()) != Some(true)
        }
    }
}

/// What `tool` (a Boris tool) is named in this server's profile, for notices that tell
/// the model which tool to call next.
pub fn tool_name(config: &Config, tool: ToolName) -> &'static str {
    tool.twin_in(config.tool_profile.family())
        .unwrap_or(tool)
        .as_str()
}

/// The code-intelligence tools (issue 20), in Boris's own profile (claude-code has
/// Claude Code's `LSP` instead; gemini-cli and codex keep their clients' tool sets).
fn code_tools() -> Vec<Tool> {
    vec![
        diagnostics::tool(),
        navigate::definition_tool(),
        navigate::references_tool(),
        navigate::hover_tool(),
        navigate::symbols_tool(),
        rename::tool(),
        diagnostics::servers_tool(),
    ]
}

/// The claude-code profile's tools, by the same rules: `--disable-tools` (by either name,
/// `Read` or `view`), the task tools only beside Bash, sorted by name.
fn claude_code_catalogue(config: &Config) -> Vec<Tool> {
    let mut tools = claude_code::tools();
    tools.push(claude_code_lsp::tool());
    tools.push(apply_patch::tool());
    keep_enabled(config, Some(ToolName::CcBash), &mut tools);
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
    let tool = ToolName::lookup(ctx.shared.config.tool_profile.family(), name)?;
    // The call stops on its own cancellation or on server shutdown, whichever comes
    // first.
    let request_ct = std::mem::replace(&mut call.ct, crate::exec::shutdown_token().child_token());
    let linked = call.ct.clone();
    let link = tokio::spawn(async move {
        request_ct.cancelled().await;
        linked.cancel();
    });
    let _unlink = AbortOnDrop(link.abort_handle());
    let outcome = match tool {
        ToolName::Bash => match ctx.shared.config.bash_profile {
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
        ToolName::TaskOutput | ToolName::CcTaskOutput => {
            guarded(name, async { tasks::output(ctx, parse(name, args)?).await }).await
        }
        ToolName::TaskStop | ToolName::CcTaskStop => {
            guarded(name, async { tasks::stop(ctx, parse(name, args)?).await }).await
        }
        ToolName::CcBash => {
            guarded(name, async {
                let args = parse(name, args)?;
                bash::run(ctx, args, &call).await
            })
            .await
        }
        ToolName::GmShell => {
            guarded(name, async {
                let args = parse(name, args)?;
                gemini_cli::in_gemini_words(gemini_cli::shell::run(ctx, args, &call).await)
            })
            .await
        }
        ToolName::CxExecCommand => {
            guarded(name, async {
                let args = parse(name, args)?;
                codex::in_codex_words(codex_exec::exec_command(ctx, args, &call).await)
            })
            .await
        }
        ToolName::CxWriteStdin => {
            guarded(name, async {
                let args = parse(name, args)?;
                codex::in_codex_words(codex_exec::write_stdin(ctx, args, &call).await)
            })
            .await
        }
        ToolName::TerminalStart => {
            guarded(name, async {
                terminal::start(ctx, parse(name, args)?, &call).await
            })
            .await
        }
        ToolName::TerminalWrite => {
            guarded(name, async {
                terminal::write(ctx, parse(name, args)?, &call).await
            })
            .await
        }
        ToolName::TerminalRead => {
            guarded(name, async {
                terminal::read(ctx, parse(name, args)?, &call).await
            })
            .await
        }
        ToolName::TerminalResize => {
            guarded(name, async {
                terminal::resize(ctx, parse(name, args)?, &call).await
            })
            .await
        }
        ToolName::TerminalStop => {
            guarded(name, async {
                terminal::stop(ctx, parse(name, args)?).await
            })
            .await
        }
        _ => {
            // Blocking filesystem work stays off the async workers; a panic surfaces as
            // a JoinError.
            let (ctx, ct) = (ctx.clone(), call.ct.clone());
            match tokio::task::spawn_blocking(move || dispatch_blocking(&ctx, tool, args, &ct))
                .await
            {
                Ok(outcome) => outcome,
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
    tool: ToolName,
    args: JsonObject,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    let compat = ctx.shared.config.anthropic_compat();
    let name = tool.as_str();
    match tool {
        ToolName::View => {
            let svg = if compat {
                view::Svg::AsText
            } else {
                view::Svg::AsImage
            };
            parse(name, args).and_then(|a| view::run(ctx, a, svg))
        }
        ToolName::StrReplace => parse(name, args).and_then(|a| edit::run(ctx, a)),
        ToolName::MultiEdit => parse(name, args).and_then(|a| edit::run_multi(ctx, a)),
        ToolName::UndoEdit => parse(name, args).and_then(|a| undo::run(ctx, a)),
        ToolName::CreateFile => parse(name, args).and_then(|a| create::run(ctx, a)),
        ToolName::ApplyPatch => {
            let result = parse(name, args).and_then(|a| apply_patch::run(ctx, a));
            // "Read it", not "view it", where Read (or read_file) is the view; only these
            // errors, which quote no file content.
            let rephrase: fn(&str) -> String = match ctx.shared.config.tool_profile {
                ToolProfile::ClaudeCode => claude_code::rephrase,
                ToolProfile::GeminiCli => gemini_cli::rephrase,
                _ => return result,
            };
            result.map_err(|e| match e.code {
                crate::error::ErrorCode::FileNotViewed | crate::error::ErrorCode::FileChanged => {
                    e.map_message(rephrase)
                }
                _ => e,
            })
        }
        ToolName::StrReplaceEditor => parse(name, args).and_then(|a| editor::run(ctx, a)),
        ToolName::Grep | ToolName::CcGrep => parse(name, args).and_then(|a| grep::run(ctx, a, ct)),
        ToolName::Glob => parse(name, args).and_then(|a| glob::run(ctx, a, compat, ct)),
        ToolName::CcGlob => parse(name, args).and_then(|a| glob::run(ctx, a, true, ct)),
        ToolName::CcRead => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::read(ctx, a)),
        ),
        ToolName::CcEdit => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::edit(ctx, a)),
        ),
        ToolName::CcMultiEdit => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::multi_edit(ctx, a)),
        ),
        ToolName::CcWrite => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::write(ctx, a)),
        ),
        ToolName::CcNotebookEdit => claude_code::in_claude_code_words(
            parse(name, args).and_then(|a| claude_code::notebook_edit(ctx, a)),
        ),
        ToolName::GmReadFile => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::files::read_file(ctx, a)),
        ),
        ToolName::GmReadManyFiles => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::files::read_many_files(ctx, a, ct)),
        ),
        ToolName::GmListDirectory => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::files::list_directory(ctx, a)),
        ),
        ToolName::GmWriteFile => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::files::write_file(ctx, a)),
        ),
        ToolName::GmReplace => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::files::replace(ctx, a)),
        ),
        ToolName::GmGlob => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::search::glob(ctx, a, ct)),
        ),
        ToolName::GmGrep => gemini_cli::in_gemini_words(
            parse(name, args).and_then(|a| gemini_cli::search::grep_search(ctx, a, ct)),
        ),
        ToolName::CxReadFile => {
            codex::in_codex_words(parse(name, args).and_then(|a| codex::read_file(ctx, a)))
        }
        ToolName::CxListDir => {
            codex::in_codex_words(parse(name, args).and_then(|a| codex::list_dir(ctx, a)))
        }
        ToolName::CxApplyPatch => {
            codex::in_codex_words(parse(name, args).and_then(|a| apply_patch::run_codex(ctx, a)))
        }
        ToolName::CxGrepFiles => {
            codex::in_codex_words(parse(name, args).and_then(|a| codex::grep_files(ctx, a, ct)))
        }
        ToolName::Diagnostics => parse(name, args).and_then(|a| diagnostics::run(ctx, a, ct)),
        ToolName::Definition => parse(name, args).and_then(|a| navigate::definition(ctx, a, ct)),
        ToolName::References => parse(name, args).and_then(|a| navigate::references(ctx, a, ct)),
        ToolName::Hover => parse(name, args).and_then(|a| navigate::hover(ctx, a, ct)),
        ToolName::Symbols => parse(name, args).and_then(|a| navigate::symbols(ctx, a, ct)),
        ToolName::Rename => parse(name, args).and_then(|a| rename::run(ctx, a, ct)),
        ToolName::LanguageServers => parse(name, args).and_then(|a| diagnostics::servers(ctx, a)),
        ToolName::CcLsp => parse(name, args).and_then(|a| claude_code_lsp::run(ctx, a, ct)),
        // The async tools are dispatched before this is reached.
        ToolName::Bash
        | ToolName::CcBash
        | ToolName::GmShell
        | ToolName::TaskOutput
        | ToolName::CcTaskOutput
        | ToolName::TaskStop
        | ToolName::CcTaskStop
        | ToolName::TerminalStart
        | ToolName::TerminalWrite
        | ToolName::TerminalRead
        | ToolName::TerminalResize
        | ToolName::TerminalStop
        | ToolName::CxExecCommand
        | ToolName::CxWriteStdin => Err(ToolError::new(
            crate::error::ErrorCode::Internal,
            format!("{name} is not a blocking tool"),
        )),
    }
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
    // A library's panic message may quote an argument whole (globset quotes the regex it
    // built from a pattern): cut it (issue 28 §7).
    let detail = crate::text::quote::cut_long_quotes(&detail);
    let detail =
        crate::text::quote::head_with_ellipsis(&detail, 4 * crate::text::quote::QUOTE_MAX_BYTES);
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
        // serde quotes the offending value whole: cut it (issue 28 §7).
        let inner = crate::text::quote::cut_long_quotes(&e.into_inner().to_string());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: serde_json::Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn which_calls_may_become_tasks() {
        use clap::Parser as _;
        use serde_json::json;
        let config = |profile: &str, bash: &str| {
            crate::config::Cli::parse_from([
                "boris",
                "--tool-profile",
                profile,
                "--bash-profile",
                bash,
                "--workdir",
                env!("CARGO_MANIFEST_DIR"),
            ])
            .into_config(|_| None)
            .expect("a valid configuration")
        };
        let b = &config("default", "boris");
        let pipe = &config("default", "pipe");
        let cc = &config("claude-code", "boris");
        let gm = &config("gemini-cli", "boris");
        let cx = &config("codex", "boris");
        assert!(may_become_task(b, "bash", &obj(json!({"command": "make"}))));
        assert!(!may_become_task(
            b,
            "bash",
            &obj(json!({"command": "make", "run_in_background": true}))
        ));
        assert!(may_become_task(
            pipe,
            "bash",
            &obj(json!({"command": "make", "run_in_background": true}))
        ));
        assert!(may_become_task(b, "grep", &obj(json!({"pattern": "x"}))));
        assert!(may_become_task(cc, "Grep", &obj(json!({"pattern": "x"}))));
        assert!(!may_become_task(
            cc,
            "Bash",
            &obj(json!({"command": "make", "run_in_background": true}))
        ));
        // A name belongs to its profile: Claude Code's Grep is not a default-profile tool.
        assert!(!may_become_task(b, "Grep", &obj(json!({"pattern": "x"}))));
        assert!(may_become_task(
            gm,
            "run_shell_command",
            &obj(json!({"command": "make"}))
        ));
        assert!(may_become_task(
            gm,
            "grep_search",
            &obj(json!({"pattern": "x"}))
        ));
        assert!(may_become_task(
            cx,
            "grep_files",
            &obj(json!({"pattern": "x"}))
        ));
        assert!(!may_become_task(gm, "glob", &obj(json!({"pattern": "x"}))));
        assert!(!may_become_task(b, "frobnicate", &obj(json!({}))));
        for quick in ["view", "str_replace", "create_file", "glob", "task_output"] {
            assert!(!may_become_task(b, quick, &obj(json!({}))), "{quick}");
        }
        assert!(!may_become_task(cc, "Read", &obj(json!({}))));
        for quick in ["read_file", "replace", "write_file", "list_directory"] {
            assert!(!may_become_task(gm, quick, &obj(json!({}))), "{quick}");
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
