//! The spec suite as a cargo test, one test per case (issue 21 §4): each case under
//! `spec/` is replayed against the built `boris` on every route it has (stdio, HTTP, the
//! 2025-11-25 and 2026-07-28 eras; `spec::routes`), then the normalised transcript of a
//! `golden: true` case is compared with its insta snapshot in `golden/`.
//!
//! - `cargo test --test spec -- view/range` runs the cases whose name (their path under
//!   `spec/`, without `.yaml`) contains `view/range`; `--exact view/range-last-lines`
//!   one; `--list` lists them. The summary counts cases.
//! - Cases run `--test-threads` at a time (default: the cores, at least 2, at most 4),
//!   each starting its own servers.
//! - `BORIS_SPEC_FILTER=view/` still narrows the suite (the path's substring).
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

fn main() -> std::process::ExitCode {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        args.test_threads = Some(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .clamp(2, 4),
        );
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
    // installs; the harness puts them on PATH for those cases only.
    let lsp_bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/.cache/node_modules/.bin");
    let have_lsp = lsp_bin.join("pyright-langserver").exists();
    if have_lsp && std::env::var_os(spec::runner::LSP_PATH_VAR).is_none() {
        // SAFETY: no other thread runs yet.
        unsafe { std::env::set_var(spec::runner::LSP_PATH_VAR, &lsp_bin) };
    }
    let have_clangd = boris::lsp::find_program("clangd").is_some();
    // Outside CI a missing server skips its cases (saying how to get it); in CI it fails them.
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let server = format!(
        "{} --transport stdio",
        spec::shell_quote(env!("CARGO_BIN_EXE_boris"))
    );
    let mut opts = RunOptions::new(server);
    // Every case on stdio, and those not about their transport over HTTP and under the
    // 2026-07-28 revision too (spec::routes).
    opts.routes = spec::Route::ALL.to_vec();
    let opts = Arc::new(opts);
    let trials = paths
        .into_iter()
        .map(|path| {
            let r = rel(&path);
            let name = r.strip_suffix(".yaml").unwrap_or(&r).to_string();
            let opts = opts.clone();
            let tags = spec::load_case(&path).map(|c| c.tags).unwrap_or_default();
            let missing = tags.iter().any(|t| t == "lsp") && !have_lsp
                || tags.iter().any(|t| t == "clangd") && !have_clangd;
            if missing && !in_ci {
                eprintln!("spec/{r}: ignored: its language server is not installed (run tests/lsp/install.sh)");
            }
            Trial::test(name, move || run_case(&path, &opts))
                .with_kind("spec")
                .with_ignored_flag(missing && !in_ci)
        })
        .collect();
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
    for o in outcomes.iter().filter(|o| o.golden && o.passed) {
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
