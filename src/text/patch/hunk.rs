//! What both patch formats share about a hunk: the unified header's numbers
//! (`@@ -a,b +c,d @@`, which an envelope's `@@` line may carry too) and the
//! `\ No newline at end of file` markers, settled once a hunk's lines are known.

use super::{Chunk, LineKind, ParseError};
use regex::Regex;
use std::sync::LazyLock;

/// The numbers of a hunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Numbers<'a> {
    pub old_start: usize,
    pub old_count: usize,
    pub new_count: usize,
    /// Text after the closing `@@` (git's section heading).
    pub heading: &'a str,
}

impl Numbers<'_> {
    /// The 1-based line where the old lines start: after line `old_start` when there are
    /// none (`-5,0` inserts after line 5).
    pub fn hint(&self) -> usize {
        if self.old_count == 0 {
            self.old_start + 1
        } else {
            self.old_start.max(1)
        }
    }
}

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
        .unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
});

/// `@@ -a[,b] +c[,d] @@[ heading]` (a missing count is 1).
pub(super) fn numbers(line: &str) -> Option<Numbers<'_>> {
    let c = HEADER.captures(line.trim_end_matches(['\r', '\n']))?;
    let num = |i: usize, default: usize| {
        c.get(i)
            .map_or(Some(default), |m| m.as_str().parse::<usize>().ok())
    };
    Some(Numbers {
        old_start: num(1, 0)?,
        old_count: num(2, 1)?,
        new_count: num(4, 1)?,
        heading: c.get(5).map_or("", |m| m.as_str()),
    })
}

/// `\ No newline at end of file`: notes the line it follows (see [`settle_markers`]).
pub(super) fn mark_no_newline(
    c: &Chunk,
    no: usize,
    marks: &mut Vec<usize>,
) -> Result<(), ParseError> {
    match c.lines.len().checked_sub(1) {
        Some(k) => {
            marks.push(k);
            Ok(())
        }
        None => Err(ParseError::at(
            no,
            "'\\ No newline at end of file' must follow the line it is about",
        )),
    }
}

/// A hunk's markers, once its lines are known: the old side's last line has no line
/// break when a marker follows it (a `-` or context line), the new side's likewise (a `+`
/// or context line). A marker after any other line says nothing and is dropped, so every
/// hunk read is one `envelope::render` writes back the same.
pub(super) fn settle_markers(c: &mut Chunk, marks: &[usize]) {
    let last_old = c.lines.iter().rposition(|l| l.kind != LineKind::Add);
    let last_new = c.lines.iter().rposition(|l| l.kind != LineKind::Delete);
    c.old_no_eol = last_old.is_some_and(|k| marks.contains(&k));
    c.new_no_eol = last_new.is_some_and(|k| marks.contains(&k));
}
