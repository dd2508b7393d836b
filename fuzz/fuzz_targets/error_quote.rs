//! Arguments quoted in errors (issue 28 §7): no panic on any text; every quoted argument
//! and every message stays within its bound.
#![no_main]
use boris::text::quote::{
    MESSAGE_MAX_BYTES, QUOTE_MAX_BYTES, bound_message, cut_long_quotes, quoted,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    // A Debug quote may escape a byte into up to 10 (`\u{10ffff}`); the suffix is short.
    assert!(quoted(text).len() <= 10 * QUOTE_MAX_BYTES + 40);
    let cut = cut_long_quotes(text);
    if text.len() <= QUOTE_MAX_BYTES {
        assert_eq!(cut, text);
    }
    assert!(bound_message(text).len() <= MESSAGE_MAX_BYTES);
});
