//! The server process of one case: `/bin/sh -c '<server_cmd> <args…>'` in its own
//! process group, with its pipe threads (a writer that never blocks the harness, a
//! stdout reader into a channel, a stderr reader into a bounded buffer), signals, exit,
//! and the /proc lookups behind the orphan checks.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;

// ---------------------------------------------------------------------------------
// The server process

pub(crate) enum Incoming {
    Json(Value),
    Garbage(String),
    Eof,
    ReadError(String),
}

pub(crate) type WriteReq = (Vec<u8>, mpsc::Sender<std::io::Result<()>>);

/// Largest stderr kept in memory; the rest is read and dropped.
pub(crate) const STDERR_CAP: usize = 16 << 20;

/// The server process and its pipe threads (also used by [`super::bench`]).
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) pgid: Pid,
    /// The shell exec'd the server: the child is the server itself.
    pub(crate) direct: bool,
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stdin: Option<mpsc::Sender<WriteReq>>,
    /// Messages from the server's stdout, one per line, each with the moment its line
    /// was read (before parsing, so a client's JSON decoding never counts as the
    /// server's latency in `boris-spec bench`).
    pub(crate) out: mpsc::Receiver<(Incoming, Instant)>,
    /// `out` reported EOF, a read error, or disconnected.
    pub(crate) stdout_closed: bool,
    pub(crate) stderr: Arc<Mutex<Vec<u8>>>,
    pub(crate) stderr_done: mpsc::Receiver<()>,
    /// The value of [`CASE_MARKER_VAR`] in the server's environment, inherited by every
    /// process it starts (unless the server scrubs its children's environment).
    pub(crate) marker: String,
}

/// The environment variable that marks every process a case's server starts, so that
/// the harness can find the ones that outlive it.
pub const CASE_MARKER_VAR: &str = "BORIS_SPEC_CASE";

/// Poll intervals for waiting on a server: short at first (a server that exits or
/// prints its address at once is seen at once, not a fixed tick later), doubling to
/// 10 ms (a long wait costs few wake-ups).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff(Duration);

impl Default for Backoff {
    fn default() -> Self {
        Backoff(Duration::from_micros(250))
    }
}

impl Backoff {
    pub(crate) fn next_wait(&mut self) -> Duration {
        let d = self.0;
        self.0 = (self.0 * 2).min(Duration::from_millis(10));
        d
    }
}

/// A marker no other case (in this or another harness process) uses.
pub(crate) fn new_marker() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live processes (not zombies, not the harness) whose environment holds
/// `CASE_MARKER_VAR=marker`: `(pid, command line)`. Linux only (reads /proc); empty
/// elsewhere.
pub fn processes_with_marker(marker: &str) -> Vec<(i32, String)> {
    let needle = format!("{CASE_MARKER_VAR}={marker}");
    crate::exec::other_processes()
        .filter(|(_, dir)| {
            // A zombie's environ reads as empty, so only live processes match.
            fs::read(dir.join("environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()))
        })
        .map(|(pid, dir)| (pid, cmdline_of(&dir)))
        .collect()
}

/// A process's arguments joined by spaces ("" when unreadable).
pub(crate) fn cmdline_of(dir: &Path) -> String {
    fs::read(dir.join("cmdline"))
        .map(|raw| {
            String::from_utf8_lossy(&raw)
                .trim_end_matches('\0')
                .replace('\0', " ")
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------
// The command line

/// Quotes a word for `/bin/sh`.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Puts `exec` before a plain server command line so that the server replaces the
/// shell and signals reach it directly; returns whether it did. Left alone (the shell
/// stays in between): command lines with shell operators, substitutions, a leading
/// variable assignment or a leading keyword/builtin.
pub fn exec_prefixed(cmd: &str) -> (String, bool) {
    let trimmed = cmd.trim_start();
    let first = trimmed.split_whitespace().next().unwrap_or("");
    let assignment = first.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    let keyword = matches!(
        first,
        "exec"
            | "cd"
            | "if"
            | "for"
            | "while"
            | "until"
            | "case"
            | "{"
            | "!"
            | "export"
            | "set"
            | "eval"
            | "."
            | "source"
            | "time"
            | "command"
    );
    let operators =
        trimmed.contains([';', '&', '|', '(', ')', '<', '>', '`', '\n']) || trimmed.contains("$(");
    if trimmed.is_empty() || assignment || keyword || operators {
        (cmd.to_string(), false)
    } else {
        (format!("exec {trimmed}"), true)
    }
}

/// The shell command line that starts the server: [`exec_prefixed`] `server_cmd`, then
/// `extra` as written (several words: `--http-args`), then `args` shell-quoted. Returns
/// it and whether the shell exec's the server.
pub fn server_cmdline(server_cmd: &str, extra: &str, args: &[String]) -> (String, bool) {
    let (mut cmdline, direct) = exec_prefixed(server_cmd);
    if !extra.trim().is_empty() {
        cmdline.push(' ');
        cmdline.push_str(extra.trim());
    }
    for a in args {
        cmdline.push(' ');
        cmdline.push_str(&shell_quote(a));
    }
    (cmdline, direct)
}

// ---------------------------------------------------------------------------------
// The process

impl Server {
    pub(crate) fn spawn(
        cmdline: &str,
        workdir: &Path,
        env: &BTreeMap<String, String>,
        direct: bool,
    ) -> Result<Self, String> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(cmdline)
            .current_dir(workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // Hermetic: the developer's BORIS_* settings must not leak into a case.
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BORIS_") {
                cmd.env_remove(&k);
            }
        }
        cmd.envs(env);
        let marker = new_marker();
        cmd.env(CASE_MARKER_VAR, &marker);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start `/bin/sh -c {cmdline}`: {e}"))?;
        let pgid = Pid::from_raw(child.id() as i32);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = killpg(pgid, Signal::SIGKILL);
            let _ = child.wait();
            return Err("cannot capture the server's stdio".into());
        };

        let (wtx, wrx) = mpsc::channel::<WriteReq>();
        thread::spawn(move || {
            let mut stdin = stdin;
            for (bytes, ack) in wrx {
                let r = stdin.write_all(&bytes).and_then(|()| stdin.flush());
                let failed = r.is_err();
                let _ = ack.send(r);
                if failed {
                    break;
                }
            }
            // Dropping stdin here closes the pipe: EOF for the server.
        });

        let (otx, orx) = mpsc::channel();
        thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) => {
                        let _ = otx.send((Incoming::Eof, Instant::now()));
                        break;
                    }
                    Ok(_) => {
                        let read_at = Instant::now();
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']);
                        if line.trim().is_empty() {
                            continue;
                        }
                        let msg = match serde_json::from_str::<Value>(line) {
                            Ok(v) => Incoming::Json(v),
                            Err(_) => Incoming::Garbage(line.to_string()),
                        };
                        if otx.send((msg, read_at)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = otx.send((Incoming::ReadError(e.to_string()), Instant::now()));
                        break;
                    }
                }
            }
        });

        let captured = Arc::new(Mutex::new(Vec::new()));
        let (dtx, drx) = mpsc::channel();
        let sink = Arc::clone(&captured);
        thread::spawn(move || {
            let mut stderr = stderr;
            let mut chunk = [0u8; 8192];
            loop {
                match stderr.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if let Ok(mut b) = sink.lock()
                            && b.len() < STDERR_CAP
                        {
                            b.extend_from_slice(&chunk[..n]);
                        }
                    }
                }
            }
            let _ = dtx.send(());
        });

        Ok(Server {
            child,
            pgid,
            direct,
            status: None,
            stdin: Some(wtx),
            out: orx,
            stdout_closed: false,
            stderr: captured,
            stderr_done: drx,
            marker,
        })
    }

    /// Writes bytes to the server's stdin, waiting at most `timeout`.
    pub(crate) fn write(&mut self, bytes: Vec<u8>, timeout: Duration) -> Result<(), String> {
        let Some(tx) = &self.stdin else {
            return Err("the server's stdin is already closed".into());
        };
        let (atx, arx) = mpsc::channel();
        if tx.send((bytes, atx)).is_err() {
            return Err("the server's stdin is closed (an earlier write failed)".into());
        }
        match arx.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!(
                "writing to the server's stdin failed: {e}{}",
                self.exit_note()
            )),
            Err(_) => Err(format!(
                "timed out after {}ms writing to the server's stdin (is it reading?)",
                timeout.as_millis()
            )),
        }
    }

    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The exit status, if the server has exited (non-blocking).
    pub(crate) fn poll_exit(&mut self) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Ok(Some(st)) = self.child.try_wait()
        {
            self.status = Some(st);
        }
        self.status
    }

    /// Waits up to `timeout` for the server to exit.
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        let mut backoff = Backoff::default();
        loop {
            if let Some(st) = self.poll_exit() {
                return Some(st);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(backoff.next_wait());
        }
    }

    /// Sends `sig` to the server: the child itself if the shell exec'd it, else every
    /// other process of the harness's process group (the shell's children), so that
    /// the shell waits and then reports the server's exit code.
    pub(crate) fn signal(&mut self, sig: Signal) -> Result<(), String> {
        if self.poll_exit().is_some() {
            return Err("the server has already exited".into());
        }
        let leader = Pid::from_raw(self.child.id() as i32);
        if !self.direct {
            let members = group_members(self.pgid);
            let others: Vec<Pid> = members.into_iter().filter(|p| *p != leader).collect();
            if !others.is_empty() {
                for p in others {
                    let _ = nix::sys::signal::kill(p, sig);
                }
                return Ok(());
            }
        }
        nix::sys::signal::kill(leader, sig).map_err(|e| format!("kill: {e}"))
    }

    /// The server's processes: the child if the shell exec'd it, else the rest of its
    /// process group (Linux; elsewhere, or if there is none, the shell).
    pub(crate) fn server_pids(&self) -> Vec<Pid> {
        let leader = Pid::from_raw(self.child.id() as i32);
        if !self.direct {
            let others: Vec<Pid> = group_members(self.pgid)
                .into_iter()
                .filter(|p| *p != leader)
                .collect();
            if !others.is_empty() {
                return others;
            }
        }
        vec![leader]
    }

    /// SIGKILLs the whole process group and reaps the leader.
    pub(crate) fn kill(&mut self) {
        let _ = killpg(self.pgid, Signal::SIGKILL);
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
    }

    /// ` (server exited with …)` if it has exited, for error messages.
    pub(crate) fn exit_note(&mut self) -> String {
        match self.wait_exit(Duration::from_millis(200)) {
            Some(st) => format!(" (server {})", describe_status(st)),
            None => String::new(),
        }
    }

    pub(crate) fn stderr_text(&self) -> String {
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        match self.stderr.lock() {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(_) => String::new(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close_stdin();
        // Also after a normal exit: stragglers left in the group die with it.
        self.kill();
    }
}

/// The processes of a process group (Linux: from /proc; elsewhere empty).
pub(crate) fn group_members(pgid: Pid) -> Vec<Pid> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid.as_raw()) {
            out.push(Pid::from_raw(pid));
        }
    }
    out
}

/// A process's state letter from /proc (`R`, `S`, `T` stopped, `Z`, …; `?` when it is
/// gone or unreadable).
pub(crate) fn process_state(pid: i32) -> char {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let after = &stat[stat.rfind(')')? + 1..];
            after.split_whitespace().next()?.chars().next()
        })
        .unwrap_or('?')
}

/// Processes other than the harness whose command line (arguments joined by spaces)
/// matches `re`: `(pid, command line)`. Linux reads /proc; elsewhere `pgrep -f -l`.
pub fn matching_processes(re: &regex::Regex) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    match fs::read_dir("/proc") {
        Ok(_) => {
            for (pid, dir) in crate::exec::other_processes() {
                let cmdline = cmdline_of(&dir);
                if !cmdline.is_empty() && re.is_match(&cmdline) {
                    out.push((pid, cmdline));
                }
            }
        }
        Err(_) => {
            if let Ok(o) = Command::new("pgrep")
                .args(["-f", "-l", "--", re.as_str()])
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
            {
                for line in String::from_utf8_lossy(&o.stdout).lines() {
                    let (pid, rest) = line.split_once(' ').unwrap_or((line, ""));
                    if let Ok(pid) = pid.parse::<i32>()
                        && pid != me
                    {
                        out.push((pid, rest.to_string()));
                    }
                }
            }
        }
    }
    out
}

pub(crate) fn describe_status(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => "exited".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_short_and_stops_growing_at_ten_ms() {
        let mut b = Backoff::default();
        let waits: Vec<u128> = (0..9).map(|_| b.next_wait().as_micros()).collect();
        assert_eq!(
            waits,
            [250, 500, 1000, 2000, 4000, 8000, 10000, 10000, 10000]
        );
    }

    #[test]
    fn shell_quote_words() {
        assert_eq!(shell_quote("--transport"), "--transport");
        assert_eq!(shell_quote("--allow-dir=/a/b"), "--allow-dir=/a/b");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn exec_prefix_only_for_plain_commands() {
        assert_eq!(
            exec_prefixed("/x/boris --transport stdio"),
            ("exec /x/boris --transport stdio".to_string(), true)
        );
        assert_eq!(
            exec_prefixed("'/a b/boris' --x"),
            ("exec '/a b/boris' --x".to_string(), true)
        );
        for keep in [
            "FOO=1 boris",
            "cd x && boris",
            "boris | tee log",
            "boris 2>err",
            "exec boris",
            "$(which boris)",
            "a; b",
            "",
        ] {
            assert_eq!(exec_prefixed(keep), (keep.to_string(), false), "{keep}");
        }
    }

    #[test]
    fn marked_processes_are_found_and_only_they() {
        let marker = new_marker();
        let mut child = Command::new("sleep")
            .arg("5")
            .env(CASE_MARKER_VAR, &marker)
            .spawn()
            .expect("spawn sleep");
        // Until the child has exec'd, /proc shows the parent's environment.
        let mut found = Vec::new();
        for _ in 0..100 {
            found = processes_with_marker(&marker);
            if !found.is_empty() {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, child.id() as i32);
        assert!(processes_with_marker(&marker).is_empty());
        assert!(processes_with_marker(&new_marker()).is_empty());
    }

    #[test]
    fn matching_processes_finds_a_child() {
        let mut child = Command::new("sleep").arg("30.123456").spawn().unwrap();
        let re = regex::Regex::new(r"^sleep 30\.123456$").unwrap();
        // Right after fork the child still shows the parent's command line: poll.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = matching_processes(&re);
        while !found.iter().any(|(pid, _)| *pid == child.id() as i32) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
            found = matching_processes(&re);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            found.iter().any(|(pid, _)| *pid == child.id() as i32),
            "{found:?}"
        );
        assert!(
            matching_processes(&regex::Regex::new("^no such process 1x2y3z$").unwrap()).is_empty()
        );
    }
}
