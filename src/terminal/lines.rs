//! Pure: rows of terminal output as text, kept within bounds (a head and a tail, the
//! rows between counted), and joined into the logical lines of an answer within its
//! budget (issue 19 §1).

use std::collections::VecDeque;

/// One physical row of the screen, as text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Row {
    pub text: String,
    /// The row above wrapped into this one: both are one logical line.
    pub continues: bool,
}

/// Rows with a bounded memory: the first ones up to `head_cap` characters, the last ones
/// up to `tail_cap`, and a count of those dropped between.
#[derive(Debug, Clone)]
pub(super) struct Bounded {
    head: Vec<Row>,
    pub(super) head_chars: usize,
    tail: VecDeque<Row>,
    pub(super) tail_chars: usize,
    /// Rows dropped between head and tail.
    omitted: u64,
    /// Lines those rows began (a wrapped line's continuation rows begin none).
    omitted_lines: u64,
    head_cap: usize,
    tail_cap: usize,
}

impl Bounded {
    pub(super) fn new(head_cap: usize, tail_cap: usize) -> Self {
        Bounded {
            head: Vec::new(),
            head_chars: 0,
            tail: VecDeque::new(),
            tail_chars: 0,
            omitted: 0,
            omitted_lines: 0,
            head_cap,
            tail_cap,
        }
    }

    pub(super) fn push(&mut self, row: Row) {
        let len = row.text.len() + 1;
        if self.omitted == 0 && self.tail.is_empty() && self.head_chars + len <= self.head_cap {
            self.head_chars += len;
            self.head.push(row);
            return;
        }
        self.tail_chars += len;
        self.tail.push_back(row);
        while self.tail_chars > self.tail_cap {
            match self.tail.pop_front() {
                Some(r) => {
                    self.tail_chars -= r.text.len() + 1;
                    self.omitted += 1;
                    self.omitted_lines += u64::from(!r.continues);
                }
                None => break,
            }
        }
    }

    /// Rows dropped here: they join the omission (with any tail before them, so there is
    /// one gap).
    pub(super) fn push_gap(&mut self, lines: u64) {
        self.omitted += lines + self.tail.len() as u64;
        self.omitted_lines += lines + self.tail.iter().filter(|r| !r.continues).count() as u64;
        self.tail.clear();
        self.tail_chars = 0;
    }

    pub(super) fn len(&self) -> u64 {
        self.head.len() as u64 + self.omitted + self.tail.len() as u64
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows in order, a gap standing for the omitted ones (once), counted in lines.
    pub(super) fn items(&self) -> impl Iterator<Item = Item<'_>> {
        let gap = (self.omitted > 0).then_some(Item::Gap(self.omitted_lines.max(1)));
        self.head
            .iter()
            .map(Item::Row)
            .chain(gap)
            .chain(self.tail.iter().map(Item::Row))
    }

    pub(super) fn clear(&mut self) {
        self.head.clear();
        self.tail.clear();
        self.head_chars = 0;
        self.tail_chars = 0;
        self.omitted = 0;
        self.omitted_lines = 0;
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Item<'a> {
    Row(&'a Row),
    /// Rows were dropped here, beginning this many lines.
    Gap(u64),
}

/// A row or a run of omitted rows (counted in lines), owned.
#[derive(Debug, Clone)]
pub(super) enum Owned {
    Row(Row),
    Gap(u64),
}

/// Joins rows into logical lines within `budget` characters. Everything between the
/// first and the last gap (and whatever does not fit) becomes one omission, placed at a
/// line start: its line count, and its byte offset in the text.
pub(super) fn render_lines(rows: &[Owned], budget: usize) -> (String, u64, usize) {
    let first_gap = rows.iter().position(|r| matches!(r, Owned::Gap(_)));
    let last_gap = rows.iter().rposition(|r| matches!(r, Owned::Gap(_)));
    let (head, middle, tail): (&[Owned], &[Owned], &[Owned]) = match (first_gap, last_gap) {
        (Some(a), Some(b)) => (&rows[..a], &rows[a..=b], &rows[b + 1..]),
        _ => (rows, &[], &[]),
    };
    let mut omitted: u64 = middle
        .iter()
        .map(|r| match r {
            Owned::Gap(n) => *n,
            Owned::Row(r) => u64::from(!r.continues),
        })
        .sum();
    let row_len = |r: &Owned| match r {
        Owned::Row(r) => r.text.len() + 1,
        Owned::Gap(_) => 0,
    };
    let all: Vec<&Owned> = head.iter().chain(tail).collect();
    let total: usize = all.iter().map(|r| row_len(r)).sum();
    if total <= budget {
        return join_with_gap(&all, head.len(), omitted);
    }
    // A quarter for the start, the rest for the end (what a terminal shows last matters
    // most), whole rows only, never reaching across the omission already there.
    let head_limit = if omitted > 0 { head.len() } else { all.len() };
    let (mut used, mut h) = (0, 0);
    while h < head_limit && used + row_len(all[h]) <= budget / 4 {
        used += row_len(all[h]);
        h += 1;
    }
    let tail_limit = if omitted > 0 {
        tail.len()
    } else {
        all.len() - h
    };
    let mut t = 0;
    while t < tail_limit.min(all.len() - h) && used + row_len(all[all.len() - 1 - t]) <= budget {
        used += row_len(all[all.len() - 1 - t]);
        t += 1;
    }
    omitted += all[h..all.len() - t]
        .iter()
        .filter(|r| matches!(r, Owned::Row(r) if !r.continues))
        .count() as u64;
    let kept: Vec<&Owned> = all[..h]
        .iter()
        .chain(&all[all.len() - t..])
        .copied()
        .collect();
    join_with_gap(&kept, h, omitted)
}

/// Joins `rows` (logical lines: a continuing row is appended to the one before), the
/// omission falling before row `gap_at`.
fn join_with_gap(rows: &[&Owned], gap_at: usize, omitted: u64) -> (String, u64, usize) {
    let mut text = String::new();
    let mut at = 0;
    for (i, row) in rows.iter().enumerate() {
        let Owned::Row(row) = row else { continue };
        if i == gap_at && omitted > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            at = text.len();
        } else if i > 0 && !row.continues {
            text.push('\n');
        }
        text.push_str(&row.text);
    }
    if omitted > 0 && gap_at >= rows.len() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        at = text.len();
    }
    (text, omitted, at)
}

/// The first `max` bytes of `text`, at a character boundary.
pub(super) fn cut_chars(text: &str, max: usize) -> String {
    crate::text::truncate::prefix_bytes(text, max).to_string()
}
