//! A peer's teardown fault is one finding, not one failure per case (issue 21 §4). Real
//! servers that end badly: Boris followed by `sleep 30` in the same shell (the server
//! outlives stdin EOF), and Boris beside a `setsid sleep` (it leaves a process behind).
//! Under an adapter that does not hold the server to Boris's teardown, each case is
//! judged on its subject and the fault is reported once; a case tagged `shutdown` is
//! about teardown and still fails on it; Boris's own adapter fails every case on it.

use std::path::Path;
use std::process::Command;

const SPEC: &str = env!("CARGO_BIN_EXE_boris-spec");
const BORIS: &str = env!("CARGO_BIN_EXE_boris");

/// Runs `boris-spec run` in `dir` over stdio; returns (exit code, stdout).
fn boris_spec(dir: &Path, server: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new(SPEC)
        .arg("run")
        .args([
            "--server",
            server,
            "--transport",
            "stdio",
            "--era",
            "2025-11-25",
        ])
        .args(["--spec", "mine", "-j", "2"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run boris-spec");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A server script in `dir` (the harness appends an adapter's `stdio_args` and a case's
/// `args` to the command: they reach Boris as `"$@"`).
fn server(dir: &Path, script: &str) -> String {
    let path = dir.join("server.sh");
    std::fs::write(&path, script.replace("BORIS", &format!("'{BORIS}'"))).expect("write script");
    format!("sh '{}'", path.display())
}

/// A directory with two cases (a plain ping, and one tagged `shutdown`) and an adapter
/// that runs Boris's own cases but leaves its teardown to findings (the default).
fn suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).expect("mkdir");
    std::fs::write(
        mine.join("ping.yaml"),
        "source: test\nsteps:\n  - request: {method: ping}\n    expect: {match: {result: {}}}\n",
    )
    .expect("write case");
    std::fs::write(
        mine.join("eof.yaml"),
        "source: test\ntags: [shutdown]\nsteps:\n  - request: {method: ping}\n",
    )
    .expect("write case");
    std::fs::write(
        dir.path().join("lenient.yaml"),
        "name: lenient\nnative: true\nprofiles: [boris]\n",
    )
    .expect("write adapter");
    dir
}

/// Boris, then a sleep: the script is still running after Boris exits at stdin EOF.
const OUTLIVES_EOF: &str = "BORIS --transport stdio \"$@\"\nsleep 30\n";

#[test]
fn a_server_that_outlives_stdin_eof_is_one_finding() {
    let dir = suite();
    let server = server(dir.path(), OUTLIVES_EOF);
    let (code, out) = boris_spec(dir.path(), &server, &["--adapter", "lenient.yaml"]);
    assert_eq!(code, 1, "a new finding fails the run: {out}");
    assert!(out.contains("PASS mine/ping.yaml\n"), "{out}");
    assert!(
        out.contains(
            "FAIL mine/eof.yaml: server did not exit within 5000ms after stdin EOF (killed)"
        ),
        "a case about teardown fails on it: {out}"
    );
    assert_eq!(out.matches("FINDING").count(), 1, "{out}");
    assert!(
        out.contains(
            "FINDING teardown/outlives-stdin-eof: server did not exit within 5000ms after stdin \
             EOF (killed) — in 1 of 2 cases run (first mine/ping.yaml)"
        ),
        "{out}"
    );
    // A baseline that expects both: the run passes, and says so in one line.
    std::fs::write(
        dir.path().join("base.yml"),
        "teardown/outlives-stdin-eof: \"keeps sleeping\"\nmine/eof.yaml: \"keeps sleeping\"\n",
    )
    .expect("write baseline");
    let (code, out) = boris_spec(
        dir.path(),
        &server,
        &["--adapter", "lenient.yaml", "--baseline", "base.yml"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("XFINDING teardown/outlives-stdin-eof: keeps sleeping (1 of 2 cases)\n"),
        "{out}"
    );
}

#[test]
fn borises_own_adapter_fails_every_case_on_it() {
    let dir = suite();
    let server = server(dir.path(), OUTLIVES_EOF);
    let (code, out) = boris_spec(dir.path(), &server, &["mine/ping.yaml"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "FAIL mine/ping.yaml: server did not exit within 5000ms after stdin EOF (killed)"
        ),
        "{out}"
    );
    assert!(!out.contains("FINDING"), "{out}");
}

#[test]
fn a_process_left_behind_is_one_finding() {
    let dir = suite();
    // setsid: out of the process group the harness kills, so only the marker finds it.
    let server = server(
        dir.path(),
        "setsid sleep 31.4321 &\nexec BORIS --transport stdio \"$@\"\n",
    );
    let (code, out) = boris_spec(dir.path(), &server, &["--adapter", "lenient.yaml"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("PASS mine/ping.yaml\n"), "{out}");
    assert!(
        out.contains("FAIL mine/eof.yaml: processes started by the server outlived it: "),
        "{out}"
    );
    assert!(
        out.contains(
            "FINDING teardown/leaves-processes: processes started by the server outlived it: "
        ),
        "{out}"
    );
    assert!(
        out.contains("in 1 of 2 cases run (first mine/ping.yaml)"),
        "{out}"
    );
}
