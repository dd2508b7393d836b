//! Tool errors: every failure a tool reports is an `isError: true` result whose single
//! text block reads `[CODE] message` (DESIGN §5). Protocol-level JSON-RPC errors are
//! reserved for things that are not a tool's fault (unknown tool name, malformed request).

use rmcp::model::{CallToolResult, ContentBlock};
use std::fmt;
use std::path::Path;

/// The stable error codes an agent (or a test) can match on. Add one only together with
/// a spec case that produces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidInput,
    PathNotFound,
    AccessDenied,
    FileTooLarge,
    IoError,
    FileNotViewed,
    FileChanged,
    StrReplaceNotFound,
    StrReplaceAmbiguous,
    /// A replacement count given with the edit (Gemini CLI's `expected_replacements`)
    /// is not the number of occurrences in the file.
    StrReplaceCountMismatch,
    GrepInvalidPattern,
    GrepInvalidOutputMode,
    GlobInvalidPattern,
    GlobInvalidType,
    BashEmptyCommand,
    BashStartFailed,
    /// The sandbox could not confine a command, so it was not run (issue 18).
    SandboxFailed,
    BashTaskLimit,
    BashTaskNotFound,
    /// No terminal session by that id (issue 19 §1).
    TerminalNotFound,
    /// `--terminal-max-sessions` sessions are open.
    TerminalLimit,
    /// A file read or edited as a Jupyter notebook is not one (claude-code profile).
    NotebookInvalid,
    /// `NotebookEdit` names a cell the notebook does not have.
    NotebookCellNotFound,
    /// No language server can answer for the file: none covers it, none is installed,
    /// it failed to start, or it is still starting (issue 20).
    LspUnavailable,
    /// `apply_patch`: the input is not a patch Boris can read, or it changes nothing.
    PatchInvalid,
    /// `apply_patch`: a hunk's lines (or its `@@` line) are not in the file.
    PatchHunkNotFound,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::PathNotFound => "PATH_NOT_FOUND",
            ErrorCode::AccessDenied => "ACCESS_DENIED",
            ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ErrorCode::IoError => "IO_ERROR",
            ErrorCode::FileNotViewed => "FILE_NOT_VIEWED",
            ErrorCode::FileChanged => "FILE_CHANGED",
            ErrorCode::StrReplaceNotFound => "STR_REPLACE_NOT_FOUND",
            ErrorCode::StrReplaceAmbiguous => "STR_REPLACE_AMBIGUOUS",
            ErrorCode::StrReplaceCountMismatch => "STR_REPLACE_COUNT_MISMATCH",
            ErrorCode::GrepInvalidPattern => "GREP_INVALID_PATTERN",
            ErrorCode::GrepInvalidOutputMode => "GREP_INVALID_OUTPUT_MODE",
            ErrorCode::GlobInvalidPattern => "GLOB_INVALID_PATTERN",
            ErrorCode::GlobInvalidType => "GLOB_INVALID_TYPE",
            ErrorCode::BashEmptyCommand => "BASH_EMPTY_COMMAND",
            ErrorCode::BashStartFailed => "BASH_START_FAILED",
            ErrorCode::SandboxFailed => "SANDBOX_FAILED",
            ErrorCode::BashTaskLimit => "BASH_TASK_LIMIT",
            ErrorCode::BashTaskNotFound => "BASH_TASK_NOT_FOUND",
            ErrorCode::TerminalNotFound => "TERMINAL_NOT_FOUND",
            ErrorCode::TerminalLimit => "TERMINAL_LIMIT",
            ErrorCode::NotebookInvalid => "NOTEBOOK_INVALID",
            ErrorCode::NotebookCellNotFound => "NOTEBOOK_CELL_NOT_FOUND",
            ErrorCode::LspUnavailable => "LSP_UNAVAILABLE",
            ErrorCode::PatchInvalid => "PATCH_INVALID",
            ErrorCode::PatchHunkNotFound => "PATCH_HUNK_NOT_FOUND",
            ErrorCode::Internal => "INTERNAL_ERROR",
        }
    }
}

/// A failed tool call: a code and a message that names the path or value involved and,
/// where one exists, the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
}

pub type ToolResult<T> = Result<T, ToolError>;

impl ToolError {
    /// The same error with its message rewritten (the claude-code profile's words).
    pub fn map_message(self, f: impl FnOnce(&str) -> String) -> Self {
        ToolError {
            code: self.code,
            message: f(&self.message),
        }
    }

    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    /// Maps an I/O error on `path` to the code an agent can act on. The message never
    /// carries Rust `Debug` output, only the OS's description.
    pub fn io(path: &Path, action: &str, err: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        let shown = path.display();
        match err.kind() {
            ErrorKind::NotFound => {
                Self::new(ErrorCode::PathNotFound, format!("{shown} does not exist"))
            }
            ErrorKind::PermissionDenied => Self::new(
                ErrorCode::AccessDenied,
                format!("permission denied while trying to {action} {shown}"),
            ),
            _ => Self::new(
                ErrorCode::IoError,
                format!("could not {action} {shown}: {}", plain_io_message(err)),
            ),
        }
    }

    pub fn to_result(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.to_string())])
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Bounded whatever a tool put in it (issue 28 §7).
        let message = crate::text::quote::bound_message(&self.message);
        write!(f, "[{}] {}", self.code.as_str(), message)
    }
}

/// `io::Error`'s Display appends "(os error N)"; agents do not need the errno.
fn plain_io_message(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_code_then_message() {
        let e = ToolError::new(ErrorCode::PathNotFound, "/x does not exist");
        assert_eq!(e.to_string(), "[PATH_NOT_FOUND] /x does not exist");
    }

    #[test]
    fn io_errors_map_to_codes_without_errno() {
        let nf = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(
            ToolError::io(Path::new("/a"), "read", &nf).code,
            ErrorCode::PathNotFound
        );
        let other = std::io::Error::from_raw_os_error(nix::libc::EISDIR);
        let e = ToolError::io(Path::new("/a"), "read", &other);
        assert_eq!(e.code, ErrorCode::IoError);
        assert!(!e.message.contains("os error"), "{}", e.message);
    }
}
