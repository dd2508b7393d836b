//! The spec suite as a cargo test: replays every case under `spec/` against the built
//! `boris --transport stdio` (`transport: http` cases add `--transport http --port 0`
//! and talk HTTP to the address Boris logs; a few cases run in parallel), then compares
//! the normalised transcript of each `golden: true` case with its insta snapshot in
//! `golden/`.
//!
//! - `BORIS_SPEC_FILTER=view/` runs only cases whose path (relative to `spec/`)
//!   contains the substring.
//! - New or changed goldens: `cargo insta review` (or `INSTA_UPDATE=always cargo test
//!   --test spec`), then commit `golden/*.snap`.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use boris::spec::{self, CaseOutcome, RunOptions};

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec")
}

/// The case path relative to `spec/`, e.g. `view/missing_file.yaml`.
fn rel(path: &Path) -> String {
    path.strip_prefix(spec_dir())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// `view/missing_file.yaml` → `view__missing_file` (→ `golden/view__missing_file.snap`).
fn snapshot_name(path: &Path) -> String {
    let r = rel(path);
    r.strip_suffix(".yaml").unwrap_or(&r).replace('/', "__")
}

#[test]
fn spec_suite() {
    let mut paths = spec::discover(&[spec_dir()]).expect("cannot list spec/");
    let filter = std::env::var("BORIS_SPEC_FILTER").ok();
    if let Some(f) = &filter {
        paths.retain(|p| rel(p).contains(f.as_str()));
    }
    assert!(
        !paths.is_empty(),
        "no spec cases found{}",
        filter
            .map(|f| format!(" matching BORIS_SPEC_FILTER={f:?}"))
            .unwrap_or_default()
    );

    let server = format!(
        "{} --transport stdio",
        spec::shell_quote(env!("CARGO_BIN_EXE_boris"))
    );
    let mut opts = RunOptions::new(server);
    // Every case on stdio, and those not about their transport over HTTP and under the
    // 2026-07-28 revision too (spec::routes).
    opts.routes = spec::Route::ALL.to_vec();
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 4);
    let outcomes = spec::run_paths(&paths, &opts, jobs, |o: &CaseOutcome| {
        let verdict = if o.passed { "PASS" } else { "FAIL" };
        println!("{verdict} spec/{}", rel(&o.path));
    });

    let mut failures = Vec::new();
    for o in outcomes.iter().filter(|o| !o.passed) {
        failures.push(format!(
            "FAIL spec/{}: {}",
            rel(&o.path),
            o.failures.join("\n").replace('\n', "\n    ")
        ));
    }

    // Goldens: compared on this thread, after the parallel run. A case that failed its
    // expectations is not snapshotted (its failure is already reported).
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

    let passed = outcomes.iter().filter(|o| o.passed).count();
    println!("{passed} passed, {} failed", outcomes.len() - passed);
    assert!(
        failures.is_empty(),
        "{} spec failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
