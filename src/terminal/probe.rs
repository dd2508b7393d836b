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

/// Looks at every thread of process group `pgrp`.
pub fn probe(pgrp: i32, input: Input) -> Activity {
    let mut seen = false;
    let mut reading = false;
    let mut polling = false;
    for (_, dir) in procfs::group_members(pgrp) {
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
            match classify(&call, |fd| reads_input(&dir, fd, input)) {
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

/// What one thread's system call says; `is_input(fd)`: whether fd is the session's input.
pub fn classify(call: &Syscall, is_input: impl Fn(u64) -> bool) -> Activity {
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
    // select(nfds, …) with nfds 1 watches fd 0 alone.
    if is_select(nr) {
        return if args[0] == 1 && is_input(0) {
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
}
