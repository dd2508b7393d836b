//! Cleaning command output for a model (DESIGN §6, seed 004 "Sanitization"): ANSI CSI,
//! OSC and other escape sequences removed, control bytes other than tab and newline
//! dropped, `\r\n` turned into `\n`, and a line redrawn with a bare `\r` (a progress bar)
//! reduced to its final state. Invalid UTF-8 is replaced, never an error.

/// Cleans `raw` for a model. Idempotent: the output has no ESC, no `\r` and no control
/// characters except `\t` and `\n`.
pub fn sanitize(raw: &[u8]) -> String {
    let mut cleaner = Cleaner::new(usize::MAX);
    cleaner.push(raw);
    cleaner.finish();
    cleaner.out
}

/// Bytes of valid UTF-8 that pass through unchanged and never start anything: printable
/// ASCII, tab, newline, and the bytes of characters from U+00A0 on. Their only other
/// bytes are 0x80–0x9F after 0xC2: the C1 controls U+0080–U+009F, which are dropped.
/// A run of them in a `str` ends on a character boundary: what stops it is ASCII or a
/// lead byte (0xC2).
fn is_plain_at(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        b'\n' | b'\t' | 0x20..=0x7e => true,
        0xC2 => bytes.get(i + 1).is_some_and(|&next| next >= 0xA0),
        b => b >= 0x80,
    }
}

/// The length of the run of [`is_plain_at`] bytes `bytes` starts with, and whether the
/// run is all ASCII (its characters are then its bytes). A block of 64 bytes at a time
/// is checked without branches (the compiler makes it SIMD compares) for anything but
/// printable ASCII, tab, newline and bytes from 0x80 other than 0xC2; only a block
/// holding such a byte is looked at byte by byte, and so are the first 16 bytes (the
/// runs between escape sequences are short). A byte-at-a-time scan was a third of the
/// time of `yes` through bash (issue 21 §3).
fn plain_run(bytes: &[u8]) -> (usize, bool) {
    const BLOCK: usize = 64;
    let mut high = 0u8;
    let first = bytes.len().min(16);
    for i in 0..first {
        if !is_plain_at(bytes, i) {
            return (i, high < 0x80);
        }
        high |= bytes[i];
    }
    let mut at = first;
    for block in bytes[first..].chunks_exact(BLOCK) {
        let (other, seen) = block.iter().fold((0u8, 0u8), |(acc, seen), &b| {
            // Below 0x20 but a newline or a tab, DEL, or 0xC2.
            let control = u8::from(b < 0x20) & u8::from(b != b'\n') & u8::from(b != b'\t');
            (
                acc | control | u8::from(b == 0x7f) | u8::from(b == 0xC2),
                seen | b,
            )
        });
        if other != 0 {
            // Perhaps only 0xC2 starting characters from U+00A0: look closer.
            for i in at..at + BLOCK {
                if !is_plain_at(bytes, i) {
                    return (i, high < 0x80);
                }
                high |= bytes[i];
            }
        }
        high |= seen;
        at += BLOCK;
    }
    for i in at..bytes.len() {
        if !is_plain_at(bytes, i) {
            return (i, high < 0x80);
        }
        high |= bytes[i];
    }
    (bytes.len(), high < 0x80)
}

/// Where the cleaner is inside an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// Just after ESC.
    Start,
    /// CSI: parameter and intermediate bytes until a final byte in 0x40..=0x7E.
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (ESC \).
    Str,
    /// ESC seen inside such a string.
    StrEsc,
    /// A character-set designation (`ESC ( B`): one more character.
    Charset,
}

/// The streaming form of [`sanitize`]: fed chunk by chunk as output arrives (escape
/// sequences, UTF-8 characters and `\r\n` may span chunks), it keeps the first `cap`
/// clean characters and counts all of them, so that the `boris` profile shows exactly
/// its 30,000 characters of *clean* output and says how long the clean output was.
#[derive(Debug, Clone)]
pub struct Cleaner {
    cap: usize,
    out: String,
    out_chars: usize,
    /// Byte offset in `out` where the current line starts, and the characters before it.
    line_start: usize,
    line_start_chars: usize,
    /// Clean characters of the whole stream before the current line, and in it.
    committed: u64,
    line_chars: u64,
    escape: Escape,
    /// A `\r` was seen; whether it ends a `\r\n` depends on the next character.
    cr_pending: bool,
    /// The next visible character redraws the current line.
    redraw: bool,
    /// The start of a UTF-8 character cut by a chunk boundary.
    partial: Vec<u8>,
}

impl Cleaner {
    pub fn new(cap: usize) -> Self {
        Cleaner {
            cap,
            out: String::new(),
            out_chars: 0,
            line_start: 0,
            line_start_chars: 0,
            committed: 0,
            line_chars: 0,
            escape: Escape::None,
            cr_pending: false,
            redraw: false,
            partial: Vec::new(),
        }
    }

    /// The clean text kept (at most `cap` characters).
    pub fn text(&self) -> &str {
        &self.out
    }

    /// Clean characters in the whole stream so far.
    pub fn total_chars(&self) -> u64 {
        self.committed + self.line_chars
    }

    /// More clean characters exist than were kept.
    pub fn truncated(&self) -> bool {
        self.total_chars() > self.out_chars as u64
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let joined;
        let mut buf = bytes;
        if !self.partial.is_empty() {
            let mut v = std::mem::take(&mut self.partial);
            v.extend_from_slice(bytes);
            joined = v;
            buf = &joined;
        }
        loop {
            match std::str::from_utf8(buf) {
                Ok(s) => {
                    self.push_str(s);
                    return;
                }
                Err(e) => {
                    let (valid, rest) = buf.split_at(e.valid_up_to());
                    // `valid` is valid UTF-8: the error says so.
                    self.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(len) => {
                            self.push_char('\u{fffd}');
                            buf = &rest[len..];
                        }
                        None => {
                            self.partial = rest.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: a character cut off at the very end is replaced.
    pub fn finish(&mut self) {
        if !std::mem::take(&mut self.partial).is_empty() {
            self.push_char('\u{fffd}');
        }
        self.cr_pending = false;
    }

    /// Removes `segment` (clean text, e.g. the cwd sentinel line the shell's EXIT trap
    /// printed) from the kept text, if it is there, and from the count.
    pub fn remove(&mut self, segment: &str) {
        if let Some(at) = self.out.rfind(segment) {
            self.out.replace_range(at..at + segment.len(), "");
            self.out_chars -= segment.chars().count();
            self.line_start = self.out.rfind('\n').map(|i| i + 1).unwrap_or(0);
            self.line_start_chars = self.out[..self.line_start].chars().count();
        }
        let n = segment.chars().count() as u64;
        let from_line = n.min(self.line_chars);
        self.line_chars -= from_line;
        self.committed = self.committed.saturating_sub(n - from_line);
    }

    fn push_str(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Fast path: a run of printable ASCII, tabs and newlines outside any escape
            // sequence or pending carriage return needs no per-character decisions.
            if self.escape == Escape::None && !self.cr_pending && !self.redraw {
                let (run, ascii) = plain_run(&bytes[i..]);
                // A run ends on a character boundary (see `is_plain_at`); were it ever not
                // to, the characters go the slow way below rather than panic.
                if run > 0
                    && let Some(part) = s.get(i..i + run)
                {
                    self.push_plain(part, ascii);
                    i += run;
                    continue;
                }
            }
            // `i` is on a character boundary: runs and characters are stepped over whole.
            let Some(c) = s[i..].chars().next() else {
                break;
            };
            self.push_char(c);
            i += c.len_utf8();
        }
    }

    /// A run of [`is_plain_at`] bytes (`ascii`: all below 0x80), in bulk: the same
    /// bookkeeping as [`Self::push_char`] would do character by character.
    fn push_plain(&mut self, run: &str, ascii: bool) {
        let bytes = run.as_bytes();
        // ASCII (the usual case): characters are bytes, no counting needed. Short runs
        // are counted in place: a call into the SIMD counter costs more than they do.
        let chars = |b: &[u8]| {
            if ascii {
                b.len()
            } else if b.len() < 32 {
                b.iter().filter(|&&x| (x & 0xC0) != 0x80).count()
            } else {
                bytecount::num_chars(b)
            }
        };
        let total = chars(bytes);
        let room = self.cap.saturating_sub(self.out_chars);
        // A character is at least a byte: `room` bytes or more hold at most `room` of them.
        let kept = if room >= bytes.len() {
            bytes.len()
        } else {
            run.char_indices().nth(room).map_or(bytes.len(), |(i, _)| i)
        };
        let before = self.out.len();
        self.out.push_str(&run[..kept]);
        self.out_chars += chars(&bytes[..kept]);
        match memchr::memrchr(b'\n', bytes) {
            Some(last) => {
                let after = chars(&bytes[last + 1..]);
                self.committed += self.line_chars + (total - after) as u64;
                self.line_chars = after as u64;
                if last < kept {
                    self.line_start = before + last + 1;
                    self.line_start_chars = self.out_chars - chars(&bytes[last + 1..kept]);
                } else {
                    self.line_start = self.out.len();
                    self.line_start_chars = self.out_chars;
                }
            }
            None => self.line_chars += total as u64,
        }
    }

    fn push_char(&mut self, c: char) {
        match self.escape {
            Escape::None => {}
            Escape::Start => {
                self.escape = match c {
                    '[' => Escape::Csi,
                    ']' | 'P' | 'X' | '^' | '_' => Escape::Str,
                    '(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%' => Escape::Charset,
                    _ => Escape::None,
                };
                return;
            }
            Escape::Csi => {
                if !('\u{20}'..='\u{3f}').contains(&c) {
                    // A final byte, or a byte that cannot belong to a CSI: either ends it.
                    self.escape = Escape::None;
                }
                return;
            }
            Escape::Str => {
                match c {
                    '\u{7}' => self.escape = Escape::None,
                    '\u{1b}' => self.escape = Escape::StrEsc,
                    _ => {}
                }
                return;
            }
            Escape::StrEsc => {
                self.escape = Escape::None;
                if c == '\\' {
                    return;
                }
            }
            Escape::Charset => {
                self.escape = Escape::None;
                return;
            }
        }
        if c == '\r' {
            self.cr_pending = true;
            return;
        }
        if std::mem::take(&mut self.cr_pending) && c != '\n' {
            self.redraw = true;
        }
        match c {
            '\u{1b}' => self.escape = Escape::Start,
            '\n' => {
                self.redraw = false;
                self.line_chars += 1;
                self.keep('\n');
                self.committed += self.line_chars;
                self.line_chars = 0;
                self.line_start = self.out.len();
                self.line_start_chars = self.out_chars;
            }
            // C0 controls other than tab, DEL, and C1 controls (U+0080–U+009F).
            c if (c != '\t' && (c as u32) < 0x20)
                || c == '\u{7f}'
                || ('\u{80}'..='\u{9f}').contains(&c) => {}
            c => {
                if std::mem::take(&mut self.redraw) {
                    self.out.truncate(self.line_start);
                    self.out_chars = self.line_start_chars;
                    self.line_chars = 0;
                }
                self.line_chars += 1;
                self.keep(c);
            }
        }
    }

    fn keep(&mut self, c: char) {
        if self.out_chars < self.cap {
            self.out.push(c);
            self.out_chars += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_colours_titles_and_controls() {
        assert_eq!(sanitize(b"\x1b[1;31merror\x1b[0m: bad\n"), "error: bad\n");
        assert_eq!(sanitize(b"\x1b]0;title\x07ok\n"), "ok\n");
        assert_eq!(
            sanitize(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n"),
            "link\n"
        );
        assert_eq!(sanitize(b"a\x00b\x08c\x7fd\te\n"), "abcd\te\n");
        assert_eq!(sanitize(b"\x1b(Bplain\x1b=\n"), "plain\n");
    }

    #[test]
    fn carriage_returns() {
        assert_eq!(sanitize(b"one\r\ntwo\r\n"), "one\ntwo\n");
        assert_eq!(sanitize(b"10%\r50%\r100%\ndone\n"), "100%\ndone\n");
        assert_eq!(sanitize(b"keep\r\n"), "keep\n");
        assert_eq!(sanitize(b"last state\r"), "last state");
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(sanitize(b"caf\xe9\n"), "caf\u{fffd}\n");
    }

    /// The first, character-by-character implementation, kept as an oracle for the
    /// streaming one with its fast path.
    fn reference(raw: &[u8]) -> String {
        let text = String::from_utf8_lossy(raw);
        let mut out = String::new();
        let mut line_start = 0usize;
        let mut redraw = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\u{1b}' => match chars.next() {
                    Some('[') => {
                        for c in chars.by_ref() {
                            if !('\u{20}'..='\u{3f}').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']' | 'P' | 'X' | '^' | '_') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' {
                                break;
                            }
                            if c == '\u{1b}' {
                                if chars.peek() == Some(&'\\') {
                                    chars.next();
                                }
                                break;
                            }
                        }
                    }
                    Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%') => {
                        chars.next();
                    }
                    _ => {}
                },
                '\r' => {
                    if chars.peek() != Some(&'\n') && chars.peek() != Some(&'\r') {
                        redraw = chars.peek().is_some();
                    }
                }
                '\n' => {
                    redraw = false;
                    out.push('\n');
                    line_start = out.len();
                }
                c if (c != '\t' && (c as u32) < 0x20)
                    || c == '\u{7f}'
                    || ('\u{80}'..='\u{9f}').contains(&c) => {}
                c => {
                    if redraw {
                        out.truncate(line_start);
                        redraw = false;
                    }
                    out.push(c);
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn matches_the_reference(raw in proptest::collection::vec(prop_oneof![
            Just(0x1bu8), Just(b'['), Just(b']'), Just(b'\r'), Just(b'\n'), Just(b'\t'), Just(7u8),
            Just(b'm'), Just(b'a'), Just(b'1'), Just(0xC3u8), Just(0xA9u8), Just(0u8), Just(b'\\'), Just(b'('),
            // U+0085 (a C1 control), U+00A0, U+20AC and their bytes apart.
            Just(0xC2u8), Just(0x85u8), Just(0xA0u8), Just(0xE2u8), Just(0x82u8), Just(0xACu8), Just(0x7fu8)
        ], 0..300)) {
            prop_assert_eq!(sanitize(&raw), reference(&raw));
        }

        #[test]
        fn idempotent_and_clean(raw in proptest::collection::vec(prop_oneof![
            Just(0x1bu8), Just(b'['), Just(b']'), Just(b'\r'), Just(b'\n'), Just(b'\t'), Just(7u8),
            Just(b'm'), Just(b'a'), Just(b'1'), Just(b';'), Just(0xC3u8), Just(0xA9u8), Just(0u8), Just(b'\\')
        ], 0..200)) {
            let once = sanitize(&raw);
            prop_assert_eq!(sanitize(once.as_bytes()), once.clone());
            prop_assert!(!once.contains('\x1b'), "ESC left in {:?}", once);
            prop_assert!(!once.contains('\r'));
            let clean = once.chars().all(|c| c == '\n' || c == '\t' || (c as u32) >= 0x20 && c != '\x7f');
            prop_assert!(clean, "control character left in {:?}", once);
        }

        /// Fed in any chunks, the streaming cleaner gives the batch result, its prefix
        /// under a cap, and the batch result's length as its count.
        #[test]
        fn streaming_matches_batch(raw in proptest::collection::vec(prop_oneof![
            Just(0x1bu8), Just(b'['), Just(b']'), Just(b'\r'), Just(b'\n'), Just(7u8),
            Just(b'm'), Just(b'a'), Just(0xC3u8), Just(0xA9u8), Just(0xE2u8), Just(0x82u8), Just(0xACu8), Just(b'\\'),
            Just(0xC2u8), Just(0x85u8), Just(0xA0u8)
        ], 0..200), cuts in proptest::collection::vec(0usize..200, 0..6), cap in 0usize..50) {
            let whole = sanitize(&raw);
            let mut c = Cleaner::new(cap);
            let mut points: Vec<usize> = cuts.into_iter().map(|x| x.min(raw.len())).collect();
            points.sort_unstable();
            let mut last = 0;
            for p in points { c.push(&raw[last..p]); last = p; }
            c.push(&raw[last..]);
            c.finish();
            prop_assert_eq!(c.total_chars(), whole.chars().count() as u64);
            let prefix: String = whole.chars().take(cap).collect();
            prop_assert_eq!(c.text(), prefix.as_str());
            prop_assert_eq!(c.truncated(), whole.chars().count() > cap);
        }

        /// The block-wise scan finds the same run as a byte-by-byte one.
        #[test]
        fn plain_run_matches_a_byte_scan(bytes in proptest::collection::vec(prop_oneof![
            8 => 0x20u8..=0x7e, 1 => Just(b'\n'), 1 => Just(b'\t'), 1 => any::<u8>(),
            1 => Just(0xC2u8), 2 => 0x80u8..=0xBF
        ], 0..200)) {
            let expected = (0..bytes.len()).find(|&i| !is_plain_at(&bytes, i)).unwrap_or(bytes.len());
            prop_assert_eq!(plain_run(&bytes), (expected, bytes[..expected].is_ascii()));
        }

        #[test]
        fn plain_run_at_every_byte_value(b in any::<u8>(), before in 0usize..70, after in 0usize..70) {
            let mut bytes = vec![b'a'; before];
            bytes.push(b);
            bytes.extend(std::iter::repeat_n(b'\n', after));
            let expected = if is_plain_at(&bytes, before) { bytes.len() } else { before };
            prop_assert_eq!(plain_run(&bytes), (expected, bytes[..expected].is_ascii()));
        }

        #[test]
        fn plain_text_is_untouched(s in "[a-zA-Z0-9 .,\\n\\t]{0,100}") {
            prop_assert_eq!(sanitize(s.as_bytes()), s);
        }
    }
}
