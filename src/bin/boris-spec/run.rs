//! `boris-spec run`: the suite against a server, one line per case, the summary, and
//! the reports (`--baseline`, `--report`, `--json`, `--junit`, `--scores`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use boris::spec::junit::{self, JunitCase, JunitResult};
use boris::spec::{self, CaseOutcome, RunOptions, report};

use super::{SuiteArgs, find_adapter};

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Shell command that starts the server on stdio (run by /bin/sh -c in each case's
    /// temp workdir; a relative first word containing `/` is resolved against the
    /// current directory). HTTP cases append --http-args to it.
    #[arg(long)]
    server: String,
    #[command(flatten)]
    suite: SuiteArgs,
    /// How the server spells each capability: a built-in adapter (boris,
    /// boris-anthropic-compat, boris-pipe, server-filesystem, desktop-commander,
    /// litecode) or an adapter file. Cases it cannot run are reported as unsupported.
    #[arg(long, value_name = "NAME|FILE", default_value = "boris")]
    adapter: String,
    /// Expected failures: a YAML map of case path → why. Those cases failing does not
    /// fail the run; one of them passing does (the baseline is stale).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write a markdown report: the score per capability and every case that did not
    /// pass, with why.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Write every case's result as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Print the score per capability after the summary.
    #[arg(long)]
    scores: bool,
    /// Write JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Run only cases with this tag (repeatable: any of them).
    #[arg(long = "only", value_name = "TAG")]
    only: Vec<String>,
    /// Skip cases with this tag (repeatable).
    #[arg(long = "skip", value_name = "TAG")]
    skip: Vec<String>,
    /// Default per-wait timeout in milliseconds (a case's `timeout_ms` wins).
    #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
    /// How long a server gets to exit after its stdin closes, in milliseconds (a server
    /// that stops a language server first may need longer than the default).
    #[arg(long, value_name = "N", default_value_t = 5000)]
    exit_timeout_ms: u64,
    /// Cases run in parallel (each starts its own server).
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Arguments appended to the server command (before the case's `args`) for HTTP
    /// runs; `{port}` becomes a free loopback port. Default: the adapter's `http_args`,
    /// else "--transport http --port 0".
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    http_args: Option<String>,
    /// Regex that finds the bound `host:port` in an HTTP server's stderr (group 1 if
    /// it has one, else the whole match).
    #[arg(long, value_name = "REGEX", default_value = boris::spec::runner::DEFAULT_HTTP_ADDR_REGEX)]
    http_addr_regex: String,
    /// Transports to run each case over: stdio, http or all (repeatable or
    /// comma-separated). A case about one transport runs on its own only; the adapter
    /// says which the server has.
    #[arg(
        long,
        value_name = "stdio|http|all",
        value_delimiter = ',',
        default_value = "all"
    )]
    transport: Vec<String>,
    /// Protocol eras: 2025-11-25 (initialize), 2026-07-28 (stateless), or all.
    #[arg(
        long,
        value_name = "ERA|all",
        value_delimiter = ',',
        default_value = "all"
    )]
    era: Vec<String>,
    /// A manifest of what this machine is meant to have (one `requires:` name a line,
    /// `#` comments; Boris's CI: tests/ci-installs.txt): a case missing one of them
    /// fails instead of being skipped.
    #[arg(long, value_name = "FILE", env = "BORIS_SPEC_INSTALLED")]
    installed: Option<PathBuf>,
    /// Run the positive controls of the escape cases instead (each case with a
    /// `control:`, its server unconfined by --control-args): each must escape.
    #[arg(long, env = "BORIS_SPEC_CONTROL")]
    control: bool,
    /// The server command starts the server on another machine (ssh, a VM): cases that
    /// look at its processes or declare `requires:` are reported unsupported.
    #[arg(long, env = "BORIS_SPEC_REMOTE")]
    remote: bool,
    /// Run the cases tagged `timing` (they wait on the server's clocks) or `lsp` (they
    /// start a language server) on every selected route. Without it each runs on the
    /// fewest routes that still cover every selected transport and era: stdio on
    /// 2025-11-25 and HTTP on 2026-07-28 by default.
    #[arg(long, env = "BORIS_SPEC_EVERY_ROUTE")]
    every_route: bool,
    /// The command that starts an identity provider for the auth pack (cases that
    /// `requires: [identity-provider]`): it prints `{"issuer": URL}` and serves tokens
    /// (`boris-spec fixture identity-provider` prints the suite's own, which runs npm
    /// oauth2-mock-server). Without one, those cases are skipped.
    #[arg(long, value_name = "CMD", env = "BORIS_SPEC_IDP")]
    identity_provider: Option<String>,
    /// What a control run appends to the server's arguments.
    #[arg(
        long,
        value_name = "ARGS",
        allow_hyphen_values = true,
        default_value = boris::spec::runner::DEFAULT_CONTROL_ARGS
    )]
    control_args: String,
}

/// The file a flag names, read and parsed (`None`: the flag was not given); a file that
/// cannot be read or parsed is a usage error, said once.
fn read_flag_file<T>(
    flag: &str,
    file: Option<&std::path::Path>,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<T>, ExitCode> {
    let Some(f) = file else { return Ok(None) };
    match std::fs::read_to_string(f)
        .map_err(|e| e.to_string())
        .and_then(|t| parse(&t))
    {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            eprintln!("boris-spec: {flag} {}: {e}", f.display());
            Err(ExitCode::from(2))
        }
    }
}

pub(crate) fn main(args: RunArgs) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("boris-spec: cannot read the current directory: {e}");
            return ExitCode::from(2);
        }
    };
    let mut cases = match args.suite.cases() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    if args.control {
        // Only the escape cases have a control; a case that does not load is kept, to fail.
        cases.retain(|c| c.load().map(|c| c.control.is_some()).unwrap_or(true));
    }
    let must_have = match read_flag_file("--installed", args.installed.as_deref(), |t| {
        boris::spec::requires::parse_manifest(t)
    }) {
        Ok(m) => m.unwrap_or_default(),
        Err(code) => return code,
    };
    let baseline = match read_flag_file("--baseline", args.baseline.as_deref(), |t| {
        report::parse_baseline(t)
    }) {
        Ok(b) => b.unwrap_or_else(report::Baseline::new),
        Err(code) => return code,
    };
    let adapter = match find_adapter(&args.adapter) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if let Err(e) = regex::Regex::new(&args.http_addr_regex) {
        eprintln!("boris-spec: --http-addr-regex: {e}");
        return ExitCode::from(2);
    }
    let routes = match boris::spec::Route::select(&args.transport, &args.era) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    let mut opts = RunOptions::new(spec::resolve_server_command(&args.server, &cwd));
    opts.routes = routes;
    opts.http_args = args.http_args;
    opts.http_addr_regex = args.http_addr_regex;
    opts.default_timeout = Duration::from_millis(args.timeout_ms);
    opts.exit_timeout = Duration::from_millis(args.exit_timeout_ms);
    opts.only = args.only;
    opts.skip = args.skip;
    opts.adapter = adapter;
    opts.must_have = must_have;
    opts.control = args.control;
    opts.remote = args.remote;
    opts.every_route = args.every_route;
    opts.identity_provider = args
        .identity_provider
        .clone()
        .filter(|c| !c.trim().is_empty());
    opts.control_args = args
        .control_args
        .split_whitespace()
        .map(str::to_string)
        .collect();

    let outcomes = spec::run_files(&cases, &opts, args.jobs, |o| print_outcome(o, &baseline));

    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let expected = outcomes
        .iter()
        .filter(|o| {
            matches!(
                report::Status::of(o, &baseline),
                report::Status::Expected(_)
            )
        })
        .count();
    let stale = report::stale_entries(&outcomes, &baseline);
    // Teardown faults the adapter set aside: once each, not once per case.
    let findings = report::run_findings(&outcomes);
    let ran = report::cases_run(&outcomes);
    for f in &findings {
        println!("{}", report::finding_line(f, ran, &baseline));
    }
    let new_findings = findings
        .iter()
        .filter(|f| !baseline.contains_key(f.key))
        .count();
    if expected > 0 {
        println!("{expected} of the failures are expected by the baseline");
    }
    for s in &stale {
        println!("STALE baseline entry {s}: the case did not fail");
    }
    let unsupported = outcomes.iter().filter(|o| o.unsupported.is_some()).count();
    if unsupported > 0 {
        println!(
            "{unsupported} not supported by the {} adapter (counted as skipped)",
            opts.adapter.name
        );
    }
    println!("{}", summary_line(&outcomes));

    if args.scores {
        print!(
            "{}",
            report::render_scores(&report::capability_scores(&outcomes, &baseline))
        );
    }
    let name = opts.adapter.name.clone();
    if let Some(file) = &args.report
        && let Err(e) = std::fs::write(file, report::render_markdown(&name, &outcomes, &baseline))
    {
        eprintln!("boris-spec: cannot write {}: {e}", file.display());
        return ExitCode::from(2);
    }
    if let Some(file) = &args.json {
        let text = report::to_json(&name, &outcomes, &baseline).to_string();
        if let Err(e) = std::fs::write(file, text) {
            eprintln!("boris-spec: cannot write {}: {e}", file.display());
            return ExitCode::from(2);
        }
    }
    if let Some(file) = &args.junit {
        let cases: Vec<JunitCase> = outcomes.iter().map(to_junit).collect();
        if let Err(e) = std::fs::write(file, junit::render("boris-spec", &cases)) {
            eprintln!("boris-spec: cannot write {}: {e}", file.display());
            return ExitCode::from(2);
        }
    }
    if failed > expected || !stale.is_empty() || new_findings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_outcome(o: &CaseOutcome, baseline: &report::Baseline) {
    let path = o.path.display();
    if let report::Status::Expected(why) = report::Status::of(o, baseline) {
        println!("XFAIL {path}: {why}");
    } else if let Some(reason) = &o.unsupported {
        println!("UNSUPPORTED {path}: {reason}");
    } else if o.skipped {
        match &o.skip_reason {
            Some(why) => println!("SKIP {path}: {why}"),
            None => println!("SKIP {path}"),
        }
    } else if o.passed {
        println!("PASS {path}");
    } else {
        let mut lines = o.failures.iter();
        let first = lines.next().map(String::as_str).unwrap_or("failed");
        println!("FAIL {path}: {}", indent_rest(first));
        for f in lines {
            println!("    {}", indent_rest(f));
        }
    }
}

/// `N passed, N failed` (`, N skipped (M for a missing need)` when some were skipped):
/// a missing need is counted apart from failures, and apart from the other skips.
pub(crate) fn summary_line(outcomes: &[CaseOutcome]) -> String {
    let passed = outcomes.iter().filter(|o| o.passed && !o.skipped).count();
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let skipped = outcomes.iter().filter(|o| o.skipped).count();
    let unmet = outcomes
        .iter()
        .filter(|o| {
            o.skipped
                && o.skip_reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("requires "))
        })
        .count();
    match (skipped, unmet) {
        (0, _) => format!("{passed} passed, {failed} failed"),
        (s, 0) => format!("{passed} passed, {failed} failed, {s} skipped"),
        (s, u) => format!("{passed} passed, {failed} failed, {s} skipped ({u} for a missing need)"),
    }
}

/// Indents the continuation lines of a multi-line failure message.
fn indent_rest(s: &str) -> String {
    s.replace('\n', "\n    ")
}

fn to_junit(o: &CaseOutcome) -> JunitCase {
    let result = if o.skipped {
        JunitResult::Skipped {
            message: o
                .unsupported
                .clone()
                .or_else(|| o.skip_reason.clone())
                .unwrap_or_default(),
        }
    } else if o.passed {
        JunitResult::Passed
    } else {
        JunitResult::Failed {
            message: o.failures.first().cloned().unwrap_or_default(),
            details: o.failures.join("\n"),
        }
    };
    JunitCase {
        name: o.path.display().to_string(),
        classname: spec::classname(&o.path),
        time: o.duration,
        result,
        stderr: if o.passed {
            String::new()
        } else {
            o.stderr.clone()
        },
    }
}
