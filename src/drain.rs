//! The drain on SIGTERM (issue 31 §3): the server stops taking new sessions and says so
//! on `/ready`, lets the tool calls in flight finish within `--shutdown-grace`, then ends
//! the ones left with a JSON-RPC error that says the server is shutting down.
//!
//! One per process, as the signal is: `server.rs` counts every tool call here, whatever
//! the transport; only the HTTP transport drains (stdio has one client, which is the one
//! that asked the server to stop).

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

#[derive(Debug, Default)]
pub struct Drain {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    changed: Notify,
    ended: CancellationToken,
}

/// The process's drain.
pub fn global() -> &'static Drain {
    static DRAIN: OnceLock<Drain> = OnceLock::new();
    DRAIN.get_or_init(Drain::default)
}

/// Counts one call in flight until dropped.
pub struct CallGuard<'a>(&'a Drain);

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

impl Drain {
    /// Whether a signal has begun the drain.
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// A call begins; it counts until the guard is dropped.
    pub fn call_started(&self) -> CallGuard<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        CallGuard(self)
    }

    /// Cancelled when the grace is over: a call still running ends with [`SHUTTING_DOWN`].
    pub fn ended(&self) -> &CancellationToken {
        &self.ended
    }

    /// Resolves once no call is in flight.
    async fn calls_done(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the count is read, so a call ending in between wakes it.
            changed.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            changed.await;
        }
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
        if tokio::time::timeout(grace, self.calls_done()).await.is_ok() {
            return;
        }
        tracing::warn!(
            calls = self.in_flight(),
            "calls still running after the shutdown grace: ending them"
        );
        self.ended.cancel();
        let _ = tokio::time::timeout(ENDING, self.calls_done()).await;
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
