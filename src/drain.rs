//! The drain on SIGTERM (issue 31 §3): the server stops taking new sessions and says so
//! on `/ready`, lets the tool calls in flight finish within `--shutdown-grace`, then ends
//! the ones left with a JSON-RPC error that says the server is shutting down.
//!
//! One per process, as the signal is: `server.rs` counts every tool call here, whatever
//! the transport; only the HTTP transport drains (stdio has one client, which is the one
//! that asked the server to stop).

use std::ops::Deref;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What a call still running past the grace answers.
pub const SHUTTING_DOWN: &str = "the server is shutting down: the call was ended before it finished (--shutdown-grace); \
     its effects may be partial, retry it on another instance";

/// How long calls ended at the grace get to write their error before connections close.
const ENDING: Duration = Duration::from_secs(1);

/// A number of things in progress (calls, answers being written) that can be awaited
/// down to zero: each counts while its guard ([`Counted`]) lives.
#[derive(Debug, Default)]
pub struct Count {
    n: AtomicUsize,
    changed: Notify,
}

impl Count {
    /// One more in progress until the guard is dropped; `count` is how the guard holds
    /// the count (`&Count`, or an `Arc<Count>` for a guard that must be `'static`).
    pub fn enter<C: Deref<Target = Count>>(count: C) -> Counted<C> {
        count.n.fetch_add(1, Ordering::SeqCst);
        Counted(count)
    }

    pub fn get(&self) -> usize {
        self.n.load(Ordering::SeqCst)
    }

    /// Resolves once nothing is in progress.
    pub async fn zero(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the count is read, so one ending in between wakes it.
            changed.as_mut().enable();
            if self.get() == 0 {
                return;
            }
            changed.await;
        }
    }
}

/// One thing in progress on a [`Count`], until dropped.
pub struct Counted<C: Deref<Target = Count>>(C);

impl<C: Deref<Target = Count>> Drop for Counted<C> {
    fn drop(&mut self) {
        self.0.n.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

#[derive(Debug, Default)]
pub struct Drain {
    draining: AtomicBool,
    in_flight: Count,
    ended: CancellationToken,
}

/// The process's drain.
pub fn global() -> &'static Drain {
    static DRAIN: OnceLock<Drain> = OnceLock::new();
    DRAIN.get_or_init(Drain::default)
}

/// Counts one call in flight until dropped.
pub type CallGuard<'a> = Counted<&'a Count>;

impl Drain {
    /// Whether a signal has begun the drain.
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.get()
    }

    /// A call begins; it counts until the guard is dropped.
    pub fn call_started(&self) -> CallGuard<'_> {
        Count::enter(&self.in_flight)
    }

    /// Cancelled when the grace is over: a call still running ends with [`SHUTTING_DOWN`].
    pub fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// Begins the drain and returns when the calls in flight are done, or `grace` is
    /// over and the ones left have been ended (and had a moment to answer).
    pub async fn run(&self, grace: Duration) {
        self.draining.store(true, Ordering::SeqCst);
        tracing::info!(
            calls = self.in_flight(),
            grace_s = grace.as_secs_f64(),
            "signal received: draining (no new sessions; running calls may finish)"
        );
        if tokio::time::timeout(grace, self.in_flight.zero())
            .await
            .is_ok()
        {
            return;
        }
        tracing::warn!(
            calls = self.in_flight(),
            "calls still running after the shutdown grace: ending them"
        );
        self.ended.cancel();
        let _ = tokio::time::timeout(ENDING, self.in_flight.zero()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_that_finishes_within_the_grace_is_not_ended() {
        let drain = Drain::default();
        let guard = drain.call_started();
        let release = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(guard);
        };
        tokio::join!(drain.run(Duration::from_secs(10)), release);
        assert!(drain.draining());
        assert!(!drain.ended().is_cancelled());
        assert_eq!(drain.in_flight(), 0);
    }

    #[tokio::test]
    async fn a_call_past_the_grace_is_ended() {
        let drain = Drain::default();
        let guard = drain.call_started();
        let call = async {
            drain.ended().cancelled().await;
            drop(guard);
        };
        tokio::join!(drain.run(Duration::from_millis(50)), call);
        assert!(drain.ended().is_cancelled());
        assert_eq!(drain.in_flight(), 0);
    }

    #[tokio::test]
    async fn no_call_no_wait() {
        let drain = Drain::default();
        tokio::time::timeout(Duration::from_secs(1), drain.run(Duration::from_secs(60)))
            .await
            .expect("nothing in flight: the drain ends at once");
    }
}
