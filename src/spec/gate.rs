//! How many CPU-heavy case runs may be under way at once.
//!
//! Most of a case is waiting: for a server to answer, a command to sleep, a clock to
//! pass, so the suite runs many more cases at once than the machine has cores (`-j 8`
//! on two cores takes 73 s where `-j 2` takes 162 s, at a quarter of one core busy).
//! Two kinds of case are the exception. A case tagged `lsp` starts a language server:
//! pyright or typescript-language-server spends seconds of CPU starting, and sixteen of
//! them at once on two cores miss the case's 60-second diagnostics wait; those runs take
//! a place from a [`Gate`] sized to the cores first, whatever `-j` says. A case tagged
//! `race` races the server with a loop in a command, and its positive control must win
//! that race at least once in 120 tries, which it stops doing when the cores are busy
//! with other cases (`sandbox/race-str-replace [control]` lost at sixteen at once, and
//! once in CI at eight with a place per core): those runs run alone ([`admit`]).

use std::sync::{Condvar, LazyLock, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A counting semaphore: at most `limit` [`Permit`]s out at a time.
#[derive(Debug)]
struct Gate {
    limit: usize,
    taken: Mutex<usize>,
    freed: Condvar,
}

/// One place through a [`Gate`], given back when dropped.
#[derive(Debug)]
struct Permit<'a>(&'a Gate);

impl Gate {
    /// A gate of `limit` places (at least one).
    fn new(limit: usize) -> Gate {
        Gate {
            limit: limit.max(1),
            taken: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Waits for a free place and takes it.
    fn enter(&self) -> Permit<'_> {
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
    #[cfg(test)]
    fn taken(&self) -> usize {
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

/// Whether a case with these tags starts a language server (a place from [`HEAVY`]).
fn needs_a_core(tags: &[String]) -> bool {
    tags.iter().any(|t| t == "lsp")
}

/// Whether a case with these tags races the server (it runs alone).
fn runs_alone(tags: &[String]) -> bool {
    tags.iter().any(|t| t == "race")
}

/// Held by every case run: shared, or alone for a `race` case.
static ALONE: RwLock<()> = RwLock::new(());

/// What a case run holds while it runs: dropped, it lets the next ones in.
#[derive(Debug)]
pub struct Admitted {
    _core: Option<Permit<'static>>,
    _shared: Option<RwLockReadGuard<'static, ()>>,
    _alone: Option<RwLockWriteGuard<'static, ()>>,
}

/// Waits until a run of a case with these tags may start: a `race` case when no other
/// run is under way (and none starts until it ends), an `lsp` case when a core is free
/// of language servers too, any other at once (unless a `race` case is running or
/// waiting). A panicking run poisons nothing that matters: the lock guards no data.
pub fn admit(tags: &[String]) -> Admitted {
    if runs_alone(tags) {
        return Admitted {
            _core: None,
            _shared: None,
            _alone: Some(ALONE.write().unwrap_or_else(PoisonError::into_inner)),
        };
    }
    let shared = ALONE.read().unwrap_or_else(PoisonError::into_inner);
    Admitted {
        _core: needs_a_core(tags).then(|| HEAVY.enter()),
        _shared: Some(shared),
        _alone: None,
    }
}

/// The gate of the language-server runs: one place per core.
static HEAVY: LazyLock<Gate> =
    LazyLock::new(|| Gate::new(std::thread::available_parallelism().map_or(1, |n| n.get())));

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// `n` threads at once, each holding what `enter(i)` returns for 25 ms, during which
    /// `watch(i, inside)` is told five times how many are inside. Returns the most that
    /// were ever inside together.
    fn crowd<G>(
        n: usize,
        enter: impl Fn(usize) -> G + Sync,
        watch: impl Fn(usize, usize) + Sync,
    ) -> usize {
        let inside = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for i in 0..n {
                let (enter, watch, inside, most) = (&enter, &watch, &inside, &most);
                s.spawn(move || {
                    let _held = enter(i);
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    for _ in 0..5 {
                        watch(i, inside.load(Ordering::SeqCst));
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    inside.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        most.load(Ordering::SeqCst)
    }

    #[test]
    fn never_more_than_the_limit_inside() {
        let gate = Gate::new(2);
        assert_eq!(crowd(8, |_| gate.enter(), |_, _| {}), 2);
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

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn language_servers_need_a_core_and_races_run_alone() {
        assert!(needs_a_core(&tags(&["lsp", "python"])));
        assert!(!needs_a_core(&tags(&["sandbox", "race", "escape"])));
        assert!(runs_alone(&tags(&["sandbox", "race", "escape"])));
        assert!(!runs_alone(&tags(&["lsp"])));
        assert!(!needs_a_core(&tags(&["timing", "bash"])) && !runs_alone(&[]));
    }

    #[test]
    fn a_race_runs_with_no_other_run() {
        // Eight runs, two of them races: while a race is inside, nothing else is.
        let is_race = |i: usize| i % 4 == 1;
        let race_saw_company = AtomicUsize::new(0);
        let most = crowd(
            8,
            |i| admit(&tags(if is_race(i) { &["race"] } else { &["bash"] })),
            |i, inside| {
                if is_race(i) && inside != 1 {
                    race_saw_company.fetch_add(1, Ordering::SeqCst);
                }
            },
        );
        assert_eq!(race_saw_company.load(Ordering::SeqCst), 0);
        assert!(most > 1, "the other runs still share");
    }

    #[test]
    fn a_zero_limit_still_lets_one_in() {
        // On another thread: a gate of no places would block this one for good.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let gate = Gate::new(0);
            let p = gate.enter();
            let _ = tx.send(gate.taken());
            drop(p);
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(1));
    }
}
