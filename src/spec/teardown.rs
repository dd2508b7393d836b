//! The end of a running case: signals, process assertions, the server's exit, leftover
//! processes (the orphan check), stderr expectations, startup failures.

use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::{Value, json};

use super::display::{quote, truncate};
use super::model::{Case, ExpectExit};
use super::process::{describe_status, matching_processes, processes_with_marker};
use super::session::Session;

impl Session {
    pub(crate) fn signal_step(
        &mut self,
        name: &str,
        expect_exit: Option<&ExpectExit>,
        timeout: Duration,
    ) -> Vec<String> {
        let sig: Signal = match format!("SIG{name}").parse() {
            Ok(s) => s,
            Err(_) => return vec![format!("unknown signal {name}")],
        };
        if self.record {
            self.transcript.push(json!({"signal": name}));
        }
        if let Err(e) = self.server.signal(sig) {
            return vec![format!("cannot send SIG{name}: {e}")];
        }
        let Some(x) = expect_exit else {
            return Vec::new();
        };
        let within = x.within_ms.map(Duration::from_millis).unwrap_or(timeout);
        let start = Instant::now();
        let status = self.server.wait_exit(within);
        self.drain();
        match status {
            None => vec![format!(
                "expected the server to exit within {}ms of SIG{name}, but it is still running",
                within.as_millis()
            )],
            Some(st) => {
                self.exit_checked = true;
                if self.record {
                    self.transcript.push(json!({"exit": st.code().map(Value::from).unwrap_or_else(|| json!(describe_status(st)))}));
                }
                if self.exited_as_wanted(st, x.code, sig == Signal::SIGTERM) {
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

    /// Whether the server exited with `want`; after a SIGTERM, dying of it counts as
    /// exiting 0 for a server not held to the boris profile (`Case::sigterm_death_ok`).
    fn exited_as_wanted(&self, st: ExitStatus, want: i32, after_sigterm: bool) -> bool {
        use std::os::unix::process::ExitStatusExt;
        st.code() == Some(want)
            || (want == 0
                && after_sigterm
                && self.sigterm_death_ok
                && st.signal() == Some(Signal::SIGTERM as i32))
    }

    pub(crate) fn assert_no_process(&mut self, pattern: &str, timeout: Duration) -> Vec<String> {
        let re = match regex::Regex::new(pattern) {
            Ok(r) => r,
            Err(e) => return vec![format!("invalid regex /{pattern}/: {e}")],
        };
        let deadline = Instant::now() + timeout;
        loop {
            let found = matching_processes(&re);
            if found.is_empty() {
                return Vec::new();
            }
            if Instant::now() >= deadline {
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
            self.drain_for(Duration::from_millis(50));
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stdio: closes stdin; HTTP: sends SIGTERM. Then waits for the exit, checks the
    /// exit code (unless a `signal` step already did) and stderr.
    pub(crate) fn finish(&mut self, case: &Case, exit_timeout: Duration) {
        self.drain();
        let how = if self.http() { "SIGTERM" } else { "stdin EOF" };
        if self.http() {
            if self.server.poll_exit().is_none() {
                let _ = self.server.signal(Signal::SIGTERM);
            }
        } else {
            self.server.close_stdin();
        }
        let exited = self.wait_exit_within(exit_timeout);
        match exited {
            None => {
                self.failures.push(format!(
                    "server did not exit within {}ms after {how} (killed)",
                    exit_timeout.as_millis()
                ));
                self.server.kill();
            }
            Some(st) => {
                let want = case.exit_code.unwrap_or(0);
                // The harness's own SIGTERM ends an HTTP case (a case's exit_code is exact).
                let by_our_sigterm = self.http() && case.exit_code.is_none();
                if !self.exit_checked && !self.exited_as_wanted(st, want, by_our_sigterm) {
                    self.failures.push(format!(
                        "expected exit code {want} after {how}, but the server {}",
                        describe_status(st)
                    ));
                }
                self.server.kill(); // stragglers in the group
            }
        }
        self.server.close_stdin();
        self.drain_for(Duration::from_millis(500));
        self.check_stderr(case);
        self.check_no_leftover_processes();
    }

    /// No process the server started may outlive it (DESIGN §3: no orphans). Every such
    /// process carries the case's marker in its environment; the ones still alive a
    /// second after the server exited fail the case, and are killed.
    pub(crate) fn check_no_leftover_processes(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            let left = processes_with_marker(&self.server.marker);
            if left.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                let list: Vec<String> = left
                    .iter()
                    .map(|(pid, cmd)| format!("{pid} {}", truncate(cmd, 200)))
                    .collect();
                self.failures.push(format!(
                    "processes started by the server outlived it: {}",
                    list.join("; ")
                ));
                for (pid, _) in left {
                    let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `limit` for the server to exit, reading its output meanwhile.
    pub(crate) fn wait_exit_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            self.drain_for(Duration::from_millis(10));
            if let Some(st) = self.server.poll_exit() {
                return Some(st);
            }
            if self.server.stdout_closed {
                thread::sleep(Duration::from_millis(10));
            }
        }
        None
    }

    /// `expect_startup_failure`: the server must exit non-zero by itself.
    pub(crate) fn run_startup_failure(&mut self, case: &Case) {
        let exited = self.wait_exit_within(self.timeout);
        match exited {
            None => {
                self.failures.push(format!(
                    "expected the server to fail at startup, but it was still running after {}ms",
                    self.timeout.as_millis()
                ));
                self.server.kill();
            }
            Some(st) => match (st.code(), case.exit_code) {
                (Some(0), _) => self
                    .failures
                    .push("expected a startup failure, but the server exited with code 0".into()),
                (Some(c), Some(want)) if c != want => self.failures.push(format!(
                    "expected a startup failure with exit code {want}, got {c}"
                )),
                (None, _) => self.failures.push(format!(
                    "expected a startup failure (non-zero exit), but the server {}",
                    describe_status(st)
                )),
                _ => {}
            },
        }
        self.server.kill();
        self.drain_for(Duration::from_millis(500));
        self.check_stderr(case);
    }

    pub(crate) fn check_stderr(&mut self, case: &Case) {
        let stderr = self.server.stderr_text();
        let mut wanted: Vec<&String> = case.stderr_contains.iter().collect();
        if let Some(sf) = &case.expect_startup_failure {
            wanted.extend(sf.stderr_contains.iter());
        }
        for w in wanted {
            if !stderr.contains(w.as_str()) {
                self.failures.push(format!(
                    "expected the server's stderr to contain {}",
                    quote(w)
                ));
            }
        }
        for w in case.stderr_not_contains.iter() {
            if stderr.contains(w.as_str()) {
                self.failures.push(format!(
                    "expected the server's stderr not to contain {}",
                    quote(w)
                ));
            }
        }
    }
}
