//! The spec suite as a cargo test, one test per case (issue 21 §4): each case under
//! `spec/` is replayed against the built `boris` on every route it has (stdio, HTTP, the
//! 2025-11-25 and 2026-07-28 eras; `spec::routes`), then the normalised transcript of a
//! `golden: true` case is compared with its insta snapshot in `golden/`.
//!
//! - `cargo test --test spec -- view/range` runs the cases whose name (their path under
//!   `spec/`, without `.yaml`) contains `view/range`; `--exact view/range-last-lines`
//!   one; `--list` lists them. The summary counts cases.
//! - Cases run `--test-threads` at a time (default: four per core, 4 to 8; a case
//!   that starts a language server also waits for a core, a race case runs alone:
//!   `spec::gate`), each starting its own servers.
//! - `BORIS_SPEC_FILTER=view/` still narrows the suite (the path's substring).
//! - The auth pack (spec/auth/) starts the identity provider tests/auth/install.sh
//!   installs (or the one `BORIS_SPEC_IDP` names).
//! - A case whose `requires:` the machine lacks is ignored, its reason printed
//!   (`spec/…: skipped: requires nc (…)`); with `CI=true`, a need listed in
//!   `tests/ci-installs.txt` fails it instead.
//! - An escape case with a `control:` also has a trial `<name> [control]`: the case
//!   against an unconfined server (`--sandbox=off`), where the attack must work.
//! - New or changed goldens: `cargo insta review` (or `INSTA_UPDATE=always cargo test
//!   --test spec`), then commit `golden/*.snap`.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use boris::spec::{self, RunOptions};
use libtest_mimic::{Arguments, Failed, Trial};

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec")
}

/// The case path relative to `spec/`, e.g. `view/range-last-lines.yaml` (a route's
/// outcome carries its route after it: `… [http]`).
fn rel(path: &Path) -> String {
    path.strip_prefix(spec_dir())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// `view/range-last-lines.yaml` → `view__range-last-lines` (→ `golden/….snap`).
fn snapshot_name(path: &Path) -> String {
    let r = rel(path);
    r.strip_suffix(".yaml").unwrap_or(&r).replace('/', "__")
}

/// The auth pack's identity provider (spec/auth/, `requires: [identity-provider]`): the
/// suite's fixture on the Node tests/auth/install.sh installed beside npm
/// oauth2-mock-server, unless `BORIS_SPEC_IDP` names another. The fixture is copied from
/// the checkout each run, so an edit of it never meets a stale copy.
fn auth_pack_provider() -> Option<String> {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/auth/.cache");
    let node = std::fs::read_to_string(cache.join("node-path")).ok()?;
    let node = node.trim();
    let npm = cache.join("npm");
    if !Path::new(node).is_file() || !npm.join("node_modules/oauth2-mock-server").is_dir() {
        return None;
    }
    let script = npm.join("idp_fixture.mjs");
    std::fs::write(&script, spec::identity::FIXTURE_SCRIPT).ok()?;
    Some(format!(
        "{} {}",
        spec::shell_quote(node),
        spec::shell_quote(&script.to_string_lossy())
    ))
}

fn main() -> std::process::ExitCode {
    let mut args = Arguments::from_args();
    // A case mostly waits (on a server, a command, a clock): four at a time per core,
    // 4 to 8 in all; the few that start a language server wait for a core of their own,
    // a race case runs alone (spec::gate). DEC-116.
    if args.test_threads.is_none() {
        args.test_threads =
            Some((std::thread::available_parallelism().map_or(1, |n| n.get()) * 4).clamp(4, 8));
    }
    let mut paths = match spec::discover(&[spec_dir()]) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cannot list spec/: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if let Ok(f) = std::env::var("BORIS_SPEC_FILTER") {
        paths.retain(|p| rel(p).contains(f.as_str()));
    }
    // The `lsp` cases (issue 20) run against the language servers tests/lsp/install.sh
    // installs; the harness puts them on PATH for those cases only (and looks for a
    // case's `requires:` programs there too).
    let lsp_bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/.cache/node_modules/.bin");
    if lsp_bin.is_dir() && std::env::var_os(spec::runner::LSP_PATH_VAR).is_none() {
        // SAFETY: no other thread runs yet.
        unsafe { std::env::set_var(spec::runner::LSP_PATH_VAR, &lsp_bin) };
    }
    let server = format!(
        "{} --transport stdio",
        spec::shell_quote(env!("CARGO_BIN_EXE_boris"))
    );
    let mut opts = RunOptions::new(server);
    if opts.identity_provider.is_none() {
        opts.identity_provider = auth_pack_provider();
    }
    // Every case on stdio, and those not about their transport over HTTP and under the
    // 2026-07-28 revision too (spec::routes).
    opts.routes = spec::Route::ALL.to_vec();
    // A case's missing need skips it with its reason; in CI (CI=true) a need that
    // tests/ci-installs.txt says CI installs fails it instead.
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ci-installs.txt");
        match std::fs::read_to_string(&manifest)
            .map_err(|e| e.to_string())
            .and_then(|t| spec::requires::parse_manifest(&t))
        {
            Ok(m) => opts.must_have = m,
            Err(e) => {
                eprintln!("{}: {e}", manifest.display());
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let mut control = opts.clone();
    control.control = true;
    let (opts, control) = (Arc::new(opts), Arc::new(control));
    let mut trials = Vec::new();
    for path in paths {
        let r = rel(&path);
        let name = r.strip_suffix(".yaml").unwrap_or(&r).to_string();
        let case = spec::load_case(&path).ok();
        // The escape cases' positive controls (issue 25 §1): the case's server
        // unconfined, where the attack must work.
        let has_control = case.as_ref().is_some_and(|c| c.control.is_some());
        for (name, opts) in [
            (name.clone(), opts.clone()),
            (format!("{name} [control]"), control.clone()),
        ] {
            if opts.control && !has_control {
                continue;
            }
            let skip = case
                .as_ref()
                .and_then(|c| spec::runner::needs_verdict(c, &opts).ok().flatten());
            // Said for the trials the filter selects (libtest-mimic lists them "ignored").
            let selected = args.filter.as_ref().is_none_or(|f| {
                if args.exact {
                    name == *f
                } else {
                    name.contains(f.as_str())
                }
            });
            if let Some(why) = skip.as_ref().filter(|_| selected) {
                eprintln!("spec/{r}: skipped: {why}");
            }
            let path = path.clone();
            trials.push(
                Trial::test(name, move || run_case(&path, &opts))
                    .with_kind("spec")
                    .with_ignored_flag(skip.is_some()),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// One case on every route; then its golden. Every failing route is reported.
fn run_case(path: &Path, opts: &RunOptions) -> Result<(), Failed> {
    let outcomes = spec::run_paths(&[path.to_path_buf()], opts, 1, |_| {});
    let mut failures: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.passed)
        .map(|o| {
            format!(
                "FAIL spec/{}: {}",
                rel(&o.path),
                o.failures.join("\n").replace('\n', "\n    ")
            )
        })
        .collect();
    // A case that failed its expectations is not snapshotted (its failure says why).
    for o in outcomes
        .iter()
        .filter(|o| o.golden && o.passed && !o.skipped)
    {
        let name = snapshot_name(&o.path);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../golden");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(&o.path);
        settings.set_omit_expression(true);
        let transcript = &o.transcript;
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_yaml_snapshot!(name.as_str(), transcript));
        }));
        if r.is_err() {
            failures.push(format!(
                "GOLDEN spec/{}: transcript differs from golden/{name}.snap \
                 (see the diff above; accept with `cargo insta review`)",
                rel(&o.path)
            ));
        }
    }
    if outcomes.is_empty() {
        failures.push(format!(
            "spec/{}: no outcome (the case did not run)",
            rel(path)
        ));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}
