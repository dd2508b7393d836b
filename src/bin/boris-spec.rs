//! `boris-spec`: replays the YAML spec suite against any MCP server (stdio, and
//! streamable HTTP for `transport: http` cases).
//!
//! ```text
//! boris-spec run --server 'target/debug/boris --transport stdio' [spec/…] [--junit FILE]
//!                [--only TAG]… [--skip TAG]… [--timeout-ms N] [--jobs N]
//!                [--http-args '--transport http --port 0'] [--http-addr-regex REGEX]
//! ```
//! One line per case (`PASS path`, `FAIL path: reason` + indented further reasons,
//! `SKIP path`), then `N passed, N failed[, N skipped]`. Exit code 1 if any case failed,
//! 2 on usage errors. `boris-spec check [paths…]` only validates case files.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use boris::spec::junit::{self, JunitCase, JunitResult};
use boris::spec::{self, CaseOutcome, RunOptions};
use clap::{Parser, Subcommand};

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
    Run(RunArgs),
    /// Only load and validate case files (no server): reports every invalid case.
    Check {
        /// Case files or directories (searched recursively for *.yaml).
        #[arg(default_value = "spec")]
        paths: Vec<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Shell command that starts the server on stdio (run by /bin/sh -c in each case's
    /// temp workdir; a relative first word containing `/` is resolved against the
    /// current directory). HTTP cases append --http-args to it.
    #[arg(long)]
    server: String,
    /// Case files or directories (searched recursively for *.yaml).
    #[arg(default_value = "spec")]
    paths: Vec<PathBuf>,
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
    /// Cases run in parallel (each starts its own server).
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Arguments appended to the server command (before the case's `args`) for
    /// `transport: http` cases.
    #[arg(long, value_name = "ARGS", default_value = boris::spec::runner::DEFAULT_HTTP_ARGS, allow_hyphen_values = true)]
    http_args: String,
    /// Regex that finds the bound `host:port` in an HTTP server's stderr (group 1 if
    /// it has one, else the whole match).
    #[arg(long, value_name = "REGEX", default_value = boris::spec::runner::DEFAULT_HTTP_ADDR_REGEX)]
    http_addr_regex: String,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Run(args) => run(args),
        Cmd::Check { paths } => check(&paths),
    }
}

fn check(paths: &[PathBuf]) -> ExitCode {
    let files = match spec::discover(paths) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    let mut bad = 0;
    for f in &files {
        if let Err(e) = spec::load_case(f) {
            bad += 1;
            println!("INVALID {}: {e}", f.display());
        }
    }
    println!("{} valid, {bad} invalid", files.len() - bad);
    if bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn run(args: RunArgs) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("boris-spec: cannot read the current directory: {e}");
            return ExitCode::from(2);
        }
    };
    let paths = match spec::discover(&args.paths) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("boris-spec: {e}");
            return ExitCode::from(2);
        }
    };
    if paths.is_empty() {
        let shown: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
        eprintln!("boris-spec: no *.yaml cases under {}", shown.join(", "));
        return ExitCode::from(2);
    }
    if let Err(e) = regex::Regex::new(&args.http_addr_regex) {
        eprintln!("boris-spec: --http-addr-regex: {e}");
        return ExitCode::from(2);
    }
    let mut opts = RunOptions::new(spec::resolve_server_command(&args.server, &cwd));
    opts.http_args = args.http_args;
    opts.http_addr_regex = args.http_addr_regex;
    opts.default_timeout = Duration::from_millis(args.timeout_ms);
    opts.only = args.only;
    opts.skip = args.skip;

    let outcomes = spec::run_paths(&paths, &opts, args.jobs, print_outcome);

    let passed = outcomes.iter().filter(|o| o.passed && !o.skipped).count();
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let skipped = outcomes.iter().filter(|o| o.skipped).count();
    if skipped > 0 {
        println!("{passed} passed, {failed} failed, {skipped} skipped");
    } else {
        println!("{passed} passed, {failed} failed");
    }

    if let Some(file) = &args.junit {
        let cases: Vec<JunitCase> = outcomes.iter().map(to_junit).collect();
        if let Err(e) = std::fs::write(file, junit::render("boris-spec", &cases)) {
            eprintln!("boris-spec: cannot write {}: {e}", file.display());
            return ExitCode::from(2);
        }
    }
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_outcome(o: &CaseOutcome) {
    let path = o.path.display();
    if o.skipped {
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
