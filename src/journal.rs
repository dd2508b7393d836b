//! Several files changed all or nothing (`apply_patch`, issue 19 §2), so that a Boris
//! killed at any point (SIGKILL included) leaves no file half-written and never half of
//! a patch's files changed — once the next Boris has looked.
//!
//! A rename replaces one file atomically; nothing replaces several at once. So a
//! multi-file commit is a small transaction `T` (`<pid>-<8 hex>`):
//!
//! 1. **Stage**: each new content is written and synced to `.boris-patch-T-N` beside its
//!    target (same directory, so the rename cannot cross filesystems); a file to remove
//!    gets an empty one beside it (so its directory, too, shows a patch under way).
//!    Killed here: the targets are untouched; the staged files are garbage.
//! 2. **Commit point**: the journal `.boris-patch-T.journal` — every rename and removal,
//!    with the hash of what each target held — is written (temp file, sync, rename) in
//!    the deepest directory holding all the targets.
//! 3. **Apply**: the renames, then the removals (a move writes its destination before it
//!    removes its source).
//! 4. **Done**: the journal is removed.
//!
//! A Boris that starts (its allowed directories) or first touches a directory (any path
//! resolved there) finds what a dead process (by the pid in `T`) left: a journal is
//! **rolled forward** — each staged file renamed over its target if the target still
//! holds what the journal says it held, each removal made if the file still holds it (a
//! change made since by someone else is never overwritten, its staged file dropped);
//! staged files with no journal (looked for in their directory and every directory
//! above, where it would be) are **rolled back**: removed, once old enough that a writer
//! in another pid namespace cannot still be staging them. A patch of one file skips all
//! this: one atomic write or one removal is already all or nothing.

use crate::beneath;
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fsutil;
use crate::text::lines::hash_bytes;
use crate::text::{file_uri, file_uri_path};
use std::collections::{HashMap, HashSet};
use std::fs::{self, Metadata};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

/// Prefix of every file a multi-file commit makes.
pub const PREFIX: &str = ".boris-patch-";
const JOURNAL_HEADER: &str = "boris apply_patch journal 1";

/// One file's part in a commit.
#[derive(Debug)]
pub enum Change<'a> {
    /// `real` gets `bytes`, with the mode and owner of `mode_of` (a new file: 0644).
    /// `before`: the hash of what it holds now, `None` if it does not exist.
    Write {
        real: &'a Path,
        shown: &'a Path,
        bytes: &'a [u8],
        mode_of: Option<&'a Metadata>,
        before: Option<u64>,
    },
    /// `real`, holding content that hashes to `before`, is removed.
    Remove {
        real: &'a Path,
        shown: &'a Path,
        before: u64,
    },
}

/// Makes every change, all or nothing (see the module's comment); the journal goes in
/// `home`, a directory holding every target (at any depth).
pub fn commit(changes: &[Change<'_>], home: &Path) -> ToolResult<()> {
    match changes {
        [] => return Ok(()),
        [
            Change::Write {
                real,
                shown,
                bytes,
                mode_of,
                ..
            },
        ] => return fsutil::atomic_write_over(real, shown, bytes, *mode_of),
        [Change::Remove { real, shown, .. }] => {
            return beneath::remove_file(real).map_err(|e| e.into_tool(shown, "remove"));
        }
        _ => {}
    }
    let tx = format!("{}-{:08x}", std::process::id(), rand::random::<u32>());
    let mut staged: Vec<PathBuf> = Vec::new();
    let drop_staged = |staged: &[PathBuf]| {
        for p in staged {
            let _ = beneath::remove_file(p);
        }
    };
    for (n, change) in changes.iter().enumerate() {
        let (real, shown, bytes, mode_of) = match change {
            Change::Write {
                real,
                shown,
                bytes,
                mode_of,
                ..
            } => (*real, *shown, *bytes, *mode_of),
            // An empty marker: a directory that only loses a file still shows a Boris
            // that looks there that a patch was under way.
            Change::Remove { real, shown, .. } => (*real, *shown, &b""[..], None),
        };
        let dir = real.parent().unwrap_or(Path::new("/"));
        let path = dir.join(format!("{PREFIX}{tx}-{n}"));
        if let Err(e) = fsutil::write_synced(&path, shown, bytes, mode_of) {
            let _ = beneath::remove_file(&path);
            drop_staged(&staged);
            return Err(e);
        }
        staged.push(path);
    }
    let journal = home.join(format!("{PREFIX}{tx}.journal"));
    if let Err(e) = write_journal(&journal, changes, &staged) {
        drop_staged(&staged);
        return Err(ToolError::io(&journal, "write the patch's journal", &e));
    }
    let mut failed = Vec::new();
    for (change, from) in changes.iter().zip(&staged) {
        if let Change::Write { real, shown, .. } = change
            && let Err(e) = beneath::rename(from, real)
        {
            let _ = beneath::remove_file(from);
            failed.push(e.into_tool(shown, "replace"));
        }
    }
    for (change, marker) in changes.iter().zip(&staged) {
        if let Change::Remove { real, shown, .. } = change {
            if let Err(e) = beneath::remove_file(real)
                && !e.is_not_found()
            {
                failed.push(e.into_tool(shown, "remove"));
            }
            let _ = beneath::remove_file(marker);
        }
    }
    let _ = beneath::remove_file(&journal);
    match failed.into_iter().next() {
        None => Ok(()),
        Some(first) => Err(ToolError::new(
            ErrorCode::IoError,
            format!(
                "the patch was applied only in part: {}; its other files were changed. View \
                 them before you go on.",
                first.message
            ),
        )),
    }
}

fn write_journal(path: &Path, changes: &[Change<'_>], staged: &[PathBuf]) -> std::io::Result<()> {
    let mut text = format!("{JOURNAL_HEADER}\n");
    let hash = |h: Option<u64>| h.map_or("-".to_string(), |h| format!("{h:016x}"));
    if staged.len() != changes.len() {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    for (change, from) in changes.iter().zip(staged) {
        text.push_str(&match change {
            Change::Write { real, before, .. } => format!(
                "write {} {} {}\n",
                file_uri(from),
                file_uri(real),
                hash(*before)
            ),
            Change::Remove { real, before, .. } => format!(
                "remove {} {} {}\n",
                file_uri(real),
                hash(Some(*before)),
                file_uri(from)
            ),
        });
    }
    text.push_str("end\n");
    let tmp = path.with_extension("journal.tmp");
    // Inside the directory opened beneath its allowed root, as every write (`beneath`).
    let written = fsutil::write_synced(&tmp, &tmp, text.as_bytes(), None)
        .map_err(|e| std::io::Error::other(e.message))
        .and_then(|()| {
            beneath::rename(&tmp, path)
                .map_err(|e| std::io::Error::other(e.into_tool(path, "rename").message))
        });
    if written.is_err() {
        let _ = beneath::remove_file(&tmp);
    }
    written
}

/// One line of a journal.
#[derive(Debug, PartialEq, Eq)]
enum Op {
    Write {
        from: PathBuf,
        to: PathBuf,
        before: Option<u64>,
    },
    Remove {
        target: PathBuf,
        before: u64,
        marker: PathBuf,
    },
}

/// The operations of a journal; `None` unless it is whole (its header and `end`).
fn read_journal(text: &str) -> Option<Vec<Op>> {
    let mut lines = text.lines();
    if lines.next()? != JOURNAL_HEADER {
        return None;
    }
    let hash = |s: &str| match s {
        "-" => Some(None),
        h => u64::from_str_radix(h, 16).ok().map(Some),
    };
    let mut ops = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["write", from, to, before] => ops.push(Op::Write {
                from: file_uri_path(from)?,
                to: file_uri_path(to)?,
                before: hash(before)?,
            }),
            ["remove", target, before, marker] => ops.push(Op::Remove {
                target: file_uri_path(target)?,
                before: hash(before)??,
                marker: file_uri_path(marker)?,
            }),
            ["end"] => return Some(ops),
            _ => return None,
        }
    }
    None
}

/// What a file holds now: `None` if nothing is there.
fn current_hash(path: &Path) -> std::io::Result<Option<u64>> {
    use std::io::Read;
    match beneath::open_read(path) {
        Ok((mut file, _)) => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Some(hash_bytes(&bytes)))
        }
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(std::io::Error::other(e.into_tool(path, "read").message)),
    }
}

/// Finishes the commit a journal describes (see the module's comment).
fn roll_forward(journal: &Path) {
    let Some(ops) = fs::read_to_string(journal)
        .ok()
        .and_then(|t| read_journal(&t))
    else {
        tracing::warn!(journal = %journal.display(), "an unreadable apply_patch journal was left as it is");
        return;
    };
    let mut kept = 0;
    for op in &ops {
        if let Op::Write { from, to, before } = op {
            if fs::symlink_metadata(from).is_err() {
                continue; // renamed before the interruption
            }
            if current_hash(to).ok().as_ref() == Some(before) {
                let _ = beneath::rename(from, to);
            } else {
                kept += 1;
                let _ = beneath::remove_file(from);
            }
        }
    }
    for op in &ops {
        if let Op::Remove {
            target,
            before,
            marker,
        } = op
        {
            if current_hash(target).ok().flatten() == Some(*before) {
                let _ = beneath::remove_file(target);
            }
            let _ = beneath::remove_file(marker);
        }
    }
    let _ = beneath::remove_file(journal);
    tracing::warn!(
        journal = %journal.display(),
        files = ops.len(),
        changed_since = kept,
        "finished an apply_patch that an earlier Boris was killed in the middle of"
    );
}

/// The directories already looked at by this process.
static LOOKED_AT: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Mutex::default);

/// Looks for what an interrupted commit left in `dir`, once per process.
pub fn recover_once(dir: &Path) {
    {
        let Ok(mut seen) = LOOKED_AT.lock() else {
            return;
        };
        if !seen.insert(dir.to_path_buf()) {
            return;
        }
    }
    recover_dir(dir);
}

/// Rolls forward or back every commit of a dead process found in `dir`; returns how
/// many it handled.
pub fn recover_dir(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    // Transaction → (journal here, leftovers here that are not a journal).
    let mut found: HashMap<String, (bool, Vec<PathBuf>)> = HashMap::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some((tx, kind)) = split_name(rest) else {
            continue;
        };
        let slot = found.entry(tx.to_string()).or_default();
        match kind {
            Kind::Journal => slot.0 = true,
            Kind::Other => slot.1.push(entry.path()),
        }
    }
    let mut handled = 0;
    for (tx, (journal_here, leftovers)) in found {
        let alive = tx
            .split('-')
            .next()
            .and_then(|p| p.parse::<i32>().ok())
            .is_none_or(fsutil::pid_is_alive);
        if alive {
            continue;
        }
        handled += 1;
        let journal_name = format!("{PREFIX}{tx}.journal");
        let journal = if journal_here {
            Some(dir.join(&journal_name))
        } else {
            dir.ancestors()
                .skip(1)
                .map(|a| a.join(&journal_name))
                .find(|j| fs::symlink_metadata(j).is_ok())
        };
        match journal {
            Some(j) => roll_forward(&j),
            None => roll_back(&leftovers),
        }
    }
    handled
}

enum Kind {
    Journal,
    /// A staged file, or a journal's temporary file.
    Other,
}

/// `<pid>-<8 hex>` and what follows it.
fn split_name(rest: &str) -> Option<(&str, Kind)> {
    let dash = rest.find('-')?;
    let tx_end = dash + 1 + 8;
    let tx = rest.get(..tx_end)?;
    let (pid, random) = tx.split_at(dash);
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !random[1..].bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    match &rest[tx_end..] {
        ".journal" => Some((tx, Kind::Journal)),
        ".journal.tmp" => Some((tx, Kind::Other)),
        s if s.len() > 1 && s.starts_with('-') && s[1..].bytes().all(|b| b.is_ascii_digit()) => {
            Some((tx, Kind::Other))
        }
        _ => None,
    }
}

/// Removes the staged files of a commit that never reached its journal, once they are
/// old enough (see [`fsutil::STALE_TEMP_AGE`]).
fn roll_back(leftovers: &[PathBuf]) {
    let now = SystemTime::now();
    for p in leftovers {
        let old = fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| m.modified().ok())
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= fsutil::STALE_TEMP_AGE);
        if old {
            let _ = beneath::remove_file(p);
        }
    }
}

/// The deepest directory holding every path of `paths` (at any depth).
pub fn common_dir<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Option<PathBuf> {
    let mut common: Option<PathBuf> = None;
    for p in paths {
        let dir = p.parent()?;
        common = Some(match common {
            None => dir.to_path_buf(),
            Some(c) => c
                .ancestors()
                .find(|a| dir.starts_with(a))
                .unwrap_or(Path::new("/"))
                .to_path_buf(),
        });
    }
    common
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trips_and_refuses_a_torn_one() {
        let a = Path::new("/w/a b.txt");
        let b = Path::new("/w/sub/ç.txt");
        let changes = [
            Change::Write {
                real: a,
                shown: a,
                bytes: b"x",
                mode_of: None,
                before: None,
            },
            Change::Remove {
                real: b,
                shown: b,
                before: 7,
            },
        ];
        let dir = tempfile::tempdir().unwrap();
        let j = dir.path().join("j.journal");
        let staged = [
            PathBuf::from("/w/.boris-patch-1-0000000a-0"),
            PathBuf::from("/w/sub/.boris-patch-1-0000000a-1"),
        ];
        write_journal(&j, &changes, &staged).unwrap();
        let text = fs::read_to_string(&j).unwrap();
        assert_eq!(
            read_journal(&text).unwrap(),
            [
                Op::Write {
                    from: "/w/.boris-patch-1-0000000a-0".into(),
                    to: a.into(),
                    before: None
                },
                Op::Remove {
                    target: b.into(),
                    before: 7,
                    marker: staged[1].clone()
                }
            ]
        );
        assert_eq!(read_journal(&text.replace("end\n", "")), None);
        assert_eq!(read_journal("garbage"), None);
    }

    #[test]
    fn names_and_common_dirs() {
        assert!(matches!(
            split_name("12-0badcafe.journal"),
            Some(("12-0badcafe", Kind::Journal))
        ));
        assert!(matches!(
            split_name("12-0badcafe-3"),
            Some(("12-0badcafe", Kind::Other))
        ));
        assert!(split_name("12-0badcafe-").is_none());
        assert!(split_name("x-0badcafe-1").is_none());
        assert!(split_name("12-0bad-1").is_none());
        let paths = [
            Path::new("/w/a/x"),
            Path::new("/w/a/b/y"),
            Path::new("/w/c/z"),
        ];
        assert_eq!(common_dir(paths), Some(PathBuf::from("/w")));
        assert_eq!(
            common_dir([Path::new("/w/a/x")]),
            Some(PathBuf::from("/w/a"))
        );
    }

    /// A dead writer's commit: one target renamed, one not; the journal in the parent
    /// directory. Recovery from the subdirectory finishes it, and leaves a target
    /// changed since alone.
    #[test]
    fn a_dead_writers_commit_is_rolled_forward() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        fs::create_dir(w.join("sub")).unwrap();
        let (a, b, c, gone) = (
            w.join("a"),
            w.join("sub/b"),
            w.join("sub/c"),
            w.join("sub/gone"),
        );
        fs::write(&a, "A2").unwrap(); // already renamed
        fs::write(&b, "B1").unwrap();
        fs::write(&c, "C-changed-since").unwrap();
        fs::write(&gone, "G").unwrap();
        let dead = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            let pid = child.id();
            child.wait().unwrap();
            pid
        };
        let tx = format!("{dead}-0000beef");
        let sb = w.join(format!("sub/{PREFIX}{tx}-1"));
        let sc = w.join(format!("sub/{PREFIX}{tx}-2"));
        let marker = w.join(format!("sub/{PREFIX}{tx}-3"));
        fs::write(&sb, "B2").unwrap();
        fs::write(&sc, "C2").unwrap();
        fs::write(&marker, "").unwrap();
        let h = |s: &str| format!("{:016x}", hash_bytes(s.as_bytes()));
        let journal = format!(
            "{JOURNAL_HEADER}\nwrite {} {} {}\nwrite {} {} {}\nwrite {} {} {}\nremove {} {} {}\nend\n",
            file_uri(&w.join(format!("{PREFIX}{tx}-0"))),
            file_uri(&a),
            h("A1"),
            file_uri(&sb),
            file_uri(&b),
            h("B1"),
            file_uri(&sc),
            file_uri(&c),
            h("C1"),
            file_uri(&gone),
            h("G"),
            file_uri(&marker),
        );
        fs::write(w.join(format!("{PREFIX}{tx}.journal")), journal).unwrap();
        assert_eq!(recover_dir(&w.join("sub")), 1);
        assert_eq!(fs::read_to_string(&a).unwrap(), "A2");
        assert_eq!(fs::read_to_string(&b).unwrap(), "B2");
        assert_eq!(fs::read_to_string(&c).unwrap(), "C-changed-since");
        assert!(!gone.exists());
        let left: Vec<_> = fs::read_dir(w.join("sub"))
            .unwrap()
            .chain(fs::read_dir(w).unwrap())
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(PREFIX))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
