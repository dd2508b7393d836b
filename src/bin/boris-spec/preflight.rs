//! `boris-spec smoke`, `lint` and `adapt`: what a server author checks (and drafts)
//! before the suite, calling no tool.

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

#[derive(clap::Args)]
pub(crate) struct AdaptArgs {
    /// Shell command that starts the server on stdio.
    #[arg(long)]
    server: String,
    /// The adapter's name (default: the server's, from its initialize answer).
    #[arg(long)]
    name: Option<String>,
    /// Where to write the adapter (default: print it).
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
    #[arg(long, value_name = "N", default_value_t = boris::spec::model::DEFAULT_TIMEOUT_MS)]
    timeout_ms: u64,
}

/// `adapt`: the server's tools read, an adapter drafted and written, what it could not
/// map listed, and the server smoked (`run --adapter FILE` then gives the first score).
pub(crate) fn adapt(args: &AdaptArgs) -> ExitCode {
    use boris::spec::draft;
    let cmd = match server_command(&args.server) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let timeout = Duration::from_millis(args.timeout_ms);
    let tools = match boris::spec::preflight::lint(&cmd, timeout) {
        Ok((tools, _)) => tools,
        Err(e) => {
            println!("FAIL {e}");
            return ExitCode::from(1);
        }
    };
    let drafted = draft::draft(&tools);
    let name = args.name.clone().unwrap_or_else(|| "drafted".into());
    let yaml = draft::adapter_yaml(&name, &args.server, &drafted);
    for d in &drafted {
        match &d.mapping {
            Ok(m) => eprintln!("mapped   {}: {m}", d.capability),
            Err(why) => eprintln!("TODO     {}: {why}", d.capability),
        }
    }
    match &args.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &yaml) {
                println!("FAIL cannot write {}: {e}", path.display());
                return ExitCode::from(1);
            }
            eprintln!(
                "wrote {}: next, boris-spec run --server '{}' --adapter {}",
                path.display(),
                args.server,
                path.display()
            );
        }
        None => print!("{yaml}"),
    }
    match boris::spec::preflight::smoke(&cmd, timeout) {
        Ok(s) => {
            eprint!("{}", s.report);
            if s.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("FAIL smoke: {e}");
            ExitCode::from(1)
        }
    }
}
