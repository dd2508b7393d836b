//! Byte-exact replacement and the closest-region hint: no panics on any bytes; a unique
//! exact replacement is a splice that keeps every other byte, its new text in the line
//! ending of the place it lands (issue 21 §1); a miss leaves no whole-pair occurrence.
#![no_main]
use boris::text::replace::{ReplaceError, closest_region, eol_at, replace, with_eol};
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
                let at = r.first_at;
                assert_eq!(&content[at..at + old.len()], &old[..]);
                let mut want = content[..at].to_vec();
                match eol_at(&content, at) {
                    Some(eol) => want.extend_from_slice(&with_eol(&new, eol)),
                    None => want.extend_from_slice(&new),
                }
                want.extend_from_slice(&content[at + old.len()..]);
                assert_eq!(r.content, want);
            }
        }
        Err(ReplaceError::Ambiguous { count, lines }) => {
            assert!(!all && count > 1 && !lines.is_empty());
        }
        // Every exact occurrence left unmatched splits a `\r\n` pair.
        Err(ReplaceError::NotFound) => {
            for at in memmem::find_iter(&content, &old) {
                let end = at + old.len();
                let starts_inside = at > 0 && content[at - 1] == b'\r' && content[at] == b'\n';
                let ends_inside =
                    end < content.len() && content[end - 1] == b'\r' && content[end] == b'\n';
                assert!(starts_inside || ends_inside);
            }
        }
    }
    let text = String::from_utf8_lossy(&content);
    if let Some(c) = closest_region(&text, &String::from_utf8_lossy(&old)) {
        assert!(c.first_line >= 1 && c.first_line <= c.last_line);
        assert!(c.last_line <= text.split('\n').count());
    }
});
