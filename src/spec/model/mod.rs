//! The YAML case format: serde types, validation and placeholder expansion.
//!
//! Every struct denies unknown fields, so a typo in a case is a load error, never a
//! silently skipped assertion. Steps and fixture entries are first read into a "raw"
//! struct with every key optional, then converted (`try_from`) into a clean enum; the
//! conversion checks that exactly one action key is present and that the other keys
//! make sense for it (the keys each kind takes are one table, `step_kind`). See
//! docs/spec-format.md for the user-facing description.
//!
//! - `files`: fixtures (`files:`, `write:`) and file checks (`check_files:`);
//! - `expect`: what a step expects of a response;
//! - `step`: the steps and their validation; `step_kind`: [`StepKind`], one table of
//!   the step kinds; `http_step`: the HTTP steps' shapes and their checks;
//! - `placeholders`: `{workdir}` and friends, expanded through a whole case;
//! - `escape`: the attack marker and the positive control of escape cases.

mod escape;
mod expect;
mod files;
mod http_step;
mod placeholders;
mod step;
mod step_kind;
#[cfg(test)]
mod tests;

pub use escape::{marker_failure, marker_in_request, marker_on_own_line};
pub use expect::*;
pub use files::*;
pub use http_step::*;
pub use placeholders::*;
pub use step::*;
pub use step_kind::{Needs, StepKey, StepKind};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::spec::vocabulary::Capability;

/// Default wait for any single response, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// One spec case (one YAML file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Where the file was loaded from (not part of the YAML).
    #[serde(skip)]
    pub path: PathBuf,
    /// Where the behaviour comes from (seed file and scenario, or "DESIGN §n").
    pub source: String,
    /// How the harness talks to the server: `stdio` (default) or `http`.
    #[serde(default)]
    pub transport: CaseTransport,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Extra server arguments (placeholders expanded), appended shell-quoted.
    #[serde(default)]
    pub args: Vec<String>,
    /// The one directory the server may touch (issue 13): relative to the workdir, or
    /// absolute. An adapter passes it by its `root_args` (Boris: `--allow-dir=…`) or by
    /// `{root}` in its `args`; without it, `{root}` is the workdir.
    #[serde(default)]
    pub root: Option<String>,
    /// Server flags for Boris only (adapters that claim the `boris` profile), e.g.
    /// `--require-view-before-edit=false`: unlike `args`, they leave the case portable.
    #[serde(default)]
    pub boris_args: Vec<String>,
    /// A public tool contract the case's `call:` steps are written in (`claude-code`:
    /// Claude Code's tool names and parameters): any adapter that offers the contract
    /// runs it, with the contract's own server flags (see `spec::adapter`).
    #[serde(default)]
    pub contract: Option<String>,
    /// Extra environment for the server (placeholders expanded).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Per-wait timeout for this case.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Snapshot the normalised transcript (cargo test only).
    #[serde(default)]
    pub golden: bool,
    /// `false`: no automatic initialize handshake.
    #[serde(default = "yes")]
    pub handshake: bool,
    /// Fixtures created in the workdir before the server starts.
    #[serde(default)]
    pub files: Vec<FileSpec>,
    /// The server must exit non-zero by itself; no steps are run.
    #[serde(default, deserialize_with = "present_or_default")]
    pub expect_startup_failure: Option<StartupFailure>,
    /// After the case, the server's stderr contains each of these.
    #[serde(default)]
    pub stderr_contains: Strings,
    /// After the case, the server's stderr contains none of these.
    #[serde(default)]
    pub stderr_not_contains: Strings,
    /// Required exit code (default 0 after stdin EOF; non-zero for startup failures).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Set by adapters that do not claim the `boris` profile: dying of a SIGTERM (the
    /// one the harness sends at the end of an HTTP case, or a `signal: TERM` step
    /// expecting exit 0) is as good as exiting 0 (Boris's own clean exit on SIGTERM is
    /// its profile's promise, not every server's).
    #[serde(skip)]
    pub sigterm_death_ok: bool,
    /// Set by adapters: a fault of how the server ends the case (it outlives stdin EOF,
    /// or leaves processes behind) fails the case. Otherwise it is set aside for the
    /// run's findings (`spec::findings`) and the case is judged on its subject.
    #[serde(skip)]
    pub strict_teardown: bool,
    /// Extra normalisation for the golden transcript.
    #[serde(default)]
    pub redact: Vec<Redaction>,
    /// What the case needs of the machine and the server (programs, kernel features,
    /// `probe-simulation`, …; see `spec::requires`): a missing one skips the case with
    /// its reason.
    #[serde(default)]
    pub requires: Strings,
    /// An escape case's marker: every step whose request contains it (the attack step)
    /// must answer with it more often than the request holds it, so the attack is seen
    /// to run (a refused preamble fails the case instead of passing it).
    #[serde(default)]
    pub attack_marker: Option<String>,
    /// What escaping looks like when nothing confines the server: the positive control
    /// run under `--sandbox=off` (`boris-spec run --control`; see [`Control`]).
    #[serde(default)]
    pub control: Option<Control>,
    /// Why an escape case has no `control` (no unconfined run could show the attack
    /// succeed): every escape case has one or the other.
    #[serde(default)]
    pub no_control: Option<String>,
    /// Set for a control run: any exit code (or signal) ends the case well.
    #[serde(skip)]
    pub any_exit: bool,
    #[serde(default)]
    pub steps: Vec<Step>,
}

/// A case's positive control (issue 25 §1): under `--sandbox=off` the steps up to the
/// last attack step run (the attack steps' expectations replaced by `expect`), then
/// `steps`; each must show the escape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// What the last attack step answers when the attack works.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// Steps run after the attack in the control run only (`check_files` with
    /// `until_ms`, `expect_alive: stopped`, …).
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Extra environment for the control's server: for an escape through a file tool,
    /// the switch that turns the file tools' own checks off
    /// (`BORIS_TEST_UNCHECKED_FILE_TOOLS=1`), which `--sandbox=off` leaves on.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// What the control needs beyond the case's `requires` (`probe-simulation`: a test
    /// build, the only one that has that switch).
    #[serde(default)]
    pub requires: Strings,
}

pub(crate) fn yes() -> bool {
    true
}

/// How a case talks to the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseTransport {
    /// Newline-delimited JSON-RPC on the server's stdin/stdout.
    #[default]
    Stdio,
    /// The server is started with the HTTP arguments (`--transport http --port 0`) and
    /// the steps are HTTP requests to the address it prints on stderr.
    Http,
}

/// `key:` with a null value still counts as present (`Some(default)`).
pub(crate) fn present_or_default<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Some(Option::<T>::deserialize(d)?.unwrap_or_default()))
}

/// `key:` with a null value still counts as present (`Some(Value::Null)`).
pub(crate) fn present_value<'de, D>(d: D) -> Result<Option<Value>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Some(Value::deserialize(d)?))
}

/// A string or a list of strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        match OneOrMany::deserialize(d) {
            Ok(OneOrMany::One(s)) => Ok(Strings(vec![s])),
            Ok(OneOrMany::Many(v)) => Ok(Strings(v)),
            Err(_) => Err(serde::de::Error::custom(
                "expected a string or a list of strings (quote values YAML would read as numbers or booleans)",
            )),
        }
    }
}

impl Strings {
    pub fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartupFailure {
    #[serde(default)]
    pub stderr_contains: Strings,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Redaction {
    pub regex: String,
    pub replace: String,
}

// ---------------------------------------------------------------------------------
// Loading

/// Reads and validates a case file. The error names the file and, for YAML and
/// schema errors, the line and column.
pub fn load_case(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read case: {e}"))?;
    let mut case = parse_case(&text)?;
    case.path = path.to_path_buf();
    Ok(case)
}

/// Parses and validates a case from YAML text.
pub fn parse_case(text: &str) -> Result<Case, String> {
    let mut case: Case = yaml_serde::from_str(text).map_err(|e| format!("invalid case: {e}"))?;
    // A server without HTTP is run with `--skip http`: an HTTP case it does not tag
    // would start that server with HTTP arguments anyway (issue 29 §3). The tag follows
    // the transport.
    if case.transport == CaseTransport::Http && !case.tags.iter().any(|t| t == "http") {
        case.tags.push("http".into());
    }
    case.validate()?;
    for i in case.marker_answer_steps()? {
        case.steps[i].shows_marker = true;
    }
    Ok(case)
}

impl Case {
    /// The capabilities its `do` steps use, each once, in order of first use.
    /// The case runs against an identity provider the harness starts (the auth pack:
    /// `requires: [identity-provider]`, see `spec::identity`).
    pub fn needs_identity_provider(&self) -> bool {
        self.requires.iter().any(|r| r == "identity-provider")
    }

    pub fn capabilities(&self) -> Vec<Capability> {
        let mut out: Vec<Capability> = Vec::new();
        for s in &self.steps {
            if let Some(capability) = s.action.capability()
                && !out.contains(&capability)
            {
                out.push(capability);
            }
        }
        out
    }
    fn validate(&self) -> Result<(), String> {
        if let Some(c) = &self.contract
            && !crate::spec::vocabulary::CONTRACTS.contains(&c.as_str())
        {
            return Err(format!(
                "invalid case: unknown contract `{c}` (one of: {})",
                crate::spec::vocabulary::CONTRACTS.join(", ")
            ));
        }
        if self.source.trim().is_empty() {
            return Err("invalid case: `source` must not be empty".into());
        }
        if self.expect_startup_failure.is_some() && !self.steps.is_empty() {
            return Err(
                "invalid case: a case with `expect_startup_failure` runs no steps; remove `steps`"
                    .into(),
            );
        }
        if self.expect_startup_failure.is_some() && self.exit_code == Some(0) {
            return Err(
                "invalid case: `expect_startup_failure` requires a non-zero exit; remove `exit_code: 0`"
                    .into(),
            );
        }
        if self.expect_startup_failure.is_none() && self.steps.is_empty() {
            return Err("invalid case: no `steps`".into());
        }
        for (i, step) in self.steps.iter().enumerate() {
            let kind = step.action.kind();
            if !kind.runs_over(self.transport) {
                return Err(format!(
                    "invalid case: step {} (`{kind}`) is not available in a {} case{}",
                    i + 1,
                    match self.transport {
                        CaseTransport::Stdio => "stdio",
                        CaseTransport::Http => "`transport: http`",
                    },
                    match self.transport {
                        CaseTransport::Stdio => " (add `transport: http`)",
                        CaseTransport::Http => " (use http, http_initialize or http_call)",
                    }
                ));
            }
        }
        if self.transport == CaseTransport::Http && !self.handshake {
            return Err(
                "invalid case: `handshake` is for stdio cases (HTTP cases never get an automatic one)"
                    .into(),
            );
        }
        if self.tags.iter().any(|t| t.trim().is_empty()) {
            return Err("invalid case: empty tag".into());
        }

        for (i, r) in self.redact.iter().enumerate() {
            regex::Regex::new(&r.regex)
                .map_err(|e| format!("invalid case: redact[{i}]: invalid regex: {e}"))?;
        }
        for r in self.requires.iter() {
            crate::spec::requires::Requirement::parse(r)
                .map_err(|e| format!("invalid case: requires: {e}"))?;
        }
        let asks_provider = self
            .steps
            .iter()
            .any(|s| matches!(s.action, Action::IdpToken(_)));
        if asks_provider && !self.needs_identity_provider() {
            return Err(
                "invalid case: an `idp_token` step needs a provider: add `requires: [identity-provider]`"
                    .into(),
            );
        }
        self.validate_escape()
    }

    /// The case with every placeholder expanded (see [`Placeholders`]).
    pub fn expanded(&self, p: &Placeholders) -> Case {
        let mut c = self.clone();
        c.args = c.args.iter().map(|a| p.expand(a)).collect();
        c.boris_args = c.boris_args.iter().map(|a| p.expand(a)).collect();
        c.root = c.root.as_ref().map(|r| p.expand(r));
        c.env = c
            .env
            .iter()
            .map(|(k, v)| (k.clone(), p.expand(v)))
            .collect();
        c.files = c.files.iter().map(|f| f.expanded(p)).collect();
        c.stderr_contains = p.expand_strings(&c.stderr_contains);
        c.stderr_not_contains = p.expand_strings(&c.stderr_not_contains);
        if let Some(sf) = &mut c.expect_startup_failure {
            sf.stderr_contains = p.expand_strings(&sf.stderr_contains);
        }
        for s in &mut c.steps {
            s.expand(p);
        }
        c
    }
}

impl FileSpec {
    fn expanded(&self, p: &Placeholders) -> FileSpec {
        let content = match &self.content {
            FileContent::Text(t) => FileContent::Text(p.expand(t)),
            FileContent::Repeat { text, count } => FileContent::Repeat {
                text: p.expand(text),
                count: *count,
            },
            FileContent::Symlink(t) => FileContent::Symlink(p.expand(t)),
            other => other.clone(),
        };
        FileSpec {
            path: p.expand(&self.path),
            content,
            mode: self.mode,
            mtime: self.mtime,
        }
    }
}
