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
//! `SKIP path`), a `FINDING` line per kind of teardown fault the adapter sets aside (a
//! peer that outlives stdin EOF: once, not once per case), then `N passed, N
//! failed[, N skipped]`. Exit code 1 if a case failed or a finding was new (unless
//! `--baseline` expects it), 2 on usage errors. `boris-spec check [paths…]` only validates case files. The suite
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
//!
//! One module per subcommand: [`run`], [`check`], [`record`], [`bench`],
//! [`preflight`] (`smoke`, `lint`), [`capabilities`], [`hostile`].

mod bench;
mod capabilities;
mod check;
mod hostile;
mod preflight;
mod record;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use boris::spec;
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
    Run(Box<run::RunArgs>),
    /// Measure one tool call against a stdio server: latency percentiles, calls/s,
    /// errors, peak RSS.
    Bench(bench::BenchArgs),
    /// Only load and validate case files (no server): reports every invalid case.
    Check(SuiteArgs),
    /// Preflight: start the server, initialize, ping, list its tools and check that
    /// what it declares is what answers. Calls no tool.
    Smoke(preflight::SmokeArgs),
    /// Check the server's tools/list as clients read it: names, descriptions,
    /// annotations, JSON Schema problems, and the token cost of the list.
    Lint(preflight::LintArgs),
    /// Draft an adapter for a new server from its tools/list (capabilities mapped by
    /// tool and parameter names, a TODO for each one it could not map), then smoke it.
    Adapt(preflight::AdaptArgs),
    /// List the capabilities portable cases use and the built-in adapters.
    Capabilities,
    /// Run a short script of calls (a case file whose steps need no `expect`) against
    /// a live server and write it as a case: each answer becomes its step's
    /// expectation, checked once more by a replay.
    Record(record::RecordArgs),
    /// Call every tool with input generated from its schema (hostile paths, payloads,
    /// wrong types, shell text) by a seeded generator; check each call is answered,
    /// well-formed, changes nothing when it fails and nothing outside the workdir ever.
    /// A failure is shrunk and printed as a case to paste.
    Hostile(hostile::HostileArgs),
    /// Print a fixture the suite's harness starts, to save and run beside what it needs:
    /// `identity-provider` (the auth pack's provider; Node >= 22 and npm
    /// oauth2-mock-server 9.x in its directory's node_modules).
    Fixture {
        #[arg(value_enum)]
        name: FixtureName,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FixtureName {
    IdentityProvider,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Run(args) => run::main(*args),
        Cmd::Record(args) => record::main(args),
        Cmd::Bench(args) => bench::main(args),
        Cmd::Check(suite) => check::main(&suite),
        Cmd::Smoke(args) => preflight::smoke(&args),
        Cmd::Lint(args) => preflight::lint(&args),
        Cmd::Adapt(args) => preflight::adapt(&args),
        Cmd::Capabilities => capabilities::main(),
        Cmd::Hostile(args) => hostile::main(args),
        Cmd::Fixture {
            name: FixtureName::IdentityProvider,
        } => {
            print!("{}", spec::identity::FIXTURE_SCRIPT);
            ExitCode::SUCCESS
        }
    }
}

/// Which cases: the suite built into this binary, or a directory of your own, plus
/// more directories, narrowed by selectors.
#[derive(clap::Args)]
pub(crate) struct SuiteArgs {
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
    pub(crate) fn cases(&self) -> Result<Vec<spec::CaseFile>, String> {
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

/// `--server` with a relative first word made absolute (see `spec::resolve_server_command`).
pub(crate) fn server_command(server: &str) -> Result<String, ExitCode> {
    match std::env::current_dir() {
        Ok(cwd) => Ok(spec::resolve_server_command(server, &cwd)),
        Err(e) => {
            eprintln!("boris-spec: cannot read the current directory: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// `--adapter`: a built-in name or a file; a usage error (exit 2) otherwise.
pub(crate) fn find_adapter(name: &str) -> Result<boris::spec::adapter::Adapter, ExitCode> {
    boris::spec::adapter::Adapter::find(name).map_err(|e| {
        eprintln!("boris-spec: --adapter: {e}");
        ExitCode::from(2)
    })
}
