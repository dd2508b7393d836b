//! Streaming line scanning for `view`: numbered lines, long lines cut at
//! [`MAX_LINE_CHARS`] characters (seed 000 D9), constant memory whatever the file size
//! (seed 000 D12), and a content hash of every byte for view-before-edit.

use std::io::{self, BufRead};

/// Characters of one line that `view` shows (seed 000 D9).
pub const MAX_LINE_CHARS: usize = 2000;

/// Bytes of a line kept while scanning: enough for [`MAX_LINE_CHARS`] characters of up to
/// four bytes each, so a cut never depends on the encoding.
const KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

/// A 64-bit content hash that is independent of how the bytes were chunked. XXH3:
/// view-before-edit hashes every byte a `view` reads, and SipHash (std's default) cost
/// more than the rest of a 1 MiB view. A collision (a 2^-64 chance per change) only
/// matters against accidental changes, not an adversary: whoever can rewrite the file
/// can edit it anyway.
#[derive(Default)]
pub struct ContentHasher(xxhash_rust::xxh3::Xxh3Default);

impl ContentHasher {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    pub fn finish(&self) -> u64 {
        self.0.digest()
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
    reader: R,
    wanted: impl Fn(usize) -> bool,
    on_line: impl FnMut(usize, &[u8], usize),
) -> io::Result<ScanSummary> {
    scan_lines_from(reader, ScanFrom::START, wanted, on_line).map(|(s, _)| s)
}

/// Where a scan starts and when it may stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanFrom {
    /// Number of the line the reader is positioned at (a checkpoint of a line index).
    pub first_line: usize,
    /// Stop once this line is complete: nothing after it is read, and the summary's
    /// hash and totals then cover only what was read.
    pub stop_after: Option<usize>,
    /// Hash the bytes read, up to the end of the line the scan stopped after
    /// (view-before-edit on a file whose stamp is not trusted).
    pub hash: bool,
}

impl ScanFrom {
    pub const START: ScanFrom = ScanFrom {
        first_line: 1,
        stop_after: None,
        hash: true,
    };
}

/// [`scan_lines`] from a given line, optionally stopping early; the flag says whether
/// the end of the file was reached (then `total_lines` is the file's last line number).
pub fn scan_lines_from<R: BufRead>(
    mut reader: R,
    from: ScanFrom,
    wanted: impl Fn(usize) -> bool,
    mut on_line: impl FnMut(usize, &[u8], usize),
) -> io::Result<(ScanSummary, bool)> {
    let mut hasher = ContentHasher::default();
    let mut total_bytes = 0u64;
    let mut line_no = from.first_line;
    let stop_after = from.stop_after.unwrap_or(usize::MAX);
    let mut stopped_at = None;
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
                if line_no >= stop_after {
                    stopped_at = Some(pos);
                    break;
                }
                line_no += 1;
                want = wanted(line_no);
                kept.clear();
                chars = 0;
                last_byte = None;
                line_has_bytes = false;
            }
        }
        let consumed = stopped_at.unwrap_or(buf.len());
        let unread = buf.len() - consumed;
        // Only the bytes consumed: a scan that stops hashes exactly what it read.
        if from.hash {
            hasher.update(&buf[..consumed]);
        }
        reader.consume(consumed);
        if stopped_at.is_some() {
            // The reader now stands at the next line, for a caller that reads on.
            return Ok((
                ScanSummary {
                    total_lines: line_no,
                    total_bytes: total_bytes - unread as u64,
                    hash: hasher.finish(),
                },
                false,
            ));
        }
    }
    let total_lines = if line_has_bytes {
        if want {
            finish_line(line_no, &mut kept, chars, last_byte, &mut on_line);
        }
        line_no
    } else {
        line_no - 1
    };
    Ok((
        ScanSummary {
            total_lines,
            total_bytes,
            hash: hasher.finish(),
        },
        true,
    ))
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
/// Eight bytes at a time: this runs over every byte a `view` shows.
fn count_chars(bytes: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut continuation = 0usize;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // A continuation byte is 0b10xx_xxxx: bit 7 set, bit 6 clear. The marked bits,
        // moved to each byte's bit 0, are summed by one multiply (each byte is 0 or 1,
        // so the total fits the top byte); x86-64 without POPCNT made count_ones a
        // software loop that showed in profiles.
        let marks = (w & !(w << 1) & HIGH) >> 7;
        continuation += (marks.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
    }
    let tail = chunks.remainder();
    continuation += tail.iter().filter(|&&b| (b & 0xC0) == 0x80).count();
    bytes.len() - continuation
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
    // The common case, valid UTF-8 that needs no cut, is copied as it is: `kept` is
    // then the whole line (a line of at most MAX_LINE_CHARS characters fits in it).
    if total_chars <= MAX_LINE_CHARS
        && let Ok(text) = std::str::from_utf8(kept)
    {
        push_line_number(out, number);
        out.push_str(text);
        out.push('\n');
        return;
    }
    let text = String::from_utf8_lossy(kept);
    let shown = truncate_line(&text, total_chars, MAX_LINE_CHARS);
    let _ = writeln!(out, "{number:>6}\t{shown}");
}

/// `{number:>6}\t` without the formatting machinery, which showed in profiles of small
/// views.
fn push_line_number(out: &mut String, number: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = number;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let width = digits.len() - at;
    for _ in width..6 {
        out.push(' ');
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
    out.push('\t');
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

    #[test]
    fn numbers_are_right_aligned_in_six_columns() {
        for n in [0usize, 1, 9, 10, 99_999, 999_999, 1_000_000, usize::MAX] {
            let mut fast = String::new();
            format_line(&mut fast, n, b"x", 1);
            assert_eq!(fast, format!("{n:>6}\tx\n"));
        }
    }

    proptest! {
        /// The fast path (valid UTF-8, no cut) and the general one agree on every line.
        #[test]
        fn fast_and_general_formatting_agree(line in proptest::collection::vec(prop_oneof![Just(b'a'), Just(0xC3u8), Just(0xA9u8), Just(0x80u8), Just(b'\t')], 0..40), n in 0usize..2_000_000) {
            let total = count_chars(&line);
            let mut out = String::new();
            format_line(&mut out, n, &line, total);
            let text = String::from_utf8_lossy(&line);
            let expected = format!("{n:>6}\t{}\n", truncate_line(&text, total, MAX_LINE_CHARS));
            prop_assert_eq!(out, expected);
        }

        #[test]
        fn char_count_matches_the_definition(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            prop_assert_eq!(count_chars(&bytes), bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count());
            if let Ok(s) = std::str::from_utf8(&bytes) {
                prop_assert_eq!(count_chars(&bytes), s.chars().count());
            }
        }

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

        /// Stopping after a line and reading on from there sees the same lines and the
        /// same total as one scan.
        #[test]
        fn stop_and_resume_match_one_scan(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..200), cap in 1usize..16, stop in 1usize..40) {
            let (all, whole) = scan_all(&data);
            let mut reader = std::io::BufReader::with_capacity(cap, Cursor::new(&data[..]));
            let mut got = vec![];
            let from = ScanFrom { first_line: 1, stop_after: Some(stop), hash: true };
            let (first, complete) = scan_lines_from(&mut reader, from, |_| true, |n, _, _| got.push(n)).unwrap();
            // The hash covers exactly the bytes the scan consumed.
            prop_assert_eq!(first.hash, hash_bytes(&data[..first.total_bytes as usize]));
            if complete {
                prop_assert_eq!(first.total_lines, whole.total_lines);
            } else {
                prop_assert_eq!(first.total_lines, stop);
                let rest = ScanFrom { first_line: stop + 1, stop_after: None, hash: false };
                let (second, done) = scan_lines_from(&mut reader, rest, |_| true, |n, _, _| got.push(n)).unwrap();
                prop_assert!(done);
                prop_assert_eq!(second.total_lines, whole.total_lines);
                prop_assert_eq!(first.total_bytes + second.total_bytes, data.len() as u64);
            }
            prop_assert_eq!(got, all.iter().map(|l| l.0).collect::<Vec<_>>());
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
