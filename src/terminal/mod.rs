//! Interactive sessions (issue 19 §1): a process the model writes to across calls, on a
//! pseudo-terminal (REPLs, prompts, pagers, editors, full-screen programs) or on plain
//! pipes with a writable stdin. This is the engine; `tools::terminal` is the thin layer
//! of Boris's tools over it, as `tools::shell` is to `bash`, and other contracts (Codex's
//! `exec_command`/`write_stdin`) can sit on it the same way.
//!
//! A session is started through the one choke point every process goes through
//! (`exec::Running::spawn`, inside the session's sandbox when it is on), registered in
//! the workspace's task registry (so `task_output`, `task_stop`, the session's end and
//! shutdown cover it), and its output goes through a terminal emulator
//! ([`screen::Screen`]). Every call — start, write, read, resize — answers when the
//! program exits, when it waits for input ([`probe`], then [`prompt`] after a quiet
//! spell), or when its yield time has passed, with what is new since the last answer.

mod calls;
pub mod keys;
mod lines;
pub mod probe;
pub mod prompt;
pub mod queries;
pub mod screen;
mod session;
mod wait;

pub use calls::Report;
pub use session::{Session, StartSpec, Status, Waiting, start, terminal_env};

/// Default terminal size: what every program assumes when nothing says otherwise.
pub const DEFAULT_ROWS: u16 = 24;
pub const DEFAULT_COLS: u16 = 80;
/// Bounds of a terminal's size.
pub const MAX_ROWS: u16 = 500;
pub const MAX_COLS: u16 = 1000;
pub const MIN_ROWS: u16 = 2;
pub const MIN_COLS: u16 = 10;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A workspace's terminal sessions, by id (their processes are in its task registry).
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    pub fn insert(&self, session: Arc<Session>) {
        session::lock(&self.map).insert(session.id.clone(), session);
    }

    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        session::lock(&self.map).get(id).cloned()
    }

    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        session::lock(&self.map).remove(id)
    }

    /// The ids, sorted by number (`term_2` before `term_10`).
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = session::lock(&self.map).keys().cloned().collect();
        ids.sort_by_key(|id| {
            let n = id.rsplit('_').next().and_then(|n| n.parse::<u64>().ok());
            (n, id.clone())
        });
        ids
    }

    pub fn len(&self) -> usize {
        session::lock(&self.map).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
