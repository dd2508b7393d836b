//! The words a case is written in, each spelled once: the capabilities a portable case
//! can use (and the values each takes), the public tool contracts a case can be written
//! in, and the profiles a step can hold expectations for. The case model validates
//! against these, adapters map them, reports count by them.

/// The capabilities a portable case can use, with the values each takes.
pub const CAPABILITIES: &[(&str, &str)] = &[
    ("read_file", "path — read a whole text file"),
    (
        "read_range",
        "path, start, end — lines start..=end (1-based) of a text file",
    ),
    (
        "read_from",
        "path, start — lines start.. to the end (1-based) of a text file",
    ),
    (
        "read_tail",
        "path, lines — the last `lines` lines of a text file",
    ),
    ("list_dir", "path — list a directory"),
    (
        "write_file",
        "path, content — create or overwrite a whole file",
    ),
    (
        "replace",
        "path, old, new, dry_run? — replace the one occurrence of old (dry_run: show, write nothing)",
    ),
    (
        "multi_edit",
        "path, edits: [{old, new, replace_all?}], dry_run? — edits applied in order to one file, each to the result of the ones before; all or nothing",
    ),
    (
        "replace_all",
        "path, old, new — replace every occurrence of old",
    ),
    (
        "run",
        "command, timeout? (ms: the command is killed after it) — run a shell command, return its output",
    ),
    (
        "run_background",
        "command, timeout? — start a shell command in the background; the session's n-th one is task n",
    ),
    (
        "task_output",
        "task (n: the session's n-th background command), block?, timeout? (ms) — its status and output",
    ),
    (
        "task_stop",
        "task (n) — kill a background command, return its output",
    ),
    (
        "search",
        "pattern, path?, include?, type?, ignore_case?, before?, after?, context?, line_numbers?, multiline?, head_limit?, offset? — lines matching a regex, with their files",
    ),
    (
        "search_files",
        "pattern, path?, include?, type?, ignore_case?, multiline?, head_limit?, offset? — the files with a line matching a regex",
    ),
    (
        "search_count",
        "pattern, path?, include?, type?, ignore_case?, multiline?, head_limit?, offset? — per file, how many lines match a regex",
    ),
    (
        "find_files",
        "pattern, path? — files whose name or relative path matches a glob",
    ),
];

/// The public tool contracts a case can be written in (`contract:`): `call:` steps by
/// the contract's own tool names, run by every adapter that offers it. `claude-code`:
/// Claude Code's tools (`Read`, `Edit`, `Bash`, …); `anthropic-text-editor`: Anthropic's
/// text-editor tool (`str_replace_editor` with `command`).
pub const CONTRACTS: &[&str] = &["claude-code", "anthropic-text-editor"];

/// The profiles a step can hold expectations for.
pub const PROFILES: &[&str] = &["boris", "boris_compat", "boris_pipe"];
