//! One file's hunks applied to its bytes, all or none: each hunk is found after the one
//! before (after its `@@` anchors; nearest its line number when a unified header gave
//! one), and the file is rebuilt from its own bytes — untouched lines and context lines
//! copied as they are (whitespace, encoding, line endings), deleted lines dropped, added
//! lines written with the file's line ending at that place (issue 21 §1) or, when the
//! patch spells line endings itself, with the one it gives.

use super::seek::{FileLines, Fuzz};
use super::{Chunk, Line, LineKind};
use crate::text::replace::{Eol, eol_at};

/// A file after its hunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdit {
    pub content: Vec<u8>,
    /// Hunks (0-based) whose lines matched only loosely, and how.
    pub fuzz: Vec<(usize, Fuzz)>,
    pub added: usize,
    pub removed: usize,
}

/// The hunk that could not be placed (0-based), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkFailure {
    pub index: usize,
    pub miss: HunkMiss,
    /// The 1-based line the search began at (after the hunks before it and its anchors).
    pub from_line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkMiss {
    /// An `@@` anchor line was not found.
    Anchor(String),
    /// The hunk's context and removed lines (joined by `\n`) were not found; `at_end`:
    /// they had to end the file (`*** End of File`, `\ No newline at end of file`).
    Lines { old: String, at_end: bool },
}

/// Each line of `content`: (start, end of its text, end with its line break). The text
/// excludes `\n` and a `\r` before it.
pub fn lines_of(content: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', content) {
        let text_end = if nl > start && content[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        out.push((start, text_end, nl + 1));
        start = nl + 1;
    }
    if start < content.len() {
        out.push((start, content.len(), content.len()));
    }
    out
}

/// Applies `chunks` to `content`. `ending_aware`: added lines end as the patch wrote
/// them (`\r\n` when it gave a `\r`, else `\n`); otherwise with the ending of the place
/// they land ([`eol_at`]), `\n` in a file without line breaks.
///
/// The file ends with a line break if it did (an empty file gets one), unless a hunk
/// says otherwise with `\ No newline at end of file`.
pub fn apply_chunks(
    content: &[u8],
    chunks: &[Chunk],
    ending_aware: bool,
) -> Result<FileEdit, HunkFailure> {
    let spans = lines_of(content);
    let file = FileLines::new(spans.iter().map(|s| &content[s.0..s.1]).collect());
    let n = spans.len();
    let byte_of = |line: usize| spans.get(line).map_or(content.len(), |s| s.0);
    let mut out = Vec::with_capacity(content.len() + content.len() / 8 + 64);
    let (mut cursor, mut copied) = (0usize, 0usize);
    let mut final_break: Option<bool> = None;
    let mut edit = FileEdit {
        content: Vec::new(),
        fuzz: Vec::new(),
        added: 0,
        removed: 0,
    };
    for (index, c) in chunks.iter().enumerate() {
        let mut from = cursor;
        let mut anchor_at = None;
        for a in &c.anchors {
            match file.seek_anchor(a, from) {
                Some((i, _)) => {
                    anchor_at = Some(i);
                    from = i + 1;
                }
                None => {
                    return Err(HunkFailure {
                        index,
                        miss: HunkMiss::Anchor(a.clone()),
                        from_line: from + 1,
                    });
                }
            }
        }
        // A hunk whose first context line is its own @@ line (`@@ def f():` then
        // ` def f():`, as models write it) starts at the anchor, not after it.
        let placed = place(&file, c, from, n).or_else(|| {
            anchor_at
                .filter(|&i| i >= cursor)
                .and_then(|i| place(&file, c, i, n))
        });
        let (start, ops) = placed.ok_or_else(|| HunkFailure {
            index,
            miss: HunkMiss::Lines {
                old: c
                    .old_lines()
                    .map(|l| l.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                at_end: c.at_eof || c.old_no_eol,
            },
            from_line: from + 1,
        })?;
        let (start, level) = start;
        if level != Fuzz::Exact {
            edit.fuzz.push((index, level));
        }
        let here = byte_of(start);
        out.extend_from_slice(&content[copied..here]);
        let eol = eol_at(content, here).unwrap_or(Eol::Lf);
        let mut j = start;
        for l in ops {
            match l.kind {
                LineKind::Context => {
                    end_open_line(&mut out, eol);
                    out.extend_from_slice(&content[spans[j].0..spans[j].2]);
                    j += 1;
                }
                LineKind::Delete => {
                    edit.removed += 1;
                    j += 1;
                }
                LineKind::Add => {
                    end_open_line(&mut out, eol);
                    out.extend_from_slice(l.text.as_bytes());
                    out.extend_from_slice(added_eol(l, ending_aware, eol).bytes());
                    edit.added += 1;
                }
            }
        }
        copied = byte_of(j);
        cursor = j;
        if c.new_no_eol {
            final_break = Some(false);
        } else if c.old_no_eol {
            final_break = Some(true);
        }
    }
    out.extend_from_slice(&content[copied..]);
    let had_break = content.is_empty() || content.ends_with(b"\n");
    set_final_break(&mut out, final_break.unwrap_or(had_break));
    edit.content = out;
    Ok(edit)
}

/// Where a hunk goes: its first old line's index and how loosely it matched, and the
/// lines to apply there (less blank context lines it ended with, when only those kept
/// it from matching: a model's blank line before the next section).
fn place<'c>(
    file: &FileLines<'_>,
    c: &'c Chunk,
    from: usize,
    n: usize,
) -> Option<((usize, Fuzz), &'c [Line])> {
    let at_end = c.at_eof || c.old_no_eol;
    let near = c.line_hint.map(|h| h.saturating_sub(1));
    let old: Vec<&str> = c.old_lines().map(|l| l.text.as_str()).collect();
    if old.is_empty() {
        // Pure addition: after the anchors, at the line number, or at the end of the file
        // (Codex's rule for a hunk of `+` lines alone).
        let at = if at_end {
            n
        } else if !c.anchors.is_empty() {
            from
        } else if let Some(h) = near {
            h.clamp(from.min(n), n)
        } else {
            n
        };
        return Some(((at, Fuzz::Exact), &c.lines));
    }
    if let Some(found) = file.seek(&old, from, near, at_end) {
        return Some((found, &c.lines));
    }
    let blank_tail = c
        .lines
        .iter()
        .rev()
        .take_while(|l| l.kind == LineKind::Context && l.text.trim().is_empty())
        .count();
    if blank_tail == 0 || blank_tail == old.len() || at_end {
        return None;
    }
    let found = file.seek(&old[..old.len() - blank_tail], from, near, false)?;
    Some((found, &c.lines[..c.lines.len() - blank_tail]))
}

/// The line break an added line gets.
fn added_eol(l: &Line, ending_aware: bool, here: Eol) -> Eol {
    match (ending_aware, l.cr) {
        (false, _) => here,
        (true, true) => Eol::Crlf,
        (true, false) => Eol::Lf,
    }
}

/// Before another line: the last line written (a file's last line, which had no line
/// break) gets one.
fn end_open_line(out: &mut Vec<u8>, eol: Eol) {
    if out.last().is_some_and(|&b| b != b'\n') {
        out.extend_from_slice(eol.bytes());
    }
}

fn set_final_break(out: &mut Vec<u8>, want: bool) {
    if out.is_empty() {
        return;
    }
    let has = out.ends_with(b"\n");
    if want && !has {
        let eol = eol_at(out, out.len()).unwrap_or(Eol::Lf);
        out.extend_from_slice(eol.bytes());
    } else if !want && has {
        out.pop();
        if out.ends_with(b"\r") {
            out.pop();
        }
    }
}
