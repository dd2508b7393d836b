//! `boris-spec hostile`: generated hostile input against every tool a server lists
//! (issue 29 §5; the checks are in `boris::spec::hostile`).

use std::process::ExitCode;
use std::time::Duration;

use boris::spec::hostile::{self, Options};

#[derive(clap::Args)]
pub(crate) struct HostileArgs {
    /// Shell command that starts the server on stdio, in a fresh workdir (`{workdir}`
    /// in it is replaced by that directory's path).
    #[arg(long)]
    server: String,
    /// The generator's seed: the same seed draws the same calls.
    #[arg(long, default_value_t = hostile::DEFAULT_SEED)]
    seed: u64,
    /// How many calls, spread round robin over the tools.
    #[arg(long, default_value_t = hostile::DEFAULT_CASES)]
    cases: usize,
    /// Only this tool (repeatable).
    #[arg(long = "tool", value_name = "NAME")]
    only: Vec<String>,
    /// Never this tool (repeatable).
    #[arg(long = "skip-tool", value_name = "NAME")]
    skip: Vec<String>,
    /// Longest wait for any one answer, in milliseconds: a call unanswered by then fails.
    #[arg(long, value_name = "N", default_value_t = 30_000)]
    timeout_ms: u64,
    /// Also write the run's counts and failures as JSON to this file.
    #[arg(long, value_name = "FILE", env = "BORIS_SPEC_HOSTILE_JSON")]
    json: Option<std::path::PathBuf>,
}

pub(crate) fn main(args: HostileArgs) -> ExitCode {
    let opts = Options {
        server: args.server.clone(),
        seed: args.seed,
        cases: args.cases,
        timeout: Duration::from_millis(args.timeout_ms),
        only: args.only.clone(),
        skip: args.skip.clone(),
    };
    match hostile::run(&opts) {
        Ok(report) => {
            print!("{}", hostile::render(&report, &opts));
            if let Some(path) = &args.json {
                let text = hostile::summary::to_json(&report, &opts).to_string();
                if let Err(e) = std::fs::write(path, text + "\n") {
                    eprintln!("boris-spec hostile: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            if report.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("boris-spec hostile: {e}");
            ExitCode::from(2)
        }
    }
}
