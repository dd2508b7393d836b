//! What a server lists, read off the tool table ([`super::registry`]): each profile's
//! tools, less what `--disable-tools`, `--no-bash` and `--tools` take away, sorted by
//! name; the server's shared state built around that list; and the `--tool-profile`
//! help, which names each profile's tools from the same table so it cannot go stale.

use super::context::Shared;
use super::engine::schema;
use super::registry::row;
use crate::config::{BashProfile, Config, ToolProfile, ViewBeforeEdit};
use crate::tool_name::{Family, TaskSupport, ToolName};
use clap::ValueEnum;
use rmcp::model::{JsonObject, Tool};

/// The tools to register, sorted as `tools/list` shows them.
pub fn catalogue(config: &Config) -> Vec<Tool> {
    let mut tools: Vec<Tool> = ToolName::all()
        .filter(|&t| listed(config, t))
        .map(|t| (row(t).schema)(config))
        .collect();
    tools.iter_mut().for_each(schema::trim_for_model);
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    mark_task_tools(config, &mut tools);
    tools
}

/// Whether this server lists `tool`: its profile has it, `--disable-tools` (by either
/// name, `Read` or `view`) and `--tools` leave it, and the tools that only make sense
/// beside the shell (the task tools, the terminals, Codex's command sessions) have one.
fn listed(config: &Config, tool: ToolName) -> bool {
    if !row(tool).profiles.contains(&config.tool_profile) {
        return false;
    }
    let family = config.tool_profile.family();
    let shell = ToolName::Bash.twin_in(family).unwrap_or(ToolName::Bash);
    let shell_enabled = config.tool_enabled(shell);
    // The task tools read the shell's background commands: only beside a listed shell,
    // and Boris's only beside Boris's own bash (the pipe profile's has no background).
    let shell_listed = shell_enabled && config.group_selected(shell);
    let pipe_tasks = family == Family::Boris && config.bash_profile == BashProfile::Pipe;
    // The terminal tools run commands too: a server without a shell has none, and they
    // come and go as a family with terminal_start.
    let terminals_enabled = shell_enabled && config.tool_enabled(ToolName::TerminalStart);
    config.tool_enabled(tool)
        && config.group_selected(tool)
        && ((shell_listed && !pipe_tasks) || !tool.is_task_tool())
        && (terminals_enabled || !tool.is_terminal_tool())
        && (shell_enabled || !tool.is_codex_exec_tool())
}

/// The tools `profile` can list with nothing disabled (`--bash-profile boris`), sorted
/// as `tools/list` shows them; a missing language server is not subtracted.
pub fn profile_tools(profile: ToolProfile) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = ToolName::all()
        .filter(|&t| row(t).profiles.contains(&profile))
        .map(ToolName::as_str)
        .collect();
    names.sort_unstable();
    names
}

/// The `--tool-profile` values, each with its tool list generated from the table. It is
/// implemented here, beside the table, so the configuration needs nothing of the tools.
impl ValueEnum for ToolProfile {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            ToolProfile::Default,
            ToolProfile::AnthropicCompat,
            ToolProfile::ClaudeCode,
            ToolProfile::GeminiCli,
            ToolProfile::Codex,
        ]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let names = profile_tools(*self);
        let help = format!("{} ({}): {}", self.summary(), names.len(), names.join(", "));
        Some(clap::builder::PossibleValue::new(self.name()).help(help))
    }
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

impl Shared {
    /// The server's shared state, its tools listed from the table. (Built here rather than
    /// beside [`Shared`] so the context, which every tool imports, imports no tool.)
    pub fn new(config: Config) -> Result<Self, String> {
        let spill = crate::exec::SpillDir::create()
            .map_err(|e| format!("cannot create a directory for command output: {e}"))?;
        let scope =
            crate::scope::Scope::new(config.allow_dirs.clone(), config.deny_patterns.clone())?;
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
}
