//! Output truncation for bash: head truncation by characters (the `boris` profile, seed
//! 000 D5) and tail truncation by lines and bytes (the `pipe` profile, seed 004). Both
//! cut on character boundaries.

/// Characters of stdout (and, separately, of stderr) that the `boris` profile shows.
pub const HEAD_CHARS: usize = 30_000;

/// Lines and bytes that the `pipe` profile shows, counted from the end.
pub const TAIL_LINES: usize = 2000;
pub const TAIL_BYTES: usize = 50 * 1024;

/// The first `max` characters of `text`, and whether anything was cut.
pub fn head(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

/// The seed's notice for a head cut, plus where the full output is.
pub fn head_notice(total_chars: usize, shown: usize, full_output: Option<&str>) -> String {
    let mut notice =
        format!("\n\n[Truncated: output was {total_chars} characters, showing first {shown}");
    if let Some(path) = full_output {
        notice.push_str(&format!(". Full output: {path}"));
    }
    notice.push(']');
    notice
}

/// Which limit a tail cut hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailLimit {
    Lines,
    Bytes,
}

/// The result of [`tail`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail<'a> {
    pub text: &'a str,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub shown_lines: usize,
    pub limit: Option<TailLimit>,
    /// The first shown line is only the end of a line longer than the byte limit.
    pub partial_first_line: bool,
}

/// The last `max_lines` complete lines or `max_bytes` bytes of `text`, whichever limit
/// is hit first (seed 004 "Tail Truncation"). A single line longer than `max_bytes`
/// contributes its tail.
pub fn tail(text: &str, max_lines: usize, max_bytes: usize) -> Tail<'_> {
    let total_bytes = text.len();
    let body = text.strip_suffix('\n').unwrap_or(text);
    let total_lines = if text.is_empty() {
        0
    } else {
        body.split('\n').count()
    };
    if total_lines <= max_lines && total_bytes <= max_bytes {
        return Tail {
            text,
            total_lines,
            total_bytes,
            shown_lines: total_lines,
            limit: None,
            partial_first_line: false,
        };
    }
    // Walk back over line starts, keeping whole lines while both limits allow.
    let mut start = text.len();
    let mut lines = 0usize;
    let mut limit = None;
    let mut search_end = body.len();
    loop {
        if lines == max_lines {
            limit = Some(TailLimit::Lines);
            break;
        }
        let line_start = body[..search_end].rfind('\n').map(|i| i + 1).unwrap_or(0);
        if text.len() - line_start > max_bytes {
            limit = Some(TailLimit::Bytes);
            break;
        }
        start = line_start;
        lines += 1;
        if line_start == 0 {
            break;
        }
        search_end = line_start - 1;
    }
    let mut partial = false;
    if lines == 0 {
        // Not even the last line fits: show the tail of it, on a character boundary.
        let mut cut = text.len().saturating_sub(max_bytes);
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        start = cut;
        lines = 1;
        partial = true;
    }
    Tail {
        text: &text[start..],
        total_lines,
        total_bytes,
        shown_lines: lines,
        limit,
        partial_first_line: partial,
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn prefix_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn head_counts_characters() {
        assert_eq!(head("ééé", 2), ("éé", true));
        assert_eq!(head("abc", 3), ("abc", false));
        assert!(
            head_notice(50, 30, Some("/tmp/x")).ends_with("showing first 30. Full output: /tmp/x]")
        );
    }

    #[test]
    fn tail_by_lines_and_bytes() {
        let t = tail("1\n2\n3\n4\n", 2, 100);
        assert_eq!(
            (t.text, t.total_lines, t.limit),
            ("3\n4\n", 4, Some(TailLimit::Lines))
        );
        let t = tail("aaaa\nbbbb\ncccc\n", 10, 11);
        assert_eq!((t.text, t.limit), ("bbbb\ncccc\n", Some(TailLimit::Bytes)));
        let long = "x".repeat(100);
        let t = tail(&long, 10, 8);
        assert_eq!((t.text, t.partial_first_line), ("xxxxxxxx", true));
        let t = tail("short\n", 10, 100);
        assert_eq!((t.text, t.limit), ("short\n", None));
    }

    proptest! {
        #[test]
        fn head_never_splits(s in "\\PC{0,60}", max in 0usize..70) {
            let (h, cut) = head(&s, max);
            prop_assert!(s.starts_with(h));
            prop_assert_eq!(cut, s.chars().count() > max);
            prop_assert_eq!(h.chars().count(), s.chars().count().min(max));
        }

        /// The tail is a suffix of the text, within both limits (a partial line only
        /// when a single line is over the byte limit), and never splits a character.
        #[test]
        fn tail_is_a_bounded_suffix(s in "[aé\\n]{0,200}", max_lines in 1usize..20, max_bytes in 4usize..80) {
            let t = tail(&s, max_lines, max_bytes);
            prop_assert!(s.ends_with(t.text));
            prop_assert!(t.text.len() <= max_bytes || t.limit.is_none());
            prop_assert!(t.shown_lines <= max_lines.max(1));
            if t.limit.is_none() { prop_assert_eq!(t.text, s.as_str()); }
            if !t.partial_first_line && t.text.len() < s.len() {
                prop_assert!(s[..s.len() - t.text.len()].ends_with('\n'));
            }
        }
    }
}
