//! `--tool-profile claude-code` (issue 15 §1): Claude Code's built-in tools, with their
//! names, parameter names, defaults and limits, over Boris's engines — so a model
//! trained on them uses Boris unchanged and keeps every guarantee (scoping,
//! view-before-edit, atomic byte-faithful writes, bounded output, `[CODE]` errors).
//!
//! | tool | engine |
//! | --- | --- |
//! | `Bash(command, timeout, description, run_in_background)` | `bash` |
//! | `Read(file_path, offset, limit)` | `view` (offset = first line, 1-based; limit = lines, default 2000); notebooks as cells |
//! | `Edit(file_path, old_string, new_string, replace_all)` | `str_replace` |
//! | `MultiEdit(file_path, edits[{old_string, new_string, replace_all}])` | `multi_edit` |
//! | `Write(file_path, content)` | `create_file` |
//! | `NotebookEdit(notebook_path, cell_id, new_source, cell_type, edit_mode)` | `text::notebook` |
//! | `Grep(pattern, path, glob, type, output_mode, -A, -B, -C, -n, -i, head_limit, offset, multiline)` | `grep` |
//! | `Glob(pattern, path)` | `glob` |
//! | `TaskOutput(task_id, block, timeout)`, `TaskStop(task_id)` | `task_output`, `task_stop` |

use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, read_only, writes};
use rmcp::model::Tool;

pub mod files;
pub mod lsp;

pub use files::*;

/// Lines a `Read` shows when no `limit` is given (Claude Code's default).
pub const READ_DEFAULT_LIMIT: u64 = 2000;

/// `CcBash`'s `tools/list` entry.
pub fn bash_tool() -> Tool {
    renamed(
        crate::tools::boris::bash::tool(),
        ToolName::CcBash,
        "Executes a bash command in a persistent shell session (cd sticks between calls; \
         environment changes do not). stdin is /dev/null, so interactive commands fail \
         rather than hang. Returns exit_code and the stdout and stderr sections, each cut \
         to its first 30000 characters; the full output is then saved to a file named in \
         the notice, which Read can page. timeout is in milliseconds (default 120000, max \
         600000). What it starts in the background (`&`, nohup) keeps running after it \
         ends, until the session ends; for servers and other long jobs set run_in_background, then follow the task with TaskOutput \
         (or Read its output file) and stop it with TaskStop.",
    )
}

/// `CcRead`'s `tools/list` entry.
pub fn read_tool() -> Tool {
    define::<ReadArgs>(
        ToolName::CcRead,
        "Read a file",
        "Reads a file. file_path may be absolute or relative to the working directory. By \
         default reads up to 2000 lines from the start; offset (the 1-based line to start \
         at) and limit (how many lines) read other parts of long files. Lines are \
         numbered cat -n style and cut at 2000 characters. Images (PNG, JPEG, GIF, WebP) \
         come back as images; PDFs as their text by page (pages: \"3-5\", at most 20 per \
         call, required over 10 pages); Jupyter notebooks (.ipynb) as their cells with \
         ids, sources and text outputs; a directory as a listing. Read a file before you Edit \
         or Write over it.",
        read_only("Read a file"),
    )
}

/// `CcEdit`'s `tools/list` entry.
pub fn edit_tool() -> Tool {
    define::<EditArgs>(
        ToolName::CcEdit,
        "Edit a file",
        "Performs an exact string replacement in a file. old_string must match the file \
         byte for byte (indentation included) and be unique in it, unless replace_all is \
         true (then every occurrence is replaced). new_string must differ from \
         old_string. Read the file first in this session; if it changed on disk since, \
         Read it again. Line endings, encoding and file mode are preserved; the write is \
         atomic.",
        writes("Edit a file", false),
    )
}

/// `CcMultiEdit`'s `tools/list` entry.
pub fn multi_edit_tool() -> Tool {
    define::<MultiEditArgs>(
        ToolName::CcMultiEdit,
        "Make several edits to one file",
        "Makes several exact string replacements in one file in one call: each edit's \
         old_string must match byte for byte and be unique (unless its replace_all is \
         true) in the file as the edits before it left it. All or nothing: if any edit \
         fails, nothing is written and the error names that edit and the closest region. \
         One atomic write; Read the file first in this session.",
        writes("Make several edits to one file", false),
    )
}

/// `CcWrite`'s `tools/list` entry.
pub fn write_tool() -> Tool {
    define::<WriteArgs>(
        ToolName::CcWrite,
        "Write a file",
        "Writes a file, creating parent directories, or overwrites an existing one \
         (Read it first in this session). New files get mode 0644; an existing file keeps \
         its mode. The write is atomic.",
        writes("Write a file", true),
    )
}

/// `CcNotebookEdit`'s `tools/list` entry.
pub fn notebook_edit_tool() -> Tool {
    define::<NotebookEditArgs>(
        ToolName::CcNotebookEdit,
        "Edit a Jupyter notebook cell",
        "Edits one cell of a Jupyter notebook (.ipynb). edit_mode replace (default) sets \
         the source of the cell cell_id (and its type, if cell_type is given; a code \
         cell's outputs are cleared); insert adds a new cell of cell_type (required) \
         after cell_id, or at the start without one; delete removes cell_id. Cell ids are \
         those Read shows (cell-N in notebooks without ids). Read the notebook first. \
         Other cells are written back byte for byte.",
        writes("Edit a Jupyter notebook cell", false),
    )
}

/// `CcGrep`'s `tools/list` entry.
pub fn grep_tool() -> Tool {
    renamed(
        crate::tools::boris::grep::tool(true),
        ToolName::CcGrep,
        "A search tool built on ripgrep's engine (Rust regex syntax). output_mode: \
         files_with_matches (default; paths, newest first), content (matching lines; -n \
         line numbers, default on; -A/-B/-C context), count. Filter with glob (e.g. \
         \"*.{ts,tsx}\") or type (rust, py, js, go, …); -i case-insensitive; multiline \
         lets patterns span lines. Page with offset and head_limit. Honours .gitignore; \
         results are capped at 30,000 characters.",
    )
}

/// `CcGlob`'s `tools/list` entry.
pub fn glob_tool() -> Tool {
    renamed(
        crate::tools::boris::glob::tool(true),
        ToolName::CcGlob,
        "Fast file pattern matching: a glob such as \"**/*.js\" or \"src/**/*.ts\", \
         against path (default: the working directory). Returns matching file paths \
         sorted by modification time, newest first. Honours .gitignore.",
    )
}

/// `CcTaskOutput`'s `tools/list` entry.
pub fn task_output_tool() -> Tool {
    renamed(
        crate::tools::boris::tasks::output_tool(),
        ToolName::CcTaskOutput,
        "Retrieves the output of a background task (Bash with run_in_background): status \
         and the output so far while it runs, then its exit_code and whole output. With \
         block: true, waits for it to finish (up to timeout ms, default 30000). A task's \
         output file, named when it started, can also be paged with Read.",
    )
}

/// `CcTaskStop`'s `tools/list` entry.
pub fn task_stop_tool() -> Tool {
    renamed(
        crate::tools::boris::tasks::stop_tool(),
        ToolName::CcTaskStop,
        "Stops a running background task by its task_id: its process group gets SIGTERM, \
         then SIGKILL after 5 seconds. Returns its final output.",
    )
}

/// A Boris tool under a Claude Code name and description (same schema, its parameter
/// descriptions naming this profile's tools).
fn renamed(mut tool: Tool, name: ToolName, description: &'static str) -> Tool {
    tool.name = name.as_str().into();
    tool.description = Some(description.into());
    let mut schema = serde_json::Value::Object((*tool.input_schema).clone());
    reword_descriptions(&mut schema);
    if let serde_json::Value::Object(m) = schema {
        tool.input_schema = std::sync::Arc::new(m);
    }
    tool
}

/// Boris's tool names → this profile's, in every `description` of a schema.
fn reword_descriptions(v: &mut serde_json::Value) {
    const NAMES: &[(&str, &str)] = &[
        ("task_output", "TaskOutput"),
        ("task_stop", "TaskStop"),
        ("that bash returned", "that Bash returned"),
    ];
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                match v {
                    serde_json::Value::String(d) if k == "description" => {
                        for (from, to) in NAMES {
                            *d = d.replace(from, to);
                        }
                    }
                    other => reword_descriptions(other),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(reword_descriptions),
        _ => {}
    }
}
