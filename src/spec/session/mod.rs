//! A running case: one session type per transport behind one interface, as ripgrep's
//! searcher has one type per strategy. [`StdioSession`] speaks newline-delimited
//! JSON-RPC on the server's pipes; [`HttpSession`] sends HTTP requests to the address
//! it found. Both keep what they share in a [`Core`] (the server process, transcript,
//! failures, ids, saved values), and the [`Session`] trait is what differs: how a case
//! starts, the steps of its transport, how the server's stdout is read, how the case
//! asks the server to end. What every transport does alike is written once, on
//! `dyn Session`: the step loop and the steps on the side (here), the end of a case and
//! the steps about the process ([`teardown`]).

mod core;
mod http;
mod stdio;
mod steps;
mod teardown;
mod transport;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::findings::TeardownFault;
use super::model::Case;
use super::process::Server;

use self::core::Core;
use self::http::HttpSession;
use self::stdio::StdioSession;

use self::core::Fatal;
pub(crate) use self::http::Listening;
pub(crate) use self::transport::Session;

/// A session for `case`'s transport: HTTP when the server's address is to be learnt
/// (`listening`), else stdio.
pub(crate) fn open(
    server: Server,
    case: &Case,
    timeout: Duration,
    listening: Option<Listening>,
) -> Box<dyn Session> {
    let core = Core::new(server, case, timeout);
    match listening {
        Some(l) => Box::new(HttpSession::new(core, l)),
        None => Box::new(StdioSession::new(core)),
    }
}

/// What a case's run left behind, for its outcome.
pub(crate) struct Ended {
    pub(crate) transcript: Vec<Value>,
    pub(crate) failures: Vec<String>,
    pub(crate) stderr: String,
    /// The server's exit code (None if it was killed or never exited).
    pub(crate) exit_code: Option<i32>,
    pub(crate) literals: Vec<(String, String)>,
    /// Teardown faults set aside for the run's findings.
    pub(crate) teardown: Vec<TeardownFault>,
}

impl dyn Session + '_ {
    /// Runs `case` from its start to the server's end: a startup failure, or the
    /// start, the steps and the end.
    /// Hands the session the case's identity provider (kept, and killed, with it).
    pub(crate) fn give_identity_provider(
        &mut self,
        idp: Option<crate::spec::identity::IdentityProvider>,
    ) {
        self.core_mut().identity = idp;
    }

    pub(crate) fn run(&mut self, case: &Case, workdir: &Path, exit_timeout: Duration) {
        if case.expect_startup_failure.is_some() {
            self.run_startup_failure(case);
            return;
        }
        match self.start(case) {
            Ok(()) => self.run_steps(case, workdir),
            Err(Fatal(e)) => self.core_mut().failures.push(e),
        }
        self.finish(case, exit_timeout);
    }

    /// What the run left (the transcript and failures are taken).
    pub(crate) fn ended(&mut self) -> Ended {
        let literals = self.literals();
        let core = self.core_mut();
        Ended {
            transcript: std::mem::take(&mut core.transcript),
            failures: std::mem::take(&mut core.failures),
            stderr: core.server.stderr_text(),
            exit_code: core.server.status.and_then(|st| st.code()),
            literals,
            teardown: std::mem::take(&mut core.teardown),
        }
    }
}
