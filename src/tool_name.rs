//! Every tool name Boris knows, one enum and one table (issue 21 §4): the catalogue, the
//! dispatcher, `--disable-tools`, the profiles' renames and MCP task eligibility all read
//! it, so a name is spelled once. A name is unique within its family (the tool profile
//! that offers it), not across families: Gemini CLI and Codex both have a `read_file`,
//! and Gemini CLI a `glob` of its own. It depends on nothing else in the crate, so the
//! configuration and the tools can both use it.

use std::fmt;

/// Which calls of a tool may become an MCP task (see `mcp_tasks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    /// Quick calls whose effect the agent should see at once: edits, views.
    Never,
    /// Searches, which can run for minutes.
    Always,
    /// A command, unless it asked to run in the background (it answers at once then).
    UnlessBackground,
}

/// Whose tool contract a tool belongs to: the tool profile that offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Boris's own tools (the default profile and `--anthropic-compat`).
    Boris,
    /// `--tool-profile claude-code`.
    ClaudeCode,
    /// `--tool-profile gemini-cli`.
    GeminiCli,
    /// `--tool-profile codex`.
    Codex,
}

/// The groups `--tools` selects (issue 28 §6), so a user can serve fewer tools and a
/// model read fewer descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ToolGroup {
    /// Read, edit, write, search, and the profile's shell.
    Core,
    /// `apply_patch`.
    Patch,
    /// The terminal sessions (`terminal_*`; default profile).
    Terminal,
    /// Code intelligence from language servers (`diagnostics`, `definition`, …, `LSP`).
    Code,
    /// The shell's background tasks (`task_output`, `task_stop`; beside the shell only).
    Tasks,
}

impl ToolGroup {
    /// Every group: `--tools`' default.
    pub const ALL: [ToolGroup; 5] = [
        ToolGroup::Core,
        ToolGroup::Patch,
        ToolGroup::Terminal,
        ToolGroup::Code,
        ToolGroup::Tasks,
    ];
}

/// One row per tool: its name on the wire, its family, and (for another contract's
/// tools) the Boris tool it stands for, which `--disable-tools` also accepts for it.
struct Row {
    name: &'static str,
    family: Family,
    boris_twin: Option<ToolName>,
    tasks: TaskSupport,
}

/// Declares the enum and its table together, so every variant has exactly one row, at
/// its own index.
macro_rules! tools {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $family:ident, $twin:expr, $tasks:ident;)*) => {
        /// A tool, across every profile.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ToolName {
            $($(#[$doc])* $variant,)*
        }

        /// The table, in the enum's order (the order `--disable-tools`' error lists them).
        const TABLE: &[Row] = &[
            $(Row { name: $name, family: Family::$family, boris_twin: $twin, tasks: TaskSupport::$tasks },)*
        ];

        const ALL: &[ToolName] = &[$(ToolName::$variant,)*];
    };
}

tools! {
    /// Boris's own (default profile; `str_replace_editor` with --anthropic-compat).
    Bash = "bash", Boris, None, UnlessBackground;
    TaskOutput = "task_output", Boris, None, Never;
    TaskStop = "task_stop", Boris, None, Never;
    View = "view", Boris, None, Never;
    StrReplace = "str_replace", Boris, None, Never;
    MultiEdit = "multi_edit", Boris, None, Never;
    CreateFile = "create_file", Boris, None, Never;
    UndoEdit = "undo_edit", Boris, None, Never;
    StrReplaceEditor = "str_replace_editor", Boris, None, Never;
    Grep = "grep", Boris, None, Always;
    Glob = "glob", Boris, None, Never;
    /// Terminal sessions (issue 19 §1; default profile). A call waits up to its yield
    /// time, so it may become a task as a command may.
    TerminalStart = "terminal_start", Boris, None, Always;
    TerminalWrite = "terminal_write", Boris, None, Always;
    TerminalRead = "terminal_read", Boris, None, Always;
    TerminalResize = "terminal_resize", Boris, None, Never;
    TerminalStop = "terminal_stop", Boris, None, Never;
    /// Code intelligence from language servers (issue 20).
    Diagnostics = "diagnostics", Boris, None, Never;
    Definition = "definition", Boris, None, Never;
    References = "references", Boris, None, Never;
    Hover = "hover", Boris, None, Never;
    Symbols = "symbols", Boris, None, Never;
    Rename = "rename", Boris, None, Never;
    LanguageServers = "language_servers", Boris, None, Never;
    /// Every profile's (issue 19 §2).
    ApplyPatch = "apply_patch", Boris, None, Never;
    /// Claude Code's (`--tool-profile claude-code`).
    CcBash = "Bash", ClaudeCode, Some(ToolName::Bash), UnlessBackground;
    CcRead = "Read", ClaudeCode, Some(ToolName::View), Never;
    CcEdit = "Edit", ClaudeCode, Some(ToolName::StrReplace), Never;
    CcMultiEdit = "MultiEdit", ClaudeCode, Some(ToolName::MultiEdit), Never;
    CcWrite = "Write", ClaudeCode, Some(ToolName::CreateFile), Never;
    CcNotebookEdit = "NotebookEdit", ClaudeCode, None, Never;
    CcGrep = "Grep", ClaudeCode, Some(ToolName::Grep), Always;
    CcGlob = "Glob", ClaudeCode, Some(ToolName::Glob), Never;
    CcTaskOutput = "TaskOutput", ClaudeCode, Some(ToolName::TaskOutput), Never;
    CcTaskStop = "TaskStop", ClaudeCode, Some(ToolName::TaskStop), Never;
    CcLsp = "LSP", ClaudeCode, None, Never;
    /// Gemini CLI's (`--tool-profile gemini-cli`). `read_file` comes first of the three
    /// views: it is the name notices give `view` in this profile.
    GmReadFile = "read_file", GeminiCli, Some(ToolName::View), Never;
    GmReadManyFiles = "read_many_files", GeminiCli, Some(ToolName::View), Never;
    GmListDirectory = "list_directory", GeminiCli, Some(ToolName::View), Never;
    GmWriteFile = "write_file", GeminiCli, Some(ToolName::CreateFile), Never;
    GmReplace = "replace", GeminiCli, Some(ToolName::StrReplace), Never;
    GmShell = "run_shell_command", GeminiCli, Some(ToolName::Bash), UnlessBackground;
    GmGlob = "glob", GeminiCli, Some(ToolName::Glob), Never;
    GmGrep = "grep_search", GeminiCli, Some(ToolName::Grep), Always;
    /// Codex's (`--tool-profile codex`): its read, list and search tools, its command
    /// sessions (`exec_command` is the profile's shell: `--no-bash` and `--disable-tools
    /// bash` remove it, and `write_stdin` with it) and its `apply_patch`.
    CxReadFile = "read_file", Codex, Some(ToolName::View), Never;
    CxListDir = "list_dir", Codex, Some(ToolName::View), Never;
    CxGrepFiles = "grep_files", Codex, Some(ToolName::Grep), Always;
    CxExecCommand = "exec_command", Codex, Some(ToolName::Bash), UnlessBackground;
    CxWriteStdin = "write_stdin", Codex, None, Always;
    CxApplyPatch = "apply_patch", Codex, Some(ToolName::ApplyPatch), Never;
}

impl ToolName {
    fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    /// Every tool, in the table's order.
    pub fn all() -> impl Iterator<Item = ToolName> {
        ALL.iter().copied()
    }

    /// Its name on the wire.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The contract (tool profile) the tool belongs to.
    pub fn family(self) -> Family {
        self.row().family
    }

    /// The tool of `family` named `name` (names are case-sensitive: `Bash` is Claude
    /// Code's, `bash` Boris's; `read_file` is Gemini CLI's or Codex's by family).
    pub fn parse_in(family: Family, name: &str) -> Option<ToolName> {
        ToolName::all().find(|t| t.family() == family && t.as_str() == name)
    }

    /// The tool named `name` in a server of `family`'s profile: the family's own, else
    /// Boris's tool of that name (some Boris tools, such as `apply_patch`, are offered
    /// beside every profile's own; whether this server registers it is the caller's
    /// question).
    pub fn lookup(family: Family, name: &str) -> Option<ToolName> {
        ToolName::parse_in(family, name).or_else(|| ToolName::parse_in(Family::Boris, name))
    }

    /// The first tool of any family named `name`, Boris's own first.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::all().find(|t| t.as_str() == name)
    }

    /// Every distinct tool name, in the table's order (for `--disable-tools`' error).
    pub fn names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for t in ToolName::all() {
            if !names.contains(&t.as_str()) {
                names.push(t.as_str());
            }
        }
        names
    }

    /// The Boris tool another contract's tool stands for.
    pub fn boris_twin(self) -> Option<ToolName> {
        self.row().boris_twin
    }

    /// The tool of `family` that stands for this Boris tool (the first, where several
    /// do), or the tool itself in Boris's family.
    pub fn twin_in(self, family: Family) -> Option<ToolName> {
        if family == Family::Boris {
            return Some(self);
        }
        ToolName::all().find(|t| t.family() == family && t.boris_twin() == Some(self))
    }

    pub fn task_support(self) -> TaskSupport {
        self.row().tasks
    }

    /// The terminal session tools: registered together, beside a shell.
    pub fn is_terminal_tool(self) -> bool {
        use ToolName::*;
        matches!(
            self,
            TerminalStart | TerminalWrite | TerminalRead | TerminalResize | TerminalStop
        )
    }

    /// Codex's command session tools: registered together, beside a shell.
    pub fn is_codex_exec_tool(self) -> bool {
        matches!(self, ToolName::CxExecCommand | ToolName::CxWriteStdin)
    }

    /// The `--tools` group the tool belongs to.
    pub fn group(self) -> ToolGroup {
        use ToolName::*;
        match self {
            Bash | View | StrReplace | MultiEdit | CreateFile | UndoEdit | StrReplaceEditor
            | Grep | Glob => ToolGroup::Core,
            CcBash | CcRead | CcEdit | CcMultiEdit | CcWrite | CcNotebookEdit | CcGrep | CcGlob => {
                ToolGroup::Core
            }
            GmReadFile | GmReadManyFiles | GmListDirectory | GmWriteFile | GmReplace | GmShell
            | GmGlob | GmGrep => ToolGroup::Core,
            CxReadFile | CxListDir | CxGrepFiles | CxExecCommand | CxWriteStdin => ToolGroup::Core,
            ApplyPatch | CxApplyPatch => ToolGroup::Patch,
            TerminalStart | TerminalWrite | TerminalRead | TerminalResize | TerminalStop => {
                ToolGroup::Terminal
            }
            Diagnostics | Definition | References | Hover | Symbols | Rename | LanguageServers
            | CcLsp => ToolGroup::Code,
            TaskOutput | TaskStop | CcTaskOutput | CcTaskStop => ToolGroup::Tasks,
        }
    }

    /// A code-intelligence tool that can only answer `[LSP_UNAVAILABLE]` without a
    /// language server: listed only while one is installed (issue 28 §6).
    /// `language_servers` is not one: it tells the model what to install.
    pub fn needs_language_server(self) -> bool {
        self.group() == ToolGroup::Code && self != ToolName::LanguageServers
    }

    /// A tool that runs commands, which may install (or remove) a language server.
    pub fn runs_commands(self) -> bool {
        use ToolName::*;
        matches!(
            self,
            Bash | CcBash | GmShell | CxExecCommand | CxWriteStdin | TerminalStart | TerminalWrite
        )
    }

    /// The task tools make sense only beside a shell.
    pub fn is_task_tool(self) -> bool {
        use ToolName::*;
        matches!(self, TaskOutput | TaskStop | CcTaskOutput | CcTaskStop)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ToolName::*;

    #[test]
    fn names_round_trip_and_are_unique_per_family() {
        assert_eq!(ALL.len(), TABLE.len());
        let all: Vec<ToolName> = ToolName::all().collect();
        for (i, t) in all.iter().enumerate() {
            assert_eq!(*t as usize, i);
            assert_eq!(ToolName::parse_in(t.family(), t.as_str()), Some(*t));
            assert!(
                !all[..i]
                    .iter()
                    .any(|o| o.family() == t.family() && o.as_str() == t.as_str()),
                "{t}"
            );
        }
        assert_eq!(ToolName::parse("BASH"), None);
        assert_eq!(ToolName::parse("glob"), Some(Glob));
        assert_eq!(ToolName::parse_in(Family::GeminiCli, "glob"), Some(GmGlob));
        assert_eq!(
            ToolName::parse_in(Family::Codex, "read_file"),
            Some(CxReadFile)
        );
        assert_eq!(ToolName::parse_in(Family::Codex, "replace"), None);
        let names = ToolName::names();
        assert_eq!(names.iter().filter(|n| **n == "read_file").count(), 1);
    }

    #[test]
    fn twins_go_both_ways() {
        for t in ToolName::all() {
            if let Some(b) = t.boris_twin() {
                assert!(t.family() != Family::Boris && b.family() == Family::Boris);
                let back = b.twin_in(t.family()).unwrap();
                assert_eq!(back.boris_twin(), Some(b));
                assert_eq!(t.task_support(), b.task_support(), "{t}");
            }
        }
        assert_eq!(Bash.twin_in(Family::ClaudeCode), Some(CcBash));
        assert_eq!(Bash.twin_in(Family::GeminiCli), Some(GmShell));
        assert_eq!(View.twin_in(Family::GeminiCli), Some(GmReadFile));
        assert_eq!(Bash.twin_in(Family::Codex), Some(CxExecCommand));
        assert_eq!(ApplyPatch.twin_in(Family::Codex), Some(CxApplyPatch));
        assert_eq!(
            ToolName::lookup(Family::Codex, "apply_patch"),
            Some(CxApplyPatch)
        );
        assert_eq!(UndoEdit.twin_in(Family::ClaudeCode), None);
        assert_eq!(UndoEdit.twin_in(Family::Boris), Some(UndoEdit));
    }
}
