//! Background processes of one workspace: the `boris` profile's `run_in_background`
//! tasks (keyed by task id), its terminal sessions (issue 19 §1: `term_N`, registered
//! here too so that `task_output`, `task_stop` and shutdown cover them) and the `pipe`
//! profile's auto-backgrounded commands (keyed by pid). At most [`MAX_LIVE_TASKS`]
//! background commands exist at once (terminal sessions have their own bound); dropping
//! the registry (an HTTP session closed, the server shutting down) kills every group
//! still running.

use super::{Running, TERM_GRACE};
use nix::sys::signal::Signal;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// Background tasks per workspace, running or finished and not yet read (DESIGN §6).
pub const MAX_LIVE_TASKS: usize = 10;

/// What a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A background command (`run_in_background`, a hand-off, the pipe profile's).
    Command,
    /// A terminal session (issue 19 §1), which takes input across calls.
    Terminal,
}

/// When Boris terminates a task, and the reason its output then gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deadline {
    pub after: Duration,
    pub reason: String,
}

impl Deadline {
    /// The server's `--background-task-timeout`, if set.
    pub fn server(timeout: Option<Duration>) -> Option<Deadline> {
        timeout.map(|after| Deadline {
            after,
            reason: format!(
                "terminated after the background task timeout ({}s)",
                after.as_secs()
            ),
        })
    }

    /// The timeout the call asked for (`timeout_ms`), `left` of it still to run.
    pub fn call(timeout_ms: u64, left: Duration) -> Deadline {
        Deadline {
            after: left,
            reason: format!("terminated after the call's timeout ({timeout_ms}ms)"),
        }
    }

    /// Whichever of the two comes first (issue 29 §5: a deadline the call asked for is
    /// kept, and so is the server's).
    pub fn earliest(a: Option<Deadline>, b: Option<Deadline>) -> Option<Deadline> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.after < a.after { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// One background process.
pub struct Task {
    /// `task_N`, `term_N` (boris profile) or the pid (pipe profile).
    pub id: String,
    pub kind: Kind,
    pub command: String,
    pub running: Running,
    /// Why Boris stopped it, if it did.
    stopped: Mutex<Option<String>>,
    stop: Notify,
    done: watch::Receiver<bool>,
    /// Stream offsets already reported by `check_pid` (pipe profile).
    pub reported: Mutex<(u64, u64)>,
}

impl Task {
    pub fn is_done(&self) -> bool {
        *self.done.borrow()
    }

    /// Waits until the task has finished, or `limit` has passed; true when finished.
    pub async fn wait_done(&self, limit: Duration) -> bool {
        let mut rx = self.done.clone();
        tokio::time::timeout(limit, rx.wait_for(|d| *d))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Why the task was stopped by Boris, if it was.
    pub fn stopped_reason(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Terminates the task (SIGTERM, grace, SIGKILL) and waits until it has finished.
    pub async fn stop(&self, reason: &str) {
        if !self.is_done() {
            *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.to_string());
            self.stop.notify_one();
        }
        self.wait_done(TERM_GRACE + Duration::from_secs(2)).await;
    }
}

#[derive(Default)]
pub struct Tasks {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next: u64,
    next_terminal: u64,
    tasks: BTreeMap<String, Arc<Task>>,
}

/// The registry is full.
#[derive(Debug)]
pub struct TaskLimit;

impl Tasks {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fails when a new task would exceed [`MAX_LIVE_TASKS`]; checked before spawning, so
    /// that a rejected task never starts.
    pub fn check_room(&self) -> Result<(), TaskLimit> {
        if self.count(Kind::Command) >= MAX_LIVE_TASKS {
            Err(TaskLimit)
        } else {
            Ok(())
        }
    }

    /// How many tasks of `kind` are registered.
    pub fn count(&self, kind: Kind) -> usize {
        self.table()
            .tasks
            .values()
            .filter(|t| t.kind == kind)
            .count()
    }

    /// The next `task_N` id.
    pub fn next_id(&self) -> String {
        let mut t = self.table();
        t.next += 1;
        format!("task_{}", t.next)
    }

    /// The next `term_N` id (terminal sessions are numbered apart from tasks).
    pub fn next_terminal_id(&self) -> String {
        let mut t = self.table();
        t.next_terminal += 1;
        format!("term_{}", t.next_terminal)
    }

    /// Registers a started command and watches it until it ends: on exit, at its
    /// `deadline` (terminated, the deadline's reason kept), or on [`Task::stop`].
    pub fn adopt(
        &self,
        id: String,
        command: String,
        running: Running,
        deadline: Option<Deadline>,
    ) -> Arc<Task> {
        self.adopt_kind(Kind::Command, id, command, running, deadline)
    }

    /// [`Tasks::adopt`] for a task of any kind.
    pub fn adopt_kind(
        &self,
        kind: Kind,
        id: String,
        command: String,
        running: Running,
        deadline: Option<Deadline>,
    ) -> Arc<Task> {
        let (done_tx, done_rx) = watch::channel(false);
        let task = Arc::new(Task {
            id: id.clone(),
            kind,
            command,
            running,
            stopped: Mutex::new(None),
            stop: Notify::new(),
            done: done_rx,
            reported: Mutex::new((0, 0)),
        });
        self.table().tasks.insert(id, task.clone());
        let watched = task.clone();
        // Counted running until the waiter below sees it end (or is dropped with its
        // runtime).
        let live = crate::metrics::Live::new(match kind {
            Kind::Command => crate::metrics::Gauge::Tasks,
            Kind::Terminal => crate::metrics::Gauge::Terminals,
        });
        tokio::spawn(async move {
            let after = deadline.as_ref().map(|d| d.after);
            let expiry = async {
                match after {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = watched.running.wait() => {}
                _ = expiry => {
                    *watched.stopped.lock().unwrap_or_else(|p| p.into_inner()) =
                        deadline.map(|d| d.reason);
                    watched.running.terminate(TERM_GRACE).await;
                }
                _ = watched.stop.notified() => {
                    watched.running.terminate(TERM_GRACE).await;
                }
            }
            watched.running.finish().await;
            drop(live);
            let _ = done_tx.send(true);
        });
        task
    }

    pub fn get(&self, id: &str) -> Option<Arc<Task>> {
        self.table().tasks.get(id).cloned()
    }

    pub fn remove(&self, id: &str) {
        self.table().tasks.remove(id);
    }

    pub fn ids(&self) -> Vec<String> {
        self.table().tasks.keys().cloned().collect()
    }

    /// The ids of the tasks of `kind`.
    pub fn ids_of(&self, kind: Kind) -> Vec<String> {
        self.table()
            .tasks
            .values()
            .filter(|t| t.kind == kind)
            .map(|t| t.id.clone())
            .collect()
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in self.table().tasks.values() {
            if !task.is_done() {
                task.running.signal_group(Signal::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_deadline_wins_with_its_reason() {
        let server = Deadline::server(Some(Duration::from_secs(1)));
        let call = Some(Deadline::call(60_000, Duration::from_secs(60)));
        let first = Deadline::earliest(call.clone(), server.clone()).unwrap();
        assert_eq!(
            first.reason,
            "terminated after the background task timeout (1s)"
        );
        let short = Some(Deadline::call(500, Duration::from_millis(500)));
        let first = Deadline::earliest(short, server.clone()).unwrap();
        assert_eq!(first.reason, "terminated after the call's timeout (500ms)");
        assert_eq!(Deadline::earliest(None, server.clone()), server);
        assert_eq!(Deadline::earliest(call.clone(), None), call);
        assert_eq!(Deadline::earliest(None, Deadline::server(None)), None);
    }
}
