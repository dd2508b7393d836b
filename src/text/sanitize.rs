//! Cleaning command output for a model (DESIGN §6, seed 004 "Sanitization"): ANSI CSI,
//! OSC and other escape sequences removed, control bytes other than tab and newline
//! dropped, `\r\n` turned into `\n`, and a line redrawn with a bare `\r` (a progress bar)
//! reduced to its final state. Invalid UTF-8 is replaced, never an error.

/// Cleans `raw` for a model. Idempotent: the output has no ESC, no `\r` and no control
/// characters except `\t` and `\n`.
pub fn sanitize(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len());
    // Byte offset in `out` where the current line starts (after the last '\n').
    let mut line_start = 0usize;
    // A bare '\r' was seen: the next visible character redraws the line.
    let mut redraw = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    continue; // the '\n' comes next and ends the line
                }
                redraw = true;
            }
            '\n' => {
                redraw = false;
                out.push('\n');
                line_start = out.len();
            }
            '\t' => {
                redraw_if_pending(&mut out, line_start, &mut redraw);
                out.push('\t');
            }
            // C0 controls, DEL, and C1 controls (U+0080–U+009F).
            c if (c as u32) < 0x20 || c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) => {}
            c => {
                redraw_if_pending(&mut out, line_start, &mut redraw);
                out.push(c);
            }
        }
    }
    out
}

fn redraw_if_pending(out: &mut String, line_start: usize, redraw: &mut bool) {
    if *redraw {
        out.truncate(line_start);
        *redraw = false;
    }
}

/// Skips the rest of an escape sequence whose ESC was just read.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameter and intermediate bytes, then one final byte in 0x40..=0x7E.
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
                if !('\u{20}'..='\u{3f}').contains(&c) {
                    // Malformed: stop at the first byte that cannot belong to a CSI.
                    break;
                }
            }
        }
        // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        // Character-set designations take one more character: ESC ( B.
        Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%') => {
            chars.next();
        }
        // Any other two-character sequence (ESC =, ESC M, ESC 7, …), or ESC at the end.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_colours_titles_and_controls() {
        assert_eq!(sanitize(b"\x1b[1;31merror\x1b[0m: bad\n"), "error: bad\n");
        assert_eq!(sanitize(b"\x1b]0;title\x07ok\n"), "ok\n");
        assert_eq!(
            sanitize(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n"),
            "link\n"
        );
        assert_eq!(sanitize(b"a\x00b\x08c\x7fd\te\n"), "abcd\te\n");
        assert_eq!(sanitize(b"\x1b(Bplain\x1b=\n"), "plain\n");
    }

    #[test]
    fn carriage_returns() {
        assert_eq!(sanitize(b"one\r\ntwo\r\n"), "one\ntwo\n");
        assert_eq!(sanitize(b"10%\r50%\r100%\ndone\n"), "100%\ndone\n");
        assert_eq!(sanitize(b"keep\r\n"), "keep\n");
        assert_eq!(sanitize(b"last state\r"), "last state");
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(sanitize(b"caf\xe9\n"), "caf\u{fffd}\n");
    }

    proptest! {
        #[test]
        fn idempotent_and_clean(raw in proptest::collection::vec(prop_oneof![
            Just(0x1bu8), Just(b'['), Just(b']'), Just(b'\r'), Just(b'\n'), Just(b'\t'), Just(7u8),
            Just(b'm'), Just(b'a'), Just(b'1'), Just(b';'), Just(0xC3u8), Just(0xA9u8), Just(0u8), Just(b'\\')
        ], 0..200)) {
            let once = sanitize(&raw);
            prop_assert_eq!(sanitize(once.as_bytes()), once.clone());
            prop_assert!(!once.contains('\x1b'), "ESC left in {:?}", once);
            prop_assert!(!once.contains('\r'));
            let clean = once.chars().all(|c| c == '\n' || c == '\t' || (c as u32) >= 0x20 && c != '\x7f');
            prop_assert!(clean, "control character left in {:?}", once);
        }

        #[test]
        fn plain_text_is_untouched(s in "[a-zA-Z0-9 .,\\n\\t]{0,100}") {
            prop_assert_eq!(sanitize(s.as_bytes()), s);
        }
    }
}
