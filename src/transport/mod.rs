//! The two ways agents reach Boris: stdio (spawned as a child) and streamable HTTP.

pub mod drain;
pub mod framing;
pub mod http;
mod http_budget;
mod http_conn;
mod http_headers;
mod http_ready;
mod http_sessions;
mod http_token;
pub mod oauth;
pub mod stdio;
mod stdio_fd;

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
