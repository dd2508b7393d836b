//! What /proc says about a process: its state, group and session (`/proc/PID/stat`) and
//! the system call it sleeps in (`/proc/PID/syscall`). Terminal sessions use it to reach
//! every process group of a session (an interactive shell puts each job in its own) and
//! to tell a program waiting for input from one still working (issue 19 §1). Parsing is
//! pure; reading returns `None` for a process that is gone or not ours to inspect.

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::path::Path;

/// The fields of `/proc/PID/stat` Boris reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `R` running, `S` sleeping, `D` disk sleep, `T` stopped, `Z` zombie, …
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
}

/// Parses a `stat` line. The command name (field 2) is in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted from the last `)`.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let rest = &line[line.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let mut num = || fields.next()?.parse::<i32>().ok();
    Some(Stat {
        state,
        ppid: num()?,
        pgrp: num()?,
        session: num()?,
    })
}

pub fn read_stat(dir: &Path) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(dir.join("stat")).ok()?)
}

/// A thread's system call, from `/proc/PID/task/TID/syscall`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Syscall {
    /// On a CPU, not in a system call.
    Running,
    /// Blocked in system call `nr` with these arguments.
    Blocked { nr: i64, args: [u64; 6] },
}

/// Parses `/proc/…/syscall`: `running`, or the number and six hex arguments (then the
/// stack and program counters, ignored). `-1 …` (blocked outside a system call) is a
/// block in call -1, matching nothing.
pub fn parse_syscall(text: &str) -> Option<Syscall> {
    let text = text.trim();
    if text == "running" {
        return Some(Syscall::Running);
    }
    let mut parts = text.split_ascii_whitespace();
    let nr = parts.next()?.parse::<i64>().ok()?;
    let mut args = [0u64; 6];
    for arg in &mut args {
        let Some(word) = parts.next() else { break };
        *arg = u64::from_str_radix(word.trim_start_matches("0x"), 16).ok()?;
    }
    Some(Syscall::Blocked { nr, args })
}

/// Every process whose session is `sid`, as `(pid, /proc/pid)`.
pub fn session_members(sid: i32) -> impl Iterator<Item = (i32, std::path::PathBuf)> {
    super::other_processes()
        .filter(move |(_, dir)| read_stat(dir).is_some_and(|s| s.session == sid))
}

/// Every process whose process group is `pgid`.
pub fn group_members(pgid: i32) -> impl Iterator<Item = (i32, std::path::PathBuf)> {
    super::other_processes().filter(move |(_, dir)| read_stat(dir).is_some_and(|s| s.pgrp == pgid))
}

/// Signals every process of session `sid` (every job of a terminal's shell); true when
/// any was signalled.
pub fn signal_session(sid: i32, signal: Signal) -> bool {
    let mut any = false;
    for (pid, _) in session_members(sid) {
        any |= nix::sys::signal::kill(Pid::from_raw(pid), signal).is_ok();
    }
    any
}

/// Whether any live (not zombie) process is in session `sid`.
pub fn session_alive(sid: i32) -> bool {
    super::other_processes().any(|(_, dir)| {
        read_stat(&dir).is_some_and(|s| s.session == sid && s.state != 'Z' && s.state != 'X')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines() {
        let s = parse_stat("1234 (python3) S 1200 1234 1200 34816 1234 4194304 0 0").unwrap();
        assert_eq!(
            s,
            Stat {
                state: 'S',
                ppid: 1200,
                pgrp: 1234,
                session: 1200
            }
        );
        // A name with spaces and parentheses.
        let s = parse_stat("7 (a) b (c) R 1 7 7 0").unwrap();
        assert_eq!((s.state, s.pgrp), ('R', 7));
        assert_eq!(parse_stat("7 (cut"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn syscall_lines() {
        assert_eq!(parse_syscall("running\n"), Some(Syscall::Running));
        assert_eq!(
            parse_syscall("270 0x1 0x7fff237f98d0 0x0 0x0 0x0 0x0 0x7fff237f9840 0x7f55"),
            Some(Syscall::Blocked {
                nr: 270,
                args: [1, 0x7fff237f98d0, 0, 0, 0, 0]
            })
        );
        assert!(matches!(
            parse_syscall("-1 0x7ffc 0x5"),
            Some(Syscall::Blocked { nr: -1, .. })
        ));
        assert_eq!(parse_syscall("x"), None);
    }

    proptest::proptest! {
        /// Any text: a parse or `None`, never a panic.
        #[test]
        fn any_text_parses_or_not(text in ".{0,80}") {
            let _ = parse_stat(&text);
            let _ = parse_syscall(&text);
        }
    }
}
