//! File stamps and a small process-wide line index, so that a `view` costs what it shows
//! (issue 14 — speed and memory; issue 21 §2 — tails and appended files).
//!
//! A [`FileStamp`] (device, inode, size, mtime and ctime in nanoseconds) stands for a
//! file's content when it is older than [`RACY_WINDOW`]: any later write moves ctime,
//! which no process can set back. A file changed within the window is "racy" (as git
//! calls it): a second write in the same clock tick could leave the stamp unchanged, so
//! its content must be hashed instead.
//!
//! A [`LineIndex`] holds sparse checkpoints (line number → byte offset, one per
//! [`CHECKPOINT_BYTES`]) and the line count of the file's first [`LineIndex::len`] bytes,
//! built by one SIMD counting pass. It is cached for a few files, keyed by real path,
//! device and inode, and checked on every use against the file's size and mtime and
//! the bytes at both ends of what it covers ([`END_BYTES`] each): the same size, mtime
//! and ends reuse it, a file that grew with the same ends (an appended log) extends it
//! by counting only the new bytes, anything else builds it again. [`tail_start`] finds
//! the last lines of a file by reading backwards from its end.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How recent a change must be for the stamp not to be trusted.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Bytes between two checkpoints of a line index.
const CHECKPOINT_BYTES: usize = 256 * 1024;

/// Files whose line index is kept.
const MAX_CACHED: usize = 8;

/// Smallest file worth an index: below it a scan from the start costs less than a lookup.
pub const MIN_INDEXED_BYTES: u64 = 1 << 20;

/// Bytes at each end of what an index covers that must read the same for it to be
/// reused or extended.
const END_BYTES: u64 = 4096;

/// Bytes read at a time when looking for the last lines from the end.
const TAIL_CHUNK: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl FileStamp {
    pub fn of(meta: &Metadata) -> Self {
        FileStamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    /// Whether the file changed within [`RACY_WINDOW`] of `now` (or claims a time after
    /// it): its stamp then cannot stand for its content.
    pub fn is_racy_at(&self, now: SystemTime) -> bool {
        let now_ns = match now.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(_) => return true,
        };
        let window = RACY_WINDOW.as_nanos() as i128;
        let newest = self.mtime_ns.max(self.ctime_ns);
        now_ns - newest < window
    }

    pub fn is_racy(&self) -> bool {
        self.is_racy_at(SystemTime::now())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// `(line number, byte offset where that line starts)`, ascending; the first is
    /// `(1, 0)`.
    checkpoints: Vec<(usize, u64)>,
    /// `\n` bytes counted.
    newlines: usize,
    /// Bytes counted.
    len: u64,
    /// The last byte counted.
    last: Option<u8>,
}

impl Default for LineIndex {
    fn default() -> Self {
        LineIndex {
            checkpoints: vec![(1, 0)],
            newlines: 0,
            len: 0,
            last: None,
        }
    }
}

impl LineIndex {
    /// Counts the lines of `reader` (a last line without a newline counts), keeping a
    /// checkpoint at the first line that starts after every [`CHECKPOINT_BYTES`].
    pub fn build(reader: impl Read) -> io::Result<Self> {
        let mut index = LineIndex::default();
        index.extend(reader)?;
        Ok(index)
    }

    /// Counts on: `reader` holds the bytes that follow the ones counted so far.
    pub fn extend(&mut self, mut reader: impl Read) -> io::Result<()> {
        let mut buf = vec![0u8; CHECKPOINT_BYTES];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let chunk = &buf[..n];
            // SIMD: a memchr iterator stopped at every newline, half of `wc -l`'s speed.
            self.newlines += bytecount::count(chunk, b'\n');
            if let Some(i) = memchr::memrchr(b'\n', chunk) {
                let start = self.len + i as u64 + 1;
                let last_checkpoint = self.checkpoints.last().map_or(0, |c| c.1);
                if start - last_checkpoint >= CHECKPOINT_BYTES as u64 {
                    self.checkpoints.push((self.newlines + 1, start));
                }
            }
            self.last = chunk.last().copied();
            self.len += n as u64;
        }
        Ok(())
    }

    /// Lines in the bytes counted (a last line without a newline counts).
    pub fn total_lines(&self) -> usize {
        self.newlines + usize::from(self.last.is_some_and(|b| b != b'\n'))
    }

    /// Bytes counted: the index describes the file's first `len` bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The last checkpoint at or before `line`: where a scan for it can start.
    pub fn seek_point(&self, line: usize) -> (usize, u64) {
        let i = self.checkpoints.partition_point(|&(l, _)| l <= line);
        self.checkpoints[i.saturating_sub(1)]
    }
}

/// `file`'s bytes from `pos` up to `end` as a reader, by positioned reads: the file's own
/// position (a caller's buffered reader) is left alone.
struct ReadAt<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = self.end.saturating_sub(self.pos).min(buf.len() as u64) as usize;
        if room == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..room], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Reads `buf.len()` bytes at `offset`; `false` if the file ended first.
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<bool> {
    match file.read_exact_at(buf, offset) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

/// The hashes of the first and the last [`END_BYTES`] of `file`'s first `len` bytes, or
/// `None` if the file is shorter now.
fn ends_of(file: &File, len: u64) -> io::Result<Option<(u64, u64)>> {
    let n = END_BYTES.min(len) as usize;
    let mut buf = vec![0u8; n];
    if !read_exact_at(file, &mut buf, 0)? {
        return Ok(None);
    }
    let head = super::lines::hash_bytes(&buf);
    if !read_exact_at(file, &mut buf, len - n as u64)? {
        return Ok(None);
    }
    Ok(Some((head, super::lines::hash_bytes(&buf))))
}

struct Entry {
    real: PathBuf,
    stamp: FileStamp,
    /// [`ends_of`] the bytes the index covers.
    ends: (u64, u64),
    index: Arc<LineIndex>,
}

static CACHE: LazyLock<Mutex<Vec<Entry>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// The line index of the first `stamp.size` bytes of `file` (open at `real`): the cached
/// one when the file still has its size and mtime and the same bytes at both ends, that
/// one extended when the file grew (an append), else a new one. The file's position is
/// not moved.
///
/// A racy file's index is cached too: its line numbers are all it gives, never a
/// decision about an edit, and the checked ends catch a rewrite within one clock tick
/// unless it keeps the size, the first and the last 4 KiB.
pub fn index_for(real: &Path, stamp: FileStamp, file: &File) -> io::Result<Arc<LineIndex>> {
    let cached = {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        cache.iter().position(|e| e.real == real).map(|i| {
            // Most recently used last.
            let entry = cache.remove(i);
            let found = (entry.stamp, entry.ends, Arc::clone(&entry.index));
            cache.push(entry);
            found
        })
    };
    let reusable = cached.filter(|(old, _, index)| {
        old.dev == stamp.dev
            && old.ino == stamp.ino
            && (index.len() < stamp.size
                || (index.len() == stamp.size && old.mtime_ns == stamp.mtime_ns))
    });
    if let Some((_, ends, index)) = reusable
        && ends_of(file, index.len())? == Some(ends)
    {
        if index.len() == stamp.size {
            return Ok(index);
        }
        let mut grown = LineIndex::clone(&index);
        grown.extend(ReadAt {
            file,
            pos: grown.len(),
            end: stamp.size,
        })?;
        return keep(real, stamp, file, grown);
    }
    let index = LineIndex::build(ReadAt {
        file,
        pos: 0,
        end: stamp.size,
    })?;
    keep(real, stamp, file, index)
}

/// Caches `index` of `real` when it covers the whole of `stamp` (a file cut short while
/// it was counted is not kept).
fn keep(
    real: &Path,
    stamp: FileStamp,
    file: &File,
    index: LineIndex,
) -> io::Result<Arc<LineIndex>> {
    let index = Arc::new(index);
    if index.len() != stamp.size {
        return Ok(index);
    }
    let Some(ends) = ends_of(file, index.len())? else {
        return Ok(index);
    };
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    cache.retain(|e| e.real != real);
    if cache.len() >= MAX_CACHED {
        cache.remove(0);
    }
    cache.push(Entry {
        real: real.to_path_buf(),
        stamp,
        ends,
        index: Arc::clone(&index),
    });
    Ok(index)
}

/// Where the last `n` lines of `file`'s first `len` bytes begin, and how many lines that
/// is (fewer than `n` when the file has fewer), read backwards from `len` a chunk at a
/// time: a tail costs what it shows, not the file. A last line without a newline counts.
pub fn tail_start(file: &File, len: u64, n: usize) -> io::Result<(u64, usize)> {
    tail_start_with(len, n, TAIL_CHUNK, |buf, offset| {
        if read_exact_at(file, buf, offset)? {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file was cut short while it was read",
            ))
        }
    })
}

/// [`tail_start`] over any positioned read (`read(buf, offset)` fills `buf`).
fn tail_start_with(
    len: u64,
    n: usize,
    chunk: usize,
    mut read: impl FnMut(&mut [u8], u64) -> io::Result<()>,
) -> io::Result<(u64, usize)> {
    if n == 0 || len == 0 {
        return Ok((len, 0));
    }
    let mut buf = vec![0u8; chunk.max(1)];
    // The newline ending the last line separates nothing: skip it.
    let mut end = len;
    let mut found = 0usize;
    let mut first = true;
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let part = &mut buf[..(end - start) as usize];
        read(part, start)?;
        let mut search: &[u8] = part;
        if first {
            first = false;
            if search.last() == Some(&b'\n') {
                search = &search[..search.len() - 1];
            }
        }
        for i in memchr::memrchr_iter(b'\n', search) {
            found += 1;
            if found == n {
                return Ok((start + i as u64 + 1, n));
            }
        }
        end = start;
    }
    // The first line too: every line of the file is in the tail.
    Ok((0, found + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    #[test]
    fn racy_window() {
        let t = |secs: i128| FileStamp {
            dev: 1,
            ino: 1,
            size: 0,
            mtime_ns: secs * 1_000_000_000,
            ctime_ns: secs * 1_000_000_000,
        };
        let now = UNIX_EPOCH + Duration::from_secs(1000);
        assert!(t(1000).is_racy_at(now));
        assert!(t(999).is_racy_at(now));
        assert!(!t(998).is_racy_at(now));
        assert!(
            t(2000).is_racy_at(now),
            "a time in the future is not trusted"
        );
        let mut s = t(900);
        s.ctime_ns = 999 * 1_000_000_000;
        assert!(s.is_racy_at(now), "a recent ctime alone makes it racy");
    }

    /// Line starts of `data` as `(number, offset)`, and the line count, by the definition.
    fn naive_lines(data: &[u8]) -> (Vec<u64>, usize) {
        let mut starts = vec![0u64];
        for (i, &b) in data.iter().enumerate() {
            if b == b'\n' && i + 1 < data.len() {
                starts.push(i as u64 + 1);
            }
        }
        let total = if data.is_empty() { 0 } else { starts.len() };
        (starts, total)
    }

    fn assert_valid(idx: &LineIndex, data: &[u8]) -> Result<(), TestCaseError> {
        let (_, total) = naive_lines(data);
        prop_assert_eq!(idx.total_lines(), total);
        prop_assert_eq!(idx.len(), data.len() as u64);
        for &(line, off) in &idx.checkpoints {
            let off = off as usize;
            prop_assert!(off == 0 || data[off - 1] == b'\n');
            prop_assert_eq!(
                data[..off].iter().filter(|&&b| b == b'\n').count() + 1,
                line
            );
        }
        Ok(())
    }

    proptest! {
        /// Counts agree with a split on '\n', and every checkpoint is a line start with
        /// its true number.
        #[test]
        fn index_matches_the_content(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..3000)) {
            let idx = LineIndex::build(Cursor::new(&data)).unwrap();
            assert_valid(&idx, &data)?;
        }

        /// An index extended by the bytes that follow describes the whole as one built
        /// over it does.
        #[test]
        fn extending_matches_building(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..3000), cut in 0usize..3000) {
            let cut = cut.min(data.len());
            let mut idx = LineIndex::build(Cursor::new(&data[..cut])).unwrap();
            idx.extend(Cursor::new(&data[cut..])).unwrap();
            assert_valid(&idx, &data)?;
            prop_assert_eq!(idx.total_lines(), LineIndex::build(Cursor::new(&data)).unwrap().total_lines());
        }

        /// Reading backwards in any chunk size finds where the last n lines start.
        #[test]
        fn tail_start_matches_the_line_starts(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..300), n in 0usize..40, chunk in 1usize..20) {
            let (starts, total) = naive_lines(&data);
            let got = tail_start_with(data.len() as u64, n, chunk, |buf, offset| {
                let at = offset as usize;
                buf.copy_from_slice(&data[at..at + buf.len()]);
                Ok(())
            }).unwrap();
            let expected = if n == 0 || total == 0 {
                (data.len() as u64, 0)
            } else if n >= total {
                (0, total)
            } else {
                (starts[total - n], n)
            };
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn checkpoints_are_sparse_and_seekable() {
        let data = b"0123456789abcdef\n".repeat(100_000); // 1.7 MB
        let idx = LineIndex::build(Cursor::new(&data)).unwrap();
        assert_eq!(idx.total_lines(), 100_000);
        assert!(idx.checkpoints.len() > 4);
        let (line, off) = idx.seek_point(90_000);
        assert!(line <= 90_000 && 90_000 - line < CHECKPOINT_BYTES / 17 + 2);
        assert_eq!(off as usize, (line - 1) * 17);
        assert_eq!(idx.seek_point(1), (1, 0));
    }

    fn stamp_of(f: &File) -> FileStamp {
        FileStamp::of(&f.metadata().unwrap())
    }

    /// The cached index follows the file: reused unchanged, extended by an append (a
    /// last line without a newline completed by it too), built again after a rewrite
    /// or a truncation; the file's position never moves.
    #[test]
    fn cached_index_follows_appends_and_rewrites() {
        use std::io::{Seek, Write};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let line = b"0123456789abcdef\n";
        std::fs::write(&path, line.repeat(70_000)).unwrap();
        let real = std::fs::canonicalize(&path).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let mut r = File::open(&path).unwrap();
        let first = index_for(&real, stamp_of(&r), &r).unwrap();
        assert_eq!(first.total_lines(), 70_000);
        let again = index_for(&real, stamp_of(&r), &r).unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "an unchanged file reuses its index"
        );

        f.write_all(b"one\ntwo").unwrap();
        let grown = index_for(&real, stamp_of(&r), &r).unwrap();
        assert_eq!(grown.total_lines(), 70_002);
        assert_eq!(
            grown.checkpoints[..first.checkpoints.len()],
            first.checkpoints[..]
        );
        f.write_all(b" more\nthree\n").unwrap();
        assert_eq!(
            index_for(&real, stamp_of(&r), &r).unwrap().total_lines(),
            70_003
        );

        // Rewritten in place with other ends: counted again.
        let mut other = b"x\n".repeat(10);
        other.extend_from_slice(&line.repeat(80_000));
        std::fs::write(&path, &other).unwrap();
        assert_eq!(
            index_for(&real, stamp_of(&r), &r).unwrap().total_lines(),
            80_010
        );
        // Cut short: counted again ("x\n" ten times, a line and a half).
        f.set_len(20 + 17 + 9).unwrap();
        assert_eq!(
            index_for(&real, stamp_of(&r), &r).unwrap().total_lines(),
            12
        );
        assert_eq!(r.stream_position().unwrap(), 0);
    }

    #[test]
    fn tail_start_reads_a_file_from_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"one\ntwo\nthree\nfour").unwrap();
        let f = File::open(&path).unwrap();
        assert_eq!(tail_start(&f, 18, 2).unwrap(), (8, 2));
        assert_eq!(tail_start(&f, 18, 9).unwrap(), (0, 4));
        // Only the first `len` bytes count: "one\ntwo\n".
        assert_eq!(tail_start(&f, 8, 1).unwrap(), (4, 1));
        assert!(
            tail_start(&f, 100, 1).is_err(),
            "a file shorter than its stamp"
        );
    }
}
