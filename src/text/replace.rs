//! The byte-exact replacement behind `str_replace` (seed 000 D14, DESIGN §7), and the
//! "closest region" hint for a miss. Works on bytes, so a BOM, the line endings and any
//! bytes that are not UTF-8 outside the replaced text come out exactly as they went in.

use memchr::memmem;
use std::borrow::Cow;
use std::ops::Range;

/// A successful replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub content: Vec<u8>,
    pub count: usize,
    /// Byte offset, in the new content, of the first replacement.
    pub first_at: usize,
    /// The match only succeeded with the line breaks of `old` taken as the file's
    /// (`\n` in `old` matching `\r\n` in the file, or the other way round).
    pub crlf: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplaceError {
    NotFound,
    /// `count` occurrences start on these (1-based) lines, at most ten listed.
    Ambiguous {
        count: usize,
        lines: Vec<usize>,
    },
}

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    Crlf,
}

impl Eol {
    pub fn bytes(self) -> &'static [u8] {
        match self {
            Eol::Lf => b"\n",
            Eol::Crlf => b"\r\n",
        }
    }
}

/// The ending of the line that holds byte `at`: that of the first line break at or after
/// it, else of the last one before it (a last line without a break takes its
/// predecessor's); `None` when `content` has no line break at all. In a file with one
/// style this is the file's style; in a mixed file it is the style of the place an edit
/// lands, so an edit never changes the ending of a line it does not touch.
pub fn eol_at(content: &[u8], at: usize) -> Option<Eol> {
    let at = at.min(content.len());
    let nl = memchr::memchr(b'\n', &content[at..])
        .map(|i| at + i)
        .or_else(|| memchr::memrchr(b'\n', &content[..at]))?;
    Some(if nl > 0 && content[nl - 1] == b'\r' {
        Eol::Crlf
    } else {
        Eol::Lf
    })
}

/// The line endings a whole file uses: `Some(eol)` when every line break is `eol`,
/// `None` when it has none or both.
pub fn uniform_eol(content: &[u8]) -> Option<Eol> {
    let mut seen: Option<Eol> = None;
    for nl in memchr::memchr_iter(b'\n', content) {
        let here = if nl > 0 && content[nl - 1] == b'\r' {
            Eol::Crlf
        } else {
            Eol::Lf
        };
        match seen {
            None => seen = Some(here),
            Some(s) if s != here => return None,
            Some(_) => {}
        }
    }
    seen
}

/// `text` with every line break (`\n` or `\r\n`) written as `eol`. A lone `\r` is kept.
pub fn with_eol(text: &[u8], eol: Eol) -> Cow<'_, [u8]> {
    match eol {
        Eol::Crlf if memchr::memchr_iter(b'\n', text).any(|i| i == 0 || text[i - 1] != b'\r') => {
            Cow::Owned(to_crlf(text))
        }
        Eol::Lf if memmem::find(text, b"\r\n").is_some() => Cow::Owned(to_lf(text)),
        _ => Cow::Borrowed(text),
    }
}

/// Replaces `old` by `new` in `content`: exactly once unless `replace_all`.
///
/// Line breaks are one thing whatever their bytes: a model reads a file through a view
/// where a CR is invisible and types `\n`, so a line break in `old` matches `\n` or
/// `\r\n` in the file (never half of a `\r\n` pair), and every line break of `new` is
/// written in the ending of the line the occurrence starts in ([`eol_at`]). A file with
/// no line break gets `new` as sent. Every byte outside the occurrences is kept.
pub fn replace(
    content: &[u8],
    old: &[u8],
    new: &[u8],
    replace_all: bool,
) -> Result<Replaced, ReplaceError> {
    debug_assert!(!old.is_empty());
    let hits = find_all(content, old);
    if hits.is_empty() {
        return Err(ReplaceError::NotFound);
    }
    if hits.len() > 1 && !replace_all {
        let lines = hits
            .iter()
            .take(10)
            .map(|r| crate::text::lines::line_of_offset(content, r.start))
            .collect();
        return Err(ReplaceError::Ambiguous {
            count: hits.len(),
            lines,
        });
    }
    let mut out = Vec::with_capacity(content.len() + hits.len() * (new.len() + new.len() / 8));
    let mut last = 0;
    let mut first_at = 0;
    let mut crlf = false;
    for (i, hit) in hits.iter().enumerate() {
        out.extend_from_slice(&content[last..hit.start]);
        if i == 0 {
            first_at = out.len();
        }
        crlf |= content[hit.clone()] != *old;
        match eol_at(content, hit.start) {
            Some(eol) => out.extend_from_slice(&with_eol(new, eol)),
            None => out.extend_from_slice(new),
        }
        last = hit.end;
    }
    out.extend_from_slice(&content[last..]);
    Ok(Replaced {
        content: out,
        count: hits.len(),
        first_at,
        crlf,
    })
}

/// Every occurrence of `old` in `content`, left to right and not overlapping, with line
/// breaks matched as [`replace`] says.
fn find_all(content: &[u8], old: &[u8]) -> Vec<Range<usize>> {
    let has_nl = old.contains(&b'\n');
    let breaks_differ = has_nl
        && (memmem::find(content, b"\r\n").is_some() || memmem::find(old, b"\r\n").is_some());
    if !breaks_differ {
        // Bytes are compared as they are; only a hit that would end inside a `\r\n` pair
        // (an `old` ending in a lone `\r`) or begin inside one (an `old` beginning with
        // `\n`, where the file has `\r\n`) is refused: it would leave half a line break.
        return memmem::find_iter(content, old)
            .map(|at| at..at + old.len())
            .filter(|r| !splits_pair(content, r))
            .collect();
    }
    // A line break of `old` matches either ending. `\r?\n` finds the leftmost match, so
    // an `old` that begins with a line break takes the whole `\r\n` pair.
    let normal = to_lf(old);
    let mut pattern = String::with_capacity(normal.len() * 2);
    for (i, piece) in normal.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            pattern.push_str(r"\r?\n");
        }
        for &b in piece {
            // Every byte literally, as a hex escape: `old` need not be UTF-8.
            pattern.push_str(&format!(r"\x{b:02x}"));
        }
    }
    let re = match regex::bytes::RegexBuilder::new(&pattern)
        .unicode(false)
        .size_limit(64 * (pattern.len() + (1 << 20)))
        .build()
    {
        Ok(re) => re,
        // Only a pattern past the size limit fails to build; count it as absent rather
        // than guess.
        Err(_) => return Vec::new(),
    };
    re.find_iter(content)
        .map(|m| m.range())
        .filter(|r| !splits_pair(content, r))
        .collect()
}

/// Whether `r` begins on the `\n` of a `\r\n` pair or ends between its `\r` and `\n`.
fn splits_pair(content: &[u8], r: &Range<usize>) -> bool {
    let starts_inside = r.start > 0 && content[r.start - 1] == b'\r' && content[r.start] == b'\n';
    let ends_inside = r.end > 0
        && r.end < content.len()
        && content[r.end - 1] == b'\r'
        && content[r.end] == b'\n';
    starts_inside || ends_inside
}

/// One edit of an edit list (issue 15 §2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit<'a> {
    pub old: &'a [u8],
    pub new: &'a [u8],
    pub replace_all: bool,
}

/// The edits of a list, applied in order, each to the result of the ones before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub content: Vec<u8>,
    /// What each edit did, in order (`content` of each is left empty: only the last
    /// one's matters, and it is `Applied::content`).
    pub steps: Vec<Replaced>,
}

/// Which edit of a list failed (0-based), why, and the text it was matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditFailed {
    pub index: usize,
    pub error: ReplaceError,
    /// The content after the edits before it, where the closest region is looked for;
    /// `None` when that is the original content (the first edit failed).
    pub against: Option<Vec<u8>>,
}

/// Applies `edits` in order, all or nothing: the first that fails stops the list and
/// nothing of it is kept. Each edit is [`replace`], so the line-break rule and the
/// uniqueness rule hold for every edit as for a single one. The original is not copied:
/// a file's edit holds its old and new content, never a third copy.
pub fn apply_edits(content: &[u8], edits: &[Edit<'_>]) -> Result<Applied, EditFailed> {
    let mut current: Option<Vec<u8>> = None;
    let mut steps = Vec::with_capacity(edits.len());
    for (index, e) in edits.iter().enumerate() {
        let text = current.as_deref().unwrap_or(content);
        match replace(text, e.old, e.new, e.replace_all) {
            Ok(mut done) => {
                current = Some(std::mem::take(&mut done.content));
                steps.push(done);
            }
            Err(error) => {
                return Err(EditFailed {
                    index,
                    error,
                    against: current,
                });
            }
        }
    }
    Ok(Applied {
        content: current.unwrap_or_else(|| content.to_vec()),
        steps,
    })
}

/// `\n` → `\r\n`, leaving existing `\r\n` alone.
pub fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    let mut prev = 0u8;
    for &b in text {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

/// `\r\n` → `\n`, leaving a lone `\r` alone.
pub fn to_lf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\r' && text.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// Where `old` most nearly appears, for the error of a miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closest {
    /// 1-based, inclusive.
    pub first_line: usize,
    pub last_line: usize,
    /// Every line matched once leading and trailing whitespace is ignored.
    pub whitespace_only: bool,
    /// Lines of `old` that match (trimmed) at that place.
    pub matching_lines: usize,
    pub old_lines: usize,
}

/// Longest `old_str` (in lines) compared line by line; beyond it only its head is used.
const MAX_COMPARED_LINES: usize = 200;

/// Finds the window of the file that shares the most trimmed lines with `old`; failing
/// that, the single line sharing the most words with `old`'s first non-blank line.
pub fn closest_region(content: &str, old: &str) -> Option<Closest> {
    let file: Vec<&str> = content.split('\n').map(|l| l.trim()).collect();
    let wanted: Vec<&str> = old
        .split('\n')
        .map(|l| l.trim())
        .take(MAX_COMPARED_LINES)
        .collect();
    let k = wanted.len();
    let old_lines = old.split('\n').count();
    let mut best: Option<(usize, usize)> = None; // (score, start)
    if k <= file.len() {
        for start in 0..=(file.len() - k) {
            let score = wanted
                .iter()
                .zip(&file[start..start + k])
                .filter(|(w, f)| !w.is_empty() && w == f)
                .count();
            if score > 0 && best.is_none_or(|(s, _)| score > s) {
                best = Some((score, start));
            }
        }
    }
    let nonblank = wanted.iter().filter(|w| !w.is_empty()).count();
    if let Some((score, start)) = best {
        return Some(Closest {
            first_line: start + 1,
            last_line: start + k.min(file.len() - start),
            whitespace_only: score == nonblank && old_lines <= MAX_COMPARED_LINES,
            matching_lines: score,
            old_lines,
        });
    }
    // No line matched whole: look for the line sharing the most words.
    let first = wanted.iter().find(|w| !w.is_empty())?;
    let words: Vec<&str> = words_of(first).collect();
    if words.is_empty() {
        return None;
    }
    let mut best_line: Option<((usize, usize), usize)> = None;
    for (i, line) in file.iter().enumerate() {
        let shared = words_of(line).filter(|w| words.contains(w)).count();
        if shared * 2 < words.len() || shared == 0 {
            continue;
        }
        // Ties between lines sharing as many words go to the one whose text agrees
        // longest from either end ("let y = 2;" over "let x = 1;" for "let y = 3;").
        let score = (shared, common_affix_len(line, first));
        if best_line.is_none_or(|(s, _)| score > s) {
            best_line = Some((score, i));
        }
    }
    best_line.map(|(_, i)| Closest {
        first_line: i + 1,
        last_line: (i + old_lines).min(file.len()),
        whitespace_only: false,
        matching_lines: 0,
        old_lines,
    })
}

fn common_affix_len(a: &str, b: &str) -> usize {
    let prefix = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let suffix = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (prefix + suffix).min(a.chars().count().max(b.chars().count()))
}

fn words_of(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unique_ambiguous_missing() {
        let r = replace(b"a foo b", b"foo", b"bar", false).unwrap();
        assert_eq!(r.content, b"a bar b");
        assert_eq!(
            replace(b"x\nfoo\nfoo\n", b"foo", b"y", false),
            Err(ReplaceError::Ambiguous {
                count: 2,
                lines: vec![2, 3]
            })
        );
        assert_eq!(
            replace(b"abc", b"zz", b"y", false),
            Err(ReplaceError::NotFound)
        );
        let all = replace(b"foo foo foo", b"foo", b"x", true).unwrap();
        assert_eq!((all.content.as_slice(), all.count), (&b"x x x"[..], 3));
    }

    #[test]
    fn crlf_fallback_keeps_crlf() {
        let r = replace(
            b"\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n",
            b"one\ntwo",
            b"1\n2",
            false,
        )
        .unwrap();
        assert!(r.crlf);
        assert_eq!(r.content, b"\xEF\xBB\xBF1\r\n2\r\nthree\r\n");
    }

    /// Issue 21 §1: the new text takes the file's line ending, and a line break at either
    /// end of old_str takes the whole `\r\n` pair.
    #[test]
    fn new_lines_take_the_files_ending() {
        let file = b"one\r\ntwo\r\nthree\r\n";
        let r = replace(file, b"three", b"tres\nfour", false).unwrap();
        assert_eq!(r.content, b"one\r\ntwo\r\ntres\r\nfour\r\n");
        assert!(!r.crlf);
        assert_eq!(
            replace(file, b"\ntwo", b"", false).unwrap().content,
            b"one\r\nthree\r\n"
        );
        assert_eq!(
            replace(file, b"two\n", b"2\n", false).unwrap().content,
            b"one\r\n2\r\nthree\r\n"
        );
        // An old_str typed with CRLF matches an LF file, and new text gets LF.
        assert_eq!(
            replace(b"a\nb\n", b"a\r\nb", b"x\r\ny", false)
                .unwrap()
                .content,
            b"x\ny\n"
        );
        // Mixed: each place keeps its own ending; the same text in both forms is two.
        let mixed = b"a\r\nb\nc\r\n";
        assert_eq!(
            replace(mixed, b"b\nc", b"B\nC", false).unwrap().content,
            b"a\r\nB\nC\r\n"
        );
        assert_eq!(
            replace(b"x\ny\nx\r\ny\r\n", b"x\ny", b"z", false),
            Err(ReplaceError::Ambiguous {
                count: 2,
                lines: vec![1, 3]
            })
        );
        // A lone CR at the end of old_str never ends inside a pair.
        assert_eq!(
            replace(b"a\r\n", b"a\r", b"b", false),
            Err(ReplaceError::NotFound)
        );
        // Not UTF-8, with a line break: still byte for byte.
        assert_eq!(
            replace(b"\xff\r\n\xfe\r\n", b"\xff\n\xfe", b"\x80\n", false)
                .unwrap()
                .content,
            b"\x80\r\n\r\n"
        );
        assert_eq!(uniform_eol(b"a\r\nb\r\n"), Some(Eol::Crlf));
        assert_eq!(uniform_eol(b"a\r\nb\n"), None);
        assert_eq!(uniform_eol(b"ab"), None);
    }

    #[test]
    fn closest_finds_indentation_changes() {
        let file = "fn a() {\n    let x = 1;\n    let y = 2;\n}\n";
        let c = closest_region(file, "let x = 1;\nlet y = 2;").unwrap();
        assert_eq!((c.first_line, c.last_line, c.whitespace_only), (2, 3, true));
        let c = closest_region(file, "let y = 3;").unwrap();
        assert_eq!(c.first_line, 3);
        assert!(!c.whitespace_only);
        assert_eq!(closest_region(file, "completely unrelated"), None);
    }

    proptest! {
        /// Outside the replaced occurrences every byte is kept, and a unique replacement
        /// in a file without CRs is exactly prefix + new + suffix.
        #[test]
        fn unique_replacement_is_splice(prefix in proptest::collection::vec(any::<u8>().prop_filter("no CR", |b| *b != b'\r'), 0..40),
                                        suffix in proptest::collection::vec(any::<u8>().prop_filter("no CR", |b| *b != b'\r'), 0..40),
                                        old in proptest::collection::vec(any::<u8>().prop_filter("no CR", |b| *b != b'\r'), 1..6),
                                        new in proptest::collection::vec(any::<u8>(), 0..6)) {
            let mut content = prefix.clone();
            content.extend_from_slice(&old);
            content.extend_from_slice(&suffix);
            match replace(&content, &old, &new, false) {
                Ok(r) => {
                    prop_assert!(!r.crlf);
                    prop_assert_eq!(r.count, 1);
                    let mut want = prefix.clone();
                    match eol_at(&content, prefix.len()) {
                        Some(eol) => want.extend_from_slice(&with_eol(&new, eol)),
                        None => want.extend_from_slice(&new),
                    }
                    want.extend_from_slice(&suffix);
                    prop_assert_eq!(r.content, want);
                }
                Err(ReplaceError::Ambiguous { count, .. }) => prop_assert!(count > 1),
                Err(ReplaceError::NotFound) => prop_assert!(false, "present text not found"),
            }
        }

        /// Issue 21 §1. A model types `\n` for every line break. Whatever the file's
        /// endings (CRLF, LF or mixed), an edit keeps every byte outside the text it
        /// replaced — so no line it does not touch changes its ending and no `\r\n`
        /// pair is split —, writes the new lines in the ending of the line the edit
        /// starts in, and in a uniformly-CRLF file every line ends in CRLF after it.
        #[test]
        fn edits_keep_line_endings(lines in proptest::collection::vec(("[ab ]{0,4}", any::<bool>()), 1..8),
                                   last_break in any::<bool>(),
                                   from in (0usize..8, 0usize..6),
                                   to in (0usize..8, 0usize..6),
                                   new in "[ab\n]{0,8}") {
            // The file: lines with CRLF (true) or LF endings; the last one maybe without.
            let mut content = Vec::new();
            let mut starts = Vec::new();
            for (i, (text, crlf)) in lines.iter().enumerate() {
                starts.push(content.len());
                content.extend_from_slice(text.as_bytes());
                if i + 1 < lines.len() || last_break {
                    content.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
                }
            }
            // old_str: from (line, column) to (line, column) of the text a model sees.
            let at = |(line, col): (usize, usize)| {
                let line = line % lines.len();
                (starts[line] + col.min(lines[line].0.len()), line)
            };
            let ((a, _), (b, _)) = (at(from), at(to));
            let (s, e) = (a.min(b), a.max(b));
            let old = to_lf(&content[s..e]);
            if old.is_empty() || old == new.as_bytes() {
                return Ok(()); // nothing a model could send
            }
            match replace(&content, &old, new.as_bytes(), false) {
                // Occurrences do not overlap: "\n\n" in "\n\n\n" is one, the first.
                Ok(r) if r.first_at < s => {}
                Ok(r) => {
                    prop_assert_eq!(r.first_at, s);
                    let eol = eol_at(&content, s);
                    let mut want = content[..s].to_vec();
                    match eol {
                        Some(eol) => want.extend_from_slice(&with_eol(new.as_bytes(), eol)),
                        None => want.extend_from_slice(new.as_bytes()),
                    }
                    want.extend_from_slice(&content[e..]);
                    prop_assert_eq!(&r.content, &want);
                    if uniform_eol(&content) == Some(Eol::Crlf) {
                        prop_assert_eq!(uniform_eol(&r.content).unwrap_or(Eol::Crlf), Eol::Crlf);
                    }
                }
                Err(ReplaceError::Ambiguous { count, .. }) => prop_assert!(count > 1),
                Err(ReplaceError::NotFound) => prop_assert!(false, "text the model saw not found"),
            }
        }

        /// Applying an edit list is applying its edits one by one; a failing edit
        /// names itself and the text it was matched against.
        #[test]
        fn edit_list_is_edits_in_turn(content in "[abc\n]{0,40}",
                                      edits in proptest::collection::vec(("[abc]{1,3}", "[abc\n]{0,3}", any::<bool>()), 0..5)) {
            let list: Vec<Edit<'_>> = edits
                .iter()
                .map(|(o, n, all)| Edit { old: o.as_bytes(), new: n.as_bytes(), replace_all: *all })
                .collect();
            let mut current = content.as_bytes().to_vec();
            let mut failed = None;
            for (i, e) in list.iter().enumerate() {
                match replace(&current, e.old, e.new, e.replace_all) {
                    Ok(r) => current = r.content,
                    Err(err) => {
                        failed = Some((i, err, current.clone()));
                        break;
                    }
                }
            }
            match (apply_edits(content.as_bytes(), &list), failed) {
                (Ok(applied), None) => {
                    prop_assert_eq!(applied.content, current);
                    prop_assert_eq!(applied.steps.len(), list.len());
                }
                (Err(f), Some((i, err, against))) => {
                    prop_assert_eq!(f.index, i);
                    prop_assert_eq!(f.error, err);
                    prop_assert_eq!(f.against.unwrap_or_else(|| content.as_bytes().to_vec()), against);
                }
                (got, want) => prop_assert!(false, "apply_edits {:?} vs one by one {:?}", got, want),
            }
        }

        #[test]
        fn closest_region_is_in_bounds(file in "[a-c \n]{0,80}", old in "[a-c \n]{1,20}") {
            if let Some(c) = closest_region(&file, &old) {
                let lines = file.split('\n').count();
                prop_assert!(c.first_line >= 1 && c.first_line <= c.last_line && c.last_line <= lines);
            }
        }
    }
}
