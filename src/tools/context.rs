//! What a tool call works with: the server's shared state ([`Shared`]), one call's view of
//! it ([`Ctx`]: the shared rules plus the session's workspace, and the path checks every
//! file tool goes through), and what a call carries besides its arguments ([`Call`]).
//! Every tool imports these; this module imports no tool.

use crate::config::Config;
use crate::error::ToolResult;
use crate::scope::{Scope, ScopedPath};
use crate::tool_name::ToolName;
use crate::workspace::Workspace;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, Tool};
use rmcp::{Peer, RoleServer};
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

/// What `tool` (a Boris tool) is named in this server's profile, for notices that tell
/// the model which tool to call next.
pub fn tool_name(config: &Config, tool: ToolName) -> &'static str {
    tool.twin_in(config.tool_profile.family())
        .unwrap_or(tool)
        .as_str()
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

pub fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}
