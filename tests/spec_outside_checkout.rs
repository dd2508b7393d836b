//! `boris-spec` carries its suite (issue 13): run from an empty directory, with no
//! `spec/` anywhere near, it still finds and runs the cases it was built with, and
//! `--spec DIR` runs a directory of one's own instead.

use std::process::Command;

const SPEC: &str = env!("CARGO_BIN_EXE_boris-spec");
const BORIS: &str = env!("CARGO_BIN_EXE_boris");

fn boris_spec(dir: &std::path::Path, args: &[&str]) -> (bool, String) {
    let server = format!("'{BORIS}' --transport stdio");
    let out = Command::new(SPEC)
        .arg("run")
        .args(["--server", &server])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run boris-spec");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_built_in_suite_runs_from_an_empty_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (ok, out) = boris_spec(dir.path(), &["protocol/ping.yaml", "robustness"]);
    assert!(ok, "{out}");
    assert!(out.contains("PASS spec/protocol/ping.yaml"), "{out}");
    assert!(
        out.lines().any(|l| l.ends_with(" passed, 0 failed")),
        "{out}"
    );
    // A selector that names nothing is a usage error, not an empty success.
    let (ok, _) = boris_spec(dir.path(), &["no-such-part"]);
    assert!(!ok);
}

#[test]
fn spec_dir_replaces_the_suite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).expect("mkdir");
    std::fs::write(
        mine.join("pong.yaml"),
        "source: mine\nsteps:\n  - request: {method: ping}\n    expect: {match: {result: {}}}\n",
    )
    .expect("write case");
    let (ok, out) = boris_spec(dir.path(), &["--spec", "mine"]);
    assert!(ok, "{out}");
    assert!(out.contains("PASS mine/pong.yaml\n"), "{out}");
    // The same case over HTTP too; ping is not in the 2026-07-28 revision, so the
    // stateless routes leave it out.
    assert!(out.contains("PASS mine/pong.yaml [http]\n"), "{out}");
    assert!(out.contains("2 passed, 0 failed"), "{out}");
    let (ok, out) = boris_spec(dir.path(), &["--spec", "mine", "--transport", "stdio"]);
    assert!(ok, "{out}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

fn verb(args: &[&str]) -> (bool, String) {
    let out = Command::new(SPEC)
        .args(args)
        .output()
        .expect("run boris-spec");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn smoke_and_lint_pass_on_boris() {
    let server = format!("'{BORIS}' --transport stdio");
    let (ok, out) = verb(&["smoke", "--server", &server]);
    assert!(ok, "{out}");
    assert!(
        out.contains("ok   tools/list: ") && out.contains(" tools: apply_patch, bash, "),
        "{out}"
    );
    assert!(
        out.contains("ok   prompts: neither declared nor answered"),
        "{out}"
    );
    // Boris's own tools/list has nothing a client warns about.
    let (ok, out) = verb(&["lint", "--server", &server, "--strict"]);
    assert!(ok, "{out}");
    assert!(out.contains("0 errors, 0 warnings"), "{out}");
    // A server that does not start is a failure, not a hang.
    let (ok, out) = verb(&["smoke", "--server", "false", "--timeout-ms", "3000"]);
    assert!(!ok, "{out}");
}

/// `boris-spec record` turns a script of calls into a case that passes, with its golden.
#[test]
fn record_writes_a_case_and_its_golden() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("spec/demo")).expect("mkdir");
    std::fs::write(
        dir.path().join("script.yaml"),
        "files:\n  - {path: a.txt, text: \"one\\n\"}\nsteps:\n  - do: read_file\n    with: {path: a.txt}\n  - call: bash\n    args: {command: \"cat a.txt; date +%s%N\"}\n  - request: {method: tasks/get, params: {taskId: x}}\n",
    )
    .expect("write script");
    let (ok, out) = verb_in(
        dir.path(),
        &[
            "record",
            "--server",
            &format!("{BORIS} --transport stdio"),
            "script.yaml",
            "-o",
            "spec/demo/recorded.yaml",
            "--golden",
        ],
    );
    assert!(ok, "{out}");
    assert!(
        out.contains("step 2: its text changed between two runs"),
        "{out}"
    );
    let case = std::fs::read_to_string(dir.path().join("spec/demo/recorded.yaml")).expect("case");
    assert!(case.starts_with("source: 'TODO"), "{case}");
    assert!(case.contains("golden: true"), "{case}");
    assert!(case.contains("text: \"     1\\tone\\n\""), "{case}");
    assert!(case.contains("jsonrpc_error: -32021"), "{case}");
    let golden =
        std::fs::read_to_string(dir.path().join("golden/demo__recorded.snap")).expect("golden");
    assert!(golden.contains("method: tasks/get"), "{golden}");
    // The written case passes as written.
    let (ok, out) = boris_spec(dir.path(), &["--spec", "spec", "--transport", "stdio"]);
    assert!(ok, "{out}");
    assert!(out.contains("PASS spec/demo/recorded.yaml\n"), "{out}");
}

/// boris-spec with `args` in `dir`: success, and stdout then stderr.
fn verb_in(dir: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(SPEC)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run boris-spec");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The suite's first run works (issue 21 §4): the bare binary, as the Boris adapter's
/// `server: boris` suggests, passes on every route — the adapter adds the transport each
/// needs (Boris serves HTTP on 8080 by default, so stdio routes used to time out).
#[test]
fn the_bare_binary_passes_on_every_route() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(SPEC)
        .args(["run", "--server", BORIS])
        .args([
            "protocol/ping.yaml",
            "view/range-last-lines.yaml",
            "http/initialize.yaml",
        ])
        .current_dir(dir.path())
        .output()
        .expect("run boris-spec");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for route in ["", " [stdio-2026]", " [http]", " [http-2026]"] {
        assert!(
            text.contains(&format!("PASS spec/view/range-last-lines.yaml{route}\n")),
            "{text}"
        );
    }
    assert!(text.contains("PASS spec/http/initialize.yaml"), "{text}");
}
