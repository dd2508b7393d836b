//! The "updated code" snippet Gemini CLI's `replace` returns after an edit (issue 19 §3):
//! the lines of the new text around each change, `context` lines each side, runs that
//! touch merged, and `...` for what is left out — so the model sees its edit in place
//! without another read. Pure; the gemini-cli profile's `replace` calls it.
//!
//! As Gemini CLI (`getDiffContextSnippet`): the new text is split at line breaks (a final
//! line break leaves an empty last line), a deleted run counts as an empty range at the
//! line where it was, and a text without changes (or a new file) is shown whole.

use similar::{DiffOp, TextDiff};
use std::time::Duration;

/// How long the line diff of the changed middle may search before settling for a
/// coarser (still correct) answer.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// The snippet of `new` around what changed from `old`.
pub fn context_snippet(old: &str, new: &str, context: usize) -> String {
    if old.is_empty() {
        return new.to_string();
    }
    let old_lines: Vec<&str> = old.split('\n').collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let ranges = changed_ranges(&old_lines, &new_lines);
    if ranges.is_empty() {
        return new.to_string();
    }
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in ranges {
        let start = start.saturating_sub(context);
        let end = (end + context).min(new_lines.len());
        if start == end {
            // A deletion with no context around it: no line of the new text to show
            // (an empty part would print a blank line the file does not have).
            continue;
        }
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut parts: Vec<String> = Vec::new();
    let mut last_end = 0;
    for (start, end) in merged {
        if start > last_end {
            parts.push("...".to_string());
        }
        parts.push(new_lines[start..end].join("\n"));
        last_end = end;
    }
    if last_end < new_lines.len() {
        parts.push("...".to_string());
    }
    parts.join("\n")
}

/// The changed runs of `new`, as half-open line ranges in order: lines inserted or
/// replaced, or an empty range where lines were deleted. Only the lines between the
/// common head and tail are diffed.
fn changed_ranges(old: &[&str], new: &[&str]) -> Vec<(usize, usize)> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - head;
    let tail = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let old_mid = &old[head..old.len() - tail];
    let new_mid = &new[head..new.len() - tail];
    if old_mid.is_empty() && new_mid.is_empty() {
        return Vec::new();
    }
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_slices(old_mid, new_mid);
    let mut out = Vec::new();
    for op in diff.ops() {
        match *op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete { new_index, .. } => out.push((head + new_index, head + new_index)),
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => out.push((head + new_index, head + new_index + new_len)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    /// A deletion shown with no context prints no blank line of its own (a proptest
    /// found it: the diff may pair a replaced line as a deletion and an insertion).
    #[test]
    fn a_bare_deletion_adds_no_line() {
        assert_eq!(context_snippet("a\nb\nc", "a\nc", 0), "...");
        assert_eq!(context_snippet("a\nb\nc", "a\nc\nx", 0), "...\nx");
    }

    #[test]
    fn one_change_shows_five_lines_each_side() {
        let old = numbered(20);
        let new = old.replace("line 10\n", "LINE TEN\n");
        let snip = context_snippet(&old, &new, 5);
        let want: Vec<String> = (5..=15)
            .map(|i| {
                if i == 10 {
                    "LINE TEN".to_string()
                } else {
                    format!("line {i}")
                }
            })
            .collect();
        assert_eq!(snip, format!("...\n{}\n...", want.join("\n")));
    }

    #[test]
    fn near_changes_merge_and_far_ones_do_not() {
        let old = numbered(40);
        let new = old
            .replace("line 3\n", "three\n")
            .replace("line 6\n", "six\n")
            .replace("line 30\n", "thirty\n");
        let snip = context_snippet(&old, &new, 2);
        assert_eq!(
            snip,
            "line 1\nline 2\nthree\nline 4\nline 5\nsix\nline 7\nline 8\n...\nline 28\nline 29\nthirty\nline 31\nline 32\n..."
        );
    }

    #[test]
    fn a_deletion_shows_its_surroundings() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "a\nb\nd\ne\n";
        assert_eq!(context_snippet(old, new, 1), "...\nb\nd\n...");
    }

    #[test]
    fn no_change_or_a_new_file_shows_everything() {
        assert_eq!(context_snippet("x\ny\n", "x\ny\n", 5), "x\ny\n");
        assert_eq!(context_snippet("", "new\n", 5), "new\n");
    }

    proptest! {
        /// Every shown line is a line of the new text, in order, and the changed lines
        /// are among them.
        #[test]
        fn shown_lines_come_from_the_new_text(
            old in proptest::collection::vec("[abc]{0,3}", 1..30),
            edits in proptest::collection::vec((0usize..30, "[xyz]{1,3}"), 1..4),
            context in 0usize..6,
        ) {
            let mut new = old.clone();
            for (at, text) in &edits {
                let i = at % new.len();
                new[i] = text.clone();
            }
            let (old_s, new_s) = (old.join("\n"), new.join("\n"));
            let snip = context_snippet(&old_s, &new_s, context);
            let mut from = 0;
            for line in snip.split('\n').filter(|l| *l != "...") {
                let pos = new[from..].iter().position(|n| n == line);
                prop_assert!(pos.is_some(), "{line:?} not in order in {new:?}");
                from += pos.unwrap_or(0) + 1;
            }
            for (at, text) in &edits {
                let i = at % new.len();
                if new[i] == *text && old[i] != *text {
                    prop_assert!(snip.split('\n').any(|l| l == text.as_str()));
                }
            }
        }
    }
}
