//! `boris`: parse the command line, set up logging on stderr, start a transport.

use boris::config::{Cli, LogFormat, LogLevel, Transport};
use boris::tools::Shared;
use clap::Parser;
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match cli.into_config(|name| std::env::var(name).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("boris: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(&config);

    let token = if config.generate_token {
        let token = random_token();
        // Printed whatever the log level: it is the only way to learn it.
        eprintln!("bearer token: {token}");
        Some(token)
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
        allowed = ?shared.scope.allow_dirs(),
        denied = ?shared.scope.deny_patterns(),
        tools = ?shared.tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(),
        shell = %shared.shell.display(),
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
                tokio::select! {
                    r = boris::transport::stdio::serve(shared) => r,
                    _ = boris::transport::shutdown_signal() => {
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
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

fn random_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
