//! `boris-spec bench`: one tool call's latency against a stdio server.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use boris::spec;
use boris::spec::bench::{self, BenchOptions};
use serde_json::Value;

#[derive(clap::Args)]
pub(crate) struct BenchArgs {
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

pub(crate) fn main(args: BenchArgs) -> ExitCode {
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
