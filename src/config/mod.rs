//! Command-line flags, their `BORIS_*` environment twins, and validation (seed 003's
//! flag table plus DESIGN §4).
//!
//! A flag beats its env var. List flags are repeatable and never split on commas; their
//! env twins are comma-separated, except that a comma inside `{…}` does not split (so a
//! deny pattern like `*.{pem,key}` survives). clap's own `env` support would split the
//! repeated flags too, so list env vars are read here by hand.

mod auth;
mod http_limits;
pub mod oauth;
pub mod origin;
mod validate;
mod values;

pub use auth::{Auth, AuthArgs, AuthMode};
pub use http_limits::HttpLimits;
pub use values::is_loopback;

pub use values::{TaskAfter, parse_seconds, parse_size, parse_task_after, split_env_list};

use crate::lsp::after_edit::DiagnosticsAfterEdit;
use crate::tool_name::{ToolGroup, ToolName};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

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

/// Which tool shapes the server registers. Its `--help` lists each profile's tools from
/// the tool table (`tools::catalogue` implements `ValueEnum` for it), so the list cannot
/// go stale as tools are added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolProfile {
    /// Boris's own tools.
    Default,
    /// Anthropic's text-editor tool (str_replace_editor) instead of the split file tools.
    AnthropicCompat,
    /// Claude Code's built-in tools.
    ClaudeCode,
    /// Gemini CLI's tools.
    GeminiCli,
    /// Codex's tools.
    Codex,
}

impl ToolProfile {
    /// The family of tools the profile offers.
    pub fn family(self) -> crate::tool_name::Family {
        use crate::tool_name::Family;
        match self {
            ToolProfile::Default | ToolProfile::AnthropicCompat => Family::Boris,
            ToolProfile::ClaudeCode => Family::ClaudeCode,
            ToolProfile::GeminiCli => Family::GeminiCli,
            ToolProfile::Codex => Family::Codex,
        }
    }

    /// What the profile is, before its tool list.
    pub fn summary(self) -> &'static str {
        match self {
            ToolProfile::Default => "Boris's own tools",
            ToolProfile::AnthropicCompat => {
                "Anthropic's text-editor tool instead of the split file tools"
            }
            ToolProfile::ClaudeCode => "Claude Code's built-in tools",
            ToolProfile::GeminiCli => "Gemini CLI's tools",
            ToolProfile::Codex => "Codex's tools",
        }
    }

    /// Its `--tool-profile` value.
    pub fn name(self) -> &'static str {
        match self {
            ToolProfile::Default => "default",
            ToolProfile::AnthropicCompat => "anthropic-compat",
            ToolProfile::ClaudeCode => "claude-code",
            ToolProfile::GeminiCli => "gemini-cli",
            ToolProfile::Codex => "codex",
        }
    }
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

/// `boris --version`: the crate's version, then ` (probe-simulation)` in a build that
/// honours `BORIS_SANDBOX_PROBE` (the tests' build; `requires: probe-simulation` in a
/// spec case reads it).
pub const VERSION: &str = if cfg!(feature = "probe-simulation") {
    concat!(env!("CARGO_PKG_VERSION"), " (probe-simulation)")
} else {
    env!("CARGO_PKG_VERSION")
};

/// The raw command line, as clap parses it. [`Cli::into_config`] validates it.
#[derive(Debug, Parser)]
#[command(
    name = "boris",
    version = VERSION,
    // The last occurrence of a single-valued flag wins, so a wrapper (or a spec case)
    // can override flags given earlier on the command line.
    args_override_self = true,
    // `boris completions bash` and `boris man` are subcommands; the server itself takes
    // only flags, so a flag next to a subcommand is a mistake, not an override.
    args_conflicts_with_subcommands = true,
    about = "Coding tools for AI agents over MCP: shell, view, edit, create, search.",
    after_help = "Every flag has a BORIS_* environment twin; a flag beats its env var. \
                  List env vars are comma-separated (a comma inside {…} does not split)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Validate every flag and BORIS_* variable, print a one-line summary and exit
    /// (0 when the server would start, 2 with the usual error line when not).
    #[arg(long)]
    pub check_config: bool,

    /// Transport: http (streamable HTTP at /mcp) or stdio (newline-delimited JSON-RPC).
    #[arg(long, env = "BORIS_TRANSPORT", value_enum, default_value = "http")]
    pub transport: Transport,

    /// HTTP bind address (containers pass 0.0.0.0).
    #[arg(long, env = "BORIS_HOST", default_value = "127.0.0.1")]
    pub host: String,

    /// HTTP listen port; 0 picks a free port (the bound address is logged).
    #[arg(long, env = "BORIS_PORT", default_value_t = 8080)]
    pub port: u16,

    /// Initial working directory of every session [default: the start directory; without
    /// --workdir or --allow-dir Boris refuses to start in /]. Env: BORIS_WORKDIR.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,

    /// Default bash timeout in seconds (the tool's `timeout` parameter is in milliseconds).
    #[arg(long, env = "BORIS_TIMEOUT", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,

    /// A directory the file tools may touch (repeatable). Default: the working directory.
    /// `--allow-dir=/` allows everything. Env: BORIS_ALLOW_DIRS (comma-separated).
    #[arg(long = "allow-dir", value_name = "DIR")]
    pub allow_dirs: Vec<PathBuf>,

    /// A denied directory or glob pattern (repeatable). Without a leading `/` it matches
    /// at any depth (`.env` = `**/.env`); a leading `~` is HOME. Deny beats allow.
    /// Env: BORIS_DENY_DIRS.
    #[arg(long = "deny-dir", value_name = "PATTERN")]
    pub deny_dirs: Vec<String>,

    /// Do not register the bash tool (same as --disable-tools bash).
    #[arg(long, env = "BORIS_NO_BASH", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub no_bash: bool,

    /// Tool names not to register (repeatable). Env: BORIS_DISABLE_TOOLS (comma-separated).
    #[arg(long = "disable-tools", value_name = "TOOL")]
    pub disable_tools: Vec<String>,

    /// Tool groups to serve, comma-separated: core (read, edit, write, search, the shell),
    /// patch (apply_patch), terminal (terminal_*), code (language-server tools; those
    /// needing a server are listed while one is installed), tasks (task_output, task_stop,
    /// beside the shell only). A group the profile lacks adds nothing; --disable-tools and
    /// --no-bash then remove single tools. Default: all.
    #[arg(
        long = "tools",
        env = "BORIS_TOOLS",
        value_name = "GROUP,…",
        value_enum,
        value_delimiter = ',',
        num_args = 1..,
        default_value = "core,patch,terminal,code,tasks"
    )]
    pub tool_groups: Vec<ToolGroup>,

    /// Largest file view and create_file handle: 10MB, 512KB, 1GB or plain bytes.
    #[arg(long, env = "BORIS_MAX_FILE_SIZE", default_value = "10MB", value_parser = parse_size)]
    pub max_file_size: u64,

    /// The tool shapes: default (Boris's own), anthropic-compat (the Anthropic
    /// text-editor tool), claude-code, gemini-cli or codex (those clients' tool names,
    /// parameters and result shapes).
    #[arg(
        long,
        env = "BORIS_TOOL_PROFILE",
        value_enum,
        default_value = "default"
    )]
    pub tool_profile: ToolProfile,

    /// Same as --tool-profile anthropic-compat: one str_replace_editor instead of
    /// view/str_replace/create_file.
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

    /// An environment variable for every command, `KEY=VALUE` (repeatable); it wins over
    /// the non-interactive defaults (GIT_EDITOR=false, PAGER=cat, TERM=dumb, …).
    /// Env: BORIS_ENV (comma-separated).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,

    /// Generate a random bearer token and print it on stderr.
    #[arg(long, env = "BORIS_GENERATE_TOKEN", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub generate_token: bool,

    /// How HTTP clients authenticate (issue 30 §1).
    #[command(flatten)]
    pub auth: AuthArgs,

    /// Seconds after which a foreground bash call still running is handed off to a
    /// background task (its answer: the output so far and the task_id), 0 = never. For
    /// clients that give up on a call after 60 s, 45 is a good value.
    #[arg(
        long,
        env = "BORIS_HAND_OFF_AFTER",
        value_name = "SECONDS",
        default_value_t = 0
    )]
    pub hand_off_after: u64,

    /// For clients that declare the MCP tasks extension: seconds a bash or grep call may
    /// run before it becomes a task (the call then answers with the task, which the
    /// client polls with tasks/get); calls that end sooner answer as usual. Decimals
    /// allowed; 0 = every such call is a task at once; off = no tasks.
    #[arg(
        long,
        env = "BORIS_TASK_AFTER",
        value_name = "SECONDS|off",
        default_value = "1",
        value_parser = parse_task_after
    )]
    pub task_after: TaskAfter,

    /// Seconds after which a background task is terminated (0 = never).
    #[arg(long, env = "BORIS_BACKGROUND_TASK_TIMEOUT", default_value_t = 0)]
    pub background_task_timeout: u64,

    /// Terminal sessions (terminal_start) a session may have at once, running or ended
    /// and not yet read.
    #[arg(long, env = "BORIS_TERMINAL_MAX_SESSIONS", value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub terminal_max_sessions: u64,

    /// Seconds without a call after which a terminal session is stopped and forgotten
    /// (0 = never).
    #[arg(
        long,
        env = "BORIS_TERMINAL_IDLE_TIMEOUT",
        value_name = "SECONDS",
        default_value_t = 1800
    )]
    pub terminal_idle_timeout: u64,

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

    /// The HTTP transport's limits against hostile load (issue 27).
    #[command(flatten)]
    pub http_limits: HttpLimits,

    /// Log level (logs go to stderr).
    #[arg(long, env = "BORIS_LOG_LEVEL", value_enum, default_value = "info")]
    pub log_level: LogLevel,

    /// Log format: text for people, json for machines.
    #[arg(long, env = "BORIS_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Confine every command Boris starts (issue 18): writes only in the allowed
    /// directories, the session's TMPDIR and --sandbox-write; the deny list, the server
    /// and other sessions out of reach. auto: on wherever the kernel can (a warning where
    /// it cannot); on: refuse to start if it cannot; off: unconfined.
    #[arg(long, env = "BORIS_SANDBOX", value_enum, default_value = "auto")]
    pub sandbox: crate::sandbox::Mode,

    /// A directory sandboxed commands may write besides the allowed ones (repeatable),
    /// e.g. a package cache (~/.cargo, ~/.npm, ~/.cache). Env: BORIS_SANDBOX_WRITE.
    #[arg(long = "sandbox-write", value_name = "DIR")]
    pub sandbox_write: Vec<PathBuf>,

    /// Narrow what sandboxed commands may read to these directories (repeatable) plus
    /// the allowed and writable ones and the system's (/usr, /etc, …); default:
    /// everything but the deny list. Env: BORIS_SANDBOX_READ.
    #[arg(long = "sandbox-read", value_name = "DIR")]
    pub sandbox_read: Vec<PathBuf>,

    /// Whether sandboxed commands may open TCP connections and listen (off blocks TCP
    /// connect and bind; with user namespaces, every network but an unconfigured one).
    #[arg(long, env = "BORIS_SANDBOX_NETWORK", value_enum, default_value = "on")]
    pub sandbox_network: OnOff,

    /// Let sandboxed commands and the file tools write git's config and hooks (by default
    /// read-only: they run outside the sandbox the next time the user runs git).
    #[arg(long, env = "BORIS_SANDBOX_ALLOW_GIT_CONFIG", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false, num_args = 0..=1, default_missing_value = "true")]
    pub sandbox_allow_git_config: bool,

    /// A language server to use (repeatable): LANG=COMMAND replaces the built-in one
    /// (python, typescript, go, rust, c) or turns it off (LANG=off); NAME:EXT[:EXT…]=COMMAND
    /// adds a language by its file extensions. Env: BORIS_LSP (comma-separated).
    #[arg(long = "lsp", value_name = "LANG=COMMAND")]
    pub lsp: Vec<String>,

    /// After an edit of a file a language server covers, end the result with the
    /// diagnostics the edit introduced: errors (default), all (warnings and hints too) or
    /// off (and start no server for edits or views).
    #[arg(
        long,
        env = "BORIS_DIAGNOSTICS_AFTER_EDIT",
        value_enum,
        default_value = "errors"
    )]
    pub diagnostics_after_edit: DiagnosticsAfterEdit,

    /// Seconds an edit waits at most for its language server's diagnostics (decimals
    /// allowed); past it the edit answers without them.
    #[arg(
        long,
        env = "BORIS_DIAGNOSTICS_WAIT",
        value_name = "SECONDS",
        default_value = "2",
        value_parser = parse_seconds
    )]
    pub diagnostics_wait: Duration,

    /// Seconds a code-intelligence call (definition, references, …) waits at most for its
    /// language server to start, index and answer; past it the call says the server is
    /// still indexing.
    #[arg(
        long,
        env = "BORIS_LSP_TIMEOUT",
        value_name = "SECONDS",
        default_value = "30",
        value_parser = parse_seconds
    )]
    pub lsp_timeout: Duration,

    /// Ids of the arguments whose value came from their BORIS_* variable (filled by
    /// [`Cli::parse_from_env`]), so an error can name the variable the user set.
    #[arg(skip)]
    pub from_env: Vec<String>,
}

/// A switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// What `boris <subcommand>` does instead of serving.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout: `boris man > boris.1`.
    Man,
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
    /// `--tools`: the groups served.
    pub tool_groups: Vec<ToolGroup>,
    pub max_file_size: u64,
    /// `--tool-profile` (`--anthropic-compat` is `anthropic-compat`).
    pub tool_profile: ToolProfile,
    pub token: Option<String>,
    pub generate_token: bool,
    /// `--auth` and `--token-header`, resolved.
    pub auth: Auth,
    pub allowed_origins: Vec<String>,
    pub allowed_hosts: Vec<String>,
    /// `--env` entries, in order.
    pub env: Vec<(String, String)>,
    pub background_task_timeout: Option<Duration>,
    /// `--terminal-max-sessions`.
    pub terminal_max_sessions: usize,
    /// `--terminal-idle-timeout`, when on.
    pub terminal_idle_timeout: Option<Duration>,
    /// `--hand-off-after`, when on.
    pub hand_off_after: Option<Duration>,
    /// `--task-after`: how long a task-eligible call of a tasks client runs before it
    /// becomes an MCP task; `None` when tasks are off.
    pub task_after: Option<Duration>,
    pub require_view_before_edit: ViewBeforeEdit,
    pub bash_profile: BashProfile,
    pub session_idle_timeout: Duration,
    pub http_limits: HttpLimits,
    pub log_level: LogLevel,
    pub log_format: LogFormat,
    /// The sandbox commands run in; `None`: unconfined (`--sandbox off`, or `auto` where
    /// the kernel cannot).
    pub sandbox: Option<crate::sandbox::Sandbox>,
    /// The language servers: the built-in table with `--lsp` applied (issue 20).
    pub languages: Vec<crate::lsp::servers::Language>,
    pub diagnostics_after_edit: DiagnosticsAfterEdit,
    pub diagnostics_wait: Duration,
    pub lsp_timeout: Duration,
    /// Things worth a warning at start (logged once logging is set up), e.g. serving the
    /// whole home directory because Boris was started there without --workdir.
    pub warnings: Vec<String>,
}

/// A configuration error: one line naming the flag and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Config {
    /// The anthropic-compat profile (`--tool-profile anthropic-compat` or
    /// `--anthropic-compat`): Claude's built-in tool contracts.
    pub fn anthropic_compat(&self) -> bool {
        self.tool_profile == ToolProfile::AnthropicCompat
    }

    /// Whether `--disable-tools` left `tool` on. Another contract's tool is off when it
    /// or the Boris tool it stands for is named (`Bash` or `bash`, `run_shell_command`
    /// or `bash`).
    pub fn tool_enabled(&self, tool: ToolName) -> bool {
        let named = |t: ToolName| self.disabled_tools.iter().any(|d| d == t.as_str());
        !(named(tool) || tool.boris_twin().is_some_and(named))
    }

    /// Whether `--tools` selected `tool`'s group.
    pub fn group_selected(&self, tool: ToolName) -> bool {
        self.tool_groups.contains(&tool.group())
    }
}
