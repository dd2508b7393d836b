//! The steps of a case, whatever its transport: the loop (run-time placeholders,
//! `until_ms` retries, failures labelled by step), and the steps on the side that every
//! transport runs alike (`write`, `sleep_ms`, `check_files`, the process steps).

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use crate::spec::fixtures::{check_file, create_files};
use crate::spec::model::{Action, Case, Step};

use super::core::Fatal;
use super::transport::Session;

impl dyn Session + '_ {
    pub(super) fn run_steps(&mut self, case: &Case, workdir: &Path) {
        for (i, step) in case.steps.iter().enumerate() {
            let label = format!("step {} ({})", i + 1, step.action.label());
            let before = self.core().failures.len();
            let until = step
                .until_ms
                .map(|ms| Instant::now() + Duration::from_millis(ms));
            let r = loop {
                let core = self.core_mut();
                core.seen.clear();
                core.last_response = None;
                let r = self.runtime_step(step).and_then(|step| {
                    let mut fails = self.run_step(&step, workdir)?;
                    if let Some(e) = &step.expect
                        && !e.capture.is_empty()
                    {
                        self.core_mut().capture_values(&e.capture);
                    }
                    if let Some(e) = &step.expect
                        && !e.save.is_empty()
                        && fails.is_empty()
                    {
                        fails.extend(self.core_mut().save_values(&e.save));
                    }
                    if let Some(marker) = &case.attack_marker
                        && step.shows_marker
                    {
                        fails.extend(self.core().attack_marker_failure(marker));
                    }
                    Ok(fails)
                });
                // Repeat while only the expectations failed and there is time left.
                match (&r, until) {
                    (Ok(fails), Some(until))
                        if !fails.is_empty()
                            && self.core().failures.len() == before
                            && Instant::now() < until =>
                    {
                        self.pause()
                    }
                    _ => break r,
                }
            };
            // Protocol problems noticed while running the step belong to it.
            let failures = &mut self.core_mut().failures;
            for f in &mut failures[before..] {
                *f = format!("{label}: {f}");
            }
            match r {
                Ok(fails) => failures.extend(fails.into_iter().map(|f| format!("{label}: {f}"))),
                Err(Fatal(e)) => {
                    failures.push(format!("{label}: {e}"));
                    return;
                }
            }
        }
    }

    /// The step with what is known only at run time expanded: `{saved:…}` values and
    /// the transport's own (`{addr}`, sessions). A reference to a session or a value
    /// that was never saved stops the case.
    fn runtime_step(&self, step: &Step) -> Result<Step, Fatal> {
        let out = self.core().expanded(step, self.runtime_placeholders());
        let action = format!("{:?}", out.action);
        self.check_resolved(&action)?;
        self.core()
            .check_saved(&format!("{action} {:?}", out.expect))?;
        Ok(out)
    }

    /// Runs one step: the transport's own, or one every transport runs alike.
    fn run_step(&mut self, step: &Step, workdir: &Path) -> Result<Vec<String>, Fatal> {
        let timeout = step
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.core().timeout);
        if let Some(r) = self.run_own_step(step, timeout) {
            return r;
        }
        let mut fails = Vec::new();
        match &step.action {
            Action::Write { files } => create_files(workdir, files).map_err(Fatal)?,
            Action::SleepMs(ms) => {
                let d = Duration::from_millis(*ms);
                let start = Instant::now();
                self.listen(d);
                // listen returns early on EOF; sleep out the remainder.
                thread::sleep(d.saturating_sub(start.elapsed()));
            }
            Action::CheckFiles(checks) => {
                for c in checks {
                    fails.extend(check_file(workdir, c));
                }
            }
            Action::Signal { name, expect_exit } => {
                fails.extend(self.signal_step(name, expect_exit.as_ref(), timeout))
            }
            Action::AssertNoProcess(pattern) => {
                fails.extend(self.assert_process(pattern, false, timeout))
            }
            Action::AssertProcess(pattern) => {
                fails.extend(self.assert_process(pattern, true, timeout))
            }
            Action::ExpectStopped => fails.extend(self.expect_stopped(timeout)),
            Action::IdpToken(spec) => {
                let token = match &self.core().identity {
                    Some(idp) => idp.mint(spec, timeout).map_err(Fatal)?,
                    None => {
                        return Err(Fatal(
                            "an `idp_token` step in a case that does not `require: [identity-provider]`"
                                .into(),
                        ));
                    }
                };
                self.core_mut().saved.insert(spec.save.clone(), token);
            }
            Action::ExpectAlive(false) => {
                if self.core_mut().server.wait_exit(timeout).is_some() {
                    // The exit code is checked at the end of the case.
                    self.listen(Duration::ZERO);
                } else {
                    fails.push(format!(
                        "expected the server to have exited, but it is still running after {}ms",
                        timeout.as_millis()
                    ));
                }
            }
            Action::Do { capability, .. } => {
                return Err(Fatal(format!(
                    "`do: {capability}` reached the runner unadapted (a harness bug)"
                )));
            }
            other => {
                return Err(Fatal(format!(
                    "a `{}` step reached a session of the other transport (a harness bug)",
                    other.kind()
                )));
            }
        }
        Ok(fails)
    }
}
