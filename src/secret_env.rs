//! The environment variables that hold Boris's own secrets: read by the configuration,
//! never passed to a command (the process engine removes them from every child's
//! environment, confined or not). One list, below both, so neither imports the other.

/// The static bearer token (`--token`'s twin; a `--token` flag is moved here at start).
pub const TOKEN: &str = "BORIS_TOKEN";

/// The introspection client's secret (`--auth oauth` with `--oauth-introspection-url`).
pub const OAUTH_CLIENT_SECRET: &str = "BORIS_OAUTH_CLIENT_SECRET";

/// Every variable of Boris's that a command must not inherit.
pub const ALL: [&str; 2] = [TOKEN, OAUTH_CLIENT_SECRET];
