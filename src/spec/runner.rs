//! Runs one case: workdir and fixtures, the server process, the steps, teardown.
//!
//! The server is `/bin/sh -c '<server_cmd> <args…>'` in its own process group, with the
//! workdir as cwd. Three threads serve its pipes: a writer (so a server that stops
//! reading cannot block us: every write waits for an acknowledgement with a timeout),
//! a stdout reader (one JSON message per line, into a channel) and a stderr reader
//! (into a buffer). Every wait is bounded; the process group is SIGKILLed on every exit
//! path (the `Drop` of `Server`), so no case leaks a process.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::adapter::Adapter;
use super::display::stderr_tail;
use super::findings::TeardownFault;
use super::fixtures::{create_files, make_removable};
use super::model::{Case, CaseTransport, DEFAULT_TIMEOUT_MS, Placeholders};
use super::normalise::Normaliser;
use super::process::{Server, server_cmdline};
use super::routes::{self, Route, for_route};
use super::session::{self, Listening};
use super::vocabulary::Capability;

/// Arguments added (before the case's `args`) for `transport: http` cases.
pub const DEFAULT_HTTP_ARGS: &str = "--transport http --port 0";

/// How the harness finds an HTTP server's address in its stderr: the first match, group
/// 1 if the regex has one. Boris logs `… bound=127.0.0.1:43210`.
pub const DEFAULT_HTTP_ADDR_REGEX: &str = r"bound=(\[[0-9A-Fa-f:.%]+\]:\d+|[^\s:\[\]]+:\d+)";

/// How the cases are run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shell command line that starts the server (run by `/bin/sh -c`); the case's
    /// `args` are appended, shell-quoted.
    pub server_cmd: String,
    /// Appended to `server_cmd` (as written: several words) for HTTP cases, before the
    /// case's `args`; `None`: the adapter's `http_args`, else [`DEFAULT_HTTP_ARGS`].
    pub http_args: Option<String>,
    /// Finds the bound `host:port` in an HTTP server's stderr (see
    /// [`DEFAULT_HTTP_ADDR_REGEX`]).
    pub http_addr_regex: String,
    /// Per-wait timeout for cases that do not set `timeout_ms`.
    pub default_timeout: Duration,
    /// How long the server gets to exit after stdin EOF.
    pub exit_timeout: Duration,
    /// Run only cases with at least one of these tags (empty: all).
    pub only: Vec<String>,
    /// Skip cases with any of these tags.
    pub skip: Vec<String>,
    /// How the server spells each capability (default: Boris's own).
    pub adapter: Adapter,
    /// The routes to run each case on (those the adapter has too); default: stdio.
    pub routes: Vec<Route>,
    /// Needs (`requires:` names) this machine is meant to have (CI's manifest,
    /// `tests/ci-installs.txt`): a case missing one fails instead of being skipped.
    pub must_have: std::collections::BTreeSet<String>,
    /// Run the positive controls instead of the cases: each case with a `control`,
    /// its server given `control_args` (see `Case::as_control`); the others skip.
    pub control: bool,
    /// What a control run adds to the server's arguments (Boris: `--sandbox=off`).
    pub control_args: Vec<String>,
    /// The server command runs the server on another machine (ssh, a VM): the harness
    /// cannot read its processes nor look for what it has, so cases that need either
    /// are unsupported.
    pub remote: bool,
    /// Run the cases tagged `timing` or `lsp` on every selected route too, not only on
    /// the fewest that cover each transport and era (`spec::routes::covering`, DEC-113).
    pub every_route: bool,
    /// The command that starts an identity provider for the cases that
    /// `requires: [identity-provider]` (the auth pack, `spec::identity`); default: the
    /// environment's `BORIS_SPEC_IDP` (so `boris-spec record` and the tests get it too).
    pub identity_provider: Option<String>,
}

/// Boris's arguments for a control run: nothing confines the commands.
pub const DEFAULT_CONTROL_ARGS: &str = "--sandbox=off";

impl RunOptions {
    pub fn new(server_cmd: impl Into<String>) -> Self {
        RunOptions {
            server_cmd: server_cmd.into(),
            http_args: None,
            http_addr_regex: DEFAULT_HTTP_ADDR_REGEX.into(),
            default_timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            exit_timeout: Duration::from_secs(5),
            only: Vec::new(),
            skip: Vec::new(),
            adapter: Adapter::boris(),
            routes: vec![Route::Stdio],
            must_have: Default::default(),
            control: false,
            control_args: vec![DEFAULT_CONTROL_ARGS.to_string()],
            remote: false,
            every_route: false,
            identity_provider: std::env::var(super::identity::IDP_VAR)
                .ok()
                .filter(|c| !c.trim().is_empty()),
        }
    }
}

/// Where the language servers of the `lsp` cases are (issue 20): a directory the
/// harness puts first on `PATH` for the server of every case tagged `lsp`, and for no
/// other case (so an edit of `app.py` elsewhere in the suite starts no pyright).
pub const LSP_PATH_VAR: &str = "BORIS_SPEC_LSP_PATH";

/// The case's environment, with [`LSP_PATH_VAR`]'s directory on `PATH` for `lsp` cases.
/// Every other case runs Boris with `BORIS_DIAGNOSTICS_AFTER_EDIT=off` (unless it sets the
/// variable): a language server the machine happens to have (a rust-analyzer in
/// `~/.cargo/bin`, a clangd in `/usr/bin`) must not start in a case about something else.
fn lsp_env(case: &Case) -> std::collections::BTreeMap<String, String> {
    let mut env = case.env.clone();
    let lsp_case = case.tags.iter().any(|t| t == "lsp");
    if !lsp_case {
        env.entry("BORIS_DIAGNOSTICS_AFTER_EDIT".into())
            .or_insert_with(|| "off".into());
    }
    if lsp_case
        && !env.contains_key("PATH")
        && let Ok(dir) = std::env::var(LSP_PATH_VAR)
        && !dir.is_empty()
    {
        let path = std::env::var("PATH").unwrap_or_default();
        env.insert("PATH".into(), format!("{dir}:{path}"));
    }
    env
}

/// The result of one case.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    pub path: PathBuf,
    pub passed: bool,
    pub skipped: bool,
    /// Why the case was skipped, in one line (a tag filter, a missing need).
    pub skip_reason: Option<String>,
    /// The adapter cannot run this case, and why (the case counts as skipped).
    pub unsupported: Option<String>,
    /// The capabilities the case's `do` steps use, in order of first use.
    pub capabilities: Vec<Capability>,
    /// Every failure, first one first. The last entry of a failed case is the tail of
    /// the server's stderr.
    pub failures: Vec<String>,
    /// The normalised transcript: `[{"->": msg}, {"<-": msg}, …]`.
    pub transcript: Value,
    /// Everything the server wrote on stderr (lossy UTF-8).
    pub stderr: String,
    /// The server's exit code (None if it was killed or never started).
    pub exit_code: Option<i32>,
    /// Faults of how the server ended, set aside for the run's findings (not failures:
    /// the adapter does not hold the server to Boris's teardown).
    pub teardown: Vec<TeardownFault>,
    pub duration: Duration,
    /// The case asked for a golden snapshot.
    pub golden: bool,
}

impl CaseOutcome {
    /// A failed outcome for a case that could not be loaded or run at all.
    pub fn error(path: &Path, message: String) -> Self {
        CaseOutcome {
            path: path.to_path_buf(),
            passed: false,
            skipped: false,
            skip_reason: None,
            unsupported: None,
            capabilities: Vec::new(),
            failures: vec![message],
            transcript: Value::Array(Vec::new()),
            stderr: String::new(),
            exit_code: None,
            teardown: Vec::new(),
            duration: Duration::ZERO,
            golden: false,
        }
    }
}

/// Why a case is filtered out by `--only`/`--skip`, if it is.
pub fn skip_reason(case: &Case, opts: &RunOptions) -> Option<String> {
    if let Some(t) = case.tags.iter().find(|t| opts.skip.contains(t)) {
        return Some(format!("tag {t}"));
    }
    if !opts.only.is_empty() && !case.tags.iter().any(|t| opts.only.contains(t)) {
        return Some(format!("no tag in {}", opts.only.join(", ")));
    }
    None
}

/// Runs one loaded case over stdio (honouring `--only`/`--skip`).
pub fn run_case(case: &Case, opts: &RunOptions) -> CaseOutcome {
    run_case_on(case, opts, Route::Stdio)
        .unwrap_or_else(|| CaseOutcome::error(&case.path, "no stdio route".into()))
}

/// The routes of `opts` this adapter's server is run on.
pub fn effective_routes(opts: &RunOptions) -> Vec<Route> {
    opts.routes
        .iter()
        .copied()
        .filter(|r| opts.adapter.routes.iter().any(|a| a == r.name()))
        .collect()
}

/// How a run on `route` is named: the case's path, then the route unless it is stdio
/// (`spec/view/a.yaml [http]`).
pub fn route_label(path: &Path, route: Route) -> PathBuf {
    if route == Route::Stdio {
        path.to_path_buf()
    } else {
        PathBuf::from(format!("{} [{}]", path.display(), route.name()))
    }
}

/// How a control run is named: `spec/sandbox/a.yaml [control]`.
pub fn control_label(path: &Path) -> PathBuf {
    PathBuf::from(format!("{} [control]", path.display()))
}

/// Runs one loaded case on `route`; `None` when the case stays off that route (it is
/// about its own transport, see `spec::routes`). A control run (`opts.control`) is on
/// the stdio route only: the case as written, its server unconfined.
pub fn run_case_on(case: &Case, opts: &RunOptions, route: Route) -> Option<CaseOutcome> {
    if opts.control && route != Route::Stdio {
        return None;
    }
    let mut outcome = run_case_inner(case, opts, route)?;
    outcome.path = if opts.control {
        control_label(&outcome.path)
    } else {
        route_label(&outcome.path, route)
    };
    Some(outcome)
}

/// The `PATH` the case's server gets (`None`: the harness's own).
pub fn server_path(case: &Case) -> Option<String> {
    lsp_env(case).get("PATH").cloned()
}

/// The case's missing needs, looked up where its server runs (see `spec::requires`).
pub fn missing_needs(case: &Case, opts: &RunOptions) -> Vec<super::requires::Missing> {
    if case.requires.is_empty() {
        return Vec::new();
    }
    let path = server_path(case);
    super::requires::missing(
        case,
        &super::requires::Where {
            path: path.as_deref(),
            server_cmd: &opts.server_cmd,
            identity_provider: opts.identity_provider.as_deref(),
        },
    )
}

/// What to do about missing needs: `Err` (a failure) when the machine is meant to have
/// one of them (`opts.must_have`), else `Ok` with the skip reason (`None`: nothing is
/// missing).
pub fn needs_verdict(case: &Case, opts: &RunOptions) -> Result<Option<String>, String> {
    let missing = missing_needs(case, opts);
    if missing.is_empty() {
        return Ok(None);
    }
    let reason = super::requires::skip_reason(&missing);
    let owed: Vec<&str> = missing
        .iter()
        .filter(|m| opts.must_have.contains(&m.name))
        .map(|m| m.name.as_str())
        .collect();
    if owed.is_empty() {
        Ok(Some(reason))
    } else {
        Err(format!(
            "{reason}: the manifest of what this machine installs lists {}, so this is a \
             failure, not a skip",
            owed.join(", ")
        ))
    }
}

/// Why a case is not run.
enum Refusal {
    /// A tag filter, a missing need: the one-line reason.
    Skip(String),
    /// The adapter (or `--remote`) cannot run it.
    Unsupported(String),
    /// A need the machine is meant to have is missing.
    Fail(String),
    /// A control run, and the case has no control.
    NoControl,
}

/// The case as it is to run (a control run's cut, adapted), or why it is not run: the
/// tag filters, the control, the adapter, `--remote`, then the needs — looked at once
/// the adapter can run the case, so an unsupported case stays unsupported and a peer's
/// `--version` is asked only for a case it would run.
fn admit(case: &Case, opts: &RunOptions) -> Result<Case, Refusal> {
    if let Some(why) = skip_reason(case, opts) {
        return Err(Refusal::Skip(why));
    }
    // A control run is the case cut after its attack, its control steps added: adapted
    // as a whole (they may be `do:` steps), its teardown never held strictly.
    let control_case;
    let case = if opts.control {
        control_case = case
            .as_control(&opts.control_args)
            .ok_or(Refusal::NoControl)?;
        &control_case
    } else {
        case
    };
    let mut adapted = opts.adapter.adapt(case).map_err(Refusal::Unsupported)?;
    if opts.remote {
        if adapted.looks_at_processes() {
            return Err(Refusal::Unsupported(
                "it looks at the server's processes, which a harness on another machine cannot (--remote)".into(),
            ));
        }
        if !adapted.requires.is_empty() {
            return Err(Refusal::Unsupported(
                "its `requires:` cannot be looked for on another machine (--remote)".into(),
            ));
        }
    }
    match needs_verdict(&adapted, opts) {
        Ok(None) => {}
        Ok(Some(why)) => return Err(Refusal::Skip(why)),
        Err(failure) => return Err(Refusal::Fail(failure)),
    }
    if opts.control {
        adapted.strict_teardown = false;
    }
    Ok(adapted)
}

/// The outcome of a case not run, reported once (on stdio, whatever the routes).
fn refused(mut outcome: CaseOutcome, refusal: Refusal, route: Route) -> Option<CaseOutcome> {
    let not_run = !matches!(refusal, Refusal::Fail(_));
    (outcome.skipped, outcome.passed) = (not_run, not_run);
    match refusal {
        Refusal::Skip(why) => outcome.skip_reason = Some(why),
        Refusal::Unsupported(why) => outcome.unsupported = Some(why),
        Refusal::Fail(failure) => outcome.failures.push(failure),
        Refusal::NoControl => outcome.skip_reason = Some("no control (not an escape case)".into()),
    }
    (route == Route::Stdio).then_some(outcome)
}

/// A case tagged `sandbox` runs with a HOME of its own (unless its `env` sets one): an
/// escape that works must not reach the real one, nor read its dot-files.
fn sandbox_home(case: &Case) -> std::io::Result<Option<tempfile::TempDir>> {
    let wanted = case.tags.iter().any(|t| t == "sandbox") && !case.env.contains_key("HOME");
    wanted
        .then(|| {
            tempfile::Builder::new()
                .prefix("boris-spec-home-")
                .tempdir()
        })
        .transpose()
}

/// The case as it runs on `route`, or `None` when it stays off that route: it is about
/// its own transport (`spec::routes::for_route`), or it is a `timing`/`lsp` case and
/// `route` is not among those that cover the run's transports and eras (DEC-113).
fn on_route(case: &Case, opts: &RunOptions, route: Route) -> Option<Case> {
    if !opts.every_route && !routes::covered_case_runs_on(case, route, &effective_routes(opts)) {
        return None;
    }
    for_route(case, route).ok()
}

fn run_case_inner(case: &Case, opts: &RunOptions, route: Route) -> Option<CaseOutcome> {
    let mut outcome = CaseOutcome::error(&case.path, String::new());
    outcome.failures.clear();
    outcome.golden = case.golden;
    outcome.capabilities = case.capabilities();
    let adapted = match admit(case, opts) {
        Ok(c) => c,
        Err(refusal) => return refused(outcome, refusal, route),
    };
    let adapted = on_route(&adapted, opts, route)?;
    outcome.golden = adapted.golden;
    let case = &adapted;
    // A run that starts a language server waits for a core, one that races the server
    // runs alone (spec::gate); its time counts from then.
    let _admitted = super::gate::admit(&case.tags);
    let start = Instant::now();

    let tmp = match tempfile::Builder::new().prefix("boris-spec-").tempdir() {
        Ok(t) => t,
        Err(e) => {
            outcome
                .failures
                .push(format!("cannot create a temp workdir: {e}"));
            return Some(outcome);
        }
    };
    let workdir = match tmp.path().canonicalize() {
        Ok(p) => p,
        Err(e) => {
            outcome
                .failures
                .push(format!("cannot canonicalize the temp workdir: {e}"));
            return Some(outcome);
        }
    };
    let (mut identity, table) = match with_identity_provider(case, opts, &workdir) {
        Ok(x) => x,
        Err(e) => {
            outcome.failures.push(e);
            return Some(outcome);
        }
    };
    let case = case.expanded(&table);
    let home = match sandbox_home(&case) {
        Ok(h) => h,
        Err(e) => {
            outcome
                .failures
                .push(format!("cannot create a temp HOME: {e}"));
            return Some(outcome);
        }
    };
    let timeout = Duration::from_millis(
        case.timeout_ms
            .unwrap_or(opts.default_timeout.as_millis() as u64),
    );

    let mut transcript = Vec::new();
    let mut stderr = String::new();
    let mut exit_code = None;
    let mut failures = Vec::new();
    let mut literals = Vec::new();

    match create_files(&workdir, &case.files) {
        Err(e) => failures.push(format!("fixtures: {e}")),
        Ok(()) => {
            let http = case.transport == CaseTransport::Http;
            let http_args = opts.adapter.http_args.as_deref();
            let http_args = opts.http_args.as_deref().or(http_args);
            let mut extra = if http {
                http_args.unwrap_or(DEFAULT_HTTP_ARGS).to_string()
            } else {
                opts.adapter.stdio_args.clone().unwrap_or_default()
            };
            // `{port}`: the server binds where the harness says, so its address is known.
            let mut known_addr = None;
            if extra.contains("{port}") {
                match free_loopback_port() {
                    Ok(port) => {
                        extra = extra.replace("{port}", &port.to_string());
                        known_addr = Some(format!("127.0.0.1:{port}"));
                    }
                    Err(e) => failures.push(format!("cannot find a free port: {e}")),
                }
            }
            let (cmdline, direct) = server_cmdline(&opts.server_cmd, &extra, &case.args);
            let mut env = lsp_env(&case);
            if let Some(home) = &home {
                env.entry("HOME".into())
                    .or_insert_with(|| home.path().to_string_lossy().into_owned());
            }
            // No free port, no server: the failure above says why.
            let spawned = failures
                .is_empty()
                .then(|| Server::spawn(&cmdline, &workdir, &env, direct));
            match spawned {
                None => {}
                Some(Err(e)) => failures.push(e),
                Some(Ok(server)) => {
                    let listening = match (http, known_addr) {
                        (false, _) => None,
                        (true, Some(addr)) => Some(Listening::At(addr)),
                        (true, None) => Some(Listening::Printed(opts.http_addr_regex.clone())),
                    };
                    let mut s = session::open(server, &case, timeout, listening);
                    s.give_identity_provider(identity.take());
                    s.run(&case, &workdir, opts.exit_timeout);
                    let ended = s.ended();
                    stderr = ended.stderr;
                    exit_code = ended.exit_code;
                    transcript = ended.transcript;
                    failures.extend(ended.failures);
                    literals = ended.literals;
                    // A control's server may be stopped or killed by the attack: how it
                    // ends is no finding.
                    if !opts.control {
                        outcome.teardown = ended.teardown;
                    }
                    // Dropping the session kills the process group.
                }
            }
        }
    }

    match Normaliser::new(&workdir, &case.redact) {
        Ok(n) => {
            let n = literals
                .iter()
                .fold(n, |n, (from, to)| n.with_literal(from, to));
            outcome.transcript = n.apply(&Value::Array(transcript));
        }
        Err(e) => failures.push(format!("normalisation: {e}")),
    }
    if !failures.is_empty() {
        failures.push(stderr_tail(&stderr, 20));
    }
    make_removable(&workdir);
    drop(tmp);
    if let Some(home) = home {
        make_removable(home.path());
        drop(home);
    }

    outcome.passed = failures.is_empty();
    outcome.failures = failures;
    outcome.stderr = stderr;
    outcome.exit_code = exit_code;
    outcome.duration = start.elapsed();
    Some(outcome)
}

/// The case's placeholder table, and the auth pack's identity provider, started before
/// the server that trusts it (`{idp.issuer}` in the table) when the case needs one.
fn with_identity_provider(
    case: &Case,
    opts: &RunOptions,
    workdir: &Path,
) -> Result<(Option<super::identity::IdentityProvider>, Placeholders), String> {
    let table = Placeholders::for_workdir(workdir);
    if !case.needs_identity_provider() {
        return Ok((None, table));
    }
    let cmd = opts.identity_provider.as_deref().ok_or(
        "no identity provider to start (a harness bug: needs_verdict lets no such case run)",
    )?;
    let idp = super::identity::IdentityProvider::start(cmd)?;
    let table = table.with("{idp.issuer}", idp.issuer());
    Ok((Some(idp), table))
}

/// A loopback port nothing listens on right now (the OS picks it; the server binds it
/// a moment later, a race lost only if another process takes the same port between).
fn free_loopback_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
