//! Adapters: how one server spells each capability (issue 13).
//!
//! A portable case says *what* it does — `do: replace` `with: {path, old, new}` — and
//! what any correct server must show for it (`expect`: is it an error, what is on disk
//! afterwards, which lines come back). An adapter, a small YAML file per server, says
//! *how* that server does it: the tool's name and its argument shape, with the case's
//! values put in by placeholder. Expectations that only one implementation can meet
//! (Boris's `[CODE]` wording, exact formats, goldens) sit under a profile key of the
//! step (`boris:`, `boris_compat:`, `boris_pipe:`) and are checked only when the adapter
//! claims that profile. A case that needs a capability the adapter lacks, or that is
//! written against Boris's own tool names and flags, is "not supported" — reported, not
//! failed.
//!
//! Argument templates: a string that is exactly `{name}` becomes the value itself (any
//! JSON type), and a key whose value names a value the step did not give is left out;
//! `{name}` inside a longer string is replaced by the value's text. Besides the step's
//! own values, `path_abs` (`path` made absolute under the case's workdir), `path_rel`
//! (`path` relative to the case's root, for servers that refuse absolute paths), `dir_abs`
//! (`path_abs`, or the workdir when the step names no path: for tools whose directory
//! is required), `offset0` (`start - 1`), for `read_range` `count` (`end - start + 1`)
//! for `read_tail` `neg_lines` (`-lines`), for `task_output` `wait_ms` (how long to wait:
//! `timeout` when `block`, 30000 if it gives none; 0 when not `block`), and for
//! `run_background` `task` (which of the case's background commands it is: 1, 2, …). A `multi_edit` mapping's `edit` template
//! spells each element of `edits`. Filters (`{ignore_case|not}`, `{old|lines:-}`,
//! `{x|map:a=b}`) are described in `spec::template`.
//!
//! Captures: a mapping's `capture` keeps a value the server hands out (a revision, a
//! command id) from its answer — NAME (which may hold `{path}` and the like) → a JSON
//! pointer into the response or `text:REGEX` (group 1) — for a later call to pass as
//! `{captured:NAME}`. A capture that finds nothing is no failure (not every answer hands
//! one out), and an argument that is exactly an uncaptured `{captured:…}` is left out.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::model::{Action, Case, Expect, Step};
use super::template::{fill, placeholders, relative_to_root, unknown_filters};
use super::vocabulary::{Capability, PROFILES, SHUTDOWN_TAG};

/// Derived values (module docs) and the step values each stands for: a step value is
/// mapped when the template names it or one of these.
const DERIVED: &[(&str, &[&str])] = &[
    ("path_abs", &["path"]),
    ("path_rel", &["path"]),
    ("dir_abs", &["path"]),
    ("offset0", &["start"]),
    ("count", &["start", "end"]),
    ("neg_lines", &["lines"]),
    ("wait_ms", &["block", "timeout"]),
];

/// The adapters built into boris-spec: `spec/adapters/<name>.yaml`.
mod builtin {
    include!(concat!(env!("OUT_DIR"), "/embedded_adapters.rs"));
}

/// One server's spelling of the capabilities.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The package or command this adapter was written against (for reports).
    #[serde(default)]
    pub server: Option<String>,
    /// Profiles whose expectations this server is held to.
    #[serde(default)]
    pub profiles: Vec<String>,
    /// Whether cases written against Boris's own tools and flags (`call:` steps,
    /// `args:`) run unchanged: only the default Boris adapter.
    #[serde(default)]
    pub native: bool,
    /// Arguments added to the server command for every case (placeholders such as
    /// `{workdir}` expanded), before the case's own.
    #[serde(default)]
    pub args: Vec<String>,
    /// Arguments added when a case names its `root` (the one directory the server may
    /// touch), after `args`; `{root}` is that directory.
    #[serde(default)]
    pub root_args: Vec<String>,
    /// Extra environment for the server.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub capabilities: BTreeMap<Capability, Mapping>,
    /// Capabilities the server does not have, each with the reason shown in reports.
    #[serde(default)]
    pub unsupported: BTreeMap<Capability, String>,
    /// Case tags naming what the server does not offer (`http`, `stateless`), each with
    /// the reason: such cases are not supported.
    #[serde(default)]
    pub unsupported_tags: BTreeMap<String, String>,
    /// The routes (transport and protocol era, see `spec::routes`) the server is run
    /// on: `stdio`, `stdio-2026`, `http`, `http-2026`. Default: `stdio` only.
    #[serde(default = "stdio_only")]
    pub routes: Vec<String>,
    /// How the server is started on stdio, appended to the server command for stdio runs
    /// (Boris: `--transport stdio`, since it serves HTTP by default), so that the bare
    /// command (`boris-spec run --server boris`) runs every route.
    #[serde(default)]
    pub stdio_args: Option<String>,
    /// How the server is started on HTTP, appended to the server command for HTTP runs
    /// (as `--http-args` is, which wins when given). `{port}` in it becomes a free
    /// loopback port the harness picked, for servers that do not print their address.
    #[serde(default)]
    pub http_args: Option<String>,
    /// The public tool contracts (`CONTRACTS`) the server offers, and how.
    #[serde(default)]
    pub contracts: BTreeMap<String, ContractSpec>,
    /// How a fault of the server's ending (it outlives stdin EOF or SIGTERM, or leaves
    /// processes behind) counts: `strict` fails the case (Boris's promise), `finding`
    /// (the default) reports it once per run and judges each case on its subject.
    #[serde(default)]
    pub teardown: Teardown,
    /// How the server runs as an OAuth resource server, for the auth pack (cases that
    /// `requires: [identity-provider]`); none: those cases are not supported.
    #[serde(default)]
    pub oauth: Option<super::identity::OauthMode>,
    /// How the server takes one static bearer token (`{bearer}`, the harness's value),
    /// for the cases tagged `static-token`; none: those cases are not supported.
    #[serde(default)]
    pub static_token_args: Option<Vec<String>>,
}

/// How an adapter holds its server to its teardown (see `spec::findings`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Teardown {
    /// Every fault fails the case it ended.
    Strict,
    /// Faults are the run's findings; only cases tagged `shutdown` fail on them.
    #[default]
    Finding,
}

/// How a server offers a tool contract.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractSpec {
    /// Server flags that turn the contract on (Boris: `--tool-profile claude-code`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Arguments the server takes only as absolute paths (Claude Code's contract says
    /// `file_path` is absolute): a relative value in a case becomes `{workdir}/…`.
    #[serde(default)]
    pub absolute_paths: Vec<String>,
    /// Tools of the contract the server does not have, each with the reason.
    #[serde(default)]
    pub unsupported_tools: BTreeMap<String, String>,
}

fn stdio_only() -> Vec<String> {
    vec!["stdio".into()]
}

/// How one capability is called.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    pub tool: String,
    /// The arguments, a template (see the module docs).
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Profiles for this capability instead of the adapter's (e.g. Boris's pipe bash
    /// profile keeps Boris's file-tool wording but not its bash format).
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// For `multi_edit`: the template of one element of `edits` (`{old}`, `{new}`,
    /// `{replace_all}`; an object, or a string such as one hunk of a patch); the list
    /// goes where `args` says `"{edits}"` (`{edits|join:…}` for one text).
    #[serde(default)]
    pub edit: Option<Value>,
    /// Values to keep from the answer (module docs: captures).
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
}

impl Adapter {
    /// A built-in adapter by name, or an adapter file.
    pub fn find(name_or_path: &str) -> Result<Adapter, String> {
        if let Some((_, text)) = builtin::ADAPTERS.iter().find(|(n, _)| *n == name_or_path) {
            return Adapter::parse(text)
                .map_err(|e| format!("built-in adapter {name_or_path}: {e}"));
        }
        let path = std::path::Path::new(name_or_path);
        if path.exists() {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            return Adapter::parse(&text).map_err(|e| format!("{}: {e}", path.display()));
        }
        Err(format!(
            "no adapter `{name_or_path}`: give a file, or one of the built-in ones: {}",
            builtin_names().join(", ")
        ))
    }

    /// The adapter for Boris as it starts by default.
    pub fn boris() -> Adapter {
        Adapter::find("boris").unwrap_or_else(|e| panic!("the built-in boris adapter: {e}"))
    }

    pub fn parse(text: &str) -> Result<Adapter, String> {
        let a: Adapter = yaml_serde::from_str(text).map_err(|e| e.to_string())?;
        for r in &a.routes {
            if !super::routes::Route::ALL.iter().any(|x| x.name() == r) {
                return Err(format!(
                    "unknown route `{r}` (stdio, stdio-2026, http, http-2026)"
                ));
            }
        }
        for p in a.profiles.iter().chain(
            a.capabilities
                .values()
                .flat_map(|m| m.profiles.iter().flatten()),
        ) {
            if !PROFILES.contains(&p.as_str()) {
                return Err(format!(
                    "unknown profile `{p}` (one of: {})",
                    PROFILES.join(", ")
                ));
            }
        }
        for (c, m) in &a.capabilities {
            let template = Value::Object(m.args.clone());
            let edit = m.edit.clone().unwrap_or_default();
            if let Some(f) = unknown_filters(&template)
                .into_iter()
                .chain(unknown_filters(&edit))
                .next()
            {
                return Err(format!(
                    "{c}: unknown filter `{f}` (one of: {})",
                    super::template::FILTERS.join(", ")
                ));
            }
        }
        if let Some(both) = a
            .capabilities
            .keys()
            .find(|c| a.unsupported.contains_key(*c))
        {
            return Err(format!("`{both}` is both mapped and unsupported"));
        }
        Ok(a)
    }

    /// The case as this server runs it: every `do` step turned into the server's own
    /// `tools/call` with the expectations of the profiles it claims, and the adapter's
    /// arguments and environment added. `Err` says why the server cannot run it.
    pub fn adapt(&self, case: &Case) -> Result<Case, String> {
        if let Some((tag, why)) = self
            .unsupported_tags
            .iter()
            .find(|(t, _)| case.tags.contains(t))
        {
            return Err(format!("tag {tag}: {why}"));
        }
        let contract = match &case.contract {
            None => None,
            Some(c) => Some(self.contracts.get(c).ok_or_else(|| {
                format!("written in the {c} tool contract, which the server does not offer")
            })?),
        };
        if let Some(spec) = contract
            && let Some((tool, why)) = case.steps.iter().find_map(|s| match &s.action {
                Action::Call { name, .. } => spec.unsupported_tools.get_key_value(name),
                _ => None,
            })
        {
            return Err(format!("no {tool}: {why}"));
        }
        if !self.native {
            if case.tags.iter().any(|t| t == "boris-only") {
                return Err("tagged boris-only".into());
            }
            if !case.args.is_empty() {
                return Err(format!("starts Boris with flags ({})", case.args.join(" ")));
            }
            let named = case.steps.iter().find_map(|s| match &s.action {
                Action::Call { .. } if contract.is_some() => None,
                Action::Call { name, .. } => Some(name.clone()),
                Action::HttpCall(c) if c.capability.is_none() => Some(c.tool.clone()),
                _ => None,
            });
            if let Some(tool) = named {
                return Err(format!(
                    "calls Boris's own tool `{tool}` (not a capability)"
                ));
            }
        }
        let static_token = if case.tags.iter().any(|t| t == STATIC_TOKEN_TAG) {
            Some(self.static_token_args.as_ref().ok_or(
                "it tests the server's static-token mode, which the adapter does not give (`static_token_args:`)",
            )?)
        } else {
            None
        };
        let oauth = if case.needs_identity_provider() {
            Some(self.oauth.as_ref().ok_or(
                "it tests the server's OAuth mode, which the adapter does not give (`oauth:`)",
            )?)
        } else {
            None
        };
        if let Some(r) = &case.root
            && self.root_args.is_empty()
            && !self.args.iter().any(|a| a.contains("{root}"))
        {
            return Err(format!(
                "the case confines the server to one directory (root: {r}); the adapter has no way to give it one"
            ));
        }
        let mut out = case.clone();
        // `{root}`: the case's root under the workdir (or absolute), else the workdir.
        let root = case
            .root
            .as_deref()
            .map_or_else(|| "{workdir}".to_string(), under_workdir);
        let root_args = if case.root.is_some() {
            &self.root_args[..]
        } else {
            &[]
        };
        let boris_profile = self.profiles.iter().any(|p| p == "boris");
        let boris_args = if boris_profile {
            &case.boris_args[..]
        } else {
            &[]
        };
        out.args = self
            .args
            .iter()
            .chain(root_args)
            .map(|a| a.replace("{root}", &root))
            .chain(contract.iter().flat_map(|c| c.args.iter().cloned()))
            .chain(boris_args.iter().cloned())
            .chain(oauth.iter().flat_map(|o| o.args.iter().cloned()))
            .chain(static_token.iter().flat_map(|a| a.iter().cloned()))
            .chain(case.args.iter().cloned())
            .collect();
        out.boris_args.clear();
        out.sigterm_death_ok = !boris_profile;
        out.strict_teardown =
            self.teardown == Teardown::Strict || case.tags.iter().any(|t| t == SHUTDOWN_TAG);
        for (k, v) in &self.env {
            out.env.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let mut backgrounds = 0;
        for step in &mut out.steps {
            if step.action.capability() == Some(Capability::RunBackground) {
                backgrounds += 1;
            }
            let at = At {
                root: case.root.as_deref(),
                task: backgrounds,
            };
            *step = self.adapt_step(step, &at)?;
            if let (
                Some(spec),
                Action::Call {
                    args: Some(Value::Object(a)),
                    ..
                },
            ) = (contract, &mut step.action)
            {
                absolute(a, &spec.absolute_paths);
            }
        }
        // After the steps: the profiles' expectations they took in name scopes too.
        if let Some(o) = oauth {
            out = with_oauth(out, o)?;
        }
        if static_token.is_some() {
            let table = super::model::Placeholders::default().with("{bearer}", STATIC_BEARER);
            out = out.expanded(&table);
        }
        Ok(out)
    }

    fn adapt_step(&self, step: &Step, at: &At) -> Result<Step, String> {
        if let Action::HttpCall(c) = &step.action
            && let Some(capability) = &c.capability
        {
            let with = c.with.clone().unwrap_or_default();
            let (tool, args, claimed, capture) = self.call_for(*capability, &with, at)?;
            let mut call = c.clone();
            call.tool = tool;
            call.args = Some(args);
            call.capability = None;
            call.with = None;
            let mut out = step.clone();
            out.action = Action::HttpCall(call);
            out.expect = with_capture(
                with_profiles(&step.expect, &step.profiles, claimed),
                capture,
            );
            out.profiles.clear();
            return Ok(out);
        }
        let Action::Do {
            capability,
            with,
            meta,
            id,
            wait,
        } = &step.action
        else {
            let mut out = step.clone();
            out.expect = with_profiles(&step.expect, &step.profiles, &self.profiles);
            out.profiles.clear();
            return Ok(out);
        };
        let (tool, args, claimed, capture) = self.call_for(*capability, with, at)?;
        let expect = with_capture(
            with_profiles(&step.expect, &step.profiles, claimed),
            capture,
        );
        Ok(Step {
            action: Action::Call {
                name: tool,
                args: Some(args),
                meta: meta.clone(),
                id: id.clone(),
                wait: *wait,
            },
            expect,
            profiles: BTreeMap::new(),
            timeout_ms: step.timeout_ms,
            until_ms: step.until_ms,
            shows_marker: step.shows_marker,
        })
    }

    /// The tool and arguments that do `capability` with these values on this server,
    /// the profiles whose expectations apply to it, and what to capture from its answer.
    fn call_for(
        &self,
        capability: Capability,
        with: &Map<String, Value>,
        at: &At,
    ) -> Result<ServerCall<'_>, String> {
        let Some(mapping) = self.capabilities.get(&capability) else {
            return Err(match self.unsupported.get(&capability) {
                Some(reason) => format!("no {capability}: {reason}"),
                None => format!("the adapter has no mapping for {capability}"),
            });
        };
        // A value the adapter does not pass would silently change what the step tests
        // (a case-insensitive search run case-sensitively): not supported instead.
        let named = placeholders(&Value::Object(mapping.args.clone()));
        let covered = |k: &str| {
            named
                .iter()
                .any(|n| n == k || DERIVED.iter().any(|(d, from)| d == n && from.contains(&k)))
        };
        if let Some(k) = with.keys().find(|k| !covered(k)) {
            return Err(format!(
                "no {capability} with `{k}`: the adapter does not map it"
            ));
        }
        let mut values = derived_values(capability, with, at.root);
        if capability == Capability::RunBackground {
            // Which of the session's background commands this is, the `task` later
            // steps name it by: the key of what the server hands out for it.
            values.insert("task".into(), Value::from(at.task));
        }
        if let Some(Value::Array(edits)) = with.get("edits") {
            let template = mapping
                .edit
                .as_ref()
                .ok_or_else(|| format!("no {capability}: the adapter has no `edit` template"))?;
            let item = template.clone();
            let named = placeholders(&item);
            let mut list = Vec::with_capacity(edits.len());
            for e in edits {
                let Value::Object(e) = e else {
                    // Not an edit: passed as it is, for the server to refuse.
                    list.push(e.clone());
                    continue;
                };
                if let Some(k) = e.keys().find(|k| !named.contains(k)) {
                    return Err(format!(
                        "no {capability} with an edit's `{k}`: the adapter does not map it"
                    ));
                }
                list.push(fill(&item, e).unwrap_or_else(|| Value::Object(Map::new())));
            }
            values.insert("edits".into(), Value::Array(list));
        }
        let args = fill(&Value::Object(mapping.args.clone()), &values)
            .unwrap_or_else(|| Value::Object(Map::new()));
        let claimed = mapping.profiles.as_ref().unwrap_or(&self.profiles);
        let capture = mapping
            .capture
            .iter()
            .map(|(name, at)| {
                let name = fill(&Value::String(name.clone()), &values)
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| name.clone());
                (name, at.clone())
            })
            .collect();
        Ok((mapping.tool.clone(), args, claimed, capture))
    }
}

/// The `keys` of a call's arguments that hold a relative path, made absolute under the
/// case's workdir (`{workdir}` is expanded later, as in every step).
fn absolute(args: &mut Map<String, Value>, keys: &[String]) {
    for k in keys {
        if let Some(Value::String(p)) = args.get_mut(k)
            && !p.is_empty()
        {
            *p = under_workdir(p);
        }
    }
}

/// A case's path made absolute under its workdir; absolute already: `/x`, or a case
/// placeholder such as `{workdir}/a` or `{saved:file}`.
fn under_workdir(p: &str) -> String {
    if p.starts_with('/') || p.starts_with('{') {
        p.to_string()
    } else {
        format!("{{workdir}}/{p}")
    }
}

/// A step's expectation with those of the `claimed` profiles added.
fn with_profiles(
    expect: &Option<Expect>,
    profiles: &BTreeMap<String, Expect>,
    claimed: &[String],
) -> Option<Expect> {
    let mut out = expect.clone();
    for p in claimed {
        if let Some(extra) = profiles.get(p) {
            out = Some(out.unwrap_or_default().merged(extra));
        }
    }
    out
}

/// The names of the built-in adapters.
pub fn builtin_names() -> Vec<&'static str> {
    builtin::ADAPTERS.iter().map(|(n, _)| *n).collect()
}

/// A capability as one server calls it: the tool, its arguments, the profiles whose
/// expectations apply, and what to capture from the answer.
type ServerCall<'a> = (String, Value, &'a [String], BTreeMap<String, String>);

/// Where a step stands in its case, for the values derived from it.
struct At<'a> {
    /// The case's root.
    root: Option<&'a str>,
    /// How many background commands the case has started up to this step.
    task: usize,
}

/// A step's expectation with the adapter's captures added.
fn with_capture(expect: Option<Expect>, capture: BTreeMap<String, String>) -> Option<Expect> {
    if capture.is_empty() {
        return expect;
    }
    let mut e = expect.unwrap_or_default();
    e.capture.extend(capture);
    Some(e)
}

/// A step's values plus the derived ones (module docs); `root` is the case's.
fn derived_values(
    capability: Capability,
    with: &Map<String, Value>,
    root: Option<&str>,
) -> Map<String, Value> {
    let mut v = with.clone();
    if let Some(Value::String(p)) = with.get("path").filter(|p| p.as_str() != Some("")) {
        v.insert("path_rel".into(), Value::String(relative_to_root(p, root)));
        let abs = under_workdir(p);
        v.insert("path_abs".into(), Value::String(abs.clone()));
        v.insert("dir_abs".into(), Value::String(abs));
    } else {
        // An empty path stays empty: the server must refuse it, not read the workdir;
        // a path of the wrong type is passed as it is, for the server to refuse.
        if let Some(p) = with.get("path").filter(|p| !p.is_string()) {
            v.insert("path_abs".into(), p.clone());
            v.insert("path_rel".into(), p.clone());
        } else if with.get("path").is_some() {
            v.insert("path_abs".into(), Value::String(String::new()));
            v.insert("path_rel".into(), Value::String(String::new()));
        }
        v.insert("dir_abs".into(), Value::String("{workdir}".into()));
    }
    if let Some(start) = with.get("start").and_then(Value::as_i64) {
        v.insert("offset0".into(), Value::from(start - 1));
    }
    if let Some(lines) = with.get("lines").and_then(Value::as_i64) {
        v.insert("neg_lines".into(), Value::from(-lines));
    }
    if capability == Capability::TaskOutput {
        let block = with.get("block").and_then(Value::as_bool).unwrap_or(false);
        let wait = match with.get("timeout") {
            Some(t) if block => t.clone(),
            _ if block => Value::from(30_000),
            _ => Value::from(0),
        };
        v.insert("wait_ms".into(), wait);
    }
    if capability == Capability::ReadRange
        && let (Some(start), Some(end)) = (
            with.get("start").and_then(Value::as_i64),
            with.get("end").and_then(Value::as_i64),
        )
    {
        v.insert("offset0".into(), Value::from(start - 1));
        v.insert("count".into(), Value::from(end - start + 1));
    }
    v
}

/// The tag of the cases about a server's one static bearer token (the auth pack).
pub const STATIC_TOKEN_TAG: &str = "static-token";

/// The static token the harness gives a server in those cases (`{bearer}`).
pub const STATIC_BEARER: &str = "boris-spec-static-bearer-7f3c9e";

/// The case with its OAuth placeholders filled in (`{resource}`, `{scope.read}`, …;
/// `{idp.issuer}` waits for the provider to run) and every token it asks for bound to
/// the server's resource unless the step names another audience.
fn with_oauth(case: Case, oauth: &super::identity::OauthMode) -> Result<Case, String> {
    let mut out = case.expanded(&oauth.placeholders()?);
    for step in &mut out.steps {
        if let Action::IdpToken(t) = &mut step.action
            && t.aud.is_none()
        {
            t.aud = Some(super::identity::Audience::One(oauth.resource.clone()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_builtin_adapter_loads() {
        assert!(builtin_names().contains(&"boris"));
        for name in builtin_names() {
            let a = Adapter::find(name).unwrap();
            assert_eq!(a.name, name);
        }
        assert!(Adapter::find("nope").is_err());
    }

    #[test]
    fn templates_fill_values_keep_types_and_drop_missing_keys() {
        let values = derived_values(
            Capability::ReadRange,
            json!({"path": "a.txt", "start": 3, "end": 5})
                .as_object()
                .unwrap(),
            None,
        );
        let t = json!({
            "path": "{path_abs}",
            "view_range": ["{start}", "{end}"],
            "offset": "{offset0}",
            "length": "{count}",
            "pattern": "{pattern}",
            "edits": [{"oldText": "{path} at {start}"}]
        });
        assert_eq!(
            fill(&t, &values).unwrap(),
            json!({
                "path": "{workdir}/a.txt",
                "view_range": [3, 5],
                "offset": 2,
                "length": 3,
                "edits": [{"oldText": "a.txt at 3"}]
            })
        );
    }

    #[test]
    fn a_do_step_becomes_the_servers_call_with_its_profile_expectations() {
        let case = super::super::parse_case(
            r#"
source: test
steps:
  - do: replace
    with: {path: a.txt, old: x, new: y}
    expect: {is_error: false}
    boris: {contains: Edited}
"#,
        )
        .unwrap();
        let boris = Adapter::boris().adapt(&case).unwrap();
        let Action::Call { name, args, .. } = &boris.steps[0].action else {
            panic!("not a call");
        };
        assert_eq!(name, "str_replace");
        assert_eq!(
            args.as_ref().unwrap(),
            &json!({"path": "a.txt", "old_str": "x", "new_str": "y"})
        );
        let e = boris.steps[0].expect.as_ref().unwrap();
        assert_eq!(
            (e.is_error, e.contains.0.clone()),
            (Some(false), vec!["Edited".to_string()])
        );
        // Another server gets the portable expectation only.
        let other = Adapter::parse(
            "name: other\ncapabilities:\n  replace: {tool: edit, args: {file: \"{path}\", edits: [{oldText: \"{old}\", newText: \"{new}\"}]}}\n",
        )
        .unwrap();
        let adapted = other.adapt(&case).unwrap();
        let e = adapted.steps[0].expect.as_ref().unwrap();
        assert!(e.contains.is_empty());
        // A value it does not map: not supported rather than silently dropped.
        let no_new = Adapter::parse(
            "name: n\ncapabilities:\n  replace: {tool: edit, args: {file: \"{path_abs}\", old: \"{old}\"}}\n",
        )
        .unwrap();
        assert_eq!(
            no_new.adapt(&case).unwrap_err(),
            "no replace with `new`: the adapter does not map it"
        );
        // A capability it lacks: not supported, with the adapter's reason.
        let lacking = Adapter::parse("name: l\nunsupported: {replace: no edit tool}\n").unwrap();
        assert_eq!(
            lacking.adapt(&case).unwrap_err(),
            "no replace: no edit tool"
        );
    }

    #[test]
    fn a_root_reaches_each_server_its_own_way_and_boris_args_only_boris() {
        let case = super::super::parse_case(
            "source: t\nroot: inside\nboris_args: [--x]\nsteps:\n  - do: read_file\n    with: {path: a}\n",
        )
        .unwrap();
        assert_eq!(
            Adapter::boris().adapt(&case).unwrap().args,
            vec!["--allow-dir={workdir}/inside", "--x"]
        );
        let fs = Adapter::find("server-filesystem").unwrap();
        assert_eq!(fs.adapt(&case).unwrap().args, vec!["{workdir}/inside"]);
        let plain =
            super::super::parse_case("source: t\nsteps:\n  - do: read_file\n    with: {path: a}\n")
                .unwrap();
        assert_eq!(fs.adapt(&plain).unwrap().args, vec!["{workdir}"]);
        assert!(Adapter::boris().adapt(&plain).unwrap().args.is_empty());
        // litecode's root is its working directory.
        let lc = Adapter::find("litecode").unwrap();
        assert_eq!(
            lc.adapt(&case).unwrap().args,
            vec!["--cwd={workdir}/inside"]
        );
        // A server with no way to be given a root does not run it.
        let dc = Adapter::find("desktop-commander").unwrap();
        assert!(dc.adapt(&case).unwrap_err().contains("root: inside"));
    }

    #[test]
    fn cases_in_borises_own_terms_need_a_native_adapter() {
        let case =
            super::super::parse_case("source: t\nsteps:\n  - call: view\n    args: {path: a}\n")
                .unwrap();
        let other = Adapter::parse("name: o\n").unwrap();
        assert!(other.adapt(&case).unwrap_err().contains("`view`"));
        assert!(Adapter::boris().adapt(&case).is_ok());
    }

    #[test]
    fn an_http_call_of_a_capability_is_spelled_by_the_adapter() {
        let case = super::super::parse_case(
            r#"
source: t
transport: http
steps:
  - http_initialize: {save_session: a}
  - http_call: {session: a, do: read_file, with: {path: a.txt}}
    expect: {is_error: false}
    boris: {contains: "1\t"}
"#,
        )
        .unwrap();
        assert_eq!(case.capabilities(), vec![Capability::ReadFile]);
        let lc = Adapter::find("litecode").unwrap().adapt(&case).unwrap();
        let Action::HttpCall(c) = &lc.steps[1].action else {
            panic!("not an http_call");
        };
        assert_eq!(
            (c.tool.as_str(), c.args.clone(), c.session.as_deref()),
            (
                "Read",
                Some(json!({"file_path": "{workdir}/a.txt"})),
                Some("a")
            )
        );
        assert!(c.capability.is_none() && lc.sigterm_death_ok);
        assert!(lc.steps[1].expect.as_ref().unwrap().contains.is_empty());
        let boris = Adapter::boris().adapt(&case).unwrap();
        let Action::HttpCall(c) = &boris.steps[1].action else {
            panic!("not an http_call");
        };
        assert_eq!(c.tool, "view");
        assert!(!boris.sigterm_death_ok);
        assert_eq!(
            boris.steps[1].expect.as_ref().unwrap().contains.0,
            vec!["1\t"]
        );
    }

    #[test]
    fn captures_carry_what_the_server_hands_out_and_paths_follow_the_root() {
        let case = super::super::parse_case(
            r#"
source: t
root: inside
steps:
  - do: read_file
    with: {path: inside/a.txt}
  - do: write_file
    with: {path: inside/a.txt, content: x}
  - do: run_background
    with: {command: sleep 1}
  - do: run_background
    with: {command: sleep 2}
  - do: task_output
    with: {task: 2, block: true}
  - do: replace
    with: {path: secret.txt, old: "a\nb", new: c}
"#,
        )
        .unwrap();
        let a = Adapter::find("coding-tools-mcp")
            .unwrap()
            .adapt(&case)
            .unwrap();
        let call = |i: usize| match &a.steps[i].action {
            Action::Call { name, args, .. } => (name.clone(), args.clone().unwrap()),
            _ => panic!("not a call"),
        };
        let capture = |i: usize| a.steps[i].expect.as_ref().unwrap().capture.clone();
        assert_eq!(call(0).1, json!({"path": "a.txt"}));
        assert_eq!(
            capture(0),
            BTreeMap::from([(
                "rev:inside/a.txt".to_string(),
                "/result/structuredContent/revision".to_string()
            )])
        );
        assert_eq!(
            call(1).1["changes"][0]["revision"],
            json!("{captured:rev:inside/a.txt}")
        );
        // Each background command is keyed by its place among the case's.
        assert!(capture(2).contains_key("cmd:1") && capture(3).contains_key("cmd:2"));
        assert_eq!(
            call(4),
            (
                "write_stdin".to_string(),
                json!({"command_id": "{captured:cmd:2}", "chars": "", "yield_time_ms": 30000})
            )
        );
        // An edit becomes a patch; a path outside the root is climbed out to.
        assert_eq!(
            call(5).1["patch"],
            json!("*** Begin Patch\n*** Update File: ../secret.txt\n@@\n-a\n-b\n+c\n*** End Patch")
        );
        assert!(
            Adapter::parse(
                "name: x\ncapabilities:\n  run: {tool: t, args: {c: \"{command|nope}\"}}\n"
            )
            .unwrap_err()
            .contains("unknown filter `nope`")
        );
    }
}
