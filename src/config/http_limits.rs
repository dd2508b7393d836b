//! The HTTP transport's limits against hostile load (issue 27): how long a connection may
//! stay silent, how many may be open, how many sessions may live, how long a body may
//! take. Each is a flag with a `BORIS_*` twin; docs/decisions.md (DEC-50) says why
//! each default is what it is.

use super::values::parse_seconds;
use std::time::Duration;

/// Flattened into [`super::Cli`] and carried as is in [`super::Config`].
#[derive(Debug, Clone, clap::Args)]
pub struct HttpLimits {
    /// Seconds a new HTTP connection has to send its first complete request head,
    /// whatever the protocol (a connection that sends nothing, half a request or only
    /// the HTTP/2 preface is closed), and an HTTP/1 request has for each later head.
    #[arg(
        long,
        env = "BORIS_HTTP_HEADER_TIMEOUT",
        value_name = "SECONDS",
        default_value = "10",
        value_parser = parse_positive_seconds
    )]
    pub http_header_timeout: Duration,

    /// Seconds an HTTP connection may stay open with no request in progress (an open
    /// event stream counts as one) before it is closed.
    #[arg(
        long,
        env = "BORIS_HTTP_IDLE_TIMEOUT",
        value_name = "SECONDS",
        default_value = "60",
        value_parser = parse_positive_seconds
    )]
    pub http_idle_timeout: Duration,

    /// Seconds between HTTP/2 keep-alive pings; a connection whose peer does not answer
    /// one within as long again is closed.
    #[arg(
        long,
        env = "BORIS_HTTP2_KEEPALIVE",
        value_name = "SECONDS",
        default_value = "20",
        value_parser = parse_positive_seconds
    )]
    pub http2_keepalive: Duration,

    /// Seconds a request body has, from its head, to arrive whole; past it the request
    /// fails and its connection closes.
    #[arg(
        long,
        env = "BORIS_HTTP_BODY_TIMEOUT",
        value_name = "SECONDS",
        default_value = "60",
        value_parser = parse_positive_seconds
    )]
    pub http_body_timeout: Duration,

    /// HTTP connections open at once; more are answered 503 and closed. Never more than
    /// three quarters of the process's file descriptor limit, so commands and files
    /// keep room.
    #[arg(long, env = "BORIS_MAX_CONNECTIONS", value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,

    /// HTTP connections open at once from one client address; more are answered 503 and
    /// closed.
    #[arg(long, env = "BORIS_MAX_CONNECTIONS_PER_IP", value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_ip: u64,

    /// MCP sessions open at once over HTTP; an initialize beyond it gets 503 with
    /// Retry-After until one ends (DELETE or --session-idle-timeout).
    #[arg(long, env = "BORIS_MAX_SESSIONS", value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_sessions: u64,

    /// Seconds running tool calls get to finish after SIGTERM or SIGINT (issue 31 §3):
    /// meanwhile new sessions are refused and `/ready` answers 503; past it the calls
    /// left end with a JSON-RPC error saying the server is shutting down. 0: at once.
    #[arg(
        long,
        env = "BORIS_SHUTDOWN_GRACE",
        value_name = "SECONDS",
        default_value = "3",
        value_parser = parse_seconds
    )]
    pub shutdown_grace: Duration,
}

fn parse_positive_seconds(value: &str) -> Result<Duration, String> {
    match parse_seconds(value)? {
        d if d.is_zero() => Err(format!("{value:?} must be more than 0 seconds")),
        d => Ok(d),
    }
}

impl HttpLimits {
    /// The connection cap in force: `--max-connections`, but at most three quarters of
    /// the descriptor limit `nofile` (and at least one), so that the server can still
    /// open files, pipes and its log while the cap is reached.
    pub fn connection_cap(&self, nofile: u64) -> usize {
        let room = nofile.saturating_sub(nofile / 4).max(1);
        usize::try_from(self.max_connections.min(room)).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        limits: HttpLimits,
    }

    #[test]
    fn the_connection_cap_leaves_descriptors_free() {
        let limits = Probe::parse_from(["x"]).limits;
        assert_eq!(limits.connection_cap(20_000), 1024);
        assert_eq!(limits.connection_cap(256), 192);
        assert_eq!(limits.connection_cap(1), 1);
        assert_eq!(limits.connection_cap(0), 1);
    }

    #[test]
    fn zero_seconds_are_refused() {
        assert!(Probe::try_parse_from(["x", "--http-header-timeout", "0"]).is_err());
        let p = Probe::parse_from(["x", "--http-header-timeout", "0.5"]);
        assert_eq!(p.limits.http_header_timeout, Duration::from_millis(500));
    }
}
