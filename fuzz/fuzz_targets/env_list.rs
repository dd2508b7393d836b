//! Env list splitting and size parsing: no panics; items are trimmed and non-empty.
#![no_main]
use boris::config::{parse_size, split_env_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    for item in split_env_list(s) {
        assert!(!item.is_empty());
        assert_eq!(item.trim(), item);
    }
    if let Ok(n) = parse_size(s) {
        assert!(n > 0);
    }
});
