//! `boris-spec bench`: one tool call's latency against a stdio server, or over HTTP
//! for concurrent clients, optionally under attack (`--transport http`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use boris::spec;
use boris::spec::bench::{self, BenchOptions};
use boris::spec::bench_http;
use serde_json::Value;

#[derive(clap::Args)]
pub(crate) struct BenchArgs {
    /// Shell command that starts the server on stdio (run as `run` runs it, by
    /// /bin/sh -c in --cwd or a fresh temp dir); with `--transport http`, one that
    /// starts it on HTTP and logs `bound=ADDR` (e.g. `boris --transport http --port 0`).
    #[arg(long, required_unless_present = "url")]
    server: Option<String>,
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
    /// How the calls reach the server: stdio (pipelined on one connection) or http
    /// (-c concurrent clients, one request per connection).
    #[arg(long, value_enum, default_value = "stdio")]
    transport: BenchTransport,
    /// HTTP: the address (`host:port`) of a server already listening, instead of --server.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "server")]
    url: Option<String>,
    /// HTTP: session (initialize, Mcp-Session-Id per client) or stateless (2026-07-28).
    #[arg(long, value_enum, default_value = "session")]
    era: bench_http::Era,
    /// HTTP: milliseconds a client waits between two calls, on average: each pause is drawn
    /// from [0.5, 1.5) x MS and clients start spread over one MS, so they are not in step.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    think_ms: u64,
    /// HTTP: what runs against the server while the clients call.
    #[arg(long, value_enum, default_value = "none")]
    attack: bench_http::Attack,
    /// HTTP: connections the attack holds open (or, for sessions, is ignored).
    #[arg(long, value_name = "N", default_value_t = 200)]
    attack_count: usize,
    /// HTTP: the loopback address the attack connects from (per-address caps apply).
    #[arg(long, value_name = "IPV4", default_value = "127.0.0.2")]
    attack_from: std::net::Ipv4Addr,
    /// HTTP, slow bodies: bytes sent of each body (one more is announced).
    #[arg(long, value_name = "BYTES", default_value_t = 30 << 20)]
    attack_body_bytes: usize,
    /// HTTP: seconds after the attack (and the calls) end before the "after" memory.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    after_wait: u64,
    /// HTTP: the environment variable holding a bearer token the clients send with every
    /// request (`Authorization: Bearer …`; a static `--token` or an OAuth access token).
    /// Named, not given, so the token is not on the command line.
    #[arg(long, value_name = "VAR", env = "BORIS_SPEC_BEARER_ENV")]
    bearer_env: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BenchTransport {
    Stdio,
    Http,
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
    if args.transport == BenchTransport::Http {
        return main_http(&args, &cwd, dir, tool, call_args, init_calls);
    }
    let Some(server) = &args.server else {
        return usage("--url is for --transport http; stdio needs --server".into());
    };
    let opts = BenchOptions {
        server_cmd: spec::resolve_server_command(server, &cwd),
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

fn main_http(
    args: &BenchArgs,
    cwd: &std::path::Path,
    dir: Option<PathBuf>,
    tool: String,
    call_args: Value,
    init_calls: Vec<(String, Value)>,
) -> ExitCode {
    let bearer = match &args.bearer_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => Some(token.trim().to_string()),
            _ => {
                eprintln!("boris-spec bench: --bearer-env {var}: the variable is not set or empty");
                return ExitCode::from(2);
            }
        },
    };
    let mut opts = bench_http::HttpBenchOptions {
        bearer,
        addr: args.url.clone().unwrap_or_default(),
        pids: Vec::new(),
        tool,
        args: call_args,
        init_calls,
        era: args.era,
        calls: args.n,
        clients: args.concurrency,
        warmup: args.warmup,
        think: Duration::from_millis(args.think_ms),
        timeout: Duration::from_millis(args.timeout_ms),
        attack: args.attack,
        attack_count: args.attack_count,
        attack_from: args.attack_from,
        attack_body_bytes: args.attack_body_bytes,
        after_wait: Duration::from_secs(args.after_wait),
    };
    let result = match &args.server {
        Some(server) => bench_http::run_spawned(
            &spec::resolve_server_command(server, cwd),
            dir.as_deref(),
            &mut opts,
        ),
        None => bench_http::run(&opts),
    };
    match result {
        Ok(report) => {
            if args.json {
                println!("{}", report.to_json(&opts));
            } else {
                print!("{}", report.render_text(&opts));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("boris-spec bench: {e}");
            ExitCode::from(1)
        }
    }
}
