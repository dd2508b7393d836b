//! Output sanitising: idempotent, no ESC, no carriage return, no control character
//! other than tab and newline, whatever the bytes.
#![no_main]
use boris::text::sanitize::sanitize;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let once = sanitize(data);
    assert_eq!(sanitize(once.as_bytes()), once);
    assert!(once.chars().all(|c| c == '\n'
        || c == '\t'
        || (c >= ' ' && c != '\u{7f}' && !('\u{80}'..='\u{9f}').contains(&c))));
});
