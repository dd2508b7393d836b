//! The git config reader of the sandbox (issue 25 §3): no panics on any input; every
//! path it names is non-empty and never the whole work tree (`.`, `..`).
#![no_main]
use boris::sandbox::gitconfig::named_paths;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for named in named_paths(text) {
        assert!(!named.path.is_empty());
        assert!(named.path != "." && named.path != "..");
        assert!(named.key.contains('.'));
    }
});
