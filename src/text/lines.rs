//! Streaming line scanning for `view`: numbered lines, long lines cut at
//! [`MAX_LINE_CHARS`] characters (seed 000 D9), constant memory whatever the file size
//! (seed 000 D12), and a content hash of every byte for view-before-edit.

use std::hash::Hasher;
use std::io::{self, BufRead};

/// Characters of one line that `view` shows (seed 000 D9).
pub const MAX_LINE_CHARS: usize = 2000;

/// Bytes of a line kept while scanning: enough for [`MAX_LINE_CHARS`] characters of up to
/// four bytes each, so a cut never depends on the encoding.
const KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// A 64-bit content hash that is independent of how the bytes were chunked.
#[derive(Default)]
pub struct ContentHasher(std::hash::DefaultHasher);

impl ContentHasher {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }
    pub fn finish(&self) -> u64 {
        self.0.finish()
    }
}

pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = ContentHasher::default();
    h.update(bytes);
    h.finish()
}

/// What a full scan learned about the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanSummary {
    pub total_lines: usize,
    pub total_bytes: u64,
    pub hash: u64,
}

/// Reads `reader` to the end, calling `on_line(number, kept_bytes, total_chars)` for
/// every line whose 1-based number satisfies `wanted`. `kept_bytes` holds at most
/// [`KEEP_BYTES`] bytes of the line, without its `\n` or a trailing `\r`; `total_chars`
/// counts the whole line. A last line without a newline still counts as a line.
pub fn scan_lines<R: BufRead>(
    mut reader: R,
    wanted: impl Fn(usize) -> bool,
    mut on_line: impl FnMut(usize, &[u8], usize),
) -> io::Result<ScanSummary> {
    let mut hasher = ContentHasher::default();
    let mut total_bytes = 0u64;
    let mut line_no = 1usize;
    let mut kept: Vec<u8> = Vec::new();
    let mut chars = 0usize;
    let mut last_byte: Option<u8> = None;
    let mut line_has_bytes = false;
    let mut want = wanted(line_no);

    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        hasher.update(buf);
        total_bytes += buf.len() as u64;
        let mut pos = 0;
        while pos < buf.len() {
            let rest = &buf[pos..];
            let (segment, newline) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            if !segment.is_empty() {
                line_has_bytes = true;
                last_byte = segment.last().copied();
                if want {
                    let room = KEEP_BYTES.saturating_sub(kept.len());
                    kept.extend_from_slice(&segment[..segment.len().min(room)]);
                    chars += count_chars(segment);
                }
            }
            pos += segment.len();
            if newline {
                pos += 1;
                if want {
                    finish_line(line_no, &mut kept, chars, last_byte, &mut on_line);
                }
                line_no += 1;
                want = wanted(line_no);
                kept.clear();
                chars = 0;
                last_byte = None;
                line_has_bytes = false;
            }
        }
        let consumed = buf.len();
        reader.consume(consumed);
    }
    let total_lines = if line_has_bytes {
        if want {
            finish_line(line_no, &mut kept, chars, last_byte, &mut on_line);
        }
        line_no
    } else {
        line_no - 1
    };
    Ok(ScanSummary {
        total_lines,
        total_bytes,
        hash: hasher.finish(),
    })
}

fn finish_line(
    number: usize,
    kept: &mut Vec<u8>,
    mut chars: usize,
    last_byte: Option<u8>,
    on_line: &mut impl FnMut(usize, &[u8], usize),
) {
    if last_byte == Some(b'\r') {
        chars = chars.saturating_sub(1);
        if kept.last() == Some(&b'\r') {
            kept.pop();
        }
    }
    on_line(number, kept, chars);
}

/// Characters in UTF-8 text: every byte that is not a continuation byte starts one.
/// Invalid bytes count as one character each, as lossy decoding shows them.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// Cuts `line` to `max` characters, appending the seed's notice with the full length.
/// Never splits a character.
pub fn truncate_line(line: &str, total_chars: usize, max: usize) -> String {
    if total_chars <= max && line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max).collect();
    let total = total_chars.max(line.chars().count());
    format!("{cut}... [truncated, {total} chars total]")
}

/// One numbered line as `view` shows it (`cat -n` style: number right-aligned in six
/// columns, a tab, the text).
pub fn format_line(out: &mut String, number: usize, kept: &[u8], total_chars: usize) {
    use std::fmt::Write as _;
    let text = String::from_utf8_lossy(kept);
    let shown = truncate_line(&text, total_chars, MAX_LINE_CHARS);
    let _ = writeln!(out, "{number:>6}\t{shown}");
}

/// Lines `from..=to` of `content`, numbered as `view` shows them (for edit snippets).
pub fn numbered_excerpt(content: &[u8], from: usize, to: usize) -> String {
    let mut out = String::new();
    let _ = scan_lines(
        std::io::Cursor::new(content),
        |n| n >= from && n <= to,
        |n, kept, chars| format_line(&mut out, n, kept, chars),
    );
    out
}

/// 1-based number of the line that byte `offset` of `content` falls on.
pub fn line_of_offset(content: &[u8], offset: usize) -> usize {
    let end = offset.min(content.len());
    memchr::memchr_iter(b'\n', &content[..end]).count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    fn scan_all(data: &[u8]) -> (Vec<(usize, String, usize)>, ScanSummary) {
        let mut lines = vec![];
        let s = scan_lines(
            Cursor::new(data),
            |_| true,
            |n, k, c| lines.push((n, String::from_utf8_lossy(k).into_owned(), c)),
        )
        .unwrap();
        (lines, s)
    }

    #[test]
    fn counts_lines_like_an_editor() {
        assert_eq!(scan_all(b"").1.total_lines, 0);
        assert_eq!(scan_all(b"a").1.total_lines, 1);
        assert_eq!(scan_all(b"a\n").1.total_lines, 1);
        assert_eq!(scan_all(b"a\n\n").1.total_lines, 2);
        let (lines, s) = scan_all(b"one\r\ntwo\nthree");
        assert_eq!(s.total_lines, 3);
        assert_eq!(lines[0], (1, "one".to_string(), 3));
        assert_eq!(lines[2], (3, "three".to_string(), 5));
    }

    #[test]
    fn long_lines_are_cut_with_the_seed_notice() {
        let line = "é".repeat(2500);
        let (lines, _) = scan_all(line.as_bytes());
        let mut out = String::new();
        format_line(&mut out, 1, lines[0].1.as_bytes(), lines[0].2);
        assert!(
            out.ends_with("... [truncated, 2500 chars total]\n"),
            "{}",
            &out[out.len() - 60..]
        );
        assert_eq!(out.chars().filter(|&c| c == 'é').count(), 2000);
    }

    #[test]
    fn hash_is_chunking_independent() {
        let data = b"hello world, this is some content\n".repeat(100);
        let small = std::io::BufReader::with_capacity(7, Cursor::new(&data[..]));
        let s1 = scan_lines(small, |_| false, |_, _, _| {}).unwrap();
        assert_eq!(s1.hash, hash_bytes(&data));
    }

    proptest! {
        /// Scanning in any chunk size sees the same lines, and the kept text of a short
        /// line is the line itself.
        #[test]
        fn scan_matches_split(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(0xC3u8), Just(0xA9u8)], 0..200), cap in 1usize..16) {
            let reader = std::io::BufReader::with_capacity(cap, Cursor::new(&data[..]));
            let mut got = vec![];
            let s = scan_lines(reader, |_| true, |n, k, _| got.push((n, k.to_vec()))).unwrap();
            let mut expected: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
            if expected.last().is_some_and(|l| l.is_empty()) { expected.pop(); }
            prop_assert_eq!(s.total_lines, expected.len());
            for (i, (n, k)) in got.iter().enumerate() {
                prop_assert_eq!(*n, i + 1);
                let mut want = expected[i].to_vec();
                if want.last() == Some(&b'\r') { want.pop(); }
                prop_assert_eq!(k, &want);
            }
            prop_assert_eq!(s.hash, hash_bytes(&data));
        }

        #[test]
        fn truncation_keeps_a_prefix_and_never_splits(s in "\\PC{0,50}", max in 0usize..30) {
            let total = s.chars().count();
            let out = truncate_line(&s, total, max);
            if total <= max {
                prop_assert_eq!(&out, &s);
            } else {
                let cut: String = s.chars().take(max).collect();
                prop_assert!(out.starts_with(&cut));
                let notice = format!("... [truncated, {total} chars total]");
                prop_assert!(out.ends_with(&notice));
                prop_assert_eq!(out.chars().count(), max + notice.chars().count());
            }
        }
    }
}
