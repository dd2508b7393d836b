//! What a finished call leaves running (`cmd &`, `nohup`, `disown`, a dev server): it
//! may outlive its call, never its session (issue 25 §7, S4). The call returns once its
//! shell has exited and the output has settled; the processes it started go on (their
//! output drained and dropped, so a write never kills them with SIGPIPE), and die with
//! the session: its jail's PID namespace where there is one, else [`Leftovers`], which
//! kills every process carrying one of the session's tags when the session's workspace
//! goes (and shutdown kills every tag of the server).

use super::{DRAIN_GRACE, Running, TAG_VAR, live_groups, other_processes};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

/// How long a call waits for its readers to read what its shell wrote before it exited
/// (they look every 100 ms; a process left behind that writes without pause is cut off).
const CATCH_UP_LIMIT: std::time::Duration = std::time::Duration::from_millis(1000);

/// The tags of a session's calls whose processes may still run; killed when dropped.
#[derive(Debug, Default)]
pub struct Leftovers {
    tags: Mutex<HashSet<String>>,
}

impl Leftovers {
    fn add(&self, tag: String) {
        self.tags
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tag);
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        let tags = std::mem::take(&mut *self.tags.lock().unwrap_or_else(|p| p.into_inner()));
        if !tags.is_empty() {
            kill_tagged(&tags);
        }
    }
}

/// One pass over /proc: kills every process whose tag is one of `tags`.
fn kill_tagged(tags: &HashSet<String>) {
    let prefix = format!("{TAG_VAR}=");
    for (pid, dir) in other_processes() {
        let Ok(environ) = std::fs::read(dir.join("environ")) else {
            continue;
        };
        let tagged = environ.split(|&b| b == 0).any(|v| {
            v.strip_prefix(prefix.as_bytes())
                .and_then(|t| std::str::from_utf8(t).ok())
                .is_some_and(|t| tags.contains(t))
        });
        if tagged {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

impl Running {
    /// After the shell has exited by itself: what it started in the background keeps
    /// running, in `session`'s keeping. The readers stop keeping output once the output
    /// has settled, so the call returns at once even while a background process holds
    /// the pipe.
    pub async fn release(&self, session: &Leftovers) {
        let settled = self.streams_closed_within(DRAIN_GRACE).await;
        if !settled {
            // Everything the shell wrote is in the pipes: the readers keep it, then drop
            // what the processes left behind write from now on.
            self.detached.store(true, Ordering::Relaxed);
            let deadline = std::time::Instant::now() + CATCH_UP_LIMIT;
            while std::time::Instant::now() < deadline
                && self.caught_up.load(Ordering::SeqCst) < *self.open_streams.borrow()
            {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
        self.stop_readers.store(true, Ordering::Relaxed);
        session.add(self.tag.clone());
        self.released.store(true, Ordering::Relaxed);
        if let Some(groups) = live_groups().as_mut() {
            groups.remove(&self.pid);
        }
    }
}
