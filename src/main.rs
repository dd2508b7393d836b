//! `boris`: parse the command line, set up logging on stderr, start a transport.

use boris::config::{Auth, Cli, Command, Config, LogFormat, LogLevel, Transport};
use boris::logfmt::Json;
use boris::tools::Shared;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    // A session's jail (issue 18): the same binary, re-executed by the server.
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(boris::sandbox::JAIL_ARG))
    {
        boris::sandbox::jail::main();
    }
    hide_token_from_command_line();
    let env = |name: &str| std::env::var(name).ok();
    let cli = match Cli::parse_from_env(std::env::args_os().collect(), env) {
        Ok(cli) => cli,
        Err((message, code)) => {
            // --help and --version land here too, with code 0: they belong on stdout.
            if code == 0 {
                let _ = std::io::stdout().write_all(message.as_bytes());
            } else {
                let _ = std::io::stderr().write_all(message.as_bytes());
            }
            return ExitCode::from(u8::try_from(code).unwrap_or(2));
        }
    };
    if let Some(command) = &cli.command {
        return generate(command);
    }
    let check_only = cli.check_config;
    let config = match cli.into_config(env) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("boris: {e}");
            return ExitCode::from(2);
        }
    };
    if check_only {
        return check_config(config);
    }
    init_logging(&config);
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }

    let token = if config.generate_token {
        // Printed (with the URL) by the HTTP transport once it listens.
        Some(random_token())
    } else {
        config.token.clone()
    };

    let shared = match Shared::new(config) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("boris: {e}");
            return ExitCode::from(2);
        }
    };
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        workdir = %shared.config.workdir.display(),
        allowed = ?Json(paths(shared.scope.allow_dirs())),
        denied = ?Json(shared.scope.deny_patterns()),
        tools = ?Json(shared.tools.iter().map(|t| t.name.as_ref()).collect::<Vec<&str>>()),
        shell = %shared.shell.display(),
        sandbox = %sandbox_line(&shared.config),
        "boris starting"
    );
    let cleanup = shared.clone();

    let mut builder = match shared.config.transport {
        Transport::Stdio => tokio::runtime::Builder::new_current_thread(),
        Transport::Http => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("boris: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async move {
        match shared.config.transport {
            Transport::Stdio => {
                let signal = boris::transport::ShutdownSignal::listen();
                tokio::select! {
                    r = boris::transport::stdio::serve(shared) => r,
                    _ = signal.recv() => {
                        tracing::info!("signal received, shutting down");
                        boris::exec::begin_shutdown();
                        Ok(())
                    }
                }
            }
            Transport::Http => boris::transport::http::serve(shared, token).await,
        }
    });
    // No process Boris started outlives it (DESIGN §3), and its spill files go too.
    boris::exec::kill_all_groups();
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    boris::exec::kill_all_groups();
    cleanup.spill.remove();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("boris: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `boris completions SHELL` and `boris man`: generated from the clap definition, so
/// they never drift from the flags.
fn generate(command: &Command) -> ExitCode {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    let written = match command {
        Command::Completions { shell } => {
            clap_complete::generate(*shell, &mut cmd, "boris", &mut out);
            Ok(())
        }
        Command::Man => clap_mangen::Man::new(cmd).render(&mut out),
    };
    match written.and_then(|()| std::io::stdout().write_all(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("boris: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--check-config`: everything the server checks before it serves (flags, variables,
/// directories, deny patterns, a directory for command output), then one line on stdout.
fn check_config(config: Config) -> ExitCode {
    for warning in &config.warnings {
        eprintln!("boris: warning: {warning}");
    }
    let shared = match Shared::new(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("boris: {e}");
            return ExitCode::from(2);
        }
    };
    shared.spill.remove();
    let config = &shared.config;
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(",")
        }
    };
    let transport = match config.transport {
        Transport::Stdio => "stdio".to_string(),
        Transport::Http => format!(
            "http on {}:{} ({})",
            config.host,
            config.port,
            match &config.auth {
                Auth::Oauth { config: oauth, .. } => format!(
                    "OAuth access tokens for {} from {}",
                    oauth.resource,
                    oauth.issuers.join(", ")
                ),
                Auth::Token { .. } if config.generate_token => "generated token".into(),
                Auth::Token { .. } => "token required".into(),
                Auth::None { .. } => "no token".into(),
            }
        ),
    };
    println!(
        "boris: configuration ok: transport {transport}; workdir {}; allowed {}; denied {}; tools {}; {}; language servers: {}",
        config.workdir.display(),
        list(paths(shared.scope.allow_dirs())),
        list(shared.scope.deny_patterns().to_vec()),
        list(shared.tools.iter().map(|t| t.name.to_string()).collect()),
        sandbox_line(&shared.config),
        boris::lsp::summary(&shared.config.languages),
    );
    ExitCode::SUCCESS
}

/// `/proc/<pid>/cmdline` is readable by every process of the user (no ptrace check, unlike
/// `environ`): a `--token` given as a flag is moved into `BORIS_TOKEN`, its env twin, and
/// Boris re-executes itself without it, so no command can read it there (issue 18).
fn hide_token_from_command_line() {
    use std::os::unix::process::CommandExt;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut token = None;
    let mut kept = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if a == "--" {
            kept.extend_from_slice(&args[i..]);
            break;
        }
        if a == "--token" && i + 1 < args.len() {
            token = Some(args[i + 1].clone());
            i += 2;
            continue;
        }
        if let Some(v) = a.strip_prefix("--token=") {
            token = Some(v.into());
            i += 1;
            continue;
        }
        kept.push(args[i].clone());
        i += 1;
    }
    // An empty token, or one beside --generate-token, is an error to report under the
    // flag the user wrote: leave those to the parser.
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return;
    };
    if kept
        .iter()
        .any(|a| a.to_string_lossy().starts_with("--generate-token"))
    {
        return;
    }
    let err = std::process::Command::new("/proc/self/exe")
        .arg0(&kept[0])
        .args(&kept[1..])
        .env(boris::secret_env::TOKEN, token)
        .exec();
    // exec failed (no /proc): carry on with the token where it was.
    eprintln!("boris: could not move --token out of the command line: {err}");
}

/// What the sandbox enforces on this machine, in one line (issue 18 §2).
fn sandbox_line(config: &Config) -> String {
    match &config.sandbox {
        Some(sandbox) => sandbox.status(),
        None => "sandbox off: commands run unconfined".to_string(),
    }
}

fn paths(dirs: &[std::path::PathBuf]) -> Vec<String> {
    dirs.iter().map(|d| d.display().to_string()).collect()
}

fn init_logging(config: &boris::config::Config) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| {
        // rmcp logs every message at info; keep its chatter for --log-level debug.
        let level = config.log_level.as_str();
        let rmcp = if matches!(config.log_level, LogLevel::Debug | LogLevel::Trace) {
            level
        } else {
            "warn"
        };
        tracing_subscriber::EnvFilter::new(format!("{level},rmcp={rmcp}"))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        // A client may close or fill our stderr: a log line that cannot be written is
        // lost, and must not cost the request that logged it (tracing-subscriber's
        // default reports the failure with `eprintln!`, which panics on a closed stderr).
        .log_internal_errors(false);
    match config.log_format {
        // Fields as JSON values (arrays stay arrays): see `boris::logfmt`.
        LogFormat::Json => builder.event_format(boris::logfmt::JsonLines).init(),
        LogFormat::Text => builder.init(),
    }
}

fn random_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
