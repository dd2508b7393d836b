//! Command-line flags, their `BORIS_*` environment twins, and validation (seed 003's
//! flag table plus DESIGN §4).
//!
//! A flag beats its env var. List flags are repeatable and never split on commas; their
//! env twins are comma-separated, except that a comma inside `{…}` does not split (so a
//! deny pattern like `*.{pem,key}` survives). clap's own `env` support would split the
//! repeated flags too, so list env vars are read here by hand.

use clap::{Parser, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every tool name Boris knows, whether or not this build registers it yet. `--disable-tools`
/// accepts exactly these.
pub const KNOWN_TOOLS: &[&str] = &[
    "bash",
    "task_output",
    "task_stop",
    "view",
    "str_replace",
    "create_file",
    "str_replace_editor",
    "grep",
    "glob",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    Http,
    Stdio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewBeforeEdit {
    /// On whenever a tool that can view files is registered.
    Auto,
    True,
    False,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BashProfile {
    Boris,
    Pipe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// The raw command line, as clap parses it. [`Cli::into_config`] validates it.
#[derive(Debug, Parser)]
#[command(
    name = "boris",
    version,
    // The last occurrence of a single-valued flag wins, so a wrapper (or a spec case)
    // can override flags given earlier on the command line.
    args_override_self = true,
    about = "Coding tools for AI agents over MCP: shell, view, edit, create, search.",
    after_help = "Every flag has a BORIS_* environment twin; a flag beats its env var. \
                  List env vars are comma-separated (a comma inside {…} does not split)."
)]
pub struct Cli {
    /// Transport: http (streamable HTTP at /mcp) or stdio (newline-delimited JSON-RPC).
    #[arg(long, env = "BORIS_TRANSPORT", value_enum, default_value = "http")]
    pub transport: Transport,

    /// HTTP bind address (containers pass 0.0.0.0).
    #[arg(long, env = "BORIS_HOST", default_value = "127.0.0.1")]
    pub host: String,

    /// HTTP listen port; 0 picks a free port (the bound address is logged).
    #[arg(long, env = "BORIS_PORT", default_value_t = 8080)]
    pub port: u16,

    /// Initial working directory of every session.
    #[arg(long, env = "BORIS_WORKDIR", default_value = ".")]
    pub workdir: PathBuf,

    /// Default bash timeout in seconds (the tool's `timeout` parameter is in milliseconds).
    #[arg(long, env = "BORIS_TIMEOUT", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,

    /// A directory the file tools may touch (repeatable). Default: the working directory.
    /// `--allow-dir=/` allows everything. Env: BORIS_ALLOW_DIRS (comma-separated).
    #[arg(long = "allow-dir", value_name = "DIR")]
    pub allow_dirs: Vec<PathBuf>,

    /// A denied directory or glob pattern (repeatable). Without a leading `/` it matches
    /// at any depth (`.env` = `**/.env`). Deny beats allow. Env: BORIS_DENY_DIRS.
    #[arg(long = "deny-dir", value_name = "PATTERN")]
    pub deny_dirs: Vec<String>,

    /// Do not register the bash tool (same as --disable-tools bash).
    #[arg(long, env = "BORIS_NO_BASH", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub no_bash: bool,

    /// Tool names not to register (repeatable). Env: BORIS_DISABLE_TOOLS (comma-separated).
    #[arg(long = "disable-tools", value_name = "TOOL")]
    pub disable_tools: Vec<String>,

    /// Largest file view and create_file handle: 10MB, 512KB, 1GB or plain bytes.
    #[arg(long, env = "BORIS_MAX_FILE_SIZE", default_value = "10MB", value_parser = parse_size)]
    pub max_file_size: u64,

    /// Expose Claude's tool schemas: one str_replace_editor instead of view/str_replace/create_file.
    #[arg(long, env = "BORIS_ANTHROPIC_COMPAT", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub anthropic_compat: bool,

    /// Bearer token required on /mcp (HTTP).
    #[arg(
        long,
        env = "BORIS_TOKEN",
        conflicts_with = "generate_token",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// An extra allowed browser Origin for HTTP, e.g. `https://app.example.com` or
    /// `http://devbox:*` (repeatable). Loopback origins are always allowed; any other
    /// Origin gets 403. Env: BORIS_ALLOWED_ORIGINS (comma-separated).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,

    /// An allowed `Host` header value for HTTP (repeatable). Bound to loopback, only
    /// loopback names are accepted unless more are given; bound beyond loopback, any Host
    /// is accepted unless some are given. Env: BORIS_ALLOWED_HOSTS (comma-separated).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,

    /// Generate a random bearer token and print it on stderr.
    #[arg(long, env = "BORIS_GENERATE_TOKEN", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub generate_token: bool,

    /// Seconds after which a background task is terminated (0 = never).
    #[arg(long, env = "BORIS_BACKGROUND_TASK_TIMEOUT", default_value_t = 0)]
    pub background_task_timeout: u64,

    /// Require a view of a file before it is edited or overwritten.
    #[arg(
        long,
        env = "BORIS_REQUIRE_VIEW_BEFORE_EDIT",
        value_enum,
        default_value = "auto"
    )]
    pub require_view_before_edit: ViewBeforeEdit,

    /// Bash contract: boris (stateful cwd, background tasks) or pipe (stateless, tail output).
    #[arg(long, env = "BORIS_BASH_PROFILE", value_enum, default_value = "boris")]
    pub bash_profile: BashProfile,

    /// Seconds before an idle HTTP session is closed and its tasks killed.
    #[arg(long, env = "BORIS_SESSION_IDLE_TIMEOUT", default_value_t = 600)]
    pub session_idle_timeout: u64,

    /// Log level (logs go to stderr).
    #[arg(long, env = "BORIS_LOG_LEVEL", value_enum, default_value = "info")]
    pub log_level: LogLevel,

    /// Log format: text for people, json for machines.
    #[arg(long, env = "BORIS_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// The validated configuration the server runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub transport: Transport,
    pub host: String,
    pub port: u16,
    /// Canonical, existing directory.
    pub workdir: PathBuf,
    pub default_timeout: Duration,
    /// Canonical, existing directories.
    pub allow_dirs: Vec<PathBuf>,
    pub deny_patterns: Vec<String>,
    pub disabled_tools: Vec<String>,
    pub max_file_size: u64,
    pub anthropic_compat: bool,
    pub token: Option<String>,
    pub generate_token: bool,
    pub allowed_origins: Vec<String>,
    pub allowed_hosts: Vec<String>,
    pub background_task_timeout: Option<Duration>,
    pub require_view_before_edit: ViewBeforeEdit,
    pub bash_profile: BashProfile,
    pub session_idle_timeout: Duration,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
}

/// A configuration error: one line naming the flag and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Cli {
    /// Validates the parsed flags against the filesystem and fills list flags from their
    /// env twins. `env` is injected so tests need not touch the process environment.
    pub fn into_config(self, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let workdir = canonical_dir(&self.workdir, "--workdir")?;

        let allow_raw: Vec<PathBuf> = if self.allow_dirs.is_empty() {
            env_list(&env, "BORIS_ALLOW_DIRS")
                .into_iter()
                .map(PathBuf::from)
                .collect()
        } else {
            self.allow_dirs
        };
        let mut allow_dirs = Vec::new();
        for dir in &allow_raw {
            // Relative allow dirs are taken from the working directory, like tool paths.
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                workdir.join(dir)
            };
            let canon = canonical_dir(&dir, "--allow-dir")?;
            if !allow_dirs.contains(&canon) {
                allow_dirs.push(canon);
            }
        }
        if allow_dirs.is_empty() {
            allow_dirs.push(workdir.clone());
        }

        let deny_patterns = if self.deny_dirs.is_empty() {
            env_list(&env, "BORIS_DENY_DIRS")
        } else {
            self.deny_dirs
        };
        for pattern in &deny_patterns {
            crate::scope::validate_deny_pattern(pattern).map_err(|e| {
                ConfigError(format!("invalid value {pattern:?} for --deny-dir: {e}"))
            })?;
        }

        let mut disabled_tools = if self.disable_tools.is_empty() {
            env_list(&env, "BORIS_DISABLE_TOOLS")
        } else {
            self.disable_tools
        };
        for name in &disabled_tools {
            if !KNOWN_TOOLS.contains(&name.as_str()) {
                return Err(ConfigError(format!(
                    "invalid value {name:?} for --disable-tools: valid tools are {}",
                    KNOWN_TOOLS.join(", ")
                )));
            }
        }
        if self.no_bash && !disabled_tools.iter().any(|t| t == "bash") {
            disabled_tools.push("bash".to_string());
        }

        let allowed_origins = if self.allowed_origins.is_empty() {
            env_list(&env, "BORIS_ALLOWED_ORIGINS")
        } else {
            self.allowed_origins
        };
        for origin in &allowed_origins {
            if origin != "null" && !origin.contains("://") {
                return Err(ConfigError(format!(
                    "invalid value {origin:?} for --allowed-origin: an origin has a scheme, \
                     e.g. https://app.example.com or http://devbox:*"
                )));
            }
        }
        let allowed_hosts = if self.allowed_hosts.is_empty() {
            env_list(&env, "BORIS_ALLOWED_HOSTS")
        } else {
            self.allowed_hosts
        };

        if let Some(token) = &self.token
            && token.trim().is_empty()
        {
            return Err(ConfigError(
                "invalid value for --token: the token must not be empty".to_string(),
            ));
        }

        Ok(Config {
            transport: self.transport,
            host: self.host,
            port: self.port,
            workdir,
            default_timeout: Duration::from_secs(self.timeout),
            allow_dirs,
            deny_patterns,
            disabled_tools,
            max_file_size: self.max_file_size,
            anthropic_compat: self.anthropic_compat,
            token: self.token,
            generate_token: self.generate_token,
            allowed_origins,
            allowed_hosts,
            background_task_timeout: (self.background_task_timeout > 0)
                .then(|| Duration::from_secs(self.background_task_timeout)),
            require_view_before_edit: self.require_view_before_edit,
            bash_profile: self.bash_profile,
            session_idle_timeout: Duration::from_secs(self.session_idle_timeout),
            log_level: self.log_level,
            log_format: self.log_format,
        })
    }
}

impl Config {
    pub fn tool_enabled(&self, name: &str) -> bool {
        !self.disabled_tools.iter().any(|t| t == name)
    }
}

fn canonical_dir(dir: &Path, flag: &str) -> Result<PathBuf, ConfigError> {
    let canon = std::fs::canonicalize(dir).map_err(|e| {
        ConfigError(format!(
            "invalid value {:?} for {flag}: {}",
            dir.display().to_string(),
            match e.kind() {
                std::io::ErrorKind::NotFound => "no such directory".to_string(),
                _ => e.to_string(),
            }
        ))
    })?;
    if !canon.is_dir() {
        return Err(ConfigError(format!(
            "invalid value {:?} for {flag}: not a directory",
            dir.display().to_string()
        )));
    }
    Ok(canon)
}

fn env_list(env: &impl Fn(&str) -> Option<String>, name: &str) -> Vec<String> {
    env(name).map(|v| split_env_list(&v)).unwrap_or_default()
}

/// Splits a comma-separated env list. Commas inside `{…}` (glob alternations) do not
/// split; surrounding whitespace is trimmed and empty items dropped.
pub fn split_env_list(value: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for ch in value.chars() {
        match ch {
            '{' => {
                depth += 1;
                current.push(ch);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                current.push(ch);
            }
            ',' if depth == 0 => items.push(std::mem::take(&mut current)),
            _ => current.push(ch),
        }
    }
    items.push(current);
    items
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Parses `10MB`, `512KB`, `1GB` (binary multiples, case-insensitive) or plain bytes.
pub fn parse_size(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let upper = v.to_ascii_uppercase();
    let (digits, unit) = match upper.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => (&upper[..at], &upper[at..]),
        None => (upper.as_str(), ""),
    };
    let multiplier: u64 = match unit {
        "" | "B" => 1,
        "KB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        _ => return Err(size_error(value)),
    };
    let n: u64 = digits.parse().map_err(|_| size_error(value))?;
    let bytes = n.checked_mul(multiplier).ok_or_else(|| size_error(value))?;
    if bytes == 0 {
        return Err(format!("{value:?} is zero; the size must be positive"));
    }
    Ok(bytes)
}

fn size_error(value: &str) -> String {
    format!("{value:?} is not a size; use plain bytes or a number with KB, MB or GB (e.g. 10MB)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_lists_split_outside_braces_only() {
        assert_eq!(split_env_list("/src,/tests"), vec!["/src", "/tests"]);
        assert_eq!(
            split_env_list("*.{pem,key}, .env ,,"),
            vec!["*.{pem,key}", ".env"]
        );
        assert!(split_env_list("").is_empty());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10MB"), Ok(10 << 20));
        assert_eq!(parse_size("512kb"), Ok(512 << 10));
        assert_eq!(parse_size("1GB"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("10 MB").is_err());
        assert!(parse_size("ten").is_err());
        assert!(parse_size("10TB").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("99999999999999999999GB").is_err());
    }

    proptest::proptest! {
        #[test]
        fn splitting_never_loses_a_brace_group(items in proptest::collection::vec("[a-z.*]{1,6}(\\{[a-z]{1,3},[a-z]{1,3}\\})?", 1..6)) {
            let joined = items.join(",");
            proptest::prop_assert_eq!(split_env_list(&joined), items);
        }
    }
}
