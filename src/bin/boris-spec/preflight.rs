//! `boris-spec smoke` and `boris-spec lint`: what a server author checks before the
//! suite, calling no tool.

use std::process::ExitCode;
use std::time::Duration;

use super::server_command;

#[derive(clap::Args)]
pub(crate) struct SmokeArgs {
    /// Shell command that starts the server on stdio.
    #[arg(long)]
    server: String,
    #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
}

#[derive(clap::Args)]
pub(crate) struct LintArgs {
    /// Shell command that starts the server on stdio.
    #[arg(long)]
    server: String,
    #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
    /// Warnings fail too (exit 1), not only errors.
    #[arg(long)]
    strict: bool,
}

pub(crate) fn smoke(args: &SmokeArgs) -> ExitCode {
    let (server, timeout_ms) = (&args.server, args.timeout_ms);
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

pub(crate) fn lint(args: &LintArgs) -> ExitCode {
    let (server, timeout_ms, strict) = (&args.server, args.timeout_ms, args.strict);
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
