//! `--tool-profile gemini-cli` (issue 19 §3): Gemini CLI's tools with their current
//! names, parameters, defaults and result texts (google-gemini/gemini-cli,
//! `packages/core/src/tools`, as of August 2026; DEC-32 records the source), each
//! a thin shape over Boris's engines, so a Gemini model uses Boris unchanged and keeps
//! every guarantee (scope, view-before-edit, atomic byte-faithful writes, CRLF rules,
//! bounded output, the sandbox, `[CODE]` errors).
//!
//! | tool | engine |
//! | --- | --- |
//! | `read_file(file_path, start_line, end_line)` | `view`, lines shown plain |
//! | `read_many_files(include, exclude, recursive, useDefaultExcludes, file_filtering_options)` | `glob` walk, then `view` per file |
//! | `list_directory(dir_path, ignore, file_filtering_options)` | one level, dirs first |
//! | `write_file(file_path, content)` | `create_file` |
//! | `replace(file_path, instruction, old_string, new_string, allow_multiple, expected_replacements)` | `str_replace` |
//! | `run_shell_command(command, description, dir_path)` | the shell engine, one-shot |
//! | `glob(pattern, dir_path, case_sensitive, respect_git_ignore)` | the `glob` walk |
//! | `grep_search(pattern, dir_path, include_pattern, exclude_pattern, names_only, …)` | the `grep` engine |

pub mod files;
pub mod search;
pub mod shell;

use super::words::Words;
use crate::tool_name::ToolName;
use crate::tools::engine::schema::{define, read_only, runs_commands, writes};
use rmcp::model::Tool;

/// `GmReadFile`'s `tools/list` entry.
pub fn read_file_tool() -> Tool {
    define::<files::ReadFileArgs>(
        ToolName::GmReadFile,
        "ReadFile",
        "Reads and returns the content of a specified file. If the file is large, the \
         content will be truncated. The tool's response will clearly indicate if \
         truncation has occurred and will provide details on how to read more of the file \
         using the 'start_line' and 'end_line' parameters. Handles text and images (PNG, \
         JPEG, GIF, WEBP); other binary files are reported, not shown. For text files, it \
         can read specific line ranges. At most 2000 lines per call; lines longer than \
         2000 characters are cut. Read a file before you replace text in it or overwrite \
         it with write_file.",
        read_only("ReadFile"),
    )
}

/// `GmReadManyFiles`'s `tools/list` entry.
pub fn read_many_files_tool() -> Tool {
    define::<files::ReadManyFilesArgs>(
        ToolName::GmReadManyFiles,
        "ReadManyFiles",
        "Reads content from multiple files specified by paths or glob patterns relative \
         to the working directory, and concatenates their text, each file under a \
         '--- {filePath} ---' separator; '--- End of content ---' follows the last one. \
         Useful to read several related files in one call (all TypeScript files under \
         src, a set of configuration files). Glob patterns like 'src/**/*.js' are \
         supported; a directory reads every file below it. Binary files are skipped; an \
         image is included only when named explicitly. Files matching .gitignore, .git \
         and node_modules are skipped unless useDefaultExcludes is false. Each file shows \
         at most 2000 lines.",
        read_only("ReadManyFiles"),
    )
}

/// `GmListDirectory`'s `tools/list` entry.
pub fn list_directory_tool() -> Tool {
    define::<files::ListDirectoryArgs>(
        ToolName::GmListDirectory,
        "ReadFolder",
        "Lists the names of files and subdirectories directly within a specified \
         directory path (directories first, as '[DIR] name'; files with their size). Can \
         optionally ignore entries matching provided glob patterns.",
        read_only("ReadFolder"),
    )
}

/// `GmWriteFile`'s `tools/list` entry.
pub fn write_file_tool() -> Tool {
    define::<files::WriteFileArgs>(
        ToolName::GmWriteFile,
        "WriteFile",
        "Writes the complete content to a file, automatically creating missing parent \
         directories. Overwrites existing files (read an existing file with read_file \
         first in this session). Best for new or small files; use 'replace' for targeted \
         edits to large files. The write is atomic; an existing file keeps its mode and, \
         when all its line breaks are CRLF, its CRLF line endings.",
        writes("WriteFile", true),
    )
}

/// `GmReplace`'s `tools/list` entry.
pub fn replace_tool() -> Tool {
    define::<files::ReplaceArgs>(
        ToolName::GmReplace,
        "Edit",
        "Replaces text within a file. By default, the tool expects to find and replace \
         exactly ONE occurrence of `old_string`. If you want to replace multiple \
         occurrences of the exact same string, set `allow_multiple` to true. \
         `old_string` must be the exact literal text to replace, including all \
         whitespace and indentation, and must uniquely identify the place to change: \
         include enough context around it. `new_string` must differ from it. An empty \
         `old_string` creates a new file with `new_string` as its content. Always use \
         the read_file tool to examine the file's current content before replacing text \
         in it; if the file changed on disk since, read it again. The result shows the \
         updated code around the change. Line endings, encoding and file mode are \
         preserved; the write is atomic.",
        writes("Edit", false),
    )
}

/// `GmShell`'s `tools/list` entry.
pub fn shell_tool() -> Tool {
    define::<shell::ShellArgs>(
        ToolName::GmShell,
        "Shell",
        "This tool executes a given shell command as `bash -c <command>`, in the working \
         directory or in dir_path, and returns when it ends. Each command runs on its \
         own: a `cd` does not carry over to the next call. stdin is /dev/null and \
         pagers are off, so interactive commands fail rather than hang. Processes the \
         command leaves running in the background are stopped when it ends. A command \
         with no output for the inactivity timeout (2 minutes unless the server sets \
         another) is cancelled.\n\nThe following information is returned:\n\nOutput: \
         Combined stdout/stderr. Can be `(empty)`. Output over 40,000 characters shows \
         its first 8,000 and last 32,000 characters and names a file with all of it.\n\
         Exit Code: Only included if non-zero (command failed).",
        runs_commands("Shell"),
    )
}

/// `GmGlob`'s `tools/list` entry.
pub fn glob_tool() -> Tool {
    define::<search::GlobArgs>(
        ToolName::GmGlob,
        "FindFiles",
        "Efficiently finds files matching specific glob patterns (e.g., `src/**/*.ts`, \
         `**/*.md`), returning absolute paths sorted by modification time (files changed \
         in the last 24 hours first, newest first; then the rest by path). Ideal for \
         quickly locating files based on their name or path structure, especially in \
         large codebases.",
        read_only("FindFiles"),
    )
}

/// `GmGrep`'s `tools/list` entry.
pub fn grep_tool() -> Tool {
    define::<search::GrepSearchArgs>(
        ToolName::GmGrep,
        "SearchText",
        "Searches for a regular expression pattern within file contents, on ripgrep's \
         engine (Rust regex syntax), case-insensitive unless case_sensitive is true. \
         Returns the matching lines grouped by file ('File: path' then 'L12: text'; \
         context lines 'L11- text'), at most 100 matches unless total_max_matches says \
         otherwise. When there are only 1 to 3 matches and no context was asked for, \
         lines around them are shown too. Honours .gitignore unless no_ignore is true.",
        read_only("SearchText"),
    )
}

/// Boris's words in an error message → Gemini CLI's, so the message names the
/// parameters and tools the model has (`old_string`, `read_file`), not the engine's.
pub static WORDS: Words = Words::new(&[
    (r"\bview_range start\b", "start_line"),
    (r"\bview_range\b", "start_line and end_line"),
    (r"\bold_str\b", "old_string"),
    (r"\bnew_str\b", "new_string"),
    (r"\breplace_all\b", "allow_multiple"),
    (r"\bcreate_file\b", "write_file"),
    (r"\bstr_replace\b", "replace"),
    (r"\bhas not been viewed\b", "has not been read"),
    (r"\blast viewed\b", "last read"),
    (r"\bview it\b", "read it with read_file"),
    (r"\bview the file\b", "read the file with read_file"),
    (r"\bview\b", "read_file"),
    (
        r"\bedit it with a shell tool\b",
        "edit it with run_shell_command",
    ),
]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_use_gemini_words() {
        assert_eq!(
            WORDS.rephrase("view_range start 10 exceeds the file's 4 lines"),
            "start_line 10 exceeds the file's 4 lines"
        );
        assert_eq!(
            WORDS.rephrase(
                "/w/a.txt has not been viewed in this session; view it before you edit it"
            ),
            "/w/a.txt has not been read in this session; read it with read_file before you edit it"
        );
        assert_eq!(
            WORDS.rephrase("old_str occurs 2 times; set replace_all to true"),
            "old_string occurs 2 times; set allow_multiple to true"
        );
        assert_eq!(
            WORDS.rephrase("/p/view/old_str.txt does not exist"),
            "/p/view/old_str.txt does not exist"
        );
    }
}
