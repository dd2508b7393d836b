//! Whether a session's program waits for input, as the kernel tells it (issue 19 §1).
//!
//! The processes that may read input are the terminal's foreground process group (a
//! pipe session's own group). For each of their threads, `/proc/…/task/TID/stat` gives
//! the state and `/proc/…/task/TID/syscall` the call it sleeps in: `read` on the terminal
//! (or on the stdin pipe), or `select` on nothing but fd 0 (bash, python, vim and top
//! wait that way), is a program waiting for input; `poll`, `epoll` or a `select` over
//! several descriptors may be (the prompt fallback decides); a running thread, or one
//! asleep in anything else (`nanosleep`, `wait4`, a socket), is a program at work.

use crate::exec::procfs::{self, Syscall};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Duration;

/// What the kernel says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Blocked reading the terminal (or stdin): waiting for input, for certain.
    Reading,
    /// Asleep in `poll`/`select`/`epoll` over descriptors Boris cannot see: perhaps
    /// waiting for input.
    Polling,
    /// Running, or asleep in anything else: working.
    Working,
    /// No process to look at, or /proc would not say.
    Unknown,
}

/// What the session reads from: its terminal's device, or its stdin pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The slave's device number.
    Terminal { rdev: u64 },
    /// The stdin pipe's inode.
    Pipe { ino: u64 },
}

/// `/dev/tty`'s device number (5, 0): a process reading it reads its controlling
/// terminal, which in a session is the session's own.
const DEV_TTY: u64 = 5 << 8;

/// How often each thread of some processes had been switched out, by (pid, tid): a
/// thread that ran since has a higher count. Taken before Boris writes to a program, it
/// tells whether the program has run since (the terminal hands input over
/// asynchronously: until the program has run, it still looks blocked in its read).
pub type Marks = Vec<(i32, i32, u64)>;

/// The context switches (voluntary and not) in a `/proc/…/status` text.
pub fn parse_switches(status: &str) -> Option<u64> {
    let mut total = None;
    for line in status.lines() {
        if let Some(rest) = line
            .strip_prefix("voluntary_ctxt_switches:")
            .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
        {
            let n = rest.trim().parse::<u64>().ok()?;
            total = Some(total.unwrap_or(0) + n);
        }
    }
    total
}

fn switches(pid: i32, tid: i32) -> Option<u64> {
    let path = format!("/proc/{pid}/task/{tid}/status");
    parse_switches(&std::fs::read_to_string(path).ok()?)
}

/// The marks of every thread of `pids` now.
pub fn switch_marks(pids: &[i32]) -> Marks {
    let mut marks = Vec::new();
    for &pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                continue;
            };
            if let Some(n) = switches(pid, tid) {
                marks.push((pid, tid, n));
            }
        }
    }
    marks
}

/// Whether any marked thread has run since its mark (or is gone).
pub fn ran_since(marks: &Marks) -> bool {
    marks
        .iter()
        .any(|&(pid, tid, n)| switches(pid, tid).is_none_or(|now| now != n))
}

/// The processes of group `pgrp` (a scan of /proc: the costly part of a look).
pub fn members(pgrp: i32) -> Vec<i32> {
    procfs::group_members(pgrp).map(|(pid, _)| pid).collect()
}

/// Looks at every thread of the processes `pids`, those still in group `pgrp`.
pub fn probe(pids: &[i32], pgrp: i32, input: Input) -> Activity {
    let mut seen = false;
    let mut reading = false;
    let mut polling = false;
    for pid in pids {
        let dir = Path::new("/proc").join(pid.to_string());
        if procfs::read_stat(&dir).is_none_or(|s| s.pgrp != pgrp) {
            continue;
        }
        let Ok(tasks) = std::fs::read_dir(dir.join("task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let tdir = task.path();
            let Some(stat) = procfs::read_stat(&tdir) else {
                continue;
            };
            match stat.state {
                'R' | 'D' => return Activity::Working,
                'Z' | 'X' | 'T' | 't' => continue,
                _ => {}
            }
            seen = true;
            let Some(call) = std::fs::read_to_string(tdir.join("syscall"))
                .ok()
                .and_then(|t| procfs::parse_syscall(&t))
            else {
                polling = true;
                continue;
            };
            match classify(
                &call,
                |fd| reads_input(&dir, fd, input),
                |at| read_timeout(&tdir, at),
            ) {
                Activity::Working => {}
                Activity::Reading => reading = true,
                Activity::Polling | Activity::Unknown => polling = true,
            }
        }
    }
    if reading {
        Activity::Reading
    } else if polling {
        Activity::Polling
    } else if seen {
        Activity::Working
    } else {
        Activity::Unknown
    }
}

/// A `select` that wakes by itself sooner than this is a program about to act on its
/// own (vim holding an Esc for its escape timeout, or waiting 100 ms for the terminal's
/// answers on its way out), not one waiting for a person.
pub const SHORT_WAIT: Duration = Duration::from_secs(1);

/// How a timed wait's timeout is given: a `struct timeval` (select) or a `struct
/// timespec` (pselect6) at an address in the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutAt {
    Timeval(u64),
    Timespec(u64),
}

/// What one thread's system call says; `is_input(fd)`: whether fd is the session's
/// input; `timeout(at)`: the timeout a timed `select` waits for, if it can be read.
pub fn classify(
    call: &Syscall,
    is_input: impl Fn(u64) -> bool,
    timeout: impl Fn(TimeoutAt) -> Option<Duration>,
) -> Activity {
    let (nr, args) = match call {
        Syscall::Running => return Activity::Working,
        Syscall::Blocked { nr, args } => (*nr, args),
    };
    if [libc::SYS_read, libc::SYS_readv, libc::SYS_pread64].contains(&nr) {
        return if is_input(args[0]) {
            Activity::Reading
        } else {
            Activity::Working
        };
    }
    // select(nfds, …) with nfds 1 watches fd 0 alone; a short timeout means the
    // program wakes by itself in a moment.
    if is_select(nr) {
        let at = match args[4] {
            0 => None,
            addr if nr == libc::SYS_pselect6 => Some(TimeoutAt::Timespec(addr)),
            addr => Some(TimeoutAt::Timeval(addr)),
        };
        let soon = at.and_then(timeout).is_some_and(|t| t < SHORT_WAIT);
        return if args[0] == 1 && is_input(0) && !soon {
            Activity::Reading
        } else {
            Activity::Polling
        };
    }
    if is_poll(nr) {
        return Activity::Polling;
    }
    Activity::Working
}

#[cfg(target_arch = "x86_64")]
fn is_select(nr: i64) -> bool {
    nr == libc::SYS_select || nr == libc::SYS_pselect6
}

#[cfg(not(target_arch = "x86_64"))]
fn is_select(nr: i64) -> bool {
    nr == libc::SYS_pselect6
}

#[cfg(target_arch = "x86_64")]
fn is_poll(nr: i64) -> bool {
    [
        libc::SYS_poll,
        libc::SYS_ppoll,
        libc::SYS_epoll_wait,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ]
    .contains(&nr)
}

#[cfg(not(target_arch = "x86_64"))]
fn is_poll(nr: i64) -> bool {
    [
        libc::SYS_ppoll,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ]
    .contains(&nr)
}

/// The timeout a blocked `select` waits for, read from the process's memory
/// (`/proc/…/mem`, which Boris may read for its own descendants); `None` where it
/// cannot be read.
fn read_timeout(task: &Path, at: TimeoutAt) -> Option<Duration> {
    use std::os::unix::fs::FileExt;
    let addr = match at {
        TimeoutAt::Timeval(a) | TimeoutAt::Timespec(a) => a,
    };
    let mut buf = [0u8; 16];
    let mem = std::fs::File::open(task.join("mem")).ok()?;
    mem.read_exact_at(&mut buf, addr).ok()?;
    let secs = i64::from_ne_bytes(buf[..8].try_into().ok()?);
    let frac = i64::from_ne_bytes(buf[8..].try_into().ok()?);
    let nanos = match at {
        TimeoutAt::Timeval(_) => frac.checked_mul(1000)?,
        TimeoutAt::Timespec(_) => frac,
    };
    if secs < 0 || !(0..1_000_000_000).contains(&nanos) {
        return None;
    }
    Some(Duration::new(secs as u64, nanos as u32))
}

/// Whether descriptor `fd` of the process at `dir` is the session's input.
fn reads_input(dir: &Path, fd: u64, input: Input) -> bool {
    let Ok(meta) = std::fs::metadata(dir.join("fd").join(fd.to_string())) else {
        return false;
    };
    match input {
        Input::Terminal { rdev } => {
            meta.file_type().is_char_device() && (meta.rdev() == rdev || meta.rdev() == DEV_TTY)
        }
        Input::Pipe { ino } => meta.file_type().is_fifo() && meta.ino() == ino,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(nr: i64, args: [u64; 6]) -> Syscall {
        Syscall::Blocked { nr, args }
    }

    #[test]
    fn calls() {
        let yes = |_| true;
        let no = |_| false;
        let unknown = |_| None;
        let classify = |c: &Syscall, i: fn(u64) -> bool| super::classify(c, i, unknown);
        assert_eq!(classify(&Syscall::Running, yes), Activity::Working);
        assert_eq!(
            classify(&blocked(libc::SYS_read, [0; 6]), yes),
            Activity::Reading
        );
        assert_eq!(
            classify(&blocked(libc::SYS_read, [0; 6]), no),
            Activity::Working
        );
        assert_eq!(
            classify(&blocked(libc::SYS_pselect6, [1, 0, 0, 0, 0, 0]), yes),
            Activity::Reading
        );
        assert_eq!(
            classify(&blocked(libc::SYS_pselect6, [5, 0, 0, 0, 0, 0]), yes),
            Activity::Polling
        );
        assert_eq!(
            classify(&blocked(libc::SYS_ppoll, [0; 6]), yes),
            Activity::Polling
        );
        assert_eq!(
            classify(&blocked(libc::SYS_nanosleep, [0; 6]), yes),
            Activity::Working
        );
        assert_eq!(
            classify(&blocked(libc::SYS_wait4, [0; 6]), yes),
            Activity::Working
        );
    }

    /// A select on fd 0 alone that times out soon is a program about to act (vim's
    /// escape timeout); a long or endless one waits for a person.
    #[test]
    fn timed_selects() {
        let call = blocked(libc::SYS_pselect6, [1, 0x10, 0, 0, 0x20, 0]);
        let after = |ms: u64| move |_| Some(Duration::from_millis(ms));
        assert_eq!(classify(&call, |_| true, after(100)), Activity::Polling);
        assert_eq!(classify(&call, |_| true, after(4000)), Activity::Reading);
        assert_eq!(classify(&call, |_| true, |_| None), Activity::Reading);
        let endless = blocked(libc::SYS_pselect6, [1, 0x10, 0, 0, 0, 0]);
        assert_eq!(classify(&endless, |_| true, after(1)), Activity::Reading);
    }

    #[test]
    fn switch_counts() {
        let status = "Name:\tbash\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_switches(status), Some(15));
        assert_eq!(parse_switches("Name:\tx\n"), None);
        assert_eq!(parse_switches("voluntary_ctxt_switches:\tmany\n"), None);
        // This thread sleeps between two looks at itself: it was switched out.
        let me = std::process::id() as i32;
        let marks = switch_marks(&[me]);
        assert!(!marks.is_empty());
        std::thread::sleep(Duration::from_millis(5));
        assert!(ran_since(&marks));
    }
}
