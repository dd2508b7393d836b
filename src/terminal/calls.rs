//! The calls on a session — write, read, resize, stop — each taking the session's turn,
//! acting, waiting as `wait` says and answering with a [`Report`]; and the watch that
//! stops an idle session.

use super::keys::{self, Input, PipeAction};
use super::screen::Update;
use super::session::{Sent, Session, Status, blocking, lock};
use super::wait::Settled;
use crate::exec;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The longest a write may wait for a program to take its input.
const MAX_WRITE_WAIT: Duration = Duration::from_secs(5);

/// A call's answer, for the tool layer to word.
#[derive(Debug, Clone)]
pub struct Report {
    pub id: String,
    pub status: Status,
    pub update: Update,
    /// The raw output file, once the output outgrew memory.
    pub output_file: Option<PathBuf>,
    pub tty: bool,
    /// Rows and columns.
    pub size: (u16, u16),
    /// Bytes of input that could not be written (the program stopped reading).
    pub unwritten: usize,
    /// A pipe session's stdin was closed (Ctrl-D).
    pub input_closed: bool,
}

impl Session {
    /// Takes this session's turn, first asking a call still waiting on it to answer now.
    async fn take_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.preempted.fetch_add(1, Ordering::SeqCst);
        self.preempt.notify_waiters();
        let guard = self.turn.lock().await;
        self.touch();
        guard
    }

    /// Writes `input` (text and keys), then waits as [`Session::read`] does.
    pub async fn write(
        &self,
        input: &[Input],
        wait: Duration,
        budget: usize,
        ct: &CancellationToken,
    ) -> std::io::Result<Report> {
        let _turn = self.take_turn().await;
        let mut unwritten = 0;
        let mut sent = None;
        if !self.exited() && !input.is_empty() {
            let marks = self.marks().await;
            sent = Some(Sent {
                at: Instant::now(),
                escape: keys::holds_lone_escape(input),
                marks,
            });
            unwritten = self.send(input, wait).await?;
        }
        let status = self.settle(wait, sent, ct).await;
        Ok(self.report(status, budget, false, unwritten))
    }

    /// What is new, after waiting up to `wait` for the program to exit or wait for
    /// input. `whole`: the whole current screen rather than what changed on it.
    pub async fn read(
        &self,
        wait: Duration,
        budget: usize,
        whole: bool,
        ct: &CancellationToken,
    ) -> Report {
        let _turn = self.take_turn().await;
        let status = self.settle(wait, None, ct).await;
        self.report(status, budget, whole, 0)
    }

    /// Resizes the terminal (the kernel tells the program with SIGWINCH), then waits as
    /// [`Session::read`] does. `None` for a pipe session.
    pub async fn resize(
        &self,
        rows: u16,
        cols: u16,
        wait: Duration,
        budget: usize,
        ct: &CancellationToken,
    ) -> Option<std::io::Result<Report>> {
        let master = self.master.as_ref()?;
        let _turn = self.take_turn().await;
        let marks = self.marks().await;
        lock(&self.screen).resize(rows, cols);
        if let Err(e) = master.resize(pty_process::Size::new(rows, cols)) {
            return Some(Err(std::io::Error::other(e)));
        }
        let sent = Sent {
            at: Instant::now(),
            escape: false,
            marks,
        };
        let status = self.settle(wait, Some(sent), ct).await;
        Some(Ok(self.report(status, budget, false, 0)))
    }

    /// Stops the program (hangup, then SIGTERM, then SIGKILL to every process of the
    /// session) and reports its last output.
    pub async fn stop(&self, reason: &str, budget: usize) -> Report {
        let _turn = self.take_turn().await;
        self.task.stop(reason).await;
        self.report(Settled::Status(self.current_status()), budget, false, 0)
    }

    /// Sends input; returns how many bytes could not be written in time.
    async fn send(&self, input: &[Input], wait: Duration) -> std::io::Result<usize> {
        let deadline = Instant::now() + wait.clamp(Duration::from_millis(100), MAX_WRITE_WAIT);
        if let Some(master) = &self.master {
            let bytes = keys::terminal_bytes(input, lock(&self.screen).modes());
            let fd = master.as_fd().try_clone_to_owned()?;
            let written = blocking(move || {
                exec::write_until(fd.as_fd(), &bytes, deadline).map(|n| bytes.len() - n)
            })
            .await?;
            return Ok(written);
        }
        let mut unwritten = 0;
        for action in keys::pipe_actions(input) {
            match action {
                PipeAction::Bytes(bytes) => {
                    let task = self.task.clone();
                    let len = bytes.len();
                    let n = blocking(move || task.running.write_input(&bytes, deadline)).await;
                    match n {
                        Ok(n) => unwritten += len - n,
                        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => unwritten += len,
                        Err(e) => return Err(e),
                    }
                }
                PipeAction::Signal(signal) => {
                    self.task.running.signal_group(signal);
                }
                PipeAction::CloseInput => {
                    self.task.running.close_input();
                }
            }
        }
        Ok(unwritten)
    }

    fn report(&self, settled: Settled, budget: usize, whole: bool, unwritten: usize) -> Report {
        self.touch();
        let status = match settled {
            Settled::Status(s) => s,
            Settled::CutShort => self.current_status(),
        };
        let (update, size) = {
            let mut screen = lock(&self.screen);
            (screen.take_update(budget, whole), screen.size())
        };
        if matches!(status, Status::Exited { .. }) {
            self.end_reported.store(true, Ordering::SeqCst);
        }
        let output_file = if update.omitted > 0 {
            exec::lock(&self.task.running.stdout)
                .spill_path()
                .map(Path::to_path_buf)
        } else {
            None
        };
        Report {
            id: self.id.clone(),
            status,
            update,
            output_file,
            tty: self.tty,
            size,
            unwritten,
            input_closed: !self.tty && !self.task.running.input_open(),
        }
    }

    /// Stops the session once it has been idle for `idle` (`None`: never), calling
    /// `forget` when it is gone (stopped, or ended and left unread that long).
    pub fn watch_idle(
        self: &Arc<Self>,
        idle: Option<Duration>,
        forget: impl FnOnce() + Send + 'static,
    ) {
        let Some(idle) = idle else {
            return;
        };
        let session = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(s) = session.upgrade() else { return };
                // A call waiting on the session is use: idle time counts from its end.
                if s.turn.try_lock().is_err() {
                    drop(s);
                    tokio::time::sleep(idle).await;
                    continue;
                }
                let left = idle.saturating_sub(s.idle_for());
                if left.is_zero() {
                    if !s.exited() {
                        let reason = format!(
                            "stopped after {}s without a call (--terminal-idle-timeout)",
                            idle.as_secs()
                        );
                        tracing::info!(session = %s.id, "terminal session idle: stopping it");
                        s.task.stop(&reason).await;
                    }
                    drop(s);
                    forget();
                    return;
                }
                drop(s);
                tokio::time::sleep(left).await;
            }
        });
    }
}
