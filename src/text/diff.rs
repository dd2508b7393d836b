//! Unified diffs of an edit (issue 15 §3): what a `dry_run` shows and what a successful
//! edit returns. Made by `similar`, not by hand; 3 lines of context and `a/` `b/` headers,
//! as `git diff` prints them, so a model reads them as it reads every patch.

use similar::TextDiff;
use std::time::Duration;

/// Lines of context around each hunk.
pub const CONTEXT: usize = 3;

/// How long the line diff may search for a minimal edit script; past it, similar
/// returns a correct but coarser diff. Only a change touching most lines of a large
/// file gets near it.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// The unified diff turning `old` into `new`, with `--- a/<label>` and `+++ b/<label>`
/// headers (`--- /dev/null` when `old` is `None`: the file does not exist yet). Empty
/// when the two are equal. Bytes that are not UTF-8 are shown as U+FFFD; the diff is for
/// reading, the write itself is byte-exact.
///
/// Only the lines between the common head and tail (plus the context) are diffed, and
/// the hunk headers shifted back: an edit of a large file then costs a scan for the
/// common ends, not a line table of the whole file.
pub fn unified(old: Option<&[u8]>, new: &[u8], label: &str) -> String {
    let old_bytes = old.unwrap_or_default();
    if old.is_some() && old_bytes == new {
        return String::new();
    }
    let (skipped_lines, old_mid, new_mid) = changed_middle(old_bytes, new);
    let before = String::from_utf8_lossy(old_mid);
    let after = String::from_utf8_lossy(new_mid);
    if old.is_some() && before == after {
        return String::new();
    }
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before.as_ref(), after.as_ref());
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(CONTEXT).iter_hunks() {
        if out.is_empty() {
            match old {
                Some(_) => out.push_str(&format!("--- a/{label}\n")),
                None => out.push_str("--- /dev/null\n"),
            }
            out.push_str(&format!("+++ b/{label}\n"));
        }
        let text = hunk.to_string();
        let (header, body) = text.split_once('\n').unwrap_or((&text, ""));
        out.push_str(&shift_header(header, skipped_lines));
        out.push('\n');
        out.push_str(body);
    }
    out
}

/// The parts of `old` and `new` that differ, widened to whole lines and [`CONTEXT`]
/// lines each side, and how many whole lines precede them (the same in both).
fn changed_middle<'a>(old: &'a [u8], new: &'a [u8]) -> (usize, &'a [u8], &'a [u8]) {
    let max = old.len().min(new.len());
    let mut head = common_prefix(old, new);
    // Back to the start of the line it stops in, then CONTEXT lines more.
    head = old[..head]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..CONTEXT {
        if head == 0 {
            break;
        }
        head = old[..head - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    }
    let rest = max - head;
    let tail_len = common_suffix(&old[old.len() - rest..], &new[new.len() - rest..]);
    // The common tail, from the first line start inside it, less CONTEXT lines.
    let mut tail = &old[old.len() - tail_len..];
    for _ in 0..=CONTEXT {
        match tail.iter().position(|&b| b == b'\n') {
            Some(i) => tail = &tail[i + 1..],
            None => {
                tail = &[];
                break;
            }
        }
    }
    let skipped = memchr::memchr_iter(b'\n', &old[..head]).count();
    (
        skipped,
        &old[head..old.len() - tail.len()],
        &new[head..new.len() - tail.len()],
    )
}

/// Bytes `a` and `b` share at the start: compared a block at a time (memcmp), then
/// byte by byte in the first block that differs.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let max = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= max && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..max]
        .iter()
        .zip(&b[at..max])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Bytes `a` and `b` share at the end, as [`common_prefix`].
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let max = a.len().min(b.len());
    let (ea, eb) = (a.len(), b.len());
    let mut n = 0;
    while n + BLOCK <= max && a[ea - n - BLOCK..ea - n] == b[eb - n - BLOCK..eb - n] {
        n += BLOCK;
    }
    n + a[..ea - n]
        .iter()
        .rev()
        .zip(b[..eb - n].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// `@@ -a,b +c,d @@` with `skipped` added to both starts.
fn shift_header(header: &str, skipped: usize) -> String {
    if skipped == 0 {
        return header.to_string();
    }
    let shift = |range: &str| -> String {
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s, Some(l)),
            None => (range, None),
        };
        let start = start.parse::<usize>().map_or(0, |n| n + skipped);
        match len {
            Some(l) => format!("{start},{l}"),
            None => start.to_string(),
        }
    };
    let mut parts = header.split(' ');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("@@"), Some(o), Some(n), Some("@@")) if o.starts_with('-') && n.starts_with('+') => {
            format!("@@ -{} +{} @@", shift(&o[1..]), shift(&n[1..]))
        }
        _ => header.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn headers_hunks_and_context() {
        let d = unified(
            Some(b"a\nb\nc\nd\ne\nf\ng\n"),
            b"a\nb\nc\nD\ne\nf\ng\n",
            "x.txt",
        );
        assert_eq!(
            d,
            "--- a/x.txt\n+++ b/x.txt\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
        );
        let created = unified(None, b"new\n", "n.txt");
        assert_eq!(created, "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n");
    }

    #[test]
    fn headers_count_the_lines_left_out() {
        let old: String = (1..=100).map(|n| format!("{n}\n")).collect();
        let new = old.replace("\n50\n", "\nfifty\n");
        let d = unified(Some(old.as_bytes()), new.as_bytes(), "f");
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -47,7 +47,7 @@\n 47\n 48\n 49\n-50\n+fifty\n 51\n 52\n 53\n"
        );
        let inserted = old.replace("\n50\n", "\n50\nnew\n");
        let d = unified(Some(old.as_bytes()), inserted.as_bytes(), "f");
        assert!(d.contains("@@ -48,6 +48,7 @@\n"), "{d}");
        let at_end = format!("{old}101");
        let d = unified(Some(old.as_bytes()), at_end.as_bytes(), "f");
        assert!(
            d.ends_with(" 100\n+101\n\\ No newline at end of file\n"),
            "{d}"
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let d = unified(Some(b"a\nb"), b"a\nc", "f");
        assert!(d.contains("\\ No newline at end of file"), "{d}");
    }

    /// Applies a unified diff made by [`unified`] to `old` (a test-only applier: similar
    /// makes patches but does not apply them).
    fn apply(old: &str, diff: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0; // next old line (0-based) not yet copied
        let lines = diff.split_inclusive('\n').skip(2);
        let mut last_kind = ' ';
        for line in lines {
            if let Some(rest) = line.strip_prefix("@@ -") {
                let start: usize = rest
                    .split([',', ' '])
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                // `-0,0` means "before line 1"; otherwise the hunk starts at line start.
                let first = start.saturating_sub(1);
                let first = if rest.starts_with("0,0") { 0 } else { first };
                while at < first {
                    out.push_str(old_lines[at]);
                    at += 1;
                }
                continue;
            }
            if line.starts_with('\\') {
                // The previous line had no newline of its own.
                if last_kind != '-' && out.ends_with('\n') {
                    out.pop();
                }
                continue;
            }
            let (kind, text) = line.split_at(1);
            last_kind = kind.chars().next().unwrap_or(' ');
            match kind {
                " " => {
                    out.push_str(text);
                    at += 1;
                }
                "-" => at += 1,
                "+" => out.push_str(text),
                _ => {}
            }
        }
        while at < old_lines.len() {
            out.push_str(old_lines[at]);
            at += 1;
        }
        out
    }

    proptest! {
        /// The diff of a text with itself is empty.
        #[test]
        fn identical_texts_have_no_diff(text in "[ab\n]{0,40}") {
            prop_assert_eq!(unified(Some(text.as_bytes()), text.as_bytes(), "f"), "");
        }

        /// Diffing only the changed middle gives what diffing the whole texts gives.
        #[test]
        fn middle_diff_is_the_whole_diff(head in "([abc]{0,3}\n){0,12}", old_mid in "[abc\n]{0,12}",
                                         new_mid in "[abc\n]{0,12}", tail in "(\n[abc]{0,3}){0,12}") {
            let old = format!("{head}{old_mid}{tail}");
            let new = format!("{head}{new_mid}{tail}");
            let whole = TextDiff::from_lines(old.as_str(), new.as_str())
                .unified_diff()
                .context_radius(CONTEXT)
                .header("a/f", "b/f")
                .to_string();
            let d = unified(Some(old.as_bytes()), new.as_bytes(), "f");
            prop_assert_eq!(apply(&old, &d), new.clone());
            // Myers may align repeated lines differently on a shorter input; the hunks'
            // changed lines are the same count either way.
            let count = |t: &str, c: char| t.lines().filter(|l| l.starts_with(c) && !l.starts_with("---") && !l.starts_with("+++")).count();
            prop_assert_eq!(count(&d, '-') as isize - count(&d, '+') as isize,
                            count(&whole, '-') as isize - count(&whole, '+') as isize);
        }

        /// Applying the diff to the old text gives the new one.
        #[test]
        fn diff_applies_back(old in "[abc\n]{0,60}", new in "[abc\n]{0,60}") {
            let d = unified(Some(old.as_bytes()), new.as_bytes(), "f");
            prop_assert_eq!(apply(&old, &d), new);
        }
    }
}
