//! The generated hostile-input pack (issue 29 §5) against Boris, every tool profile: the
//! fixed seed and count CI runs. Each call must be answered, well-formed, change nothing
//! when it fails, and never change anything outside the workdir; a failure prints the
//! shrunk case to paste into `spec/`.

use std::time::Duration;

use boris::spec::hostile::{self, Options};

fn run(profile: &[&str]) {
    let server = format!(
        "'{}' --transport stdio {}",
        env!("CARGO_BIN_EXE_boris"),
        profile.join(" ")
    );
    let opts = Options {
        server,
        seed: hostile::DEFAULT_SEED,
        cases: hostile::DEFAULT_CASES,
        timeout: Duration::from_secs(60),
        only: vec![],
        skip: vec![],
    };
    let report = hostile::run(&opts).unwrap_or_else(|e| panic!("the run failed: {e}"));
    assert!(report.calls == opts.cases, "{} calls made", report.calls);
    assert!(
        report.tools.len() >= 5,
        "too few tools called: {:?}",
        report.tools
    );
    assert!(
        report.failures.is_empty(),
        "{}",
        hostile::render(&report, &opts)
    );
}

#[test]
fn default_profile() {
    run(&[]);
}

#[test]
fn claude_code_profile() {
    run(&["--tool-profile", "claude-code"]);
}

#[test]
fn codex_profile() {
    run(&["--tool-profile", "codex"]);
}

#[test]
fn gemini_cli_profile() {
    run(&["--tool-profile", "gemini-cli"]);
}

#[test]
fn anthropic_compat_and_pipe() {
    run(&["--anthropic-compat"]);
    run(&["--bash-profile", "pipe"]);
}
