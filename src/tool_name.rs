//! Every tool name Boris knows, one enum and one table (issue 21 §4): the catalogue, the
//! dispatcher, `--disable-tools`, the claude-code renames and MCP task eligibility all read
//! it, so a name is spelled once. It depends on nothing else in the crate, so the
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

/// One row per tool: its name on the wire, and (for Claude Code's tools) the Boris tool
/// it stands for, which `--disable-tools` also accepts for it.
struct Row {
    name: &'static str,
    boris_twin: Option<ToolName>,
    tasks: TaskSupport,
}

/// Declares the enum and its table together, so every variant has exactly one row, at
/// its own index.
macro_rules! tools {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $twin:expr, $tasks:ident;)*) => {
        /// A tool, across every profile.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ToolName {
            $($(#[$doc])* $variant,)*
        }

        /// The table, in the enum's order (the order `--disable-tools`' error lists them).
        const TABLE: &[Row] = &[
            $(Row { name: $name, boris_twin: $twin, tasks: TaskSupport::$tasks },)*
        ];

        const ALL: &[ToolName] = &[$(ToolName::$variant,)*];
    };
}

tools! {
    /// Boris's own (default profile; `str_replace_editor` with --anthropic-compat).
    Bash = "bash", None, UnlessBackground;
    TaskOutput = "task_output", None, Never;
    TaskStop = "task_stop", None, Never;
    View = "view", None, Never;
    StrReplace = "str_replace", None, Never;
    MultiEdit = "multi_edit", None, Never;
    CreateFile = "create_file", None, Never;
    UndoEdit = "undo_edit", None, Never;
    StrReplaceEditor = "str_replace_editor", None, Never;
    Grep = "grep", None, Always;
    Glob = "glob", None, Never;
    /// Terminal sessions (issue 19 §1; default profile). A call waits up to its yield
    /// time, so it may become a task as a command may.
    TerminalStart = "terminal_start", None, Always;
    TerminalWrite = "terminal_write", None, Always;
    TerminalRead = "terminal_read", None, Always;
    TerminalResize = "terminal_resize", None, Never;
    TerminalStop = "terminal_stop", None, Never;
    /// Claude Code's (`--tool-profile claude-code`).
    CcBash = "Bash", Some(ToolName::Bash), UnlessBackground;
    CcRead = "Read", Some(ToolName::View), Never;
    CcEdit = "Edit", Some(ToolName::StrReplace), Never;
    CcMultiEdit = "MultiEdit", Some(ToolName::MultiEdit), Never;
    CcWrite = "Write", Some(ToolName::CreateFile), Never;
    CcNotebookEdit = "NotebookEdit", None, Never;
    CcGrep = "Grep", Some(ToolName::Grep), Always;
    CcGlob = "Glob", Some(ToolName::Glob), Never;
    CcTaskOutput = "TaskOutput", Some(ToolName::TaskOutput), Never;
    CcTaskStop = "TaskStop", Some(ToolName::TaskStop), Never;
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

    /// The tool named `name`, if Boris has one (names are case-sensitive: `Bash` is
    /// Claude Code's, `bash` Boris's).
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::all().find(|t| t.as_str() == name)
    }

    /// The Boris tool a Claude Code tool stands for.
    pub fn boris_twin(self) -> Option<ToolName> {
        self.row().boris_twin
    }

    /// Claude Code's tool for this Boris tool, if it has one.
    pub fn claude_code_twin(self) -> Option<ToolName> {
        ToolName::all().find(|t| t.boris_twin() == Some(self))
    }

    /// Whether this is one of the claude-code profile's tools.
    pub fn is_claude_code(self) -> bool {
        self.as_str().starts_with(|c: char| c.is_ascii_uppercase())
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
    fn names_round_trip_and_are_unique() {
        assert_eq!(ALL.len(), TABLE.len());
        let all: Vec<ToolName> = ToolName::all().collect();
        for (i, t) in all.iter().enumerate() {
            assert_eq!(*t as usize, i);
            assert_eq!(ToolName::parse(t.as_str()), Some(*t));
            assert!(!all[..i].iter().any(|o| o.as_str() == t.as_str()), "{t}");
        }
        assert_eq!(ToolName::parse("BASH"), None);
    }

    #[test]
    fn twins_go_both_ways() {
        for t in ToolName::all() {
            if let Some(b) = t.boris_twin() {
                assert!(t.is_claude_code() && !b.is_claude_code());
                assert_eq!(b.claude_code_twin(), Some(t));
                assert_eq!(t.task_support(), b.task_support(), "{t}");
            }
        }
        assert_eq!(Bash.claude_code_twin(), Some(CcBash));
        assert_eq!(UndoEdit.claude_code_twin(), None);
    }
}
