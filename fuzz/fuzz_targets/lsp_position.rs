//! Code-intelligence positions and edits (issue 20): a model's line and symbol, a server's
//! columns in any encoding and its text edits never panic; a resolved symbol is where it
//! was asked for; applied edits that keep every range's text change nothing.
#![no_main]
use boris::lsp::format::{TextEdit, apply_edits};
use boris::lsp::position::{Encoding, byte_offset, resolve};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (String, String, u8, u8, Vec<(u16, u16, u16, u16, String)>)| {
    let (text, symbol, line, occurrence, edits) = input;
    if let Ok((line0, col)) = resolve(&text, line as usize, Some(&symbol), Some(occurrence as usize), None) {
        let l = boris::lsp::position::line_text(&text, line0).unwrap_or_default();
        let rest: String = l.chars().skip(col).collect();
        assert!(rest.starts_with(&symbol));
    }
    for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
        let edits: Vec<TextEdit> = edits
            .iter()
            .map(|(a, b, c, d, t)| TextEdit {
                start: (*a as u32 % 8, *b as u32 % 64),
                end: (*c as u32 % 8, *d as u32 % 64),
                new_text: t.clone(),
            })
            .collect();
        let _ = apply_edits(&text, &edits, enc);
        for e in &edits {
            assert!(text.is_char_boundary(byte_offset(&text, e.start.0, e.start.1, enc)));
        }
    }
});
