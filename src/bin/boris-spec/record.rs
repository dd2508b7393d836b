//! `boris-spec record`: a script of calls against a live server, written as a case
//! (and, with `--golden`, its snapshot).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use boris::spec::{self, RunOptions};

use super::find_adapter;

#[derive(clap::Args)]
pub(crate) struct RecordArgs {
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

pub(crate) fn main(args: RecordArgs) -> ExitCode {
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
