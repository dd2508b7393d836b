//! The one interface of a running case: what each transport does its own way.

use std::time::Duration;

use crate::spec::model::{Case, Placeholders, Step};

use super::core::{Core, Fatal};

/// How the harness asked the server to end a case.
pub(crate) struct Ending {
    /// For messages: `stdin EOF`, `SIGTERM`.
    pub(crate) how: &'static str,
    /// By a signal the harness sent (dying of it may count as exiting 0).
    pub(crate) by_signal: bool,
}

/// What a transport does its own way.
pub(crate) trait Session {
    fn core(&self) -> &Core;
    fn core_mut(&mut self) -> &mut Core;
    /// Before the first step: stdio's default handshake; HTTP's wait for the server's
    /// address.
    fn start(&mut self, case: &Case) -> Result<(), Fatal>;
    /// The placeholders only this transport knows at run time (HTTP: `{addr}`, the
    /// saved sessions).
    fn runtime_placeholders(&self) -> Placeholders;
    /// Stops the case when one of those is used but unknown (`shown`: the expanded
    /// action as text).
    fn check_resolved(&self, shown: &str) -> Result<(), Fatal>;
    /// Runs a step of this transport (`Ok` carries expectation failures, `Err` stops the
    /// case); `None` when the step is one every transport runs alike.
    fn run_own_step(
        &mut self,
        step: &Step,
        timeout: Duration,
    ) -> Option<Result<Vec<String>, Fatal>>;
    /// Reads what the server writes on stdout for up to `d` (zero: what is already
    /// there), returning early when stdout closes.
    fn listen(&mut self, d: Duration);
    /// Waits `d`, reading the server's stdout meanwhile, or sleeping once it is closed
    /// (`listen` would return at once).
    fn wait_reading(&mut self, d: Duration) {
        if self.core().server.stdout_closed {
            std::thread::sleep(d);
        } else {
            self.listen(d);
        }
    }
    /// Waits between two tries of an `until_ms` step.
    fn pause(&mut self);
    /// Asks the server to end: stdio closes its stdin, HTTP sends SIGTERM.
    fn ask_to_exit(&mut self) -> Ending;
    /// Literal replacements for the golden transcript (the address, session ids).
    fn literals(&self) -> Vec<(String, String)>;
}
