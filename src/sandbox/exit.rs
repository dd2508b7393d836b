//! How a process ended. The jail client learns it over the jail's socket for each
//! confined command; the process engine (`exec`, which re-exports it) reports it for
//! every command. It lives in the sandbox, the lower of the two, so the engine imports
//! the sandbox and never the reverse.

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, or 128 + the signal number for a process killed by a signal (the
    /// shell convention: 143 for SIGTERM, 137 for SIGKILL).
    pub code: i32,
}
