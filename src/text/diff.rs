//! Unified diffs of an edit (issue 15 §3): what a `dry_run` shows and what a successful
//! edit returns. Made by `similar`, not by hand; 3 lines of context and `a/` `b/` headers,
//! as `git diff` prints them, so a model reads them as it reads every patch.

use similar::TextDiff;

/// Lines of context around each hunk.
pub const CONTEXT: usize = 3;

/// The unified diff turning `old` into `new`, with `--- a/<label>` and `+++ b/<label>`
/// headers (`--- /dev/null` when `old` is `None`: the file does not exist yet). Empty
/// when the two are equal. Bytes that are not UTF-8 are shown as U+FFFD; the diff is for
/// reading, the write itself is byte-exact.
pub fn unified(old: Option<&[u8]>, new: &[u8], label: &str) -> String {
    let before = String::from_utf8_lossy(old.unwrap_or_default());
    let after = String::from_utf8_lossy(new);
    if old.is_some() && before == after {
        return String::new();
    }
    let diff = TextDiff::from_lines(before.as_ref(), after.as_ref());
    let from = if old.is_some() {
        format!("a/{label}")
    } else {
        "/dev/null".to_string()
    };
    diff.unified_diff()
        .context_radius(CONTEXT)
        .header(&from, &format!("b/{label}"))
        .to_string()
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

        /// Applying the diff to the old text gives the new one.
        #[test]
        fn diff_applies_back(old in "[abc\n]{0,60}", new in "[abc\n]{0,60}") {
            let d = unified(Some(old.as_bytes()), new.as_bytes(), "f");
            prop_assert_eq!(apply(&old, &d), new);
        }
    }
}
