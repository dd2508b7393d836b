//! `boris-spec`: replays the YAML spec suite against any MCP server (stdio, and
//! streamable HTTP for `transport: http` cases).
//!
//! ```text
//! boris-spec run --server 'target/debug/boris --transport stdio' [view protocol/ping.yaml …]
//!                [--spec DIR] [--add-spec DIR]… [--junit FILE]
//!                [--only TAG]… [--skip TAG]… [--timeout-ms N] [--jobs N]
//!                [--http-args '--transport http --port 0'] [--http-addr-regex REGEX]
//! ```
//! One line per case (`PASS path`, `FAIL path: reason` + indented further reasons,
//! `SKIP path`), then `N passed, N failed[, N skipped]`. Exit code 1 if any case failed,
//! 2 on usage errors. `boris-spec check [paths…]` only validates case files. The suite
//! is built into the binary: no checkout is needed (`--spec DIR` runs your own cases
//! instead, `--add-spec DIR` adds them).
//!
//! ```text
//! boris-spec bench --server CMD --call TOOL JSON [-n N] [-c C] [--warmup W]
//!                  [--init-call TOOL JSON]… [--cwd DIR] [--timeout-ms N] [--json]
//! ```
//! Latency percentiles, calls/s, error counts and the server's peak RSS for N calls of
//! one tool, C in flight at once over one stdio connection. Exit code 1 if the run
//! could not be completed, 2 on usage errors.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use boris::spec::bench::{self, BenchOptions};
use boris::spec::junit::{self, JunitCase, JunitResult};
use boris::spec::{self, CaseOutcome, RunOptions, report};
use clap::{Parser, Subcommand};
use serde_json::Value;

#[derive(Parser)]
#[command(
    name = "boris-spec",
    version,
    about = "Replay the Boris spec suite against an MCP server (stdio or streamable HTTP)"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run spec cases against a server.
    Run(Box<RunArgs>),
    /// Measure one tool call against a stdio server: latency percentiles, calls/s,
    /// errors, peak RSS.
    Bench(BenchArgs),
    /// Only load and validate case files (no server): reports every invalid case.
    Check(SuiteArgs),
    /// Preflight: start the server, initialize, ping, list its tools and check that
    /// what it declares is what answers. Calls no tool.
    Smoke {
        /// Shell command that starts the server on stdio.
        #[arg(long)]
        server: String,
        #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
        timeout_ms: u64,
    },
    /// Check the server's tools/list as clients read it: names, descriptions,
    /// annotations, JSON Schema problems, and the token cost of the list.
    Lint {
        /// Shell command that starts the server on stdio.
        #[arg(long)]
        server: String,
        #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
        timeout_ms: u64,
        /// Warnings fail too (exit 1), not only errors.
        #[arg(long)]
        strict: bool,
    },
    /// List the capabilities portable cases use and the built-in adapters.
    Capabilities,
    /// Run a short script of calls (a case file whose steps need no `expect`) against
    /// a live server and write it as a case: each answer becomes its step's
    /// expectation, checked once more by a replay.
    Record(RecordArgs),
}

#[derive(clap::Args)]
struct RecordArgs {
    /// Shell command that starts the server on stdio.
    #[arg(long)]
    server: String,
    /// How the server spells each capability: a built-in adapter or an adapter file.
    #[arg(long, default_value = "boris")]
    adapter: String,
    /// The script: a case file (fixtures, args, steps), expectations optional.
    script: PathBuf,
    /// Where to write the case (default: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the case's golden snapshot (`golden: true`), in the `golden/`
    /// directory beside the `spec/` directory `--out` is in.
    #[arg(long, requires = "out")]
    golden: bool,
    #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
}

/// Which cases: the suite built into this binary, or a directory of your own, plus
/// more directories, narrowed by selectors.
#[derive(clap::Args)]
struct SuiteArgs {
    /// Case files or directories on disk, or parts of the suite by their path under
    /// `spec/` (`view`, `protocol/ping.yaml`). Default: the whole suite.
    paths: Vec<PathBuf>,
    /// Use the cases under DIR instead of the suite built into boris-spec.
    #[arg(long, value_name = "DIR")]
    spec: Option<PathBuf>,
    /// Add the cases under DIR (repeatable); one at the same path under DIR as a case
    /// of the suite replaces it.
    #[arg(long = "add-spec", value_name = "DIR")]
    add_spec: Vec<PathBuf>,
}

impl SuiteArgs {
    fn cases(&self) -> Result<Vec<spec::CaseFile>, String> {
        let base = match &self.spec {
            Some(dir) => {
                if !dir.is_dir() {
                    return Err(format!("--spec {}: not a directory", dir.display()));
                }
                spec::disk_cases(dir)?
            }
            None => spec::embedded_cases(),
        };
        let cases = spec::select_cases(base, &self.add_spec, &self.paths)?;
        if cases.is_empty() {
            return Err("no cases to run".into());
        }
        Ok(cases)
    }
}

#[derive(clap::Args)]
struct RunArgs {
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
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Shell command that starts the server on stdio (run as `run` runs it, by
    /// /bin/sh -c in --cwd or a fresh temp dir).
    #[arg(long)]
    server: String,
    /// The tool to measure and its arguments, a JSON object.
    #[arg(long, num_args = 2, value_names = ["TOOL", "JSON"], required = true)]
    call: Vec<String>,
    /// Measured calls.
    #[arg(short = 'n', long = "calls", value_name = "N", default_value_t = 1000)]
    n: usize,
    /// Requests in flight at once (pipelined over the one connection).
    #[arg(short = 'c', long, value_name = "C", default_value_t = 1)]
    concurrency: usize,
    /// Calls made before measuring (not counted).
    #[arg(long, value_name = "W", default_value_t = 0)]
    warmup: usize,
    /// A call made once after the handshake, before any other (repeatable, in order;
    /// each must succeed), e.g. `--init-call view '{"path":"f.txt"}'` before str_replace.
    #[arg(long = "init-call", num_args = 2, value_names = ["TOOL", "JSON"])]
    init_call: Vec<String>,
    /// The server's working directory (default: a fresh temp dir, removed afterwards).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Longest wait for any one response (or write), in milliseconds.
    #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Run(args) => run(*args),
        Cmd::Record(args) => record(args),
        Cmd::Bench(args) => bench(args),
        Cmd::Check(suite) => check(&suite),
        Cmd::Smoke { server, timeout_ms } => smoke(&server, timeout_ms),
        Cmd::Lint {
            server,
            timeout_ms,
            strict,
        } => lint(&server, timeout_ms, strict),
        Cmd::Capabilities => {
            use std::io::Write as _;
            let caps = boris::spec::adapter::CAPABILITIES;
            let width = caps.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
            let mut text = String::new();
            for (cap, values) in caps {
                text.push_str(&format!("{cap:width$}  {values}\n"));
            }
            text.push_str(&format!(
                "\nbuilt-in adapters: {}\n",
                boris::spec::adapter::builtin_names().join(", ")
            ));
            // A reader that stops early (`| head`) is not an error.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
    }
}

fn server_command(server: &str) -> Result<String, ExitCode> {
    match std::env::current_dir() {
        Ok(cwd) => Ok(spec::resolve_server_command(server, &cwd)),
        Err(e) => {
            eprintln!("boris-spec: cannot read the current directory: {e}");
            Err(ExitCode::from(2))
        }
    }
}

fn smoke(server: &str, timeout_ms: u64) -> ExitCode {
    let cmd = match server_command(server) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match boris::spec::preflight::smoke(&cmd, Duration::from_millis(timeout_ms)) {
        Ok(s) => {
            print!("{}", s.report);
            if s.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            println!("FAIL {e}");
            ExitCode::from(1)
        }
    }
}

fn lint(server: &str, timeout_ms: u64, strict: bool) -> ExitCode {
    use boris::spec::preflight::{self, Level};
    let cmd = match server_command(server) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (tools, findings) = match preflight::lint(&cmd, Duration::from_millis(timeout_ms)) {
        Ok(r) => r,
        Err(e) => {
            println!("FAIL {e}");
            return ExitCode::from(1);
        }
    };
    for f in &findings {
        let level = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        println!("{level}: {}: {}", f.tool, f.message);
    }
    let list = serde_json::json!({ "tools": tools }).to_string();
    let errors = findings.iter().filter(|f| f.level == Level::Error).count();
    let warnings = findings.len() - errors;
    println!(
        "{} tools; tools/list is {} characters, about {} tokens; {errors} errors, {warnings} warnings",
        tools.len(),
        list.chars().count(),
        preflight::approx_tokens(&list)
    );
    if errors > 0 || (strict && warnings > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn check(suite: &SuiteArgs) -> ExitCode {
    let files = match suite.cases() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    let mut bad = 0;
    for f in &files {
        if let Err(e) = f.load() {
            bad += 1;
            println!("INVALID {}: {e}", f.path.display());
        }
    }
    println!("{} valid, {bad} invalid", files.len() - bad);
    if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--adapter`: a built-in name or a file; a usage error (exit 2) otherwise.
fn find_adapter(name: &str) -> Result<boris::spec::adapter::Adapter, ExitCode> {
    boris::spec::adapter::Adapter::find(name).map_err(|e| {
        eprintln!("boris-spec: --adapter: {e}");
        ExitCode::from(2)
    })
}

fn record(args: RecordArgs) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("boris-spec: cannot read the current directory: {e}");
            return ExitCode::from(2);
        }
    };
    let adapter = match find_adapter(&args.adapter) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let script = match std::fs::read_to_string(&args.script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("boris-spec: {}: {e}", args.script.display());
            return ExitCode::from(2);
        }
    };
    let mut opts = RunOptions::new(spec::resolve_server_command(&args.server, &cwd));
    opts.default_timeout = Duration::from_millis(args.timeout_ms);
    opts.adapter = adapter;
    let name = args.out.clone().unwrap_or_else(|| args.script.clone());
    let mut script = script;
    if args.golden && !script.lines().any(|l| l.starts_with("golden:")) {
        script = format!("golden: true\n{script}");
    }
    let recording = match boris::spec::record::record(&script, &name, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("boris-spec record: {e}");
            return ExitCode::from(2);
        }
    };
    for note in &recording.notes {
        eprintln!("boris-spec record: {note}");
    }
    match &args.out {
        None => print!("{}", recording.case_yaml),
        Some(out) => {
            if let Err(e) = std::fs::write(out, &recording.case_yaml) {
                eprintln!("boris-spec: {}: {e}", out.display());
                return ExitCode::from(2);
            }
            eprintln!("boris-spec record: wrote {}", out.display());
        }
    }
    if args.golden
        && let Some(out) = &args.out
    {
        let Some((dir, snapshot)) = boris::spec::record::golden_location(out) else {
            eprintln!(
                "boris-spec record: --golden: {} is not under a spec/ directory",
                out.display()
            );
            return ExitCode::from(2);
        };
        write_golden(&dir, &snapshot, out, &recording.replay.transcript);
        eprintln!(
            "boris-spec record: wrote {}",
            dir.join(format!("{snapshot}.snap")).display()
        );
    }
    if recording.replay.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Writes a golden snapshot with insta, so it is byte for byte what `tests/spec.rs`
/// compares against.
fn write_golden(dir: &Path, name: &str, input: &Path, transcript: &serde_json::Value) {
    // Read once by insta, before its first assertion: write the file, never fail.
    // SAFETY: no other thread runs now (the cases have finished).
    unsafe {
        std::env::set_var("INSTA_UPDATE", "always");
        std::env::set_var("INSTA_FORCE_PASS", "1");
        std::env::set_var("INSTA_OUTPUT", "none");
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(input);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_yaml_snapshot!(name, transcript));
}

fn run(args: RunArgs) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("boris-spec: cannot read the current directory: {e}");
            return ExitCode::from(2);
        }
    };
    let cases = match args.suite.cases() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    let baseline = match &args.baseline {
        None => report::Baseline::new(),
        Some(f) => match std::fs::read_to_string(f)
            .map_err(|e| e.to_string())
            .and_then(|t| report::parse_baseline(&t))
        {
            Ok(b) => b,
            Err(e) => {
                eprintln!("boris-spec: --baseline {}: {e}", f.display());
                return ExitCode::from(2);
            }
        },
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

    let outcomes = spec::run_files(&cases, &opts, args.jobs, |o| print_outcome(o, &baseline));

    let passed = outcomes.iter().filter(|o| o.passed && !o.skipped).count();
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
    if expected > 0 {
        println!("{expected} of the failures are expected by the baseline");
    }
    for s in &stale {
        println!("STALE baseline entry {s}: the case did not fail");
    }
    let skipped = outcomes.iter().filter(|o| o.skipped).count();
    let unsupported = outcomes.iter().filter(|o| o.unsupported.is_some()).count();
    if unsupported > 0 {
        println!(
            "{unsupported} not supported by the {} adapter (counted as skipped)",
            opts.adapter.name
        );
    }
    if skipped > 0 {
        println!("{passed} passed, {failed} failed, {skipped} skipped");
    } else {
        println!("{passed} passed, {failed} failed");
    }

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
    if failed > expected || !stale.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn bench(args: BenchArgs) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("boris-spec bench: {msg}");
        ExitCode::from(2)
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return usage(format!("cannot read the current directory: {e}")),
    };
    let parse_pairs = |flag: &str, words: &[String]| -> Result<Vec<(String, Value)>, String> {
        words
            .chunks(2)
            .map(|pair| {
                let [tool, raw] = pair else {
                    return Err(format!("{flag} takes a tool name and a JSON object"));
                };
                match serde_json::from_str::<Value>(raw) {
                    Ok(v @ Value::Object(_)) => Ok((tool.clone(), v)),
                    Ok(_) => Err(format!(
                        "{flag} {tool}: the arguments must be a JSON object"
                    )),
                    Err(e) => Err(format!("{flag} {tool}: invalid JSON: {e}")),
                }
            })
            .collect()
    };
    let (tool, call_args) = match parse_pairs("--call", &args.call).as_deref() {
        Ok([one]) => one.clone(),
        Ok(_) => return usage("--call is given exactly once".into()),
        Err(e) => return usage(e.clone()),
    };
    let init_calls = match parse_pairs("--init-call", &args.init_call) {
        Ok(v) => v,
        Err(e) => return usage(e),
    };
    if args.n == 0 || args.concurrency == 0 {
        return usage("-n and -c must be at least 1".into());
    }
    let dir = match &args.cwd {
        Some(d) => match d.canonicalize() {
            Ok(p) if p.is_dir() => Some(p),
            Ok(_) => return usage(format!("--cwd {}: not a directory", d.display())),
            Err(e) => return usage(format!("--cwd {}: {e}", d.display())),
        },
        None => None,
    };
    let opts = BenchOptions {
        server_cmd: spec::resolve_server_command(&args.server, &cwd),
        cwd: dir,
        tool,
        args: call_args,
        init_calls,
        calls: args.n,
        concurrency: args.concurrency,
        warmup: args.warmup,
        timeout: Duration::from_millis(args.timeout_ms),
    };
    match bench::run(&opts) {
        Ok(report) => {
            if args.json {
                println!("{}", report.to_json());
            } else {
                print!("{}", report.render_text());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("boris-spec bench: {e}");
            ExitCode::from(1)
        }
    }
}

fn print_outcome(o: &CaseOutcome, baseline: &report::Baseline) {
    let path = o.path.display();
    if let report::Status::Expected(why) = report::Status::of(o, baseline) {
        println!("XFAIL {path}: {why}");
    } else if let Some(reason) = &o.unsupported {
        println!("UNSUPPORTED {path}: {reason}");
    } else if o.skipped {
        println!("SKIP {path}");
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

/// Indents the continuation lines of a multi-line failure message.
fn indent_rest(s: &str) -> String {
    s.replace('\n', "\n    ")
}

fn to_junit(o: &CaseOutcome) -> JunitCase {
    let result = if o.skipped {
        JunitResult::Skipped
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
