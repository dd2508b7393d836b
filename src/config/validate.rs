//! From parsed flags to a [`Config`]: env twins filled in, directories made canonical,
//! every value checked against the filesystem, and clap's errors naming the env twin
//! when the bad value came from it.

use super::values::split_env_list;
use super::{Cli, Config, ConfigError, OnOff, ToolProfile};
use crate::tool_name::ToolName;
use clap::{CommandFactory, FromArgMatches, ValueEnum};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

impl Cli {
    /// Validates the parsed flags against the filesystem and fills list flags from their
    /// env twins. `env` is injected so tests need not touch the process environment.
    /// Each step checks one group of flags; they run in this order, so a command line
    /// with several bad values is told of the first.
    pub fn into_config(self, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let mut warnings = Vec::new();
        let (workdir, allow_dirs) = self.roots(&env, &mut warnings)?;
        let deny_patterns = self.deny_patterns(&env)?;
        let disabled_tools = self.disabled_tools(&env)?;
        let allowed_origins = self.allowed_origins(&env)?;
        let (allowed_hosts, _) = list_or_env(
            self.allowed_hosts.clone(),
            &env,
            "--allowed-host",
            "BORIS_ALLOWED_HOSTS",
        );
        let command_env = self.command_env(&env)?;
        let tool_profile = self.tool_profile()?;
        let sandbox = self.sandbox(&env, &workdir, &allow_dirs, &deny_patterns, &mut warnings)?;
        let languages = self.languages(&env)?;
        self.check_token()?;
        let mut auth_args = self.auth.clone();
        auth_args.oauth.client_secret_env =
            env(super::oauth::CLIENT_SECRET_ENV).map(super::oauth::Secret);
        let auth = super::auth::resolve(
            &auth_args,
            self.token.is_some() || self.generate_token,
            &self.host,
            self.transport == super::Transport::Http,
        )
        .map_err(ConfigError)?;

        Ok(Config {
            transport: self.transport,
            host: self.host,
            port: self.port,
            workdir,
            default_timeout: Duration::from_secs(self.timeout),
            allow_dirs,
            deny_patterns,
            disabled_tools,
            tool_groups: self.tool_groups,
            max_file_size: self.max_file_size,
            tool_profile,
            token: self.token,
            generate_token: self.generate_token,
            auth,
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
            http_limits: self.http_limits,
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

    /// The working directory and the allowed directories, canonical. Started in / with
    /// neither named, it refuses; in the home directory, it warns.
    fn roots(
        &self,
        env: &impl Fn(&str) -> Option<String>,
        warnings: &mut Vec<String>,
    ) -> Result<(PathBuf, Vec<PathBuf>), ConfigError> {
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
            let from_env: Vec<PathBuf> = env_list(env, "BORIS_ALLOW_DIRS")
                .into_iter()
                .map(PathBuf::from)
                .collect();
            (from_env, "BORIS_ALLOW_DIRS")
        } else {
            (self.allow_dirs.clone(), "--allow-dir")
        };
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
        Ok((workdir, allow_dirs))
    }

    /// `--deny-dir` patterns, each checked.
    fn deny_patterns(
        &self,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<String>, ConfigError> {
        let (given, deny_name) =
            list_or_env(self.deny_dirs.clone(), env, "--deny-dir", "BORIS_DENY_DIRS");
        let home = env("HOME").map(PathBuf::from);
        let mut deny_patterns = Vec::with_capacity(given.len());
        for pattern in &given {
            let invalid =
                |e: String| ConfigError(format!("invalid value {pattern:?} for {deny_name}: {e}"));
            let normal =
                crate::scope::normalize_deny_pattern(pattern, home.as_deref()).map_err(invalid)?;
            crate::scope::validate_deny_pattern(&normal).map_err(invalid)?;
            deny_patterns.push(normal);
        }
        Ok(deny_patterns)
    }

    /// `--disable-tools`, each a known tool, with `bash` added by `--no-bash`.
    fn disabled_tools(
        &self,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<String>, ConfigError> {
        let (mut disabled_tools, disable_name) = list_or_env(
            self.disable_tools.clone(),
            env,
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
        Ok(disabled_tools)
    }

    /// `--allowed-origin` entries, each `scheme://host[:port]`.
    fn allowed_origins(
        &self,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<String>, ConfigError> {
        let (allowed_origins, origin_name) = list_or_env(
            self.allowed_origins.clone(),
            env,
            "--allowed-origin",
            "BORIS_ALLOWED_ORIGINS",
        );
        for origin in &allowed_origins {
            if !super::origin::valid_origin_entry(origin) {
                return Err(ConfigError(format!(
                    "invalid value {origin:?} for {origin_name}: an origin is scheme://host[:port] \
                     and nothing else, e.g. https://app.example.com or http://devbox:*"
                )));
            }
        }
        Ok(allowed_origins)
    }

    /// `--env` entries as (key, value), each `KEY=VALUE` with a shell-variable key that
    /// is not `BORIS_TOKEN`.
    fn command_env(
        &self,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        let (env_entries, env_name) = list_or_env(self.env.clone(), env, "--env", "BORIS_ENV");
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
            if key == crate::secret_env::TOKEN {
                return Err(ConfigError(format!(
                    "invalid value for {env_name}: BORIS_TOKEN is never passed to commands"
                )));
            }
            command_env.push((key.to_string(), value.to_string()));
        }
        Ok(command_env)
    }

    /// `--tool-profile`, or `anthropic-compat` for `--anthropic-compat`, which conflicts
    /// with any other profile named.
    fn tool_profile(&self) -> Result<ToolProfile, ConfigError> {
        match (self.anthropic_compat, self.tool_profile) {
            (false, p) => Ok(p),
            (true, ToolProfile::Default | ToolProfile::AnthropicCompat) => {
                Ok(ToolProfile::AnthropicCompat)
            }
            (true, other) => Err(ConfigError(format!(
                "{} conflicts with {} {}: pick one tool profile",
                self.named(
                    "anthropic_compat",
                    "--anthropic-compat",
                    "BORIS_ANTHROPIC_COMPAT"
                ),
                self.named("tool_profile", "--tool-profile", "BORIS_TOOL_PROFILE"),
                other
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default()
            ))),
        }
    }

    /// The name to put in an error for argument `id`: its variable when the value came
    /// from there, else its flag.
    fn named(&self, id: &str, flag: &str, var: &str) -> String {
        if self.from_env.iter().any(|x| x == id) {
            var.to_string()
        } else {
            flag.to_string()
        }
    }

    /// The sandbox: its policy from the allowed directories, `--sandbox-write`,
    /// `--sandbox-read` and the deny patterns, and what this kernel supports (probed
    /// unless the sandbox is off). `None`: commands run unconfined, with the warning to log.
    fn sandbox(
        &self,
        env: &impl Fn(&str) -> Option<String>,
        workdir: &Path,
        allow_dirs: &[PathBuf],
        deny_patterns: &[String],
        warnings: &mut Vec<String>,
    ) -> Result<Option<crate::sandbox::Sandbox>, ConfigError> {
        let mut writable = allow_dirs.to_vec();
        let (write_raw, write_name) = list_or_env(
            self.sandbox_write
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            env,
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
            env,
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
            deny_patterns: deny_patterns.to_vec(),
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
        Ok(sandbox)
    }

    /// The language servers: the built-in table with the `--lsp` overrides applied.
    fn languages(
        &self,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Vec<crate::lsp::servers::Language>, ConfigError> {
        let (lsp_raw, lsp_name) = list_or_env(self.lsp.clone(), env, "--lsp", "BORIS_LSP");
        let mut overrides = Vec::new();
        for entry in &lsp_raw {
            overrides.push(
                crate::lsp::servers::parse_override(entry)
                    .map_err(|e| ConfigError(format!("invalid value for {lsp_name}: {e}")))?,
            );
        }
        Ok(crate::lsp::servers::table(&overrides))
    }

    /// A token given must not be empty.
    fn check_token(&self) -> Result<(), ConfigError> {
        match &self.token {
            Some(token) if token.trim().is_empty() => Err(ConfigError(format!(
                "invalid value for {}: the token must not be empty",
                self.named("token", "--token", crate::secret_env::TOKEN)
            ))),
            _ => Ok(()),
        }
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
