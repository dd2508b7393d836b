//! A patch made from two versions of a file, as a model (or `git diff`) would write it:
//! each change with up to three lines of context, grown until the hunk's lines are
//! found where they belong (the first match after the hunk before). The property tests
//! and the fuzz target apply what this makes and expect the new version byte for byte.

use super::seek::FileLines;
use super::{Chunk, FileOp, Line, LineKind};
use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Lines of context a hunk starts with.
const CONTEXT: usize = 3;

/// One line: its text and its line break (`""` for a last line without one).
type Piece<'a> = (&'a str, &'a str);

fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(i) => {
                let (line, ending) = match rest[..i].strip_suffix('\r') {
                    Some(t) => (t, &rest[i - 1..=i]),
                    None => (&rest[..i], &rest[i..=i]),
                };
                out.push((line, ending));
                rest = &rest[i + 1..];
            }
            None => {
                out.push((rest, ""));
                rest = "";
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Step {
    Same(usize, usize),
    Gone(usize),
    New(usize),
}

/// The `Update File` section that turns `old` into `new` (no hunks when they are
/// equal).
pub fn file_op_for(path: &str, old: &str, new: &str) -> FileOp {
    let (a, b) = (pieces(old), pieces(new));
    let mut steps = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => steps.extend((0..len).map(|k| Step::Same(old_index + k, new_index + k))),
            DiffOp::Delete {
                old_index, old_len, ..
            } => steps.extend((old_index..old_index + old_len).map(Step::Gone)),
            DiffOp::Insert {
                new_index, new_len, ..
            } => steps.extend((new_index..new_index + new_len).map(Step::New)),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                steps.extend((old_index..old_index + old_len).map(Step::Gone));
                steps.extend((new_index..new_index + new_len).map(Step::New));
            }
        }
    }
    let mut chunks = hunks(&a, &b, &steps);
    let crlf = |p: &[Piece<'_>]| p.iter().any(|l| l.1 == "\r\n");
    let aware = chunks.iter().any(|c| c.lines.iter().any(|l| l.cr));
    if !chunks.is_empty() && !aware && (crlf(&a) || crlf(&b)) {
        // No hunk line shows a CR, so new lines would take the file's ending at their
        // place; where the two versions mix endings, say every line's: the whole file.
        chunks = vec![whole_file(&a, &b)];
    }
    FileOp::Update {
        path: path.to_string(),
        move_to: None,
        chunks,
    }
}

fn line(kind: LineKind, p: Piece<'_>) -> Line {
    Line {
        kind,
        text: p.0.to_string(),
        cr: p.1 == "\r\n",
    }
}

/// The old line index at each step (how many old lines come before it), and after the
/// last.
fn old_positions(steps: &[Step]) -> Vec<usize> {
    let mut at = Vec::with_capacity(steps.len() + 1);
    let mut k = 0;
    for s in steps {
        at.push(k);
        if !matches!(s, Step::New(_)) {
            k += 1;
        }
    }
    at.push(k);
    at
}

fn hunks(a: &[Piece<'_>], b: &[Piece<'_>], steps: &[Step]) -> Vec<Chunk> {
    let old_at = old_positions(steps);
    let file = FileLines::new(a.iter().map(|p| p.0.as_bytes()).collect());
    let same = |k: usize| matches!(steps[k], Step::Same(..));
    let mut chunks = Vec::new();
    let (mut pos, mut prev_end) = (0usize, 0usize);
    while let Some(s) = (pos..steps.len()).find(|&k| !same(k)) {
        let mut lo = s;
        let mut hi = s;
        while hi < steps.len() && !same(hi) {
            hi += 1;
        }
        // Up to CONTEXT lines of context each side, not before the previous hunk.
        for _ in 0..CONTEXT {
            if lo > pos && same(lo - 1) {
                lo -= 1;
            }
        }
        let mut grow_up = true;
        loop {
            // Context that reaches the next change takes it in.
            let mut added = 0;
            while added < CONTEXT && hi < steps.len() {
                if !same(hi) {
                    while hi < steps.len() && !same(hi) {
                        hi += 1;
                    }
                    added = 0;
                } else {
                    hi += 1;
                    added += 1;
                }
            }
            let (ol, oh) = (old_at[lo], old_at[hi]);
            let pattern: Vec<&str> = a[ol..oh].iter().map(|p| p.0).collect();
            let at_end = oh == a.len();
            let placed = if pattern.is_empty() {
                at_end
            } else {
                at_end || file.seek(&pattern, prev_end, None, false).map(|f| f.0) == Some(ol)
            };
            if placed {
                break;
            }
            if (grow_up || hi == steps.len()) && lo > pos {
                lo -= 1;
            } else if hi < steps.len() {
                hi += 1;
            } else {
                lo -= 1;
            }
            grow_up = !grow_up;
        }
        chunks.push(chunk_of(a, b, steps, lo, hi, old_at[hi] == a.len()));
        prev_end = old_at[hi];
        pos = hi;
    }
    chunks
}

fn chunk_of(
    a: &[Piece<'_>],
    b: &[Piece<'_>],
    steps: &[Step],
    lo: usize,
    hi: usize,
    at_end: bool,
) -> Chunk {
    let mut c = Chunk::default();
    for s in &steps[lo..hi] {
        c.lines.push(match *s {
            Step::Same(i, _) => line(LineKind::Context, a[i]),
            Step::Gone(i) => line(LineKind::Delete, a[i]),
            Step::New(j) => line(LineKind::Add, b[j]),
        });
    }
    let old_here = c.lines.iter().any(|l| l.kind != LineKind::Add);
    c.at_eof = at_end && old_here;
    // The last line of a version without a final line break, when the hunk holds it.
    let touches_end = |steps: &[Step], n: usize, old: bool| {
        steps.iter().any(|s| match *s {
            Step::Same(i, j) => (if old { i } else { j }) + 1 == n,
            Step::Gone(i) => old && i + 1 == n,
            Step::New(j) => !old && j + 1 == n,
        })
    };
    c.old_no_eol =
        a.last().is_some_and(|l| l.1.is_empty()) && touches_end(&steps[lo..hi], a.len(), true);
    c.new_no_eol =
        b.last().is_some_and(|l| l.1.is_empty()) && touches_end(&steps[lo..hi], b.len(), false);
    c
}

/// One hunk replacing every line.
fn whole_file(a: &[Piece<'_>], b: &[Piece<'_>]) -> Chunk {
    let mut c = Chunk::default();
    c.lines.extend(a.iter().map(|&p| line(LineKind::Delete, p)));
    c.lines.extend(b.iter().map(|&p| line(LineKind::Add, p)));
    c.at_eof = !a.is_empty();
    c.old_no_eol = a.last().is_some_and(|l| l.1.is_empty());
    c.new_no_eol = b.last().is_some_and(|l| l.1.is_empty());
    c
}
