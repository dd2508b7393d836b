//! Byte-exact replacement and the closest-region hint: no panics on any bytes; a unique
//! exact replacement is a splice that keeps every other byte.
#![no_main]
use boris::text::replace::{ReplaceError, closest_region, replace};
use libfuzzer_sys::fuzz_target;
use memchr::memmem;

fuzz_target!(|input: (Vec<u8>, Vec<u8>, Vec<u8>, bool)| {
    let (content, old, new, all) = input;
    if old.is_empty() {
        return;
    }
    match replace(&content, &old, &new, all) {
        Ok(r) => {
            assert!(r.count >= 1);
            if !r.crlf && r.count == 1 {
                let at = memmem::find(&content, &old).expect("found");
                let mut want = content[..at].to_vec();
                want.extend_from_slice(&new);
                want.extend_from_slice(&content[at + old.len()..]);
                assert_eq!(r.content, want);
            }
        }
        Err(ReplaceError::Ambiguous { count, lines }) => {
            assert!(!all && count > 1 && !lines.is_empty());
        }
        Err(ReplaceError::NotFound) => assert!(memmem::find(&content, &old).is_none()),
    }
    let text = String::from_utf8_lossy(&content);
    if let Some(c) = closest_region(&text, &String::from_utf8_lossy(&old)) {
        assert!(c.first_line >= 1 && c.first_line <= c.last_line);
        assert!(c.last_line <= text.split('\n').count());
    }
});
