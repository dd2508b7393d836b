//! The two ways agents reach Boris: stdio (spawned as a child) and streamable HTTP.

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

/// SIGINT and SIGTERM, caught from the moment [`ShutdownSignal::listen`] returns.
///
/// Listening is a step of its own, made before the server says it is up: a handler
/// installed only when a future is first polled left a window after the `bound=` line
/// in which a SIGTERM killed the server outright (exit by signal 15, not a drain) — on
/// a loaded machine, a harness that stopped the server right after one quick request
/// met it about one run in three.
pub struct ShutdownSignal {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl ShutdownSignal {
    /// Installs the handlers now (inside the runtime). One that cannot be installed is
    /// left out: the signal then keeps its default action.
    pub fn listen() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        Self {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// Resolves on the first SIGINT or SIGTERM.
    pub async fn recv(mut self) {
        async fn next(s: &mut Option<tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = next(&mut self.term) => {}
            _ = next(&mut self.int) => {}
        }
    }
}
