//! Pure: the one line a failed command's result ends with when the sandbox blocked a
//! path it names (issue 18 §2), so a model knows it met the sandbox, not a bug, and which
//! flag a person could give.

use super::Policy;
use crate::scope::Scope;
use std::path::{Component, Path, PathBuf};

/// Error texts that follow a path when a write or read was refused.
const REFUSALS: &[&str] = &[
    "Permission denied",
    "permission denied",
    "Read-only file system",
    "Operation not permitted",
    "Device or resource busy",
];

/// The hint for `output` (a command's stdout and stderr), or `None` when no path it
/// names as refused is one the sandbox blocks. `home` shortens the suggested directory
/// of a write under it to its first component (`~/.npm`, not `~/.npm/_cacache/tmp`).
pub fn denial_hint(
    output: &str,
    cwd: &Path,
    tmp: &Path,
    policy: &Policy,
    deny: &Scope,
    home: Option<&Path>,
) -> Option<String> {
    for line in output
        .lines()
        .filter(|l| REFUSALS.iter().any(|r| l.contains(r)))
    {
        for candidate in paths_in(line) {
            let path = crate::scope::normalize(cwd, Path::new(&candidate));
            if let Some(pattern) = deny.denied_by(&path) {
                return Some(format!(
                    "sandbox: {} is denied by the pattern {pattern:?} (--deny-dir); commands \
                     cannot read it, as view cannot",
                    path.display()
                ));
            }
            let writable =
                policy.write.iter().any(|w| path.starts_with(w)) || path.starts_with(tmp);
            if writable && policy.protect_git && super::paths::is_git_protected(&path) {
                return Some(format!(
                    "sandbox: {} is git metadata, read-only in the sandbox (git would run it \
                     outside it later); --sandbox-allow-git-config would allow writing it",
                    path.display()
                ));
            }
            if !writable && path.is_absolute() && path != Path::new("/") {
                return Some(format!(
                    "sandbox: {} is outside the writable directories; --sandbox-write {} would \
                     allow writing there",
                    path.display(),
                    suggest_dir(&path, home).display()
                ));
            }
        }
    }
    None
}

/// The directory to suggest for a refused write to `path`: under the home directory its
/// first component (`~/.cache`), elsewhere the parent.
fn suggest_dir(path: &Path, home: Option<&Path>) -> PathBuf {
    if let Some(home) = home
        && let Ok(rel) = path.strip_prefix(home)
        && let Some(Component::Normal(first)) = rel.components().next()
    {
        return home.join(first);
    }
    path.parent().unwrap_or(path).to_path_buf()
}

/// The paths a refusal line names: quoted ones ('…', `…`, "…", ‘…’) first, then the text
/// before a refusal after the last `: ` (`cat: .env: Permission denied`), then any word
/// with a `/`.
fn paths_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('`', '`'), ('"', '"'), ('‘', '’')] {
        let mut rest = line;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            let Some(b) = after.find(close) else { break };
            let inner = &after[..b];
            if looks_like_path(inner) {
                out.push(inner.to_string());
            }
            rest = &after[b + close.len_utf8()..];
        }
    }
    for refusal in REFUSALS {
        if let Some(at) = line.find(&format!(": {refusal}")) {
            let head = &line[..at];
            let last = head.rsplit(": ").next().unwrap_or(head).trim();
            // `cannot touch 'x'` was taken above; a bare path is one word.
            if looks_like_path(last) && !last.contains(' ') {
                out.push(last.to_string());
            }
        }
    }
    for word in line.split(|c: char| c.is_whitespace() || c == ',' || c == '\'' || c == '"') {
        let word = word.trim_end_matches(':');
        if word.starts_with('/') && looks_like_path(word) {
            out.push(word.to_string());
        }
    }
    out
}

fn looks_like_path(s: &str) -> bool {
    !s.is_empty() && s.len() < 4096 && !s.contains('\n') && (s.contains('/') || s.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy() -> Policy {
        Policy {
            write: vec![PathBuf::from("/w")],
            read: Vec::new(),
            deny_patterns: vec![".env".into()],
            network: true,
            protect_git: true,
        }
    }

    fn hint(output: &str) -> Option<String> {
        let p = policy();
        let deny = Scope::new(Vec::new(), p.deny_patterns.clone()).unwrap();
        denial_hint(
            output,
            Path::new("/w/sub"),
            Path::new("/tmp"),
            &p,
            &deny,
            Some(Path::new("/root")),
        )
    }

    #[test]
    fn names_the_path_and_the_flag() {
        assert_eq!(
            hint("cat: .env: Permission denied").as_deref(),
            Some(
                "sandbox: /w/sub/.env is denied by the pattern \".env\" (--deny-dir); commands cannot read it, as view cannot"
            )
        );
        assert_eq!(
            hint("/bin/bash: line 4: /etc/x: Permission denied").as_deref(),
            Some(
                "sandbox: /etc/x is outside the writable directories; --sandbox-write /etc would allow writing there"
            )
        );
        assert_eq!(
            hint("touch: cannot touch '/root/.npm/_cacache/x': Permission denied").as_deref(),
            Some(
                "sandbox: /root/.npm/_cacache/x is outside the writable directories; --sandbox-write /root/.npm would allow writing there"
            )
        );
        assert_eq!(
            hint("PermissionError: [Errno 13] Permission denied: '/opt/x'").as_deref(),
            Some(
                "sandbox: /opt/x is outside the writable directories; --sandbox-write /opt would allow writing there"
            )
        );
        assert!(
            hint("error: could not write config file /w/.git/config: Device or resource busy")
                .unwrap()
                .contains("--sandbox-allow-git-config")
        );
        assert!(
            hint("/bin/bash: line 1: ../.git/hooks/pre-commit: Read-only file system")
                .unwrap()
                .contains("git metadata")
        );
        // Inside the writable trees and not protected: not the sandbox's doing.
        assert_eq!(
            hint("cp: cannot create regular file '/w/a': Permission denied"),
            None
        );
        assert_eq!(hint("all good"), None);
    }

    proptest! {
        #[test]
        fn never_panics(output in ".{0,200}") {
            let _ = hint(&output);
        }
    }
}
