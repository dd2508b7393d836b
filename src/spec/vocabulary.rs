//! The words a case is written in, each spelled once: the capabilities a portable case
//! can use (and the values each takes), the public tool contracts a case can be written
//! in, and the profiles a step can hold expectations for. The case model validates
//! against these, adapters map them, reports count by them.

/// What a portable case does (`do: replace`), whatever the server calls it: an adapter
/// maps each capability to one of the server's tools. One variant per capability, as
/// ruff has one per rule; its name and values are in `TABLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    ReadFile,
    ReadRange,
    ReadFrom,
    ReadTail,
    ListDir,
    WriteFile,
    Replace,
    MultiEdit,
    ReplaceAll,
    Run,
    RunBackground,
    TaskOutput,
    TaskStop,
    Concurrency,
    Search,
    SearchFiles,
    SearchCount,
    FindFiles,
    Diagnostics,
    Definition,
    References,
    Rename,
}

use Capability::*;

/// Every capability, in the documented order (reports list them so), with its name in
/// cases and adapters and the values it takes.
const TABLE: [(Capability, &str, &str); 22] = [
    (ReadFile, "read_file", "path — read a whole text file"),
    (
        ReadRange,
        "read_range",
        "path, start, end — lines start..=end (1-based) of a text file",
    ),
    (
        ReadFrom,
        "read_from",
        "path, start — lines start.. to the end (1-based) of a text file",
    ),
    (
        ReadTail,
        "read_tail",
        "path, lines — the last `lines` lines of a text file",
    ),
    (ListDir, "list_dir", "path — list a directory"),
    (
        WriteFile,
        "write_file",
        "path, content — create or overwrite a whole file",
    ),
    (
        Replace,
        "replace",
        "path, old, new, dry_run? — replace the one occurrence of old (dry_run: show, write nothing)",
    ),
    (
        MultiEdit,
        "multi_edit",
        "path, edits: [{old, new, replace_all?}], dry_run? — edits applied in order to one file, each to the result of the ones before; all or nothing",
    ),
    (
        ReplaceAll,
        "replace_all",
        "path, old, new — replace every occurrence of old",
    ),
    (
        Run,
        "run",
        "command, timeout? (ms: the command is killed after it) — run a shell command, return its output",
    ),
    (
        RunBackground,
        "run_background",
        "command, timeout? — start a shell command in the background; the session's n-th one is task n",
    ),
    (
        TaskOutput,
        "task_output",
        "task (n: the session's n-th background command), block?, timeout? (ms) — its status and output",
    ),
    (
        TaskStop,
        "task_stop",
        "task (n) — kill a background command, return its output",
    ),
    // Scored apart (issue 29 §5): a server that is serial by design says so in its
    // adapter instead of failing every case that holds a call in flight.
    (
        Concurrency,
        "concurrency",
        "command, timeout? — run a shell command (as `run`) that stays in flight while the session's next calls are answered",
    ),
    (
        Search,
        "search",
        "pattern, path?, include?, type?, ignore_case?, before?, after?, context?, line_numbers?, multiline?, head_limit?, offset? — lines matching a regex, with their files",
    ),
    (
        SearchFiles,
        "search_files",
        "pattern, path?, include?, type?, ignore_case?, multiline?, head_limit?, offset? — the files with a line matching a regex",
    ),
    (
        SearchCount,
        "search_count",
        "pattern, path?, include?, type?, ignore_case?, multiline?, head_limit?, offset? — per file, how many lines match a regex",
    ),
    (
        FindFiles,
        "find_files",
        "pattern, path? — files whose name or relative path matches a glob",
    ),
    // Code intelligence (issue 20): answered by a language server.
    (
        Diagnostics,
        "diagnostics",
        "path — the errors a language server reports in a file",
    ),
    (
        Definition,
        "definition",
        "path, symbol, line? — where the symbol named on that line (1-based; default: its first line in the file) is defined",
    ),
    (
        References,
        "references",
        "path, symbol, line? — every reference to the symbol defined on that line of that file",
    ),
    (
        Rename,
        "rename",
        "path, symbol, new_name, line? — the symbol defined on that line renamed everywhere, every file at once",
    ),
];

impl Capability {
    /// Every capability, in the documented order.
    pub fn all() -> impl Iterator<Item = Capability> {
        TABLE.iter().map(|(c, _, _)| *c)
    }

    fn row(self) -> &'static (Capability, &'static str, &'static str) {
        // The table lists the variants in declaration order (checked by a test).
        &TABLE[self as usize]
    }

    /// Its name in cases and adapters (`read_file`).
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// The values it takes, and what it does.
    pub fn values(self) -> &'static str {
        self.row().2
    }

    /// The capability of that name.
    pub fn parse(name: &str) -> Result<Capability, String> {
        Capability::all().find(|c| c.name() == name).ok_or_else(|| {
            format!(
                "unknown capability `{name}` (one of: {})",
                Capability::all()
                    .map(Capability::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Capability {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Capability::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for Capability {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The public tool contracts a case can be written in (`contract:`): `call:` steps by
/// the contract's own tool names, run by every adapter that offers it. `claude-code`:
/// Claude Code's tools (`Read`, `Edit`, `Bash`, …); `anthropic-text-editor`: Anthropic's
/// text-editor tool (`str_replace_editor` with `command`); `gemini-cli`: Gemini CLI's
/// (`read_file`, `replace`, `run_shell_command`, …); `codex`: Codex's (`read_file`,
/// `list_dir`, `grep_files`).
pub const CONTRACTS: &[&str] = &[
    "claude-code",
    "anthropic-text-editor",
    "gemini-cli",
    "codex",
];

/// The tag of a case about how the server ends (stdin EOF, signals, what it leaves
/// running): its teardown faults fail it on every server (`spec::findings`).
pub const SHUTDOWN_TAG: &str = "shutdown";

/// The profiles a step can hold expectations for.
pub const PROFILES: &[&str] = &["boris", "boris_compat", "boris_pipe"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_each_capability_once_in_declaration_order() {
        for (i, (c, name, _)) in TABLE.iter().enumerate() {
            assert_eq!(*c as usize, i, "{name}");
            assert_eq!(Capability::parse(name), Ok(*c));
        }
        let err = Capability::parse("read_fil").unwrap_err();
        assert!(
            err.starts_with("unknown capability `read_fil` (one of: read_file, read_range,"),
            "{err}"
        );
    }
}
