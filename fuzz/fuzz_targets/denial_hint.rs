//! The sandbox's denial line (issue 18 §2): no panics on any output; a hint is one line
//! that starts with `sandbox: ` and names an absolute path.
#![no_main]
use boris::sandbox::Policy;
use boris::sandbox::hint::denial_hint;
use boris::scope::{LinkReader, Scope};
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};

fuzz_target!(|output: &str| {
    let policy = Policy {
        write: vec![PathBuf::from("/w")],
        read: Vec::new(),
        deny_patterns: vec![".env".into()],
        network: true,
        protect_git: true,
    };
    let Ok(deny) = Scope::new(Vec::new(), policy.deny_patterns.clone()) else {
        return;
    };
    if let Some(line) = denial_hint(
        output,
        Path::new("/w"),
        Path::new("/t"),
        &policy,
        &deny,
        Some(Path::new("/h")),
        &OutwardLink,
    ) {
        assert!(line.starts_with("sandbox: /"));
        assert!(!line.contains('\n'));
    }
});

/// `/w/out` leads outside the writable tree, as a planted symlink would.
struct OutwardLink;

impl LinkReader for OutwardLink {
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        (path == Path::new("/w/out")).then(|| PathBuf::from("/srv/f"))
    }
}
