//! Per-session state: the working directory relative paths resolve against, and the view
//! records behind view-before-edit (DESIGN §7). stdio has one workspace for the process;
//! each HTTP session has its own.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::exec::tasks::Tasks;
use crate::text::line_index::FileStamp;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// View records kept per workspace; past this the oldest are forgotten (an edit of a file
/// viewed that long ago then asks for a fresh view, which is the safe side).
const MAX_VIEW_RECORDS: usize = 8192;

pub struct Workspace {
    cwd: Mutex<PathBuf>,
    views: Mutex<ViewRecords>,
    /// The `boris` bash profile's cwd sentinel nonce (seed 000 D3).
    pub nonce: String,
    /// `run_in_background` tasks (boris profile).
    pub tasks: Tasks,
    /// Auto-backgrounded commands, by pid (pipe profile).
    pub pipe_procs: Tasks,
    /// Terminal sessions (issue 19 §1), by id; their processes are in `tasks`.
    pub terminals: crate::terminal::Sessions,
    /// MCP tasks (the tasks extension) this session created: `tasks/get` and
    /// `tasks/cancel` see only these.
    pub mcp_tasks: rmcp::task_manager::TaskManager,
    /// Spill files this session was handed a `resource_link` to: the only files its
    /// `resources/read` may read.
    offered: Mutex<std::collections::HashSet<PathBuf>>,
    /// What Boris's writes replaced, for `undo_edit` (issue 15 §3).
    history: Mutex<crate::edit_history::EditHistory>,
    /// This session's jail, started at its first command when the sandbox is on; it
    /// goes (and every process in it) with the workspace.
    pub jail: Mutex<Option<std::sync::Arc<crate::sandbox::client::Jail>>>,
    /// With the sandbox on, this session's own directory (its command output files and
    /// its TMPDIR), made at its first command and removed with it.
    session_dir: std::sync::OnceLock<PathBuf>,
    /// This session's language servers (issue 20), killed with it.
    pub lsp: std::sync::Arc<crate::lsp::Lsp>,
    /// What its commands left running in the background: killed with it (issue 25 §7).
    pub leftovers: crate::exec::Leftovers,
}

impl Drop for Workspace {
    fn drop(&mut self) {
        // The language servers, then the jail: its processes die before their directory
        // goes.
        self.lsp.stop_all();
        drop(lock(&self.jail).take());
        if let Some(dir) = self.session_dir.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("cwd", &self.cwd())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct ViewRecords {
    /// Real path → (what the last view or Boris write saw, insertion stamp).
    by_path: HashMap<PathBuf, (Seen, u64)>,
    clock: u64,
}

/// What a view recorded of a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The hash of every byte (the file had changed too recently for its stamp to be
    /// trusted, or Boris wrote it).
    Hash(u64),
    /// The file's stamp, older than the racy window: any later write changes its ctime,
    /// so an equal stamp means the same content without reading it (issue 14).
    Stamp(FileStamp),
    /// A file of 1 MiB or more that changed within the racy window: its stamp then, and
    /// the hash of the bytes `start..start + len` the view read (issue 21 §2: a view
    /// reads what it shows, not the whole file). An edit needs the same stamp and the
    /// same bytes there; only a change within the clock tick of the last write, of the
    /// same size and outside what the view read, would go unseen.
    Range {
        stamp: FileStamp,
        start: u64,
        len: u64,
        hash: u64,
    },
}

impl Workspace {
    pub fn new(cwd: PathBuf) -> Self {
        Workspace {
            cwd: Mutex::new(cwd),
            views: Mutex::new(ViewRecords::default()),
            nonce: crate::text::sentinel::new_nonce(),
            tasks: Tasks::default(),
            pipe_procs: Tasks::default(),
            terminals: Default::default(),
            mcp_tasks: Default::default(),
            offered: Mutex::default(),
            history: Mutex::default(),
            jail: Mutex::default(),
            leftovers: Default::default(),
            session_dir: Default::default(),
            lsp: Default::default(),
        }
    }

    /// This session's directory, if it was made.
    pub fn existing_session_dir(&self) -> Option<&Path> {
        self.session_dir.get().map(PathBuf::as_path)
    }

    /// This session's directory under `root` (made, mode 0700, on first use).
    pub fn session_dir(&self, root: &crate::exec::SpillDir) -> &Path {
        self.session_dir.get_or_init(|| {
            use std::os::unix::fs::DirBuilderExt;
            let dir = root.file(&root.next("session"));
            let _ = std::fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(&dir);
            dir
        })
    }

    /// Records that this session was given a link to `path`.
    pub fn offer(&self, path: &Path) {
        lock(&self.offered).insert(path.to_path_buf());
    }

    /// Whether this session was given a link to `path`.
    pub fn was_offered(&self, path: &Path) -> bool {
        lock(&self.offered).contains(path)
    }

    pub fn cwd(&self) -> PathBuf {
        lock(&self.cwd).clone()
    }

    pub fn set_cwd(&self, cwd: PathBuf) {
        *lock(&self.cwd) = cwd;
    }

    /// The undo history of this session.
    pub fn history(&self) -> std::sync::MutexGuard<'_, crate::edit_history::EditHistory> {
        lock(&self.history)
    }

    /// Records a write by Boris of `real`, which held `before` (`None`: did not exist)
    /// and now holds `after`: it becomes what the agent has seen, and an undo step.
    pub fn record_write(&self, real: &Path, before: Option<Vec<u8>>, after: &[u8]) {
        self.record_write_in(real, before, after, None);
    }

    /// [`record_write`](Self::record_write) for one file of a multi-file change
    /// (`group`, from `history().new_group()`), which undo takes back as a whole.
    pub fn record_write_in(
        &self,
        real: &Path,
        before: Option<Vec<u8>>,
        after: &[u8],
        group: Option<u64>,
    ) {
        let hash = crate::text::lines::hash_bytes(after);
        self.history().record_in(real, before, hash, group);
        self.record_view(real, hash);
    }

    /// Records that Boris removed `real`, which held `before`: an undo step, and no view
    /// record (nothing is there to have seen).
    pub fn record_removal(&self, real: &Path, before: Vec<u8>) {
        self.history().record_removal(real, before);
        self.forget_view(real);
    }

    /// Remembers the content an agent has seen (or Boris itself wrote) at `real`.
    pub fn record_view(&self, real: &Path, hash: u64) {
        self.record_seen(real, Seen::Hash(hash));
    }

    /// Drops the record of `real`: what the agent saw there can no longer be vouched for.
    pub fn forget_view(&self, real: &Path) {
        lock(&self.views).by_path.remove(real);
    }

    /// Remembers what an agent has seen at `real`, by hash or by stamp.
    pub fn record_seen(&self, real: &Path, seen: Seen) {
        let mut views = lock(&self.views);
        views.clock += 1;
        let stamp = views.clock;
        views.by_path.insert(real.to_path_buf(), (seen, stamp));
        if views.by_path.len() > MAX_VIEW_RECORDS {
            // Drop the oldest eighth in one go so eviction stays rare.
            let mut stamps: Vec<u64> = views.by_path.values().map(|v| v.1).collect();
            stamps.sort_unstable();
            let cutoff = stamps[MAX_VIEW_RECORDS / 8];
            views.by_path.retain(|_, v| v.1 > cutoff);
        }
    }

    /// Checks that the file at `real`, whose current stamp is `stamp` and content
    /// `content`, was viewed in this workspace and has not changed on disk since. The
    /// content is hashed only when the view recorded a hash.
    pub fn check_viewed(
        &self,
        real: &Path,
        shown: &Path,
        stamp: FileStamp,
        content: &[u8],
        verb: &str,
    ) -> ToolResult<()> {
        let seen = lock(&self.views).by_path.get(real).map(|r| r.0);
        let unchanged = match seen {
            None => {
                return Err(ToolError::new(
                    ErrorCode::FileNotViewed,
                    format!(
                        "{} has not been viewed in this session; view it before you {verb} it",
                        shown.display()
                    ),
                ));
            }
            Some(Seen::Hash(h)) => h == crate::text::lines::hash_bytes(content),
            Some(Seen::Stamp(s)) => s == stamp,
            Some(Seen::Range {
                stamp: s,
                start,
                len,
                hash,
            }) => {
                s == stamp
                    && usize::try_from(start)
                        .ok()
                        .zip(usize::try_from(start.saturating_add(len)).ok())
                        .and_then(|(a, b)| content.get(a..b))
                        .is_some_and(|read| crate::text::lines::hash_bytes(read) == hash)
            }
        };
        if unchanged {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::FileChanged,
            format!(
                "{} changed on disk since it was last viewed; view it again before you {verb} it",
                shown.display()
            ),
        ))
    }
}

/// A poisoned lock only means another tool call panicked while holding it; the data (a
/// path, a map of hashes) is still consistent, so carry on rather than fail every call.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(ctime_ns: i128) -> FileStamp {
        FileStamp {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 0,
            ctime_ns,
        }
    }

    #[test]
    fn view_records() {
        let ws = Workspace::new(PathBuf::from("/w"));
        let p = Path::new("/w/a");
        let s = stamp(0);
        assert_eq!(
            ws.check_viewed(p, p, s, b"x", "edit").unwrap_err().code,
            ErrorCode::FileNotViewed
        );
        ws.record_view(p, crate::text::lines::hash_bytes(b"x"));
        assert!(ws.check_viewed(p, p, s, b"x", "edit").is_ok());
        assert_eq!(
            ws.check_viewed(p, p, s, b"y", "edit").unwrap_err().code,
            ErrorCode::FileChanged
        );
        ws.record_seen(p, Seen::Stamp(s));
        assert!(ws.check_viewed(p, p, s, b"anything", "edit").is_ok());
        assert_eq!(
            ws.check_viewed(p, p, stamp(1), b"x", "edit")
                .unwrap_err()
                .code,
            ErrorCode::FileChanged
        );
    }

    /// A racy view of part of a large file: the same stamp and the same bytes where the
    /// view read pass; another stamp, other bytes there, or a file too short fail.
    #[test]
    fn range_records() {
        let ws = Workspace::new(PathBuf::from("/w"));
        let p = Path::new("/w/a");
        let s = stamp(0);
        let hash = crate::text::lines::hash_bytes(b"cd");
        ws.record_seen(
            p,
            Seen::Range {
                stamp: s,
                start: 2,
                len: 2,
                hash,
            },
        );
        assert!(ws.check_viewed(p, p, s, b"abcdef", "edit").is_ok());
        assert!(ws.check_viewed(p, p, s, b"ABcdEF", "edit").is_ok());
        for (st, content) in [(s, &b"abCdef"[..]), (s, b"abc"), (stamp(1), b"abcdef")] {
            assert_eq!(
                ws.check_viewed(p, p, st, content, "edit").unwrap_err().code,
                ErrorCode::FileChanged
            );
        }
    }

    #[test]
    fn eviction_keeps_the_newest() {
        let ws = Workspace::new(PathBuf::from("/w"));
        for i in 0..(MAX_VIEW_RECORDS + 10) {
            ws.record_view(&PathBuf::from(format!("/w/{i}")), 7);
        }
        let newest = PathBuf::from(format!("/w/{}", MAX_VIEW_RECORDS + 9));
        ws.record_view(&newest, crate::text::lines::hash_bytes(b"x"));
        assert!(
            ws.check_viewed(&newest, &newest, stamp(0), b"x", "edit")
                .is_ok()
        );
        assert!(lock(&ws.views).by_path.len() <= MAX_VIEW_RECORDS);
    }
}
