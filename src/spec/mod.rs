//! The golden spec harness: replays YAML cases (`spec/**/*.yaml`) against any MCP
//! server, over stdio (raw newline-delimited JSON-RPC) or, for `transport: http` cases,
//! over streamable HTTP (raw HTTP/1.1 requests).
//!
//! Used by the `boris-spec` binary and by `tests/spec.rs`. The format is documented in
//! docs/spec-format.md.
//!
//! From the bottom up:
//!
//! - [`vocabulary`], [`protocol`], [`display`]: the words cases are written in (the
//!   capabilities, contracts, profiles), the MCP facts (eras, initialize), how failures
//!   are shown (pure);
//! - [`model`]: the YAML types, validation, placeholder expansion (pure);
//! - [`matcher`]: expectations against a response (pure);
//! - [`normalise`](mod@normalise): transcript normalisation for goldens (pure); [`junit`]: JUnit XML;
//! - [`http`]: a small HTTP/1.1 client, chunked and SSE parsing;
//! - [`process`]: the server process, its command line, pipes, signals, /proc checks;
//! - [`fixtures`]: files created before a case and checked after;
//! - [`adapter`]: how one server spells each capability; [`routes`]: a case on every
//!   transport and era;
//! - `session`: a running case, one type per transport (stdio, HTTP) behind one trait;
//! - [`runner`]: one case from start to end: options, workdir, outcome;
//! - [`findings`]: teardown faults and the run's findings (pure); [`report`]: baselines,
//!   scores, markdown and JSON;
//! - [`record`], [`preflight`], [`bench`](mod@bench): `boris-spec record`, `smoke`/`lint`, `bench`;
//!   [`hostile`]: `boris-spec hostile`, input generated from each tool's schema.

pub mod adapter;
pub mod bench;
mod bench_attack;
pub mod bench_http;
pub mod display;
pub mod draft;
pub mod findings;
pub mod fixtures;
pub mod gate;
pub mod hostile;
pub mod http;
pub mod identity;
pub mod junit;
pub mod matcher;
pub mod model;
pub mod normalise;
pub mod preflight;
pub mod process;
pub mod protocol;
pub mod record;
pub mod report;
pub mod requires;
pub mod routes;
pub mod runner;
pub(crate) mod session;
pub mod template;
pub mod vocabulary;

use std::path::{Path, PathBuf};

pub use model::{Case, load_case, parse_case};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_spec.rs"));
}

/// One case to run: the path it is shown (and reported, and snapshotted) under, and,
/// for a case built into the binary, its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFile {
    /// A real file, or for an embedded case `spec/<path under spec/>`.
    pub path: PathBuf,
    /// Path relative to the suite's root (`view/missing_file.yaml`): what selectors and
    /// `--add-spec` overrides match.
    pub rel: PathBuf,
    embedded: Option<&'static str>,
}

impl CaseFile {
    /// A case file on disk, `rel` to its suite's root.
    pub fn disk(path: PathBuf, rel: PathBuf) -> Self {
        CaseFile {
            path,
            rel,
            embedded: None,
        }
    }

    pub fn load(&self) -> Result<Case, String> {
        match self.embedded {
            Some(text) => {
                let mut case = parse_case(text)?;
                case.path = self.path.clone();
                Ok(case)
            }
            None => load_case(&self.path),
        }
    }
}

/// The suite built into this binary (the `spec/` directory it was built from), in
/// sorted path order.
pub fn embedded_cases() -> Vec<CaseFile> {
    embedded::CASES
        .iter()
        .map(|(rel, text)| CaseFile {
            path: Path::new("spec").join(rel),
            rel: PathBuf::from(rel),
            embedded: Some(text),
        })
        .collect()
}

/// The cases of a directory on disk, `rel` to it.
pub fn disk_cases(dir: &Path) -> Result<Vec<CaseFile>, String> {
    Ok(discover(&[dir.to_path_buf()])?
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap_or(&p).to_path_buf();
            CaseFile::disk(p, rel)
        })
        .collect())
}

/// The cases to run: `base` (the embedded suite, or a `--spec` directory), with each
/// `extra` directory's cases added (replacing a base case at the same relative path),
/// narrowed by `selectors`. A selector that exists on disk is read from disk (a case
/// file or a directory of them); any other selects the cases whose relative path starts
/// with it (`view`, `view/missing_file.yaml`, `spec/protocol`). A selector that matches
/// nothing is an error.
pub fn select_cases(
    base: Vec<CaseFile>,
    extra: &[PathBuf],
    selectors: &[PathBuf],
) -> Result<Vec<CaseFile>, String> {
    let mut set: std::collections::BTreeMap<PathBuf, CaseFile> =
        base.into_iter().map(|c| (c.rel.clone(), c)).collect();
    for dir in extra {
        for c in disk_cases(dir)? {
            set.insert(c.rel.clone(), c);
        }
    }
    if selectors.is_empty() {
        return Ok(set.into_values().collect());
    }
    let mut out: Vec<CaseFile> = Vec::new();
    for sel in selectors {
        if sel.exists() {
            let meta = std::fs::metadata(sel).map_err(|e| format!("{}: {e}", sel.display()))?;
            let found = if meta.is_dir() {
                disk_cases(sel)?
            } else {
                let rel = PathBuf::from(sel.file_name().unwrap_or_default());
                vec![CaseFile::disk(sel.clone(), rel)]
            };
            out.extend(found);
            continue;
        }
        let wanted = sel.strip_prefix("spec").unwrap_or(sel);
        let before = out.len();
        out.extend(
            set.values()
                .filter(|c| wanted.as_os_str().is_empty() || c.rel.starts_with(wanted))
                .cloned(),
        );
        if out.len() == before {
            return Err(format!(
                "{}: no such file, and no case of the suite under it",
                sel.display()
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(c.path.clone()));
    Ok(out)
}
pub use normalise::{Normaliser, normalise};
pub use process::shell_quote;
pub use routes::Route;
pub use runner::{CaseOutcome, RunOptions, run_case};

/// Expands `paths` (files, or directories searched recursively for `*.yaml`) into a
/// sorted, de-duplicated list of case files. A missing path is an error.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for e in entries {
            let e = e.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            let p = e.path();
            let ft = e
                .file_type()
                .map_err(|e| format!("cannot stat {}: {e}", p.display()))?;
            // `adapters/` holds the suite's adapters, not cases.
            if ft.is_dir() && e.file_name() != "adapters" {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Loads and runs one case; a case that does not load is a failed outcome.
pub fn run_file(file: &CaseFile, opts: &RunOptions) -> CaseOutcome {
    match file.load() {
        Ok(case) => run_case(&case, opts),
        Err(e) => CaseOutcome::error(&file.path, e),
    }
}

/// Loads and runs one case on `route`: `None` when it stays off that route. A case
/// that does not load is a failed outcome (on stdio only, so it is reported once).
pub fn run_file_on(file: &CaseFile, opts: &RunOptions, route: Route) -> Option<CaseOutcome> {
    match file.load() {
        Ok(case) => runner::run_case_on(&case, opts, route),
        Err(e) => (route == Route::Stdio).then(|| CaseOutcome::error(&file.path, e)),
    }
}

/// [`run_files`] for case files on disk.
pub fn run_paths(
    paths: &[PathBuf],
    opts: &RunOptions,
    jobs: usize,
    on_done: impl FnMut(&CaseOutcome),
) -> Vec<CaseOutcome> {
    let files: Vec<CaseFile> = paths
        .iter()
        .map(|p| CaseFile::disk(p.clone(), p.clone()))
        .collect();
    run_files(&files, opts, jobs, on_done)
}

/// Runs cases on `jobs` threads (at least 1), each on every route of `opts` the adapter
/// has (see `spec::routes`). `on_done` is called on the calling thread for each
/// outcome, in the order of `files` (a file's routes in turn), as soon as it and every
/// earlier one are known. Returns every outcome, in that order.
pub fn run_files(
    paths: &[CaseFile],
    opts: &RunOptions,
    jobs: usize,
    mut on_done: impl FnMut(&CaseOutcome),
) -> Vec<CaseOutcome> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    let routes = runner::effective_routes(opts);
    let routes = if routes.is_empty() {
        vec![Route::Stdio]
    } else {
        routes
    };
    let runs: Vec<(&CaseFile, Route)> = paths
        .iter()
        .flat_map(|p| routes.iter().map(move |r| (p, *r)))
        .collect();
    let next = AtomicUsize::new(0);
    // None: not known yet; Some(None): the case stays off that route.
    let mut results: Vec<Option<Option<CaseOutcome>>> = vec![None; runs.len()];
    let mut reported = 0;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..jobs.clamp(1, runs.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            let runs = &runs;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&(path, route)) = runs.get(i) else {
                        break;
                    };
                    let outcome = std::panic::catch_unwind(|| run_file_on(path, opts, route))
                        .unwrap_or_else(|p| {
                            let msg = p
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| p.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "unknown panic".into());
                            Some(CaseOutcome::error(
                                &runner::route_label(&path.path, route),
                                format!("harness panicked: {msg}"),
                            ))
                        });
                    if tx.send((i, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, outcome) in rx {
            results[i] = Some(outcome);
            while let Some(Some(o)) = results.get(reported) {
                if let Some(o) = o {
                    on_done(o);
                }
                reported += 1;
            }
        }
    });
    results
        .into_iter()
        .zip(&runs)
        .filter_map(|(r, (p, route))| match r {
            Some(o) => o,
            None => Some(CaseOutcome::error(
                &runner::route_label(&p.path, *route),
                "case did not run".into(),
            )),
        })
        .collect()
}

/// Makes a relative first word of a server command line absolute (against `cwd`) if
/// it contains a `/` and exists there, since the server runs in each case's workdir:
/// `target/debug/boris --transport stdio` → `/repo/target/debug/boris --transport stdio`.
/// Anything else (a bare name found on PATH, a quoted or absolute word) is kept.
pub fn resolve_server_command(cmd: &str, cwd: &Path) -> String {
    let trimmed = cmd.trim_start();
    let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
    let (first, rest) = trimmed.split_at(end);
    let plain = !first.contains(['\'', '"', '\\', '$', '`', '=', ';', '&', '|']);
    if plain && first.contains('/') && !first.starts_with('/') {
        let abs = cwd.join(first);
        if abs.exists() {
            return format!("{}{rest}", shell_quote(&abs.to_string_lossy()));
        }
    }
    cmd.to_string()
}

/// The JUnit classname of a case path: its directory with `/` → `.` (`spec.view`).
pub fn classname(path: &Path) -> String {
    path.parent()
        .map(|p| p.to_string_lossy().replace('/', "."))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "spec".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discover_sorts_and_recurses() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("b/deep")).unwrap();
        std::fs::create_dir_all(d.join("a")).unwrap();
        for f in [
            "b/deep/z.yaml",
            "b/x.yaml",
            "a/y.yaml",
            "a/notes.md",
            "top.yaml",
        ] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let got = discover(&[d.to_path_buf(), d.join("a/y.yaml")]).unwrap();
        let rel: Vec<String> = got
            .iter()
            .map(|p| p.strip_prefix(d).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(rel, ["a/y.yaml", "b/deep/z.yaml", "b/x.yaml", "top.yaml"]);
        assert!(discover(&[d.join("missing")]).is_err());
    }

    #[test]
    fn resolve_server_command_makes_relative_paths_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("target/debug")).unwrap();
        std::fs::write(d.join("target/debug/boris"), "").unwrap();
        assert_eq!(
            resolve_server_command("target/debug/boris --transport stdio", d),
            format!(
                "{} --transport stdio",
                shell_quote(&d.join("target/debug/boris").to_string_lossy())
            )
        );
        assert_eq!(
            resolve_server_command("./target/debug/boris", d),
            shell_quote(&d.join("./target/debug/boris").to_string_lossy())
        );
        for keep in [
            "boris --transport stdio",
            "/usr/bin/env boris",
            "missing/bin --x",
            "'target/debug/boris' --x",
            "FOO=1 target/debug/boris",
        ] {
            assert_eq!(resolve_server_command(keep, d), keep);
        }
    }

    #[test]
    fn the_suite_is_embedded_and_selectable() {
        let all = embedded_cases();
        assert!(all.len() > 300, "{}", all.len());
        assert!(
            all.iter()
                .all(|c| c.path.starts_with("spec") && c.load().is_ok())
        );
        let view = select_cases(all.clone(), &[], &[PathBuf::from("view")]).unwrap();
        assert!(!view.is_empty() && view.iter().all(|c| c.rel.starts_with("view")));
        // `spec/view` exists in the checkout the test runs in: read from disk, same cases.
        let same = select_cases(all.clone(), &[], &[PathBuf::from("spec/view")]).unwrap();
        let paths = |v: &[CaseFile]| v.iter().map(|c| c.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&view), paths(&same));
        assert!(same.iter().all(|c| c.embedded.is_none()));
        assert!(select_cases(all.clone(), &[], &[PathBuf::from("no-such-capability")]).is_err());
        // An added directory replaces a case at the same relative path and adds others.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("protocol")).unwrap();
        std::fs::write(
            dir.path().join("protocol/ping.yaml"),
            "source: mine\nsteps:\n  - request: {method: ping}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("extra.yaml"),
            "source: mine\nsteps:\n  - request: {method: ping}\n",
        )
        .unwrap();
        let merged = select_cases(all.clone(), &[dir.path().to_path_buf()], &[]).unwrap();
        assert_eq!(merged.len(), all.len() + 1);
        let ping = merged
            .iter()
            .find(|c| c.rel == Path::new("protocol/ping.yaml"))
            .unwrap();
        assert_eq!(ping.load().unwrap().source, "mine");
    }

    /// The conventions the escape and lsp cases follow (issue 25 §1, issue 29 §1), so a
    /// new case cannot pass without its attack running or its control, nor fail for a
    /// missing server.
    #[test]
    fn escape_cases_carry_a_marker_and_lsp_cases_their_servers() {
        for file in embedded_cases() {
            let case = file.load().unwrap();
            let name = file.rel.display();
            if case.tags.iter().any(|t| t == "escape") {
                assert!(
                    case.attack_marker.is_some(),
                    "{name}: an escape case has an attack_marker"
                );
                assert!(
                    case.control.is_some() || case.no_control.is_some(),
                    "{name}: an escape case has a `control` (the attack succeeding with the \
                     defence off), or says in `no_control` why none can exist"
                );
            }
            let lsp = case.tags.iter().any(|t| t == "lsp");
            let own_server = case.args.iter().any(|a| a.starts_with("--lsp"));
            if lsp && !own_server {
                let servers = ["pyright-langserver", "typescript-language-server", "clangd"];
                assert!(
                    case.requires.iter().any(|r| servers.contains(&r.as_str())),
                    "{name}: an lsp case requires its language server"
                );
            }
        }
    }

    #[test]
    fn classname_from_path() {
        assert_eq!(classname(Path::new("spec/view/a.yaml")), "spec.view");
        assert_eq!(classname(Path::new("a.yaml")), "spec");
    }
}
