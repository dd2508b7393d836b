//! How a process ended: shared by the process engine and the sandbox's jail client (which
//! learns of its commands' exits over the jail's socket), so neither imports the other
//! for it.

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, or 128 + the signal number for a process killed by a signal (the
    /// shell convention: 143 for SIGTERM, 137 for SIGKILL).
    pub code: i32,
}
