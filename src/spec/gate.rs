//! How many CPU-heavy case runs may be under way at once.
//!
//! Most of a case is waiting: for a server to answer, a command to sleep, a clock to
//! pass, so the suite runs many more cases at once than the machine has cores (`-j 8`
//! on two cores takes 73 s where `-j 2` takes 162 s, at a quarter of one core busy).
//! Two kinds of case are the exception. A case tagged `lsp` starts a language server:
//! pyright or typescript-language-server spends seconds of CPU starting, and sixteen of
//! them at once on two cores miss the case's 60-second diagnostics wait. A case tagged
//! `race` races the server with a loop in a command, and its positive control must win
//! that race at least once in a hundred tries, which it stops doing when the cores are
//! busy elsewhere (`sandbox/race-str-replace [control]` at 16 at once). Those runs take
//! a place from a [`Gate`] sized to the cores first, whatever `-j` says.

use std::sync::{Condvar, LazyLock, Mutex, PoisonError};

/// A counting semaphore: at most `limit` [`Permit`]s out at a time.
#[derive(Debug)]
pub struct Gate {
    limit: usize,
    taken: Mutex<usize>,
    freed: Condvar,
}

/// One place through a [`Gate`], given back when dropped.
#[derive(Debug)]
pub struct Permit<'a>(&'a Gate);

impl Gate {
    /// A gate of `limit` places (at least one).
    pub fn new(limit: usize) -> Gate {
        Gate {
            limit: limit.max(1),
            taken: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Waits for a free place and takes it.
    pub fn enter(&self) -> Permit<'_> {
        // A holder that panicked still gave its place back (Permit's drop), so the
        // count is right even when the lock is poisoned.
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        while *taken >= self.limit {
            taken = self
                .freed
                .wait(taken)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *taken += 1;
        Permit(self)
    }

    /// Places taken now.
    pub fn taken(&self) -> usize {
        *self.taken.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut taken = self.0.taken.lock().unwrap_or_else(PoisonError::into_inner);
        *taken -= 1;
        self.0.freed.notify_one();
    }
}

/// The tags of the cases that need a core of their own (see the module's comment).
pub const CPU_BOUND_TAGS: [&str; 2] = ["lsp", "race"];

/// Whether a case with these tags takes a place from [`HEAVY`].
pub fn needs_a_core(tags: &[String]) -> bool {
    tags.iter().any(|t| CPU_BOUND_TAGS.contains(&t.as_str()))
}

/// The gate of the CPU-bound runs: one place per core.
pub static HEAVY: LazyLock<Gate> =
    LazyLock::new(|| Gate::new(std::thread::available_parallelism().map_or(1, |n| n.get())));

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn never_more_than_the_limit_inside() {
        let gate = Gate::new(2);
        let inside = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let _p = gate.enter();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    inside.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 2);
        assert_eq!(gate.taken(), 0);
    }

    #[test]
    fn a_panicking_holder_gives_its_place_back() {
        let gate = Gate::new(1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _p = gate.enter();
            panic!("inside");
        }));
        assert!(r.is_err());
        assert_eq!(gate.taken(), 0);
        drop(gate.enter());
    }

    #[test]
    fn language_servers_and_races_need_a_core() {
        let tags = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(needs_a_core(&tags(&["lsp", "python"])));
        assert!(needs_a_core(&tags(&["sandbox", "race", "escape"])));
        assert!(!needs_a_core(&tags(&["timing", "bash"])));
        assert!(!needs_a_core(&[]));
    }

    #[test]
    fn a_zero_limit_still_lets_one_in() {
        let gate = Gate::new(0);
        let p = gate.enter();
        assert_eq!(gate.taken(), 1);
        drop(p);
    }
}
