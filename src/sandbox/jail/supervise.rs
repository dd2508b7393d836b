//! Without namespaces, the jail's commands share one Landlock domain with the process
//! that forks them (a domain is only ever entered by a process itself, so whoever forks
//! them sits in it), and may signal it: `kill -STOP $PPID` stopped it, and every later
//! call of the session hung (issue 25 §5, S1). So the jail splits in two: a *supervisor*
//! that stays outside the domain, which commands cannot signal (Landlock's signal
//! scoping), and below it the *spawner* that enters the domain and serves Boris. The
//! supervisor continues the spawner whenever it is stopped, and exits when it dies, so
//! that Boris sees the control socket close and starts the session a new jail.
//!
//! The supervisor is also the subreaper every command ends under once the spawner is
//! gone, so it is what makes a session's processes die with it: a process that dropped
//! its tag (`env -u BORIS_PROCESS_TAG setsid …`), which Boris's sweep by tag cannot
//! find, still has the supervisor as its ancestor, and the supervisor kills every
//! process below it before it exits (DEC-122). Boris ends a session by sending it SIGTERM.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The spawner's pid, for the SIGTERM handler.
static SPAWNER: AtomicI32 = AtomicI32::new(0);

/// SIGTERM: Boris is ending the session. Killing the spawner here (kill is
/// async-signal-safe) ends the wait below whenever the signal comes.
extern "C" fn on_term(_: libc::c_int) {
    let spawner = SPAWNER.load(Ordering::SeqCst);
    if spawner > 0 {
        unsafe { libc::kill(spawner, libc::SIGKILL) };
    }
}

/// How long the supervisor keeps killing what appears below it (a fork bomb can keep
/// it busy) before it gives up and leaves the rest to Boris's sweep by tag.
const KILL_LIMIT: Duration = Duration::from_secs(2);

/// Forks the spawner and returns in it; the supervisor never returns. `control` is the
/// control socket, which the supervisor closes (Boris must see EOF once the spawner dies).
pub(super) fn fork_spawner(control: RawFd) -> Result<(), String> {
    let supervisor = unsafe { libc::getpid() };
    // Orphans of a dead spawner come here, not to the host's init.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            // The spawner dies with its supervisor (Boris kills that one).
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            if unsafe { libc::getppid() } != supervisor {
                // The supervisor died before the line above.
                unsafe { libc::_exit(1) }
            }
            Ok(())
        }
        spawner => {
            unsafe { libc::close(control) };
            SPAWNER.store(spawner, Ordering::SeqCst);
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = on_term as *const () as usize;
            unsafe { libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut()) };
            supervise(spawner)
        }
    }
}

fn supervise(spawner: libc::pid_t) -> ! {
    loop {
        let mut status = 0;
        let pid = unsafe { libc::waitpid(spawner, &mut status, libc::WUNTRACED) };
        if pid == -1 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if libc::WIFSTOPPED(status) {
            unsafe { libc::kill(spawner, libc::SIGCONT) };
            continue;
        }
        // Exited or killed: its commands are orphans now, ours.
        break;
    }
    kill_descendants();
    std::process::exit(0)
}

/// Kills every process below this one: its children, then theirs as they are reparented
/// here (a subreaper), until none is left or [`KILL_LIMIT`] has passed.
fn kill_descendants() {
    let me = unsafe { libc::getpid() };
    let start = Instant::now();
    loop {
        let children = children_of(me);
        for &child in &children {
            unsafe { libc::kill(child, libc::SIGKILL) };
        }
        // Reap what died; ECHILD: nothing is left below.
        loop {
            let reaped = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
            if reaped == -1 && children.is_empty() {
                return;
            }
            if reaped <= 0 {
                break;
            }
        }
        if start.elapsed() > KILL_LIMIT {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The pids whose parent is `parent`, from `/proc/<pid>/stat` (the field after the
/// command name, which may itself hold spaces and parentheses).
/// (`exec::other_processes` walks `/proc` too, but exec sits above the sandbox.)
fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<libc::pid_t>().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            (parent_in_stat(&stat)? == parent).then_some(pid)
        })
        .collect()
}

/// The parent pid in a `/proc/<pid>/stat` line: `pid (comm) state ppid …`.
fn parent_in_stat(stat: &str) -> Option<libc::pid_t> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parent_in_stat;

    #[test]
    fn the_parent_is_read_after_the_last_parenthesis() {
        assert_eq!(parent_in_stat("12 (bash) S 7 12 12 0"), Some(7));
        assert_eq!(parent_in_stat("12 (a) b) (c) R 99 1"), Some(99));
        assert_eq!(parent_in_stat("12 (x"), None);
        assert_eq!(parent_in_stat(""), None);
    }
}
