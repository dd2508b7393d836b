//! The byte-exact replacement behind `str_replace` (seed 000 D14, DESIGN §7), and the
//! "closest region" hint for a miss. Works on bytes, so a BOM, the line endings and any
//! bytes that are not UTF-8 outside the replaced text come out exactly as they went in.

use memchr::memmem;

/// A successful replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub content: Vec<u8>,
    pub count: usize,
    /// Byte offset, in the new content, of the first replacement.
    pub first_at: usize,
    /// Length of the text that replaced each occurrence (after line-ending conversion).
    pub new_len: usize,
    /// The match only succeeded with `\n` turned into `\r\n` on both sides.
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

/// Replaces `old` by `new` in `content`: exactly once unless `replace_all`. If `old` is
/// absent, the file uses CRLF and `old` has bare `\n` line ends, the CRLF form of both
/// strings is tried, since models type `\n` whatever the file has.
pub fn replace(
    content: &[u8],
    old: &[u8],
    new: &[u8],
    replace_all: bool,
) -> Result<Replaced, ReplaceError> {
    debug_assert!(!old.is_empty());
    if let Some(done) = replace_exact(content, old, new, replace_all)? {
        return Ok(done);
    }
    if memmem::find(content, b"\r\n").is_some() && old.contains(&b'\n') {
        let old_crlf = to_crlf(old);
        if old_crlf != old {
            let new_crlf = to_crlf(new);
            if let Some(mut done) = replace_exact(content, &old_crlf, &new_crlf, replace_all)? {
                done.crlf = true;
                return Ok(done);
            }
        }
    }
    Err(ReplaceError::NotFound)
}

fn replace_exact(
    content: &[u8],
    old: &[u8],
    new: &[u8],
    replace_all: bool,
) -> Result<Option<Replaced>, ReplaceError> {
    let finder = memmem::Finder::new(old);
    let hits: Vec<usize> = finder.find_iter(content).collect();
    if hits.is_empty() {
        return Ok(None);
    }
    if hits.len() > 1 && !replace_all {
        let lines = hits
            .iter()
            .take(10)
            .map(|&at| crate::text::lines::line_of_offset(content, at))
            .collect();
        return Err(ReplaceError::Ambiguous {
            count: hits.len(),
            lines,
        });
    }
    let mut out =
        Vec::with_capacity(content.len() + hits.len() * new.len().saturating_sub(old.len()));
    let mut last = 0;
    for &at in &hits {
        out.extend_from_slice(&content[last..at]);
        out.extend_from_slice(new);
        last = at + old.len();
    }
    out.extend_from_slice(&content[last..]);
    Ok(Some(Replaced {
        content: out,
        count: hits.len(),
        first_at: hits[0],
        new_len: new.len(),
        crlf: false,
    }))
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
/// nothing of it is kept. Each edit is [`replace`], so the CRLF fallback and the
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
        /// is exactly prefix + new + suffix.
        #[test]
        fn unique_replacement_is_splice(prefix in proptest::collection::vec(any::<u8>(), 0..40),
                                        suffix in proptest::collection::vec(any::<u8>(), 0..40),
                                        old in proptest::collection::vec(any::<u8>(), 1..6),
                                        new in proptest::collection::vec(any::<u8>(), 0..6)) {
            let mut content = prefix.clone();
            content.extend_from_slice(&old);
            content.extend_from_slice(&suffix);
            match replace(&content, &old, &new, false) {
                Ok(r) if !r.crlf => {
                    prop_assert_eq!(r.count, 1);
                    let mut want = prefix.clone();
                    want.extend_from_slice(&new);
                    want.extend_from_slice(&suffix);
                    prop_assert_eq!(r.content, want);
                }
                Ok(_) => prop_assert!(false, "exact text was present, CRLF fallback not expected"),
                Err(ReplaceError::Ambiguous { count, .. }) => prop_assert!(count > 1),
                Err(ReplaceError::NotFound) => prop_assert!(false, "present text not found"),
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
