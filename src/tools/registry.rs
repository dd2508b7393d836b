//! The tool table (issue 28 §1): one [`Row`] per [`ToolName`], carrying the profiles that
//! list the tool, its `tools/list` entry, its handler (blocking or async) and the words its
//! errors are given. The catalogue (what a server registers), the dispatcher and the
//! `--tool-profile` help are each a few lines over it. [`row`] is one exhaustive `match`:
//! a `ToolName` without a row does not compile.
//!
//! Adding a tool: a `ToolName` variant (`tool_name.rs`), a file with its schema and its
//! function, and its row here.

use super::anthropic as editor;
use super::boris::{
    apply_patch, bash, create, diagnostics, edit, glob, grep, navigate, pipe, rename, tasks,
    terminal, undo, view,
};
use super::context::{Call, Ctx};
use super::words::Words;
use super::{claude_code, codex, gemini_cli};
use crate::config::{BashProfile, Config, ToolProfile};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::tool_name::ToolName;
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// A tool that does blocking filesystem work: run on the blocking pool.
pub type Blocking = fn(&Ctx, Args, &CancellationToken) -> ToolResult<CallToolResult>;

/// A tool that waits on processes: run on the async workers.
pub type Async = for<'a> fn(&'a Ctx, Args, &'a Call) -> BoxFuture<'a, ToolResult<CallToolResult>>;

/// How a tool runs.
#[derive(Clone, Copy)]
pub enum Handler {
    Blocking(Blocking),
    Async(Async),
}

/// Whose words a tool's errors are in.
#[derive(Clone, Copy)]
pub enum Wording {
    /// Boris's own.
    Boris,
    /// The contract's, for every error (invalid arguments included).
    Contract(&'static Words),
    /// The contract's for what the tool answers; its invalid-argument errors keep serde's
    /// words (the outside profiles' shells always answered so).
    ContractAfterArguments(&'static Words),
    /// Boris's `apply_patch` beside another contract's tools: its view-before-edit errors,
    /// which quote no file content, in the serving profile's words ("Read it", not "view
    /// it").
    ProfileForViewErrors,
}

/// One tool: where it is listed, what it lists, how it runs and how it words errors.
#[derive(Clone, Copy)]
pub struct Row {
    /// The profiles whose `tools/list` has it (before `--disable-tools`, `--no-bash`,
    /// `--tools`).
    pub profiles: &'static [ToolProfile],
    /// Its `tools/list` entry under this configuration (before `trim_for_model`).
    pub schema: fn(&Config) -> Tool,
    pub handler: Handler,
    pub wording: Wording,
}

/// One call's arguments as the client sent them; `parse` makes them the tool's type.
pub struct Args {
    tool: ToolName,
    raw: JsonObject,
}

impl Args {
    pub fn new(tool: ToolName, raw: JsonObject) -> Self {
        Args { tool, raw }
    }

    /// The tool's arguments; any mismatch is `[INVALID_INPUT]`.
    pub fn parse<T: DeserializeOwned>(self) -> ToolResult<T> {
        parse(self.tool.as_str(), self.raw)
    }
}

use ToolProfile as P;
const BORIS: &[ToolProfile] = &[P::Default, P::AnthropicCompat];
const DEFAULT: &[ToolProfile] = &[P::Default];
const COMPAT: &[ToolProfile] = &[P::AnthropicCompat];
const CLAUDE: &[ToolProfile] = &[P::ClaudeCode];
const GEMINI: &[ToolProfile] = &[P::GeminiCli];
const CODEX: &[ToolProfile] = &[P::Codex];
/// Boris's `apply_patch` is offered beside every profile's own tools; Codex has its own.
const BESIDE_ALL: &[ToolProfile] = &[P::Default, P::AnthropicCompat, P::ClaudeCode, P::GeminiCli];

const CC: Wording = Wording::Contract(&claude_code::WORDS);
const GM: Wording = Wording::Contract(&gemini_cli::WORDS);
const CX: Wording = Wording::Contract(&codex::WORDS);
const GM_SHELL: Wording = Wording::ContractAfterArguments(&gemini_cli::WORDS);
const CX_SHELL: Wording = Wording::ContractAfterArguments(&codex::WORDS);

impl Row {
    fn blocking(
        profiles: &'static [ToolProfile],
        schema: fn(&Config) -> Tool,
        run: Blocking,
    ) -> Row {
        Row::new(profiles, schema, Handler::Blocking(run))
    }

    fn asynchronous(
        profiles: &'static [ToolProfile],
        schema: fn(&Config) -> Tool,
        run: Async,
    ) -> Row {
        Row::new(profiles, schema, Handler::Async(run))
    }

    fn new(profiles: &'static [ToolProfile], schema: fn(&Config) -> Tool, handler: Handler) -> Row {
        Row {
            profiles,
            schema,
            handler,
            wording: Wording::Boris,
        }
    }

    fn words(self, wording: Wording) -> Row {
        Row { wording, ..self }
    }
}

/// An async handler's body: the tool's future, boxed.
macro_rules! awaits {
    ($call:expr) => {
        Box::pin(async move { $call.await })
    };
}

/// The table: each tool's profiles, `tools/list` entry, handler and words. Laid out by
/// hand as a table (two lines a row), so rustfmt leaves it be.
#[rustfmt::skip]
pub fn row(tool: ToolName) -> Row {
    use ToolName::*;
    match tool {
        // Boris's own tools.
        Bash => Row::asynchronous(BORIS, bash_schema,
            |ctx, a, call| Box::pin(run_bash(ctx, a, call))),
        TaskOutput => Row::asynchronous(BORIS, task_output_schema,
            |ctx, a, _| awaits!(tasks::output(ctx, a.parse()?))),
        TaskStop => Row::asynchronous(BORIS, |_| tasks::stop_tool(),
            |ctx, a, _| awaits!(tasks::stop(ctx, a.parse()?))),
        View => Row::blocking(DEFAULT, |_| view::tool(),
            |ctx, a, _| view::run(ctx, a.parse()?, view::Svg::AsImage)),
        StrReplace => Row::blocking(DEFAULT, |_| edit::tool(),
            |ctx, a, _| edit::run(ctx, a.parse()?)),
        MultiEdit => Row::blocking(DEFAULT, |_| edit::multi_tool(),
            |ctx, a, _| edit::run_multi(ctx, a.parse()?)),
        CreateFile => Row::blocking(DEFAULT, |_| create::tool(),
            |ctx, a, _| create::run(ctx, a.parse()?)),
        UndoEdit => Row::blocking(DEFAULT, |_| undo::tool(),
            |ctx, a, _| undo::run(ctx, a.parse()?)),
        StrReplaceEditor => Row::blocking(COMPAT, |_| editor::tool(),
            |ctx, a, _| editor::run(ctx, a.parse()?)),
        Grep => Row::blocking(BORIS, |c| grep::tool(c.anthropic_compat()),
            |ctx, a, ct| grep::run(ctx, a.parse()?, ct)),
        Glob => Row::blocking(BORIS, |c| glob::tool(c.anthropic_compat()),
            |ctx, a, ct| glob::run(ctx, a.parse()?, ctx.shared.config.anthropic_compat(), ct)),
        TerminalStart => Row::asynchronous(DEFAULT, |_| terminal::start_tool(),
            |ctx, a, call| awaits!(terminal::start(ctx, a.parse()?, call))),
        TerminalWrite => Row::asynchronous(DEFAULT, |_| terminal::write_tool(),
            |ctx, a, call| awaits!(terminal::write(ctx, a.parse()?, call))),
        TerminalRead => Row::asynchronous(DEFAULT, |_| terminal::read_tool(),
            |ctx, a, call| awaits!(terminal::read(ctx, a.parse()?, call))),
        TerminalResize => Row::asynchronous(DEFAULT, |_| terminal::resize_tool(),
            |ctx, a, call| awaits!(terminal::resize(ctx, a.parse()?, call))),
        TerminalStop => Row::asynchronous(DEFAULT, |_| terminal::stop_tool(),
            |ctx, a, _| awaits!(terminal::stop(ctx, a.parse()?))),
        Diagnostics => Row::blocking(BORIS, |_| diagnostics::tool(),
            |ctx, a, ct| diagnostics::run(ctx, a.parse()?, ct)),
        Definition => Row::blocking(BORIS, |_| navigate::definition_tool(),
            |ctx, a, ct| navigate::definition(ctx, a.parse()?, ct)),
        References => Row::blocking(BORIS, |_| navigate::references_tool(),
            |ctx, a, ct| navigate::references(ctx, a.parse()?, ct)),
        Hover => Row::blocking(BORIS, |_| navigate::hover_tool(),
            |ctx, a, ct| navigate::hover(ctx, a.parse()?, ct)),
        Symbols => Row::blocking(BORIS, |_| navigate::symbols_tool(),
            |ctx, a, ct| navigate::symbols(ctx, a.parse()?, ct)),
        Rename => Row::blocking(BORIS, |_| rename::tool(),
            |ctx, a, ct| rename::run(ctx, a.parse()?, ct)),
        LanguageServers => Row::blocking(BORIS, |_| diagnostics::servers_tool(),
            |ctx, a, _| diagnostics::servers(ctx, a.parse()?)),
        ApplyPatch => Row::blocking(BESIDE_ALL, |_| apply_patch::tool(),
            |ctx, a, _| apply_patch::run(ctx, a.parse()?)).words(Wording::ProfileForViewErrors),
        // Claude Code's.
        CcBash => Row::asynchronous(CLAUDE, |_| claude_code::bash_tool(),
            |ctx, a, call| awaits!(bash::run(ctx, a.parse()?, call))),
        CcRead => Row::blocking(CLAUDE, |_| claude_code::read_tool(),
            |ctx, a, _| claude_code::read(ctx, a.parse()?)).words(CC),
        CcEdit => Row::blocking(CLAUDE, |_| claude_code::edit_tool(),
            |ctx, a, _| claude_code::edit(ctx, a.parse()?)).words(CC),
        CcMultiEdit => Row::blocking(CLAUDE, |_| claude_code::multi_edit_tool(),
            |ctx, a, _| claude_code::multi_edit(ctx, a.parse()?)).words(CC),
        CcWrite => Row::blocking(CLAUDE, |_| claude_code::write_tool(),
            |ctx, a, _| claude_code::write(ctx, a.parse()?)).words(CC),
        CcNotebookEdit => Row::blocking(CLAUDE, |_| claude_code::notebook_edit_tool(),
            |ctx, a, _| claude_code::notebook_edit(ctx, a.parse()?)).words(CC),
        CcGrep => Row::blocking(CLAUDE, |_| claude_code::grep_tool(),
            |ctx, a, ct| grep::run(ctx, a.parse()?, ct)),
        CcGlob => Row::blocking(CLAUDE, |_| claude_code::glob_tool(),
            |ctx, a, ct| glob::run(ctx, a.parse()?, true, ct)),
        CcTaskOutput => Row::asynchronous(CLAUDE, |_| claude_code::task_output_tool(),
            |ctx, a, _| awaits!(tasks::output(ctx, a.parse()?))),
        CcTaskStop => Row::asynchronous(CLAUDE, |_| claude_code::task_stop_tool(),
            |ctx, a, _| awaits!(tasks::stop(ctx, a.parse()?))),
        CcLsp => Row::blocking(CLAUDE, |_| claude_code::lsp::tool(),
            |ctx, a, ct| claude_code::lsp::run(ctx, a.parse()?, ct)),
        // Gemini CLI's.
        GmReadFile => Row::blocking(GEMINI, |_| gemini_cli::read_file_tool(),
            |ctx, a, _| gemini_cli::files::read_file(ctx, a.parse()?)).words(GM),
        GmReadManyFiles => Row::blocking(GEMINI, |_| gemini_cli::read_many_files_tool(),
            |ctx, a, ct| gemini_cli::files::read_many_files(ctx, a.parse()?, ct)).words(GM),
        GmListDirectory => Row::blocking(GEMINI, |_| gemini_cli::list_directory_tool(),
            |ctx, a, _| gemini_cli::files::list_directory(ctx, a.parse()?)).words(GM),
        GmWriteFile => Row::blocking(GEMINI, |_| gemini_cli::write_file_tool(),
            |ctx, a, _| gemini_cli::files::write_file(ctx, a.parse()?)).words(GM),
        GmReplace => Row::blocking(GEMINI, |_| gemini_cli::replace_tool(),
            |ctx, a, _| gemini_cli::files::replace(ctx, a.parse()?)).words(GM),
        GmShell => Row::asynchronous(GEMINI, |_| gemini_cli::shell_tool(),
            |ctx, a, call| awaits!(gemini_cli::shell::run(ctx, a.parse()?, call))).words(GM_SHELL),
        GmGlob => Row::blocking(GEMINI, |_| gemini_cli::glob_tool(),
            |ctx, a, ct| gemini_cli::search::glob(ctx, a.parse()?, ct)).words(GM),
        GmGrep => Row::blocking(GEMINI, |_| gemini_cli::grep_tool(),
            |ctx, a, ct| gemini_cli::search::grep_search(ctx, a.parse()?, ct)).words(GM),
        // Codex's.
        CxReadFile => Row::blocking(CODEX, |_| codex::read_file_tool(),
            |ctx, a, _| codex::read_file(ctx, a.parse()?)).words(CX),
        CxListDir => Row::blocking(CODEX, |_| codex::list_dir_tool(),
            |ctx, a, _| codex::list_dir(ctx, a.parse()?)).words(CX),
        CxGrepFiles => Row::blocking(CODEX, |_| codex::grep_files_tool(),
            |ctx, a, ct| codex::grep_files(ctx, a.parse()?, ct)).words(CX),
        CxExecCommand => Row::asynchronous(CODEX, |_| codex::exec_command_tool(),
            |ctx, a, call| awaits!(codex::exec_command(ctx, a.parse()?, call)))
            .words(CX_SHELL),
        CxWriteStdin => Row::asynchronous(CODEX, |_| codex::write_stdin_tool(),
            |ctx, a, call| awaits!(codex::write_stdin(ctx, a.parse()?, call))).words(CX_SHELL),
        CxApplyPatch => Row::blocking(CODEX, |_| apply_patch::codex_tool(),
            |ctx, a, _| apply_patch::run_codex(ctx, a.parse()?)).words(CX),
    }
}

/// `bash` is Boris's shell or, with `--bash-profile pipe`, the pipe profile's.
fn bash_schema(config: &Config) -> Tool {
    match config.bash_profile {
        BashProfile::Boris => bash::tool(),
        BashProfile::Pipe => pipe::tool(),
    }
}

async fn run_bash(ctx: &Ctx, args: Args, call: &Call) -> ToolResult<CallToolResult> {
    match ctx.shared.config.bash_profile {
        BashProfile::Boris => bash::run(ctx, args.parse()?, call).await,
        BashProfile::Pipe => pipe::run(ctx, args.parse()?, call).await,
    }
}

/// `task_output` mentions the terminal sessions where they are served.
fn task_output_schema(config: &Config) -> Tool {
    // The terminal tools come and go together, beside a shell (see `listed`).
    let terminals = config.tool_profile == P::Default
        && config.tool_enabled(ToolName::Bash)
        && config.tool_enabled(ToolName::TerminalStart)
        && config.group_selected(ToolName::TerminalStart);
    tasks::output_tool_with(terminals)
}

/// The profile's words, for a Boris tool offered beside its tools.
fn profile_words(profile: ToolProfile) -> Option<&'static Words> {
    match profile {
        P::ClaudeCode => Some(&claude_code::WORDS),
        P::GeminiCli => Some(&gemini_cli::WORDS),
        P::Default | P::AnthropicCompat | P::Codex => None,
    }
}

impl Wording {
    /// A tool's outcome in these words (`tool` names it in invalid-argument errors).
    pub fn apply(
        self,
        config: &Config,
        tool: ToolName,
        result: ToolResult<CallToolResult>,
    ) -> ToolResult<CallToolResult> {
        match self {
            Wording::Boris => result,
            Wording::Contract(words) => words.reword(result),
            Wording::ContractAfterArguments(words) => match result {
                Err(e) if is_argument_error(&e, tool) => Err(e),
                other => words.reword(other),
            },
            Wording::ProfileForViewErrors => match profile_words(config.tool_profile) {
                Some(words) => result.map_err(|e| match e.code {
                    ErrorCode::FileNotViewed | ErrorCode::FileChanged => {
                        e.map_message(|m| words.rephrase(m))
                    }
                    _ => e,
                }),
                None => result,
            },
        }
    }
}

/// An error [`parse`] gave for `tool`'s arguments.
fn is_argument_error(e: &ToolError, tool: ToolName) -> bool {
    e.code == ErrorCode::InvalidInput
        && e.message
            .strip_prefix(ARGUMENTS_ERROR)
            .and_then(|m| m.strip_prefix(tool.as_str()))
            .is_some_and(|m| m.starts_with(':'))
}

/// How [`parse`]'s errors begin (then the tool's name and `:`), which
/// [`is_argument_error`] recognises: one string, so the two cannot drift apart.
const ARGUMENTS_ERROR: &str = "invalid arguments for ";

/// Deserialises a tool's arguments; any mismatch is `[INVALID_INPUT]`.
/// The message names the argument at fault (`path: invalid type: integer `5`, expected
/// a string`), so an agent knows which one to fix.
pub fn parse<T: DeserializeOwned>(tool: &str, args: JsonObject) -> ToolResult<T> {
    serde_path_to_error::deserialize(serde_json::Value::Object(args)).map_err(|e| {
        let path = e.path().to_string();
        // serde quotes the offending value whole: cut it (issue 28 §7).
        let inner = crate::text::quote::cut_long_quotes(&e.into_inner().to_string());
        if path == "." {
            ToolError::invalid(format!("{ARGUMENTS_ERROR}{tool}: {inner}"))
        } else {
            ToolError::invalid(format!("{ARGUMENTS_ERROR}{tool}: {path}: {inner}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    fn config(flags: &[&str]) -> Config {
        use clap::Parser as _;
        let args = ["boris", "--workdir", env!("CARGO_MANIFEST_DIR")];
        crate::config::Cli::parse_from(args.iter().chain(flags))
            .into_config(|_| None)
            .expect("a valid configuration")
    }

    /// Each row lists what it is: its schema carries its own name, under every shape a
    /// configuration gives it.
    #[test]
    fn every_schema_is_named_as_its_row() {
        for flags in [
            &[][..],
            &["--tool-profile", "anthropic-compat"],
            &["--bash-profile", "pipe"],
        ] {
            let config = config(flags);
            for tool in ToolName::all() {
                assert_eq!((row(tool).schema)(&config).name, tool.as_str(), "{flags:?}");
            }
        }
    }

    /// A profile lists its own family's tools (and Boris's `apply_patch` beside them), no
    /// name twice, each found again by the name the dispatcher looks up.
    #[test]
    fn each_profile_lists_its_family_once_by_name() {
        for &profile in ToolProfile::value_variants() {
            let mut names = Vec::new();
            for tool in ToolName::all().filter(|&t| row(t).profiles.contains(&profile)) {
                assert!(
                    tool.family() == profile.family() || tool == ToolName::ApplyPatch,
                    "{profile:?} lists {tool:?}"
                );
                assert!(!names.contains(&tool.as_str()), "{profile:?}: {tool} twice");
                names.push(tool.as_str());
                assert_eq!(
                    ToolName::lookup(profile.family(), tool.as_str()),
                    Some(tool)
                );
            }
            assert!(!names.is_empty(), "{profile:?} lists nothing");
        }
        for tool in ToolName::all() {
            assert!(!row(tool).profiles.is_empty(), "{tool} is in no profile");
        }
    }

    /// The shells' argument errors keep serde's words; nothing else is taken for one.
    #[test]
    fn argument_errors_are_told_apart() {
        let parsed = Args::new(ToolName::GmShell, JsonObject::new());
        let Err(bad) = parsed.parse::<gemini_cli::shell::ShellArgs>() else {
            panic!("command is required");
        };
        assert!(
            is_argument_error(&bad, ToolName::GmShell),
            "{}",
            bad.message
        );
        assert!(!is_argument_error(&bad, ToolName::GmGlob));
        let own = ToolError::invalid("invalid arguments for run_shell_commander: x");
        assert!(!is_argument_error(&own, ToolName::GmShell));
        let config = config(&["--tool-profile", "gemini-cli"]);
        let unknown = ToolError::invalid("invalid arguments for run_shell_command: view");
        let kept = GM_SHELL.apply(&config, ToolName::GmShell, Err(unknown));
        assert!(kept.err().is_some_and(|e| e.message.ends_with(": view")));
        let answered = ToolError::invalid("view it first");
        let reworded = GM_SHELL.apply(&config, ToolName::GmShell, Err(answered));
        assert_eq!(
            reworded.err().map(|e| e.message),
            Some("read it with read_file first".to_string())
        );
    }

    /// No registered tool, in any profile, has a nullable or multi-typed parameter, or a
    /// `$ref` a client would have to resolve.
    #[test]
    fn every_tool_schema_is_plain() {
        fn walk(v: &serde_json::Value, at: &str) {
            if let Some(obj) = v.as_object() {
                assert!(!obj.get("type").is_some_and(|t| t.is_array()), "{at}: {v}");
                assert_ne!(obj.get("default"), Some(&serde_json::Value::Null), "{at}");
                for key in ["$ref", "$defs", "definitions"] {
                    assert!(!obj.contains_key(key), "{at}: {key} in {v}");
                }
                for (k, child) in obj {
                    walk(child, &format!("{at}.{k}"));
                }
            }
        }
        // Every row's schema, under each shape a configuration gives one (the anthropic-
        // compat grep and glob, the pipe profile's bash).
        let config = |flags: &[&str]| {
            use clap::Parser as _;
            let args = ["boris", "--workdir", env!("CARGO_MANIFEST_DIR")];
            crate::config::Cli::parse_from(args.iter().chain(flags))
                .into_config(|_| None)
                .expect("a valid configuration")
        };
        let configs = [
            config(&[]),
            config(&["--tool-profile", "anthropic-compat"]),
            config(&["--bash-profile", "pipe"]),
        ];
        for tool in configs
            .iter()
            .flat_map(|c| crate::tool_name::ToolName::all().map(move |t| (row(t).schema)(c)))
        {
            walk(
                &serde_json::Value::Object((*tool.input_schema).clone()),
                &tool.name,
            );
        }
    }
}
