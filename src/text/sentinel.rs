//! The working-directory sentinel of the `boris` bash profile (seed 000 D3, DESIGN §6).
//!
//! The user's command runs on its own lines after an EXIT trap that prints
//! `\n__BORIS_CWD_<nonce>__<pwd>\n` to stdout, so a trailing comment, `;`, `&`, a heredoc,
//! a trailing newline or an `exit N` all work and the cwd is still learned. The nonce is
//! random per workspace, so output cannot forge it by accident. Parsing takes the *last*
//! sentinel and removes exactly what the trap added, keeping the user's bytes intact.

/// The marker for a nonce.
pub fn marker(nonce: &str) -> String {
    format!("__BORIS_CWD_{nonce}__")
}

/// The script the shell runs for `command`. The cwd is reported once, by whichever
/// comes first: the line after the command (normal completion, even if the command set
/// its own EXIT trap), or the EXIT trap (an `exit N`, or `set -e` stopping the script).
/// Under bash, `builtin` keeps a user's `printf` or `pwd` function out of the way, and an
/// `exit` function reports before a command's own EXIT trap could have replaced ours
/// (only in the main shell: a subshell's `exit` must not print the sentinel).
pub fn wrap(command: &str, nonce: &str, bash: bool) -> String {
    let marker = marker(nonce);
    let b = if bash { "builtin " } else { "" };
    let exit_fn = if bash {
        "exit() { if [ \"$BASHPID\" = \"$$\" ]; then __boris_cwd; fi; builtin exit \"$@\"; }\n"
    } else {
        ""
    };
    // `$?` in an EXIT trap is the status the shell is exiting with, so `exit 42` and a
    // failing last command both report their own code.
    format!(
        "__boris_cwd() {{ if [ -z \"${{__boris_reported:-}}\" ]; then __boris_reported=1; \
         {b}printf '\\n{marker}%s\\n' \"$({b}pwd)\"; fi; }}\n\
         {exit_fn}trap '__boris_status=$?; __boris_cwd; exit $__boris_status' EXIT\n\
         {command}\n\
         __boris_status=$?; __boris_cwd; exit $__boris_status\n"
    )
}

/// What the trap left in a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where the sentinel (with its leading newline) starts: the user's output is
    /// everything before, plus `resume_at..`.
    pub start: usize,
    /// Where output after the sentinel line resumes (a background child may write later).
    pub resume_at: usize,
    /// The shell's final working directory.
    pub cwd: String,
}

/// Finds the last sentinel for `nonce` in `stdout`.
pub fn find(stdout: &[u8], nonce: &str) -> Option<Found> {
    let needle = format!("\n{}", marker(nonce));
    let at = memchr::memmem::rfind(stdout, needle.as_bytes())?;
    let cwd_start = at + needle.len();
    let (cwd_end, resume_at) = match memchr::memchr(b'\n', &stdout[cwd_start..]) {
        Some(i) => (cwd_start + i, cwd_start + i + 1),
        None => (stdout.len(), stdout.len()),
    };
    Some(Found {
        start: at,
        resume_at,
        cwd: String::from_utf8_lossy(&stdout[cwd_start..cwd_end]).into_owned(),
    })
}

/// The user's output with the sentinel removed, and the cwd it reported.
pub fn strip(stdout: &[u8], nonce: &str) -> (Vec<u8>, Option<String>) {
    match find(stdout, nonce) {
        Some(found) => {
            let mut out = stdout[..found.start].to_vec();
            out.extend_from_slice(&stdout[found.resume_at..]);
            (out, Some(found.cwd))
        }
        None => (stdout.to_vec(), None),
    }
}

/// A fresh random nonce: 8 lowercase hex digits.
pub fn new_nonce() -> String {
    format!("{:08x}", rand::random::<u32>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_exactly_what_the_trap_added() {
        let (out, cwd) = strip(b"hello\n\n__BORIS_CWD_deadbeef__/tmp/x\n", "deadbeef");
        assert_eq!(
            (out.as_slice(), cwd.as_deref()),
            (&b"hello\n"[..], Some("/tmp/x"))
        );
        let (out, _) = strip(b"no newline\n__BORIS_CWD_deadbeef__/\n", "deadbeef");
        assert_eq!(out, b"no newline");
        let (out, cwd) = strip(b"plain", "deadbeef");
        assert_eq!((out.as_slice(), cwd), (&b"plain"[..], None));
    }

    #[test]
    fn the_last_sentinel_wins() {
        let s = b"\n__BORIS_CWD_00000000__/fake\nreal\n__BORIS_CWD_00000000__/real\n";
        let (out, cwd) = strip(s, "00000000");
        assert_eq!(cwd.as_deref(), Some("/real"));
        assert_eq!(out, b"\n__BORIS_CWD_00000000__/fake\nreal");
    }

    #[test]
    fn nonces_are_eight_hex_digits() {
        let n = new_nonce();
        assert_eq!(n.len(), 8);
        assert!(n.chars().all(|c| c.is_ascii_hexdigit()));
    }

    proptest! {
        /// Any user output, any cwd: stripping gives back the user's bytes exactly and
        /// never leaves the marker behind.
        #[test]
        fn round_trip(user in proptest::collection::vec(any::<u8>(), 0..300), cwd in "/[a-z/ ]{0,30}", after in proptest::collection::vec(any::<u8>(), 0..20)) {
            let nonce = "0badc0de";
            let needle = marker(nonce);
            prop_assume!(memchr::memmem::find(&user, needle.as_bytes()).is_none());
            prop_assume!(memchr::memmem::find(&after, needle.as_bytes()).is_none());
            let mut stream = user.clone();
            stream.extend_from_slice(format!("\n{needle}{cwd}\n").as_bytes());
            stream.extend_from_slice(&after);
            let (out, got) = strip(&stream, nonce);
            let mut want = user.clone();
            want.extend_from_slice(&after);
            prop_assert_eq!(out.clone(), want);
            prop_assert_eq!(got, Some(cwd));
            prop_assert!(memchr::memmem::find(&out, needle.as_bytes()).is_none());
        }
    }
}
