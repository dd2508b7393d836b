//! Waiting for a session's program: until it exits, waits for input, or the call's
//! yield time passes (issue 19 §1). What "waits for input" means is the kernel's word
//! (`probe`), confirmed against the ways a program can look blocked while it is not.

use super::probe::{self, Activity};
use super::session::{Sent, Session, Status, Waiting, blocking, foreground_of, lock};
use crate::exec;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a program must have been silent, with a prompt-like last line, to count as
/// waiting for input when the kernel cannot tell (`poll`/`epoll` over several
/// descriptors, or no /proc).
pub const PROMPT_QUIET: Duration = Duration::from_millis(250);

/// After output, the first look at the kernel's view comes this soon, then ever less
/// often, up to [`MAX_LOOK_INTERVAL`]: an answer follows the program's last output by a
/// few milliseconds without /proc being read a thousand times a second.
pub(super) const FIRST_LOOK: Duration = Duration::from_millis(1);
const MAX_LOOK_INTERVAL: Duration = Duration::from_millis(50);

/// Where the program's threads cannot be marked (no /proc), how long after a write
/// without output the kernel's view is trusted again (see `Session::settle`).
const WRITE_SETTLE: Duration = Duration::from_millis(30);

/// After input holding a lone Escape, how long a program must be silent before it
/// counts as waiting: vim, readline and other key-sequence parsers hold an Esc (and what
/// follows it) until their escape timeout (vim's `ttimeoutlen`, 100 ms in its
/// defaults). Where /proc shows that wait's timeout the probe sees it anyway; this
/// covers systems where it does not.
const ESCAPE_QUIET: Duration = Duration::from_millis(300);

/// A program found blocked reading its input is looked at again this much later, with
/// no output in between, before the answer says it waits: what it wrote just before
/// reading may still be on its way through the terminal (the kernel moves it to the
/// master side on a work queue), where nothing counts it.
pub(super) const CONFIRM_READING: Duration = Duration::from_millis(1);

/// How long a listing of the foreground group's processes is reused (a process that
/// joins the group meanwhile is seen at the next listing; one that leaves is skipped).
const MEMBERS_FRESH: Duration = Duration::from_millis(100);

/// How a wait ended, before the answer is put together.
pub(super) enum Settled {
    Status(Status),
    /// Another call on the session, or the call's cancellation, cut it short.
    CutShort,
}

impl Session {
    /// Waits up to `wait` for the program to exit or to wait for input. `wrote`: when
    /// this call sent input. The terminal hands input to the program asynchronously, so
    /// right after a write a program may still look blocked in the read it is about to
    /// return from: a verdict then needs output since the write (an echo or an answer
    /// only comes once the input reached the program) or the program's threads to have
    /// run since (their switch counts moved; [`WRITE_SETTLE`] of silence where /proc
    /// does not say). The same holds for the terminal's answers to the program's queries.
    pub(super) async fn settle(
        &self,
        wait: Duration,
        sent: Option<Sent>,
        ct: &CancellationToken,
    ) -> Settled {
        let min_quiet = match &sent {
            Some(Sent { escape: true, .. }) => ESCAPE_QUIET,
            _ => FIRST_LOOK,
        };
        let mut deadline = tokio::time::Instant::now() + wait;
        let mut extended = false;
        let preempted_at = self.preempted.load(Ordering::SeqCst);
        let mut seq = self.output_seq.clone();
        seq.borrow_and_update();
        let mut look_in = FIRST_LOOK;
        let mut last_look: Option<std::time::Instant> = None;
        // When the program was first seen reading, and the output count then.
        let mut reading_since: Option<(Instant, u64)> = None;
        loop {
            // The input the program has to react to: ours, and the terminal's latest
            // answer to one of its queries.
            let pending: Vec<Sent> = sent
                .iter()
                .cloned()
                .chain(lock(&self.last_reply).clone())
                .collect();
            let wrote = pending.iter().map(|s| s.at).max();
            if self.exited() {
                self.task
                    .running
                    .output_delivered_within(Duration::from_secs(5))
                    .await;
                return Settled::Status(self.current_status());
            }
            if self.preempted.load(Ordering::SeqCst) != preempted_at || ct.is_cancelled() {
                return Settled::CutShort;
            }
            let due = last_look.is_none_or(|t| t.elapsed() >= look_in);
            if due && self.quiet(wrote) >= min_quiet && self.drained() {
                last_look = Some(Instant::now());
                look_in = (look_in * 2).min(MAX_LOOK_INTERVAL);
                let last_output = *lock(&self.last_output);
                let unanswered: Vec<Sent> = pending
                    .into_iter()
                    .filter(|s| last_output <= s.at)
                    .collect();
                let (activity, ran) = self.activity(&unanswered).await;
                // Looked at again now: output may have come while /proc was read.
                let quiet = self.quiet(wrote);
                let answered = ran
                    && unanswered.iter().all(|s| {
                        s.marks.is_some() || s.at.elapsed() >= WRITE_SETTLE.max(min_quiet)
                    });
                if answered && quiet >= min_quiet && self.drained() {
                    match activity {
                        Activity::Reading => {
                            let seen = *seq.borrow();
                            match reading_since {
                                Some((at, s)) if s == seen && at.elapsed() >= CONFIRM_READING => {
                                    return Settled::Status(Status::Waiting(Waiting::Reading));
                                }
                                Some((_, s)) if s == seen => {}
                                _ => reading_since = Some((Instant::now(), seen)),
                            }
                            look_in = CONFIRM_READING;
                        }
                        Activity::Polling | Activity::Unknown
                            if quiet >= PROMPT_QUIET
                                && super::prompt::looks_like_prompt(
                                    &lock(&self.screen).cursor_line(),
                                ) =>
                        {
                            return Settled::Status(Status::Waiting(Waiting::Prompt));
                        }
                        _ => reading_since = None,
                    }
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                // Seen reading but not yet confirmed (a read with no wait): confirm it
                // rather than call a waiting program busy.
                if reading_since.is_some() && !extended {
                    extended = true;
                    deadline = now + CONFIRM_READING + FIRST_LOOK;
                } else {
                    return Settled::Status(Status::Running);
                }
            }
            let next_look = match last_look {
                None => now + FIRST_LOOK,
                Some(t) => tokio::time::Instant::from_std(t + look_in),
            };
            let wake = deadline.min(next_look.max(now + Duration::from_micros(200)));
            let done = self.task.wait_done(Duration::from_secs(3600));
            tokio::select! {
                changed = seq.changed() => {
                    if changed.is_ok() {
                        look_in = FIRST_LOOK;
                        last_look = None;
                    }
                }
                _ = done => {}
                _ = tokio::time::sleep_until(wake) => {}
                _ = self.preempt.notified() => {}
                _ = ct.cancelled() => {}
            }
        }
    }

    /// Time since the last output, or since this call's write if that came later.
    fn quiet(&self, wrote: Option<Instant>) -> Duration {
        let last = *lock(&self.last_output);
        let since = wrote.map_or(last, |w| w.max(last));
        since.elapsed()
    }

    /// Every byte written so far has reached the emulator.
    fn drained(&self) -> bool {
        let unread = match &self.master {
            Some(master) => {
                // What the program wrote waits in the terminal's buffer until a kernel
                // worker moves it to the master's side, where FIONREAD counts it; a
                // poll of the master moves it at once (n_tty flushes on poll).
                use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
                let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
                let readable = poll(&mut fds, PollTimeout::ZERO).is_ok_and(|n| n > 0)
                    && fds[0]
                        .revents()
                        .is_some_and(|r| r.contains(PollFlags::POLLIN));
                if readable {
                    return false;
                }
                exec::unread_bytes(master.as_fd())
            }
            None => self.task.running.output_unread(),
        };
        unread == 0 && self.task.running.nothing_in_flight()
    }

    /// The terminal's foreground process group (a pipe session's own group).
    pub(super) fn foreground(&self) -> i32 {
        match &self.master {
            Some(master) => foreground_of(master.as_fd(), self.task.running.pid),
            None => self.task.running.pid,
        }
    }

    /// Marks of the foreground threads now (see [`probe::Marks`]).
    pub(super) async fn marks(&self) -> Option<probe::Marks> {
        let group = self.foreground();
        let members = self.members.clone();
        blocking(move || {
            let pids = probe::members(group);
            *lock(&members) = Some((group, pids.clone(), Instant::now()));
            Ok(probe::switch_marks(&pids))
        })
        .await
        .ok()
        .filter(|m| !m.is_empty())
    }

    /// What the kernel says of the processes that would read input, and whether the
    /// threads marked before each input in `unanswered` have run since.
    async fn activity(&self, unanswered: &[Sent]) -> (Activity, bool) {
        let group = self.foreground();
        let input = self.input;
        let members = self.members.clone();
        let marks: Vec<probe::Marks> = unanswered.iter().filter_map(|s| s.marks.clone()).collect();
        blocking(move || {
            let fresh = lock(&members)
                .as_ref()
                .filter(|(g, _, at)| *g == group && at.elapsed() < MEMBERS_FRESH)
                .map(|(_, pids, _)| pids.clone());
            let pids = match fresh {
                Some(pids) => pids,
                None => {
                    let pids = probe::members(group);
                    *lock(&members) = Some((group, pids.clone(), Instant::now()));
                    pids
                }
            };
            let ran = marks.iter().all(probe::ran_since);
            Ok((probe::probe(&pids, group, input), ran))
        })
        .await
        .unwrap_or((Activity::Unknown, false))
    }
}
