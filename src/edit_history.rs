//! The undo history of one session (issue 15 §3): for each file Boris edited or
//! overwrote, what it held before each write and what Boris wrote. Pure bookkeeping; the
//! `undo_edit` tool does the I/O. Bounded: at most [`MAX_STEPS_PER_FILE`] steps per file
//! and [`MAX_BYTES`] of kept content per session, the oldest steps going first.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// Undo steps kept per file.
pub const MAX_STEPS_PER_FILE: usize = 10;
/// Bytes of earlier content kept per session, over every file.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// One write by Boris.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The file's content before the write; `None` if the write created it.
    pub before: Option<Vec<u8>>,
    /// The hash of what Boris wrote: an undo proceeds only if the file still hashes to it.
    pub after_hash: u64,
    /// The write removed the file (`apply_patch`'s Delete File, a move's source): an undo
    /// proceeds only if nothing is there again.
    pub removed: bool,
    /// When it was recorded (a session-wide counter), for dropping the oldest first.
    seq: u64,
    /// The multi-file change it belongs to (a rename, issue 20): undone together.
    pub group: Option<u64>,
}

impl Step {
    fn cost(&self) -> usize {
        self.before.as_ref().map_or(0, Vec::len)
    }
}

#[derive(Debug, Default)]
struct FileHistory {
    steps: VecDeque<Step>,
    /// Steps of this file dropped to keep the bounds; they can no longer be undone.
    dropped: usize,
}

#[derive(Debug)]
pub struct EditHistory {
    files: HashMap<PathBuf, FileHistory>,
    bytes: usize,
    seq: u64,
    max_steps: usize,
    max_bytes: usize,
}

impl Default for EditHistory {
    fn default() -> Self {
        Self::with_limits(MAX_STEPS_PER_FILE, MAX_BYTES)
    }
}

impl EditHistory {
    pub fn with_limits(max_steps: usize, max_bytes: usize) -> Self {
        EditHistory {
            files: HashMap::new(),
            bytes: 0,
            seq: 0,
            max_steps,
            max_bytes,
        }
    }

    /// Records a write of `real` that replaced `before` (`None`: created it) by content
    /// hashing to `after_hash`.
    pub fn record(&mut self, real: &Path, before: Option<Vec<u8>>, after_hash: u64) {
        self.record_in(real, before, after_hash, None);
    }

    /// A new group id for the steps of one multi-file change.
    pub fn new_group(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Records a write as [`record`](Self::record) does, as part of `group`.
    pub fn record_in(
        &mut self,
        real: &Path,
        before: Option<Vec<u8>>,
        after_hash: u64,
        group: Option<u64>,
    ) {
        self.push(
            real,
            Step {
                before,
                after_hash,
                removed: false,
                seq: 0,
                group,
            },
        );
    }

    /// Records the removal of `real`, which held `before`.
    pub fn record_removal(&mut self, real: &Path, before: Vec<u8>) {
        self.push(
            real,
            Step {
                before: Some(before),
                after_hash: 0,
                removed: true,
                seq: 0,
                group: None,
            },
        );
    }

    fn push(&mut self, real: &Path, mut step: Step) {
        self.seq += 1;
        step.seq = self.seq;
        let cost = step.cost();
        let file = self.files.entry(real.to_path_buf()).or_default();
        if cost > self.max_bytes {
            // Too big to keep at all: every earlier step of the file is unreachable
            // now (undo goes back one step at a time), so they go too.
            let freed: usize = file.steps.iter().map(Step::cost).sum();
            file.dropped += file.steps.len() + 1;
            file.steps.clear();
            self.bytes -= freed;
            return;
        }
        file.steps.push_back(step);
        self.bytes += cost;
        if file.steps.len() > self.max_steps
            && let Some(old) = file.steps.pop_front()
        {
            file.dropped += 1;
            self.bytes -= old.cost();
        }
        while self.bytes > self.max_bytes {
            // The oldest step of the whole session goes first.
            let Some(oldest) = self
                .files
                .iter()
                .filter_map(|(p, f)| f.steps.front().map(|s| (s.seq, p.clone())))
                .min()
                .map(|(_, p)| p)
            else {
                break;
            };
            if let Some(f) = self.files.get_mut(&oldest)
                && let Some(old) = f.steps.pop_front()
            {
                f.dropped += 1;
                self.bytes -= old.cost();
            }
        }
    }

    /// The files whose last step belongs to `group`, sorted.
    pub fn group_files(&self, group: u64) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(_, f)| f.steps.back().is_some_and(|s| s.group == Some(group)))
            .map(|(p, _)| p.clone())
            .collect();
        files.sort();
        files
    }

    /// Every file Boris wrote in this session (with a step left or not), sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.files.keys().cloned().collect();
        files.sort();
        files
    }

    /// The last step of `real`, if any.
    pub fn last(&self, real: &Path) -> Option<&Step> {
        self.files.get(real).and_then(|f| f.steps.back())
    }

    /// Removes and returns the last step of `real` (the undo succeeded).
    pub fn pop(&mut self, real: &Path) -> Option<Step> {
        let file = self.files.get_mut(real)?;
        let step = file.steps.pop_back()?;
        self.bytes -= step.cost();
        Some(step)
    }

    /// Steps of `real` that can still be undone.
    pub fn depth(&self, real: &Path) -> usize {
        self.files.get(real).map_or(0, |f| f.steps.len())
    }

    /// Steps of `real` dropped to keep the bounds.
    pub fn dropped(&self, real: &Path) -> usize {
        self.files.get(real).map_or(0, |f| f.dropped)
    }

    /// Bytes of earlier content kept, over every file.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn last_in_first_out_with_a_depth_bound() {
        let mut h = EditHistory::default();
        let p = Path::new("/w/a");
        for i in 0..(MAX_STEPS_PER_FILE as u64 + 3) {
            h.record(p, Some(vec![i as u8]), i);
        }
        assert_eq!(h.depth(p), MAX_STEPS_PER_FILE);
        assert_eq!(h.dropped(p), 3);
        let last = h.pop(p).unwrap();
        assert_eq!(last.before, Some(vec![MAX_STEPS_PER_FILE as u8 + 2]));
        assert_eq!(
            h.last(p).map(|s| s.after_hash),
            Some(MAX_STEPS_PER_FILE as u64 + 1)
        );
        h.record(Path::new("/w/new"), None, 9);
        assert_eq!(h.last(Path::new("/w/new")).unwrap().before, None);
    }

    #[test]
    fn byte_bound_drops_the_oldest_of_the_session() {
        let mut h = EditHistory::default();
        let (a, b) = (Path::new("/w/a"), Path::new("/w/b"));
        let big = vec![0u8; MAX_BYTES / 2];
        h.record(a, Some(big.clone()), 1);
        h.record(b, Some(big.clone()), 2);
        h.record(b, Some(vec![1; 10]), 3);
        assert_eq!((h.depth(a), h.dropped(a)), (0, 1));
        assert_eq!(h.depth(b), 2);
        h.record(a, Some(vec![0; MAX_BYTES + 1]), 4);
        assert_eq!((h.depth(a), h.dropped(a)), (0, 2));
        assert!(h.bytes() <= MAX_BYTES);
    }

    proptest! {
        /// Whatever is recorded, the bounds hold and the byte count is the sum of the
        /// kept steps.
        #[test]
        fn bounds_hold(ops in proptest::collection::vec((0u8..3, 0usize..40, any::<bool>()), 0..60)) {
            let mut h = EditHistory::with_limits(4, 100);
            for (i, (file, len, pop)) in ops.iter().enumerate() {
                let p = PathBuf::from(format!("/w/{file}"));
                if *pop {
                    h.pop(&p);
                } else {
                    h.record(&p, Some(vec![0; *len]), i as u64);
                }
                let sum: usize = h.files.values().flat_map(|f| f.steps.iter()).map(Step::cost).sum();
                prop_assert_eq!(sum, h.bytes());
                prop_assert!(h.bytes() <= 100);
                prop_assert!(h.files.values().all(|f| f.steps.len() <= 4));
            }
        }
    }
}
