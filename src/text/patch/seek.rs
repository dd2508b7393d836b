//! Finding a hunk's lines in a file, with Codex's decreasing strictness: the exact
//! lines, then ignoring trailing whitespace, then surrounding whitespace, then with
//! typographic punctuation read as ASCII (a model types `-` and `"` where the file has
//! `–` and `”`). Each level is tried over every position before the next, so an exact
//! match anywhere wins over a loose one nearer. Line endings never count: a line is
//! compared without its `\n` or `\r\n`.

use std::cell::OnceCell;

/// How loosely a hunk matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fuzz {
    Exact,
    /// Equal once trailing whitespace is ignored.
    TrailingWhitespace,
    /// Equal once leading and trailing whitespace is ignored (indentation).
    Whitespace,
    /// Equal once, besides, typographic dashes, quotes and spaces are read as ASCII.
    Punctuation,
    /// An `@@` anchor only: the line contains the anchor's text.
    Contains,
}

impl Fuzz {
    pub fn describe(self) -> &'static str {
        match self {
            Fuzz::Exact => "exactly",
            Fuzz::TrailingWhitespace => "ignoring trailing whitespace",
            Fuzz::Whitespace => "ignoring leading and trailing whitespace (indentation)",
            Fuzz::Punctuation => {
                "ignoring whitespace and reading typographic dashes and quotes as ASCII"
            }
            Fuzz::Contains => "as part of a longer line",
        }
    }
}

const LOOSE: [Fuzz; 3] = [
    Fuzz::TrailingWhitespace,
    Fuzz::Whitespace,
    Fuzz::Punctuation,
];

/// A file's lines (without their endings), with their loose forms made on first use.
pub struct FileLines<'a> {
    pub texts: Vec<&'a [u8]>,
    loose: [OnceCell<Vec<String>>; 3],
}

impl<'a> FileLines<'a> {
    pub fn new(texts: Vec<&'a [u8]>) -> Self {
        FileLines {
            texts,
            loose: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.texts.len()
    }

    fn loose(&self, level: Fuzz) -> &[String] {
        let k = level_index(level);
        self.loose[k].get_or_init(|| {
            self.texts
                .iter()
                .map(|t| normalise(&String::from_utf8_lossy(t), level))
                .collect()
        })
    }

    /// The first position at or after `from` (the nearest to `near`, when given) where
    /// `pattern` matches, at the strictest level that finds one. `at_end`: only where the
    /// pattern ends at the last line.
    pub fn seek(
        &self,
        pattern: &[&str],
        from: usize,
        near: Option<usize>,
        at_end: bool,
    ) -> Option<(usize, Fuzz)> {
        let k = pattern.len();
        let n = self.len();
        if k > n || from > n - k {
            return None;
        }
        let candidates = || positions(from, n - k, near, at_end);
        if let Some(i) =
            candidates().find(|&i| (0..k).all(|j| self.texts[i + j] == pattern[j].as_bytes()))
        {
            return Some((i, Fuzz::Exact));
        }
        for level in LOOSE {
            let lines = self.loose(level);
            let wanted: Vec<String> = pattern.iter().map(|p| normalise(p, level)).collect();
            if let Some(i) = candidates().find(|&i| (0..k).all(|j| lines[i + j] == wanted[j])) {
                return Some((i, level));
            }
        }
        None
    }

    /// The first line at or after `from` that is the `@@` anchor `text`: by the levels
    /// of [`seek`](Self::seek), then as part of a longer line (`@@ def f` for
    /// `    def f(self, x):`).
    pub fn seek_anchor(&self, text: &str, from: usize) -> Option<(usize, Fuzz)> {
        if let Some(found) = self.seek(&[text], from, None, false) {
            return Some(found);
        }
        let wanted = normalise(text, Fuzz::Punctuation);
        if wanted.is_empty() {
            return None;
        }
        let lines = self.loose(Fuzz::Punctuation);
        (from..self.len())
            .find(|&i| lines[i].contains(&wanted))
            .map(|i| (i, Fuzz::Contains))
    }
}

fn level_index(level: Fuzz) -> usize {
    match level {
        Fuzz::TrailingWhitespace => 0,
        Fuzz::Whitespace => 1,
        _ => 2,
    }
}

/// Candidate start positions in `from..=last`: ascending, or outward from `near` (the
/// lower one first on a tie); only `last` when the match must end the file.
fn positions(
    from: usize,
    last: usize,
    near: Option<usize>,
    at_end: bool,
) -> Box<dyn Iterator<Item = usize>> {
    if at_end {
        return Box::new(std::iter::once(last));
    }
    match near {
        None => Box::new(from..=last),
        Some(h) => {
            let h = h.clamp(from, last);
            let below = (from..h).rev().map(Some).chain(std::iter::repeat(None));
            let above = (h..=last).map(Some).chain(std::iter::repeat(None));
            Box::new(
                above
                    .zip(below)
                    .take_while(|(a, b)| a.is_some() || b.is_some())
                    // h, h-1, h+1, h-2, h+2, …: by distance, the lower one first.
                    .flat_map(|(a, b)| a.into_iter().chain(b)),
            )
        }
    }
}

/// A line as a loose level compares it.
fn normalise(s: &str, level: Fuzz) -> String {
    match level {
        Fuzz::Exact => s.to_string(),
        Fuzz::TrailingWhitespace => s.trim_end().to_string(),
        Fuzz::Whitespace => s.trim().to_string(),
        Fuzz::Punctuation | Fuzz::Contains => s
            .trim()
            .chars()
            .map(|c| match c {
                '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
                | '\u{2212}' => '-',
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
                '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
                | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
                | '\u{3000}' => ' ',
                other => other,
            })
            .collect(),
    }
}
