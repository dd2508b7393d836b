//! The end of a running case, whatever its transport: the steps about the process
//! (signals, `assert_no_process`), the server's exit, leftover processes (the orphan
//! check), stderr expectations, startup failures.

use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::spec::display::{quote, truncate};
use crate::spec::findings::TeardownFault;
use crate::spec::model::{Case, ExpectExit};
use crate::spec::process::{
    Backoff, describe_status, matching_processes, process_state, processes_with_marker,
};

use super::transport::Session;

impl dyn Session + '_ {
    pub(super) fn signal_step(
        &mut self,
        name: &str,
        expect_exit: Option<&ExpectExit>,
        timeout: Duration,
    ) -> Vec<String> {
        let sig: Signal = match format!("SIG{name}").parse() {
            Ok(s) => s,
            Err(_) => return vec![format!("unknown signal {name}")],
        };
        self.core_mut().record(json!({"signal": name}));
        if let Err(e) = self.core_mut().server.signal(sig) {
            return vec![format!("cannot send SIG{name}: {e}")];
        }
        let Some(x) = expect_exit else {
            return Vec::new();
        };
        let within = x.within_ms.map(Duration::from_millis).unwrap_or(timeout);
        let start = Instant::now();
        let status = self.core_mut().server.wait_exit(within);
        self.listen(Duration::ZERO);
        match status {
            None => vec![format!(
                "expected the server to exit within {}ms of SIG{name}, but it is still running",
                within.as_millis()
            )],
            Some(st) => {
                self.core_mut().exit_checked = true;
                let exit = st
                    .code()
                    .map(Value::from)
                    .unwrap_or_else(|| json!(describe_status(st)));
                self.core_mut().record(json!({"exit": exit}));
                if self
                    .core()
                    .exited_as_wanted(st, x.code, sig == Signal::SIGTERM)
                {
                    Vec::new()
                } else {
                    vec![format!(
                        "expected exit code {} after SIG{name}, but the server {} (after {}ms)",
                        x.code,
                        describe_status(st),
                        start.elapsed().as_millis()
                    )]
                }
            }
        }
    }

    /// `expect_alive: stopped`: the server's process is stopped (a SIGSTOP), as the
    /// harness sees it in /proc, within `timeout`.
    pub(super) fn expect_stopped(&mut self, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let pids = self.core().server.server_pids();
            let states: Vec<char> = pids.iter().map(|p| process_state(p.as_raw())).collect();
            if states.iter().any(|s| matches!(s, 'T' | 't')) {
                return Vec::new();
            }
            if Instant::now() >= deadline {
                return vec![format!(
                    "expected the server to be stopped within {}ms, but its state is {}",
                    timeout.as_millis(),
                    states
                        .iter()
                        .map(char::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                )];
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// `assert_no_process` (`present: false`) or `assert_process` (`true`): polls the
    /// processes' command lines, read from /proc by the harness (outside the server, so
    /// a sandbox that hides /proc from commands cannot fake it), until one matches
    /// `pattern` as wanted or the timeout passes.
    pub(super) fn assert_process(
        &mut self,
        pattern: &str,
        present: bool,
        timeout: Duration,
    ) -> Vec<String> {
        let re = match regex::Regex::new(pattern) {
            Ok(r) => r,
            Err(e) => return vec![format!("invalid regex /{pattern}/: {e}")],
        };
        let deadline = Instant::now() + timeout;
        loop {
            let found = matching_processes(&re);
            if found.is_empty() != present {
                return Vec::new();
            }
            if Instant::now() >= deadline {
                if present {
                    return vec![format!(
                        "expected a process matching /{pattern}/, but after {}ms there is none",
                        timeout.as_millis()
                    )];
                }
                let list: Vec<String> = found
                    .iter()
                    .map(|(pid, cmd)| format!("{pid} {}", truncate(cmd, 200)))
                    .collect();
                return vec![format!(
                    "expected no process matching /{pattern}/, but after {}ms found: {}",
                    timeout.as_millis(),
                    list.join("; ")
                )];
            }
            self.listen(Duration::from_millis(50));
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Asks the server to end (stdio: closes stdin; HTTP: sends SIGTERM), waits for its
    /// exit, checks the exit code (unless a `signal` step already did), its stderr, and
    /// that it left no process behind.
    pub(crate) fn finish(&mut self, case: &Case, exit_timeout: Duration) {
        self.listen(Duration::ZERO);
        // A server a case stopped (SIGSTOP, by an attack or a `signal` step) is resumed
        // first, so that it can end as asked rather than be killed at the timeout.
        let server = &self.core().server;
        if server.status.is_none() {
            for pid in server.server_pids() {
                let _ = nix::sys::signal::kill(pid, Signal::SIGCONT);
            }
        }
        let ending = self.ask_to_exit();
        let how = ending.how;
        match self.wait_exit_within(exit_timeout) {
            None => {
                let core = self.core_mut();
                core.teardown_fault(TeardownFault::DoesNotExit {
                    how,
                    waited_ms: exit_timeout.as_millis(),
                });
                core.server.kill();
            }
            Some(st) => {
                let want = case.exit_code.unwrap_or(0);
                // The harness's own SIGTERM ends an HTTP case (a case's exit_code is exact).
                let by_our_signal = ending.by_signal && case.exit_code.is_none();
                let core = self.core_mut();
                if !core.exit_checked
                    && !case.any_exit
                    && !core.exited_as_wanted(st, want, by_our_signal)
                {
                    core.failures.push(format!(
                        "expected exit code {want} after {how}, but the server {}",
                        describe_status(st)
                    ));
                }
                core.server.kill(); // stragglers in the group
            }
        }
        self.core_mut().server.close_stdin();
        self.listen(Duration::from_millis(500));
        self.check_stderr(case);
        self.check_no_leftover_processes();
    }

    /// No process the server started may outlive it (DESIGN §3: no orphans). Every such
    /// process carries the case's marker in its environment; the ones still alive a
    /// second after the server exited fail the case, and are killed.
    fn check_no_leftover_processes(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let left = processes_with_marker(&self.core().server.marker);
            if left.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                let list: Vec<String> = left
                    .iter()
                    .map(|(pid, cmd)| format!("{pid} {}", truncate(cmd, 200)))
                    .collect();
                self.core_mut()
                    .teardown_fault(TeardownFault::LeavesProcesses(list));
                for (pid, _) in left {
                    let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `limit` for the server to exit, reading its output meanwhile.
    fn wait_exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        let mut backoff = Backoff::default();
        while Instant::now() < deadline {
            if let Some(st) = self.core_mut().server.poll_exit() {
                return Some(st);
            }
            self.wait_reading(backoff.next_wait());
        }
        self.core_mut().server.poll_exit()
    }

    /// `expect_startup_failure`: the server must exit non-zero by itself.
    pub(super) fn run_startup_failure(&mut self, case: &Case) {
        let timeout = self.core().timeout;
        let exited = self.wait_exit_within(timeout);
        let core = self.core_mut();
        match exited {
            None => {
                core.failures.push(format!(
                    "expected the server to fail at startup, but it was still running after {}ms",
                    timeout.as_millis()
                ));
                core.server.kill();
            }
            Some(st) => match (st.code(), case.exit_code) {
                (Some(0), _) => core
                    .failures
                    .push("expected a startup failure, but the server exited with code 0".into()),
                (Some(c), Some(want)) if c != want => core.failures.push(format!(
                    "expected a startup failure with exit code {want}, got {c}"
                )),
                (None, _) => core.failures.push(format!(
                    "expected a startup failure (non-zero exit), but the server {}",
                    describe_status(st)
                )),
                _ => {}
            },
        }
        core.server.kill();
        self.listen(Duration::from_millis(500));
        self.check_stderr(case);
    }

    fn check_stderr(&mut self, case: &Case) {
        let core = self.core_mut();
        let stderr = core.server.stderr_text();
        let mut wanted: Vec<&String> = case.stderr_contains.iter().collect();
        if let Some(sf) = &case.expect_startup_failure {
            wanted.extend(sf.stderr_contains.iter());
        }
        for w in wanted {
            if !stderr.contains(w.as_str()) {
                core.failures.push(format!(
                    "expected the server's stderr to contain {}",
                    quote(w)
                ));
            }
        }
        for w in case.stderr_not_contains.iter() {
            if stderr.contains(w.as_str()) {
                core.failures.push(format!(
                    "expected the server's stderr not to contain {}",
                    quote(w)
                ));
            }
        }
    }
}
