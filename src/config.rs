//! Command-line flags, their `BORIS_*` environment twins, and validation (seed 003's
//! flag table plus DESIGN §4).
//!
//! A flag beats its env var. List flags are repeatable and never split on commas; their
//! env twins are comma-separated, except that a comma inside `{…}` does not split (so a
//! deny pattern like `*.{pem,key}` survives). clap's own `env` support would split the
//! repeated flags too, so list env vars are read here by hand.

use crate::tool_name::ToolName;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
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

/// Which tool shapes the server registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolProfile {
    /// Boris's own: view, str_replace, create_file, bash, grep, glob, task_output, task_stop.
    Default,
    /// Anthropic's text-editor tool (str_replace_editor) instead of the split file tools.
    AnthropicCompat,
    /// Claude Code's built-in tools: Bash, Read, Edit, Write, NotebookEdit, Grep, Glob,
    /// TaskOutput, TaskStop.
    ClaudeCode,
    /// Gemini CLI's tools: read_file, read_many_files, list_directory, write_file,
    /// replace, run_shell_command, glob, grep_search.
    GeminiCli,
    /// Codex's read, list and search tools: read_file, list_dir, grep_files.
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

/// What an edit result says of its language server's diagnostics (issue 20 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiagnosticsAfterEdit {
    Off,
    Errors,
    All,
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
    pub max_file_size: u64,
    /// `--tool-profile anthropic-compat` (or `--anthropic-compat`).
    pub anthropic_compat: bool,
    pub tool_profile: ToolProfile,
    pub token: Option<String>,
    pub generate_token: bool,
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

impl Cli {
    /// Validates the parsed flags against the filesystem and fills list flags from their
    /// env twins. `env` is injected so tests need not touch the process environment.
    pub fn into_config(self, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let (workdir_raw, workdir_name) = match (&self.workdir, env("BORIS_WORKDIR")) {
            (Some(dir), _) => (Some(dir.clone()), "--workdir"),
            (None, Some(dir)) if !dir.is_empty() => (Some(PathBuf::from(dir)), "BORIS_WORKDIR"),
            (None, _) => (None, "--workdir"),
        };
        let workdir = canonical_dir(
            workdir_raw.as_deref().unwrap_or(Path::new(".")),
            workdir_name,
        )?;

        let (allow_raw, allow_name) = if self.allow_dirs.is_empty() {
            let from_env: Vec<PathBuf> = env_list(&env, "BORIS_ALLOW_DIRS")
                .into_iter()
                .map(PathBuf::from)
                .collect();
            (from_env, "BORIS_ALLOW_DIRS")
        } else {
            (self.allow_dirs, "--allow-dir")
        };
        let mut warnings = Vec::new();
        if workdir_raw.is_none() && allow_raw.is_empty() {
            // A desktop client may start its servers in /: without a word from the user,
            // that would hand the agent the whole disk.
            if workdir == Path::new("/") {
                return Err(ConfigError(
                    "refusing to serve the whole disk: started in / with no --workdir or \
                     --allow-dir; pass --workdir /path/to/project (or --allow-dir / to mean it)"
                        .to_string(),
                ));
            }
            if let Some(home) = env("HOME").filter(|h| !h.is_empty())
                && std::fs::canonicalize(&home).is_ok_and(|home| home == workdir)
            {
                warnings.push(format!(
                    "started in the home directory {} with no --workdir or --allow-dir: \
                     every file under it is in reach; pass --workdir /path/to/project to narrow it",
                    workdir.display()
                ));
            }
        }
        let mut allow_dirs = Vec::new();
        for dir in &allow_raw {
            // Relative allow dirs are taken from the working directory, like tool paths.
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                workdir.join(dir)
            };
            let canon = canonical_dir(&dir, allow_name)?;
            if !allow_dirs.contains(&canon) {
                allow_dirs.push(canon);
            }
        }
        if allow_dirs.is_empty() {
            allow_dirs.push(workdir.clone());
        }

        let (deny_patterns, deny_name) =
            list_or_env(self.deny_dirs, &env, "--deny-dir", "BORIS_DENY_DIRS");
        for pattern in &deny_patterns {
            crate::scope::validate_deny_pattern(pattern).map_err(|e| {
                ConfigError(format!("invalid value {pattern:?} for {deny_name}: {e}"))
            })?;
        }

        let (mut disabled_tools, disable_name) = list_or_env(
            self.disable_tools,
            &env,
            "--disable-tools",
            "BORIS_DISABLE_TOOLS",
        );
        for name in &disabled_tools {
            if ToolName::parse(name).is_none() {
                let known = ToolName::names();
                return Err(ConfigError(format!(
                    "invalid value {name:?} for {disable_name}: valid tools are {}",
                    known.join(", ")
                )));
            }
        }
        if self.no_bash && !disabled_tools.iter().any(|t| t == "bash") {
            disabled_tools.push("bash".to_string());
        }

        let (allowed_origins, origin_name) = list_or_env(
            self.allowed_origins,
            &env,
            "--allowed-origin",
            "BORIS_ALLOWED_ORIGINS",
        );
        for origin in &allowed_origins {
            if origin != "null" && !origin.contains("://") {
                return Err(ConfigError(format!(
                    "invalid value {origin:?} for {origin_name}: an origin has a scheme, \
                     e.g. https://app.example.com or http://devbox:*"
                )));
            }
        }
        let (allowed_hosts, _) = list_or_env(
            self.allowed_hosts,
            &env,
            "--allowed-host",
            "BORIS_ALLOWED_HOSTS",
        );

        let (env_entries, env_name) = list_or_env(self.env, &env, "--env", "BORIS_ENV");
        let mut command_env = Vec::new();
        for entry in &env_entries {
            let (key, value) = entry.split_once('=').unwrap_or((entry, ""));
            let valid_key = !key.is_empty()
                && !key.starts_with(|c: char| c.is_ascii_digit())
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !entry.contains('=') || !valid_key {
                return Err(ConfigError(format!(
                    "invalid value {entry:?} for {env_name}: expected KEY=VALUE with KEY made \
                     of letters, digits and _ (not starting with a digit)"
                )));
            }
            if key == "BORIS_TOKEN" {
                return Err(ConfigError(format!(
                    "invalid value for {env_name}: BORIS_TOKEN is never passed to commands"
                )));
            }
            command_env.push((key.to_string(), value.to_string()));
        }

        let tool_profile = match (self.anthropic_compat, self.tool_profile) {
            (false, p) => p,
            (true, ToolProfile::Default | ToolProfile::AnthropicCompat) => {
                ToolProfile::AnthropicCompat
            }
            (true, other) => {
                let name = |id: &str, flag: &str, var: &str| {
                    if self.from_env.iter().any(|x| x == id) {
                        var.to_string()
                    } else {
                        flag.to_string()
                    }
                };
                return Err(ConfigError(format!(
                    "{} conflicts with {} {}: pick one tool profile",
                    name(
                        "anthropic_compat",
                        "--anthropic-compat",
                        "BORIS_ANTHROPIC_COMPAT"
                    ),
                    name("tool_profile", "--tool-profile", "BORIS_TOOL_PROFILE"),
                    other
                        .to_possible_value()
                        .map(|v| v.get_name().to_string())
                        .unwrap_or_default()
                )));
            }
        };

        let mut writable = allow_dirs.clone();
        let (write_raw, write_name) = list_or_env(
            self.sandbox_write
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            &env,
            "--sandbox-write",
            "BORIS_SANDBOX_WRITE",
        );
        for dir in write_raw {
            let canon = canonical_dir(&workdir.join(dir), write_name)?;
            if !writable.contains(&canon) {
                writable.push(canon);
            }
        }
        let (read_raw, read_name) = list_or_env(
            self.sandbox_read
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            &env,
            "--sandbox-read",
            "BORIS_SANDBOX_READ",
        );
        let mut readable = Vec::new();
        for dir in read_raw {
            readable.push(canonical_dir(&workdir.join(dir), read_name)?);
        }
        let policy = crate::sandbox::Policy {
            write: writable,
            read: readable,
            deny_patterns: deny_patterns.clone(),
            network: self.sandbox_network == OnOff::On,
            protect_git: !self.sandbox_allow_git_config,
        };
        let support = if self.sandbox == crate::sandbox::Mode::Off {
            crate::sandbox::Support::default()
        } else {
            crate::sandbox::Support::probe()
        };
        let (sandbox, sandbox_warning) =
            crate::sandbox::Sandbox::new(self.sandbox, support, policy).map_err(ConfigError)?;
        warnings.extend(sandbox_warning);

        let (lsp_raw, lsp_name) = list_or_env(self.lsp, &env, "--lsp", "BORIS_LSP");
        let mut overrides = Vec::new();
        for entry in &lsp_raw {
            overrides.push(
                crate::lsp::servers::parse_override(entry)
                    .map_err(|e| ConfigError(format!("invalid value for {lsp_name}: {e}")))?,
            );
        }
        let languages = crate::lsp::servers::table(&overrides);

        if let Some(token) = &self.token
            && token.trim().is_empty()
        {
            let name = if self.from_env.iter().any(|id| id == "token") {
                "BORIS_TOKEN"
            } else {
                "--token"
            };
            return Err(ConfigError(format!(
                "invalid value for {name}: the token must not be empty"
            )));
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
            anthropic_compat: tool_profile == ToolProfile::AnthropicCompat,
            tool_profile,
            token: self.token,
            generate_token: self.generate_token,
            allowed_origins,
            allowed_hosts,
            env: command_env,
            hand_off_after: (self.hand_off_after > 0)
                .then(|| Duration::from_secs(self.hand_off_after)),
            task_after: self.task_after.0,
            background_task_timeout: (self.background_task_timeout > 0)
                .then(|| Duration::from_secs(self.background_task_timeout)),
            terminal_max_sessions: self.terminal_max_sessions as usize,
            terminal_idle_timeout: (self.terminal_idle_timeout > 0)
                .then(|| Duration::from_secs(self.terminal_idle_timeout)),
            require_view_before_edit: self.require_view_before_edit,
            bash_profile: self.bash_profile,
            session_idle_timeout: Duration::from_secs(self.session_idle_timeout),
            log_level: self.log_level,
            log_format: self.log_format,
            sandbox,
            languages,
            diagnostics_after_edit: self.diagnostics_after_edit,
            diagnostics_wait: self.diagnostics_wait,
            lsp_timeout: self.lsp_timeout,
            warnings,
        })
    }

    /// Parses `args` (the first is the program name) like `Cli::parse`, remembering which
    /// values came from BORIS_* variables. A bad value clap rejects is reported under the
    /// variable's name when that is where it came from: `Err` holds the rendered message
    /// and the exit code (`--help` and `--version` are `Err` too, with code 0).
    pub fn parse_from_env(
        args: Vec<OsString>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Cli, (String, i32)> {
        let matches = match Cli::command().try_get_matches_from(&args) {
            Ok(m) => m,
            Err(e) => return Err(render_clap_error(&e, &args, env)),
        };
        let mut cli = match Cli::from_arg_matches(&matches) {
            Ok(c) => c,
            Err(e) => return Err(render_clap_error(&e, &args, env)),
        };
        cli.from_env = matches
            .ids()
            .filter(|id| {
                matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::EnvVariable)
            })
            .map(|id| id.as_str().to_string())
            .collect();
        Ok(cli)
    }
}

/// clap's message for `e`, with `for '--flag <VALUE>'` turned into
/// `for BORIS_FLAG (the env twin of '--flag <VALUE>')` when the bad value came from the
/// variable: the flag is not on the command line and the variable is set.
fn render_clap_error(
    e: &clap::Error,
    args: &[OsString],
    env: impl Fn(&str) -> Option<String>,
) -> (String, i32) {
    use clap::error::{ContextKind, ContextValue};
    let rendered = e.render().to_string();
    let code = e.exit_code();
    let Some(ContextValue::String(invalid_arg)) = e.get(ContextKind::InvalidArg) else {
        return (rendered, code);
    };
    let Some(long) = invalid_arg
        .strip_prefix("--")
        .and_then(|rest| rest.split([' ', '=']).next())
    else {
        return (rendered, code);
    };
    let command = Cli::command();
    let Some(var) = command
        .get_arguments()
        .find(|a| a.get_long() == Some(long))
        .and_then(|a| a.get_env())
        .and_then(|v| v.to_str())
    else {
        return (rendered, code);
    };
    let flag = format!("--{long}");
    let on_command_line = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .any(|a| a == flag || a.starts_with(&format!("{flag}=")));
    if on_command_line || env(var).is_none() {
        return (rendered, code);
    }
    let quoted = format!("'{invalid_arg}'");
    let named = rendered.replacen(&quoted, &format!("{var} (the env twin of {quoted})"), 1);
    (named, code)
}

/// A repeatable flag's values, or else its env twin's; with the name to put in an error.
fn list_or_env(
    values: Vec<String>,
    env: &impl Fn(&str) -> Option<String>,
    flag: &'static str,
    var: &'static str,
) -> (Vec<String>, &'static str) {
    if values.is_empty() {
        (env_list(env, var), var)
    } else {
        (values, flag)
    }
}

impl Config {
    /// Whether `--disable-tools` left `tool` on. Another contract's tool is off when it
    /// or the Boris tool it stands for is named (`Bash` or `bash`, `run_shell_command`
    /// or `bash`).
    pub fn tool_enabled(&self, tool: ToolName) -> bool {
        let named = |t: ToolName| self.disabled_tools.iter().any(|d| d == t.as_str());
        !(named(tool) || tool.boris_twin().is_some_and(named))
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
    fn task_after_values() {
        let secs = |s: f64| Ok(TaskAfter(Some(Duration::from_secs_f64(s))));
        assert_eq!(parse_task_after("1"), secs(1.0));
        assert_eq!(parse_task_after("0"), secs(0.0));
        assert_eq!(parse_task_after(" 2.5 "), secs(2.5));
        assert_eq!(parse_task_after("OFF"), Ok(TaskAfter(None)));
        for bad in ["", "-1", "soon", "NaN", "inf", "86401"] {
            assert!(parse_task_after(bad).is_err(), "{bad}");
        }
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

/// Parses a number of seconds (decimals allowed, at most an hour).
pub fn parse_seconds(value: &str) -> Result<Duration, String> {
    match value.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.0..=3600.0).contains(&secs) => {
            Ok(Duration::from_secs_f64(secs))
        }
        _ => Err(format!(
            "{value:?} is not a number of seconds (0 to 3600, decimals allowed)"
        )),
    }
}

/// `--task-after`: a delay, or `None` for `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskAfter(pub Option<Duration>);

/// Parses `--task-after`: seconds (decimals allowed, at most a day) or `off`.
pub fn parse_task_after(value: &str) -> Result<TaskAfter, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("off") {
        return Ok(TaskAfter(None));
    }
    match v.parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.0..=86_400.0).contains(&secs) => {
            Ok(TaskAfter(Some(Duration::from_secs_f64(secs))))
        }
        _ => Err(format!(
            "{value:?} is not a number of seconds (0 to 86400, decimals allowed) or off"
        )),
    }
}
