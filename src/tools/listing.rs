//! What `tools/list` shows a session (issue 28 §6): the registered tools, less the
//! code-intelligence tools that can only answer `[LSP_UNAVAILABLE]` while no configured
//! language server is installed. Those stay registered (a call still answers, saying what
//! to install); they are only not listed, so a model does not pay to read them. Whether a
//! server is installed is checked at `initialize`, at each `tools/list` and after each
//! command (which may have installed one); a change is announced with
//! `notifications/tools/list_changed`.

use super::Shared;
use crate::config::Config;
use crate::tool_name::ToolName;
use rmcp::model::Tool;
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether any configured language server's program is installed (on `PATH`, or at the
/// path `--lsp` gave).
pub fn servers_installed(config: &Config) -> bool {
    config
        .languages
        .iter()
        .any(|lang| crate::lsp::command_for(lang).is_ok())
}

/// Whether `tool` (a name in the server's profile) is listed only while a server is.
fn needs_server(shared: &Shared, tool: &Tool) -> bool {
    ToolName::lookup(shared.config.tool_profile.family(), &tool.name)
        .is_some_and(ToolName::needs_language_server)
}

/// Whether the listing depends on the language servers at all (the `code` group is
/// served): the server then declares `tools.listChanged`.
pub fn may_change(shared: &Shared) -> bool {
    shared.tools.iter().any(|t| needs_server(shared, t))
}

/// The tools a session is shown, given whether a language server is installed.
pub fn visible(shared: &Shared, servers: bool) -> Vec<Tool> {
    shared
        .tools
        .iter()
        .filter(|t| servers || !needs_server(shared, t))
        .cloned()
        .collect()
}

/// What one session was last shown: unknown, without or with the code tools.
#[derive(Debug, Default)]
pub struct Shown(AtomicU8);

const UNKNOWN: u8 = 0;
const WITHOUT: u8 = 1;
const WITH: u8 = 2;

impl Shown {
    /// Records that the session now sees the listing for `servers`; true when it saw
    /// the other one before (the client should be told the list changed).
    pub fn settle(&self, servers: bool) -> bool {
        let now = if servers { WITH } else { WITHOUT };
        let before = self.0.swap(now, Ordering::AcqRel);
        before != UNKNOWN && before != now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_reported_once_and_the_first_look_is_not_a_change() {
        let shown = Shown::default();
        assert!(!shown.settle(false));
        assert!(!shown.settle(false));
        assert!(shown.settle(true));
        assert!(!shown.settle(true));
        assert!(shown.settle(false));
    }

    #[test]
    fn only_code_tools_other_than_language_servers_need_a_server() {
        let needing: Vec<ToolName> = ToolName::all()
            .filter(|t| t.needs_language_server())
            .collect();
        use ToolName::*;
        assert_eq!(
            needing,
            [
                Diagnostics,
                Definition,
                References,
                Hover,
                Symbols,
                Rename,
                CcLsp
            ]
        );
    }
}
