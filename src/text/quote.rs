//! Arguments quoted back in messages, cut to a few hundred bytes (issue 28 §7): an outside
//! fuzzer sent a 10 MB argument and got all of it back in the error, twice. A model reads
//! every byte of a result, so an error names what was wrong with an argument and shows
//! only enough of it to recognise.
//!
//! Pure and total: [`quoted`] is what a tool uses where it quotes an argument itself;
//! [`cut_long_quotes`] cuts what a library quoted for us (serde's `invalid type: string
//! "…"`, `unknown variant `…``; the regex crate's caret diagrams); [`bound_message`] is the
//! backstop every `[CODE] message` goes through.

/// The most of an argument a message shows, in bytes.
pub const QUOTE_MAX_BYTES: usize = 200;

/// The longest message a tool error carries, in bytes. Far above any message Boris writes
/// (the longest are str_replace's closest-region hints, a few KB); only a quoted argument
/// that escaped [`quoted`] can reach it.
pub const MESSAGE_MAX_BYTES: usize = 16 * 1024;

use super::truncate::prefix_bytes as head;

/// `s` itself, or its head and `…` when it is over `max` bytes.
pub fn head_with_ellipsis(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(format!("{}…", head(s, max)))
    }
}

/// `s` quoted as Rust's `{:?}` quotes it; over [`QUOTE_MAX_BYTES`], its head, `…` and the
/// full length: `"aaaa…" (10000000 bytes)`.
pub fn quoted(s: &str) -> String {
    if s.len() <= QUOTE_MAX_BYTES {
        return format!("{s:?}");
    }
    let shown = format!("{:?}", head(s, QUOTE_MAX_BYTES));
    // Put the ellipsis inside the quotes, where the text was cut.
    format!("{}…\" ({} bytes)", &shown[..shown.len() - 1], s.len())
}

/// Cuts every `"…"` (backslash escapes honoured) and `` `…` `` run whose inside is over
/// [`QUOTE_MAX_BYTES`] to its head, `…` and its length. Quotes that never close are left
/// as they are; so is every short run.
pub fn cut_long_quotes(message: &str) -> String {
    let bytes = message.as_bytes();
    let mut out = String::with_capacity(message.len().min(4 * QUOTE_MAX_BYTES));
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let open = bytes[i];
        if open != b'"' && open != b'`' {
            i += 1;
            continue;
        }
        let Some(close) = closing(bytes, i + 1, open) else {
            i += 1;
            continue;
        };
        let inner = &message[i + 1..close];
        if inner.len() > QUOTE_MAX_BYTES {
            out.push_str(&message[copied..=i]);
            out.push_str(head(inner, QUOTE_MAX_BYTES));
            out.push('…');
            out.push(open as char);
            out.push_str(&format!(" ({} bytes)", inner.len()));
            copied = close + 1;
        }
        i = close + 1;
    }
    out.push_str(&message[copied..]);
    out
}

/// Where the run opened by `quote` before `from` closes: the next `quote` (for `"`, one not
/// escaped by a backslash).
fn closing(bytes: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut j = from;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' if quote == b'"' => j += 2,
            b if b == quote => return Some(j),
            _ => j += 1,
        }
    }
    None
}

/// The backstop: a message over [`MESSAGE_MAX_BYTES`] keeps its head and its last line
/// (where a message says what to do), with what was cut counted between them.
pub fn bound_message(message: &str) -> std::borrow::Cow<'_, str> {
    if message.len() <= MESSAGE_MAX_BYTES {
        return std::borrow::Cow::Borrowed(message);
    }
    let tail_start = message
        .rfind('\n')
        .map(|n| n + 1)
        .filter(|&n| message.len() - n <= QUOTE_MAX_BYTES)
        .unwrap_or(message.len());
    let kept_head = head(message, MESSAGE_MAX_BYTES - 2 * QUOTE_MAX_BYTES);
    let cut = tail_start - kept_head.len();
    std::borrow::Cow::Owned(format!(
        "{kept_head}… [{cut} bytes cut]\n{}",
        &message[tail_start..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_arguments_are_quoted_whole() {
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
        assert_eq!(cut_long_quotes("type \"x\" is bad"), "type \"x\" is bad");
    }

    #[test]
    fn long_arguments_are_cut_and_counted() {
        let q = quoted(&"q".repeat(10_000_000));
        assert!(q.starts_with("\"qqq"));
        assert!(q.ends_with("…\" (10000000 bytes)"), "{q}");
        assert!(q.len() < QUOTE_MAX_BYTES + 40);
    }

    #[test]
    fn serde_messages_are_cut_inside_their_quotes() {
        let msg = format!(
            "timeout: invalid type: string {:?}, expected u64",
            "q".repeat(5000)
        );
        let cut = cut_long_quotes(&msg);
        assert!(cut.starts_with("timeout: invalid type: string \"qq"));
        assert!(cut.ends_with("…\" (5000 bytes), expected u64"), "{cut}");
        let variant = format!("unknown variant `{}`, expected `a`", "v".repeat(1000));
        assert!(cut_long_quotes(&variant).ends_with("…` (1000 bytes), expected `a`"));
    }

    #[test]
    fn an_unclosed_quote_is_left_alone() {
        let msg = format!("x \"{}", "a".repeat(500));
        assert_eq!(cut_long_quotes(&msg), msg);
    }

    #[test]
    fn the_backstop_keeps_the_last_line() {
        let msg = format!("{}\nview the file first", "z".repeat(100_000));
        let b = bound_message(&msg);
        assert!(b.len() <= MESSAGE_MAX_BYTES);
        assert!(b.ends_with("\nview the file first"));
        assert!(b.contains("bytes cut]"));
    }

    proptest! {
        #[test]
        fn quoted_is_bounded(s in ".{0,600}") {
            prop_assert!(quoted(&s).len() <= 10 * QUOTE_MAX_BYTES + 40);
        }

        #[test]
        fn cut_long_quotes_is_total_and_never_grows_a_short_text(s in "[a-z\"`\\\\ ]{0,700}") {
            let out = cut_long_quotes(&s);
            if s.len() <= QUOTE_MAX_BYTES {
                prop_assert_eq!(out, s);
            }
        }

        #[test]
        fn cut_long_quotes_bounds_every_run(head in "[a-z ]{0,20}", inner in "[a-z ]{0,2000}", tail in "[a-z ]{0,20}") {
            let out = cut_long_quotes(&format!("{head}\"{inner}\"{tail}"));
            prop_assert!(out.len() <= head.len() + tail.len() + QUOTE_MAX_BYTES + 40);
        }

        #[test]
        fn bound_message_is_bounded(s in "(?s).{0,100}", n in 0usize..40_000) {
            let msg = format!("{s}{}", "é".repeat(n));
            prop_assert!(bound_message(&msg).len() <= MESSAGE_MAX_BYTES);
        }
    }
}
