//! Bounded capture of one output stream (DESIGN §6): the first bytes (what the `boris`
//! profile shows), the last bytes (what the `pipe` profile shows, and where the cwd
//! sentinel lands), and — once the stream outgrows the head — the whole stream in a
//! spill file whose path the truncation notice names. Memory stays flat whatever the
//! output size.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

/// Limits for one stream.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Bytes kept from the start. Must be at least `spill_after`.
    pub head_bytes: usize,
    /// Bytes kept from the end.
    pub tail_bytes: usize,
    /// Past this many bytes the whole stream goes to `spill_path`.
    pub spill_after: usize,
    pub spill_path: PathBuf,
    /// A spill file stops growing here, to protect the disk from `yes`; 0: no spill
    /// file at all (a language server's stderr keeps only its head and tail).
    pub spill_max: u64,
    /// Clean (sanitised) characters to keep from the start, cleaned as they arrive; the
    /// `boris` profile shows these.
    pub clean_chars: Option<usize>,
}

#[derive(Debug)]
pub struct Capture {
    limits: Limits,
    head: Vec<u8>,
    /// The last bytes; grows to twice `tail_bytes` before the front is dropped, so that
    /// keeping it costs amortised O(1) per byte.
    tail: Vec<u8>,
    total: u64,
    /// Characters in the whole stream (UTF-8 lead bytes and invalid bytes).
    chars: u64,
    /// Newlines in the whole stream.
    newlines: u64,
    spill: Option<File>,
    spilled_bytes: u64,
    spill_error: Option<String>,
    /// The spill file's path was given to the client before the output was known
    /// (`force_spill`): it stays for the session, however short the output.
    named: bool,
    cleaner: Option<crate::text::sanitize::Cleaner>,
}

impl Capture {
    pub fn new(limits: Limits) -> Self {
        debug_assert!(limits.head_bytes >= limits.spill_after);
        let cleaner = limits.clean_chars.map(crate::text::sanitize::Cleaner::new);
        Capture {
            limits,
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            chars: 0,
            newlines: 0,
            spill: None,
            spilled_bytes: 0,
            spill_error: None,
            named: false,
            cleaner,
        }
    }

    /// The clean head, when the limits asked for one. Call once the stream has ended.
    pub fn cleaned(&mut self) -> Option<&crate::text::sanitize::Cleaner> {
        let cleaner = self.cleaner.as_mut()?;
        cleaner.finish();
        Some(cleaner)
    }

    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let room = self.limits.head_bytes.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..chunk.len().min(room)]);

        self.tail.extend_from_slice(chunk);
        let keep = self.limits.tail_bytes;
        if self.tail.len() > 2 * keep.max(1) {
            let drop = self.tail.len() - keep;
            self.tail.drain(..drop);
        }

        if let Some(cleaner) = self.cleaner.as_mut() {
            cleaner.push(chunk);
        }
        self.total += chunk.len() as u64;
        // SIMD counts: byte-wise loops here were a third of the time of `yes` through
        // bash (issue 21 §3).
        self.chars += bytecount::num_chars(chunk) as u64;
        self.newlines += bytecount::count(chunk, b'\n') as u64;

        if self.spill.is_none()
            && self.spill_error.is_none()
            && self.limits.spill_max > 0
            && self.total > self.limits.spill_after as u64
        {
            self.start_spill(chunk);
        } else if self.spill.is_some() {
            self.write_spill(chunk);
        }
    }

    /// Starts the spill file now, whatever the size (the `pipe` profile always names a
    /// full-output file once a command is backgrounded).
    pub fn force_spill(&mut self) {
        self.named = true;
        if self.spill.is_none() && self.spill_error.is_none() {
            self.start_spill(&[]);
        }
    }

    /// Opens the spill file and writes everything so far: the bytes before `chunk` (the
    /// latest push, already counted) are all in the head, because the head is at least
    /// as large as the spill threshold.
    fn start_spill(&mut self, chunk: &[u8]) {
        let before = (self.total as usize).saturating_sub(chunk.len());
        let opened = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .read(true)
            .open(&self.limits.spill_path);
        match opened {
            Ok(file) => {
                self.spill = Some(file);
                let head_part = self.head[..before.min(self.head.len())].to_vec();
                self.write_spill(&head_part);
                self.write_spill(chunk);
            }
            Err(e) => self.spill_error = Some(e.to_string()),
        }
    }

    fn write_spill(&mut self, bytes: &[u8]) {
        let Some(file) = self.spill.as_mut() else {
            return;
        };
        let room = self.limits.spill_max.saturating_sub(self.spilled_bytes) as usize;
        let part = &bytes[..bytes.len().min(room)];
        if part.is_empty() {
            return;
        }
        match file.write_all(part) {
            Ok(()) => self.spilled_bytes += part.len() as u64,
            Err(e) => {
                self.spill_error = Some(e.to_string());
                self.spill = None;
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn chars(&self) -> u64 {
        self.chars
    }

    /// Lines in the whole stream (a last line without a newline counts).
    pub fn lines(&self) -> u64 {
        let unterminated = self.total > 0 && self.tail.last() != Some(&b'\n');
        self.newlines + u64::from(unterminated)
    }

    /// The first bytes of the stream (all of it when [`Capture::complete`]).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The last `tail_bytes` bytes (or fewer).
    pub fn tail(&self) -> &[u8] {
        let keep = self.limits.tail_bytes.min(self.tail.len());
        &self.tail[self.tail.len() - keep..]
    }

    /// The head holds the whole stream.
    pub fn complete(&self) -> bool {
        self.head.len() as u64 == self.total
    }

    /// The spill file, if the stream was spilled, and whether it holds everything.
    pub fn spill_path(&self) -> Option<&std::path::Path> {
        (self.spilled_bytes > 0 || self.spill.is_some()).then_some(self.limits.spill_path.as_path())
    }

    pub fn spill_error(&self) -> Option<&str> {
        self.spill_error.as_deref()
    }

    pub fn spill_incomplete(&self) -> bool {
        self.spill_path().is_some() && self.spilled_bytes < self.total
    }

    /// Bytes `from..` of the stream, at most `max` of them (the last ones), from the
    /// head or the spill file.
    pub fn read_from(&mut self, from: u64, max: usize) -> Vec<u8> {
        if from >= self.total {
            return Vec::new();
        }
        let start = from.max(self.total.saturating_sub(max as u64));
        if self.complete() {
            return self.head[start as usize..].to_vec();
        }
        let tail_len = self.tail().len();
        let tail_start = self.total - tail_len as u64;
        if start >= tail_start {
            return self.tail()[(start - tail_start) as usize..].to_vec();
        }
        if let Some(file) = self.spill.as_mut() {
            let mut out = Vec::new();
            if file.seek(SeekFrom::Start(start)).is_ok() {
                let _ = file.take(max as u64).read_to_end(&mut out);
            }
            let _ = file.seek(SeekFrom::End(0));
            return out;
        }
        self.tail().to_vec()
    }

    /// Removes the cwd sentinel the shell's EXIT trap printed, returning the cwd it
    /// reported. Looks in the tail, where the trap's output lands; the stream must have
    /// ended.
    pub fn strip_sentinel(&mut self, nonce: &str) -> Option<String> {
        let tail = self.tail().to_vec();
        let found = crate::text::sentinel::find(&tail, nonce)?;
        let base = self.total - tail.len() as u64;
        let (start, resume) = (base + found.start as u64, base + found.resume_at as u64);
        let removed = &tail[found.start..found.resume_at];
        if let Some(cleaner) = self.cleaner.as_mut() {
            cleaner.remove(&String::from_utf8_lossy(removed));
        }
        self.chars -= removed.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u64;
        self.newlines -= memchr::memchr_iter(b'\n', removed).count() as u64;

        let was_complete = self.complete();
        if (self.head.len() as u64) > start {
            let mut head = self.head[..start as usize].to_vec();
            if was_complete {
                head.extend_from_slice(&self.head[resume as usize..]);
            }
            self.head = head;
        }
        let keep_from = self.tail.len() - tail.len();
        let mut new_tail = self.tail[..keep_from + found.start].to_vec();
        new_tail.extend_from_slice(&tail[found.resume_at..]);
        self.tail = new_tail;
        if resume == self.total
            && let Some(file) = self.spill.as_mut()
        {
            let _ = file.set_len(start.min(self.spilled_bytes));
            self.spilled_bytes = self.spilled_bytes.min(start);
        }
        self.total -= resume - start;
        Some(found.cwd)
    }

    /// Deletes the spill file (when nothing refers to it: a file named to the client
    /// stays).
    pub fn discard_spill(&mut self) {
        if !self.named && self.spill_path().is_some() {
            self.spill = None;
            let _ = std::fs::remove_file(&self.limits.spill_path);
            self.spilled_bytes = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(dir: &std::path::Path, head: usize, tail: usize, spill_after: usize) -> Limits {
        Limits {
            head_bytes: head,
            tail_bytes: tail,
            spill_after,
            spill_path: dir.join("out.log"),
            spill_max: u64::MAX,
            clean_chars: Some(1000),
        }
    }

    #[test]
    fn head_tail_and_spill() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(limits(dir.path(), 10, 4, 8));
        for chunk in [&b"abcdef"[..], b"ghijkl", b"mnop"] {
            c.push(chunk);
        }
        assert_eq!(c.head(), b"abcdefghij");
        assert_eq!(c.tail(), b"mnop");
        assert_eq!(c.total(), 16);
        assert!(!c.complete());
        assert_eq!(
            std::fs::read(dir.path().join("out.log")).unwrap(),
            b"abcdefghijklmnop"
        );
        assert_eq!(c.read_from(3, 100), b"defghijklmnop");
        assert_eq!(c.read_from(3, 2), b"op");
    }

    proptest::proptest! {
        /// The SIMD counts of any chunking equal the byte-by-byte definitions: characters
        /// are bytes other than UTF-8 continuation bytes, lines end in `\n` (a last line
        /// without one counts).
        #[test]
        fn counts_match_the_definitions(
            data in proptest::collection::vec(proptest::prelude::prop_oneof![
                proptest::prelude::Just(b'\n'), proptest::prelude::Just(b'a'),
                proptest::prelude::Just(0xC3u8), proptest::prelude::Just(0xA9u8),
                proptest::prelude::any::<u8>()
            ], 0..300),
            cuts in proptest::collection::vec(0usize..300, 0..6),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut c = Capture::new(limits(dir.path(), 64, 32, 64));
            let mut points: Vec<usize> = cuts.into_iter().map(|x| x.min(data.len())).collect();
            points.sort_unstable();
            let mut last = 0;
            for p in points {
                c.push(&data[last..p]);
                last = p;
            }
            c.push(&data[last..]);
            let chars = data.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u64;
            proptest::prop_assert_eq!(c.chars(), chars);
            let mut lines = data.split(|&b| b == b'\n').count() as u64;
            if data.last().is_none_or(|&b| b == b'\n') {
                lines -= 1;
            }
            proptest::prop_assert_eq!(c.lines(), lines);
            proptest::prop_assert_eq!(c.total(), data.len() as u64);
        }
    }

    #[test]
    fn sentinel_is_stripped_from_head_tail_and_spill() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(limits(dir.path(), 64, 64, 16));
        c.push(b"user output here\n");
        c.push(b"\n__BORIS_CWD_0000abcd__/some/dir\n");
        assert_eq!(c.strip_sentinel("0000abcd").as_deref(), Some("/some/dir"));
        assert_eq!(c.head(), b"user output here\n");
        assert_eq!(c.tail(), b"user output here\n");
        assert_eq!(c.total(), 17);
        let clean = c.cleaned().unwrap();
        assert_eq!(
            (clean.text(), clean.total_chars()),
            ("user output here\n", 17)
        );
        assert_eq!(
            std::fs::read(dir.path().join("out.log")).unwrap(),
            b"user output here\n"
        );
    }
}
