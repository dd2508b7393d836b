//! `--tool-profile codex` (issue 19 §3): Codex's read, list and search tools with their
//! names, parameters, defaults and result texts (openai/codex `codex-rs`; DEC-32
//! records the source), over Boris's engines. `exec_command` and `write_stdin` are
//! `shell`'s, `apply_patch` is `apply_patch::codex_tool` (Codex's words).
//!
//! | tool | engine |
//! | --- | --- |
//! | `read_file(file_path, offset, limit, mode, indentation)` | `view` (`L12: text`), or the block of `text::indent_block` |
//! | `list_dir(dir_path, offset, limit, depth)` | a breadth-first listing, sorted by path |
//! | `grep_files(pattern, include, path, limit)` | the grep engine: files, newest first |

use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, read_only};
use crate::tools::words::Words;
use rmcp::model::Tool;

pub mod files;
pub mod search;
pub mod shell;

pub use files::*;
pub use search::*;
pub use shell::*;

/// `CxReadFile`'s `tools/list` entry.
pub fn read_file_tool() -> Tool {
    define::<ReadFileArgs>(
        ToolName::CxReadFile,
        "read_file",
        "Reads a local file with 1-indexed line numbers, supporting slice and \
         indentation-aware block modes.",
        read_only("read_file"),
    )
}

/// `CxListDir`'s `tools/list` entry.
pub fn list_dir_tool() -> Tool {
    define::<ListDirArgs>(
        ToolName::CxListDir,
        "list_dir",
        "Lists entries in a local directory with 1-indexed entry numbers and simple type \
         labels.",
        read_only("list_dir"),
    )
}

/// `CxGrepFiles`'s `tools/list` entry.
pub fn grep_files_tool() -> Tool {
    define::<GrepFilesArgs>(
        ToolName::CxGrepFiles,
        "grep_files",
        "Finds files whose contents match the pattern and lists them by modification \
         time.",
        read_only("grep_files"),
    )
}

/// Boris's words in an error message → Codex's.
pub static WORDS: Words = Words::new(&[
    (r"\bhas not been viewed\b", "has not been read"),
    (r"\blast viewed\b", "last read"),
    (r"\bview it\b", "read it with read_file"),
    (r"\bview the file\b", "read the file with read_file"),
    (
        r"\bedit it with a shell tool\b",
        "edit it with exec_command",
    ),
    (r"\bview_range start\b", "offset"),
    (r"\bview_range\b", "offset and limit"),
    (r"\bview\b", "read_file"),
]);
