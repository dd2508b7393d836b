//! The step kinds, one table: each kind's key in the YAML, the transport it belongs to,
//! and the keys a step of that kind may carry besides its action. Validation reads the
//! table (a key in the wrong kind of step is an error naming the kinds that take it),
//! so a new kind is one row here and one arm where its action is built.

use std::fmt;

use super::CaseTransport;

/// What a step does: the one action key it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    Initialize,
    Do,
    Call,
    Request,
    Send,
    SendJson,
    Await,
    Write,
    SleepMs,
    CheckFiles,
    ExpectAlive,
    Http,
    HttpInitialize,
    HttpCall,
    HttpRequest,
    Signal,
    AssertNoProcess,
    AssertProcess,
    IdpToken,
}

/// A key a step may carry besides its action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKey {
    /// `args` (a call's arguments).
    Args,
    /// `meta` (a call's `_meta`).
    Meta,
    /// `with` (a capability's values).
    With,
    /// `id` (the request's id).
    Id,
    /// `wait: false` (send now, await later or never).
    Wait,
    /// `expect`, a profile's expectations (`boris:`, …) and `save`: the step gets a
    /// response to check.
    Expect,
    /// `expect_exit` (a signal's).
    ExpectExit,
    /// `timeout_ms` (the step waits for something).
    TimeoutMs,
    /// `until_ms` (the step is repeated until its expectations hold).
    UntilMs,
}

impl StepKey {
    pub fn name(self) -> &'static str {
        match self {
            StepKey::Args => "args",
            StepKey::Meta => "meta",
            StepKey::With => "with",
            StepKey::Id => "id",
            StepKey::Wait => "wait",
            StepKey::Expect => "expect",
            StepKey::ExpectExit => "expect_exit",
            StepKey::TimeoutMs => "timeout_ms",
            StepKey::UntilMs => "until_ms",
        }
    }
}

/// Which transport a step kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Stdio,
    Http,
    Either,
}

use StepKey::*;
use StepKind::*;

/// Every kind, in the documented order: its key, its transport, the keys it takes.
const TABLE: [(StepKind, &str, Needs, &[StepKey]); 19] = [
    (Initialize, "initialize", Needs::Stdio, &[Expect, TimeoutMs]),
    (
        Do,
        "do",
        Needs::Stdio,
        &[With, Meta, Id, Wait, Expect, TimeoutMs, UntilMs],
    ),
    (
        Call,
        "call",
        Needs::Stdio,
        &[Args, Meta, Id, Wait, Expect, TimeoutMs, UntilMs],
    ),
    (
        Request,
        "request",
        Needs::Stdio,
        &[Id, Wait, Expect, TimeoutMs, UntilMs],
    ),
    (Send, "send", Needs::Stdio, &[Expect, TimeoutMs]),
    (
        SendJson,
        "send_json",
        Needs::Stdio,
        &[Wait, Expect, TimeoutMs],
    ),
    (Await, "await", Needs::Stdio, &[Expect, TimeoutMs]),
    (Write, "write", Needs::Either, &[]),
    (SleepMs, "sleep_ms", Needs::Either, &[]),
    (CheckFiles, "check_files", Needs::Either, &[UntilMs]),
    (ExpectAlive, "expect_alive", Needs::Either, &[TimeoutMs]),
    (
        Http,
        "http",
        Needs::Http,
        &[Wait, Expect, TimeoutMs, UntilMs],
    ),
    (
        HttpInitialize,
        "http_initialize",
        Needs::Http,
        &[Expect, TimeoutMs],
    ),
    (
        HttpCall,
        "http_call",
        Needs::Http,
        &[Wait, Expect, TimeoutMs, UntilMs],
    ),
    (
        HttpRequest,
        "http_request",
        Needs::Http,
        &[Wait, Expect, TimeoutMs, UntilMs],
    ),
    (Signal, "signal", Needs::Either, &[ExpectExit]),
    (
        AssertNoProcess,
        "assert_no_process",
        Needs::Either,
        &[TimeoutMs],
    ),
    (AssertProcess, "assert_process", Needs::Either, &[TimeoutMs]),
    (IdpToken, "idp_token", Needs::Either, &[TimeoutMs]),
];

impl StepKind {
    /// Every kind, in the documented order.
    pub fn all() -> impl Iterator<Item = StepKind> {
        TABLE.iter().map(|row| row.0)
    }

    fn row(self) -> &'static (StepKind, &'static str, Needs, &'static [StepKey]) {
        // The table lists the variants in declaration order (checked by a test).
        &TABLE[self as usize]
    }

    /// Its key in the YAML (`send_json`).
    pub fn key(self) -> &'static str {
        self.row().1
    }

    /// The transport a step of this kind needs.
    pub fn needs(self) -> Needs {
        self.row().2
    }

    /// Whether it runs in a case over `transport`.
    pub fn runs_over(self, transport: CaseTransport) -> bool {
        match (self.needs(), transport) {
            (Needs::Either, _) => true,
            (Needs::Stdio, t) => t == CaseTransport::Stdio,
            (Needs::Http, t) => t == CaseTransport::Http,
        }
    }

    /// Whether a step of this kind may carry `key`.
    pub fn takes(self, key: StepKey) -> bool {
        self.row().3.contains(&key)
    }

    /// Whether it gets a response (so it may carry `expect`).
    pub fn gets_response(self) -> bool {
        self.takes(Expect)
    }

    /// `Err` when a step of this kind carries `key` (`present`) but takes none: the
    /// message names the kinds that do, under the name the case used (`boris` for a
    /// profile's expectations).
    pub fn check_key(self, present: bool, key: StepKey, shown_as: &str) -> Result<(), String> {
        if !present || self.takes(key) {
            return Ok(());
        }
        let allowed: Vec<&str> = StepKind::all()
            .filter(|k| k.takes(key))
            .map(StepKind::key)
            .collect();
        Err(format!(
            "`{shown_as}` is not allowed in a `{self}` step (only in: {})",
            allowed.join(", ")
        ))
    }

    /// Every key, for "a step needs exactly one of …".
    pub fn keys_listed() -> String {
        StepKind::all()
            .map(StepKind::key)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_each_kind_once_in_declaration_order() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.0 as usize, i, "{}", row.1);
        }
        assert!(StepKind::keys_listed().starts_with("initialize, do, call, request,"));
        assert!(Call.takes(Args) && !Request.takes(Args));
        assert!(!SleepMs.gets_response() && HttpCall.gets_response());
        assert!(Await.runs_over(CaseTransport::Stdio) && !Await.runs_over(CaseTransport::Http));
        assert_eq!(
            SleepMs.check_key(true, Expect, "expect").unwrap_err(),
            "`expect` is not allowed in a `sleep_ms` step (only in: initialize, do, call, \
             request, send, send_json, await, http, http_initialize, http_call, http_request)"
        );
    }
}
