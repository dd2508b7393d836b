//! Head and tail truncation of command output: limits respected, cuts on character
//! boundaries, the tail a suffix made of whole lines unless one line is over the limit;
//! Codex's token cut (`text::unified_exec`) a prefix and a suffix within the budget.
#![no_main]
use boris::text::truncate::{head, tail};
use boris::text::unified_exec::{formatted_output, truncate_middle};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (String, u16, u16, u16)| {
    let (text, max_chars, max_lines, max_bytes) = input;
    let (h, cut) = head(&text, max_chars as usize);
    assert!(text.starts_with(h));
    assert_eq!(cut, text.chars().count() > max_chars as usize);

    let (max_lines, max_bytes) = (
        max_lines as usize % 3000 + 1,
        max_bytes as usize % 60000 + 4,
    );
    let t = tail(&text, max_lines, max_bytes);
    assert!(text.ends_with(t.text));
    if t.limit.is_some() {
        assert!(t.text.len() <= max_bytes);
        assert!(t.shown_lines <= max_lines);
        if !t.partial_first_line && t.text.len() < text.len() {
            assert!(text[..text.len() - t.text.len()].ends_with('\n'));
        }
    } else {
        assert_eq!(t.text, text);
    }

    let tokens = max_chars as usize % 2000;
    let cut = truncate_middle(&text, tokens);
    if text.len() <= tokens * 4 {
        assert_eq!(cut, text);
        assert_eq!(formatted_output(&text, tokens), text);
    } else {
        // The marker (the text may hold the same characters: some occurrence splits it).
        let budget = tokens * 4;
        let marker = format!("…{} tokens truncated…", (text.len() - budget).div_ceil(4));
        assert!(cut.match_indices(&marker).any(|(at, _)| {
            let (kept_head, kept_tail) = (&cut[..at], &cut[at + marker.len()..]);
            text.starts_with(kept_head)
                && text.ends_with(kept_tail)
                && kept_head.len() + kept_tail.len() <= budget
        }));
    }
});
