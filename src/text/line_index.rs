//! File stamps and a small process-wide line index, so that a `view` costs what it shows
//! (issue 14 — speed and memory).
//!
//! A [`FileStamp`] (device, inode, size, mtime and ctime in nanoseconds) stands for a
//! file's content when it is older than [`RACY_WINDOW`]: any later write moves ctime,
//! which no process can set back. A file changed within the window is "racy" (as git
//! calls it): a second write in the same clock tick could leave the stamp unchanged, so
//! its content must be hashed instead.
//!
//! A [`LineIndex`] holds sparse checkpoints (line number → byte offset, one per
//! [`CHECKPOINT_BYTES`]) and the total line count, built by one memchr pass. It is
//! cached for a few files, keyed by real path and validated by the stamp, and never built
//! for a racy file.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
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

#[derive(Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// `(line number, byte offset where that line starts)`, ascending; the first is
    /// `(1, 0)`.
    checkpoints: Vec<(usize, u64)>,
    pub total_lines: usize,
}

impl LineIndex {
    /// Counts the lines of `reader` (a last line without a newline counts), keeping a
    /// checkpoint at the first line that starts after every [`CHECKPOINT_BYTES`].
    pub fn build(mut reader: impl Read) -> io::Result<Self> {
        let mut checkpoints = vec![(1usize, 0u64)];
        let mut buf = vec![0u8; CHECKPOINT_BYTES];
        let mut offset = 0u64;
        let mut newlines = 0usize;
        let mut last = None;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let chunk = &buf[..n];
            newlines += memchr::memchr_iter(b'\n', chunk).count();
            if let Some(i) = memchr::memrchr(b'\n', chunk) {
                let start = offset + i as u64 + 1;
                if start - checkpoints[checkpoints.len() - 1].1 >= CHECKPOINT_BYTES as u64 {
                    checkpoints.push((newlines + 1, start));
                }
            }
            last = chunk.last().copied();
            offset += n as u64;
        }
        let total_lines = newlines + usize::from(last.is_some_and(|b| b != b'\n'));
        Ok(LineIndex {
            checkpoints,
            total_lines,
        })
    }

    /// The last checkpoint at or before `line`: where a scan for it can start.
    pub fn seek_point(&self, line: usize) -> (usize, u64) {
        let i = self.checkpoints.partition_point(|&(l, _)| l <= line);
        self.checkpoints[i.saturating_sub(1)]
    }
}

struct Entry {
    real: PathBuf,
    stamp: FileStamp,
    index: Arc<LineIndex>,
}

static CACHE: LazyLock<Mutex<Vec<Entry>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// The line index of `file` (open at `real`, with `stamp`), from the cache or built now.
/// A racy file's index is built but not kept. Moves the file's position.
pub fn index_for(real: &Path, stamp: FileStamp, file: &File) -> io::Result<Arc<LineIndex>> {
    {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = cache
            .iter()
            .position(|e| e.real == real && e.stamp == stamp)
        {
            // Most recently used last.
            let entry = cache.remove(i);
            let index = Arc::clone(&entry.index);
            cache.push(entry);
            return Ok(index);
        }
    }
    // The caller's reader may have moved the shared file position: count from the start.
    let mut file = file;
    file.seek(SeekFrom::Start(0))?;
    let index = Arc::new(LineIndex::build(file)?);
    if !stamp.is_racy() {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        cache.retain(|e| e.real != real);
        if cache.len() >= MAX_CACHED {
            cache.remove(0);
        }
        cache.push(Entry {
            real: real.to_path_buf(),
            stamp,
            index: Arc::clone(&index),
        });
    }
    Ok(index)
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

    proptest! {
        /// Counts agree with a split on '\n', and every checkpoint is a line start with
        /// its true number.
        #[test]
        fn index_matches_the_content(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'a')], 0..3000), lines_per in 1usize..4) {
            let _ = lines_per;
            let idx = LineIndex::build(Cursor::new(&data)).unwrap();
            let mut expected = data.split(|&b| b == b'\n').count();
            if data.last().is_none_or(|&b| b == b'\n') { expected -= 1; }
            prop_assert_eq!(idx.total_lines, expected);
            for &(line, off) in &idx.checkpoints {
                let off = off as usize;
                prop_assert!(off == 0 || data[off - 1] == b'\n');
                prop_assert_eq!(data[..off].iter().filter(|&&b| b == b'\n').count() + 1, line);
            }
        }
    }

    #[test]
    fn checkpoints_are_sparse_and_seekable() {
        let data = b"0123456789abcdef\n".repeat(100_000); // 1.7 MB
        let idx = LineIndex::build(Cursor::new(&data)).unwrap();
        assert_eq!(idx.total_lines, 100_000);
        assert!(idx.checkpoints.len() > 4);
        let (line, off) = idx.seek_point(90_000);
        assert!(line <= 90_000 && 90_000 - line < CHECKPOINT_BYTES / 17 + 2);
        assert_eq!(off as usize, (line - 1) * 17);
        assert_eq!(idx.seek_point(1), (1, 0));
    }
}
