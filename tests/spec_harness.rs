//! Regression tests of the spec harness (issue 25 §1, issue 29 §1, §3, §6), through
//! `boris-spec run` against the real Boris:
//!
//! - the JUnit report (parsed): its counts, each failure with its step, each skip with
//!   its reason;
//! - a case whose `requires:` the machine lacks is a skip with its one-line reason,
//!   counted apart from failures, in the summary and in the JUnit report (parsed); a
//!   manifest (`--installed`) that lists the need makes it a failure;
//! - an escape case whose attack step never ran (a refused preamble) fails, and passes
//!   when it ran; a control that does not escape fails;
//! - a stopped server (SIGSTOP) fails its step at the step's deadline, never hangs;
//! - a bare run of the `lsp` cases with no language server on PATH passes (skips);
//! - a `timing` or `lsp` case runs once per transport and era, not on every route,
//!   unless `--every-route`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const SPEC: &str = env!("CARGO_BIN_EXE_boris-spec");
const BORIS: &str = env!("CARGO_BIN_EXE_boris");

/// `boris-spec run` of the cases under `dir/mine` (stdio only), returning (exit code,
/// stdout).
fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(SPEC)
        .arg("run")
        .args(["--server", &format!("'{BORIS}' --transport stdio")])
        .args([
            "--transport",
            "stdio",
            "--era",
            "2025-11-25",
            "--spec",
            "mine",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .output()
        .expect("run boris-spec");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A suite directory (`mine/`) holding these cases.
fn suite(cases: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("mine")).expect("mkdir");
    for (name, yaml) in cases {
        std::fs::write(dir.path().join("mine").join(name), yaml).expect("write case");
    }
    dir
}

const PING: &str = "source: t\nsteps:\n  - request: {method: ping}\n";
const NEEDS: &str =
    "source: t\nrequires: [surely-absent-program-4711]\nsteps:\n  - request: {method: ping}\n";

#[test]
fn a_missing_need_is_a_skip_with_its_reason_and_a_failure_when_installed() {
    let dir = suite(&[("needs.yaml", NEEDS), ("ping.yaml", PING)]);
    let (code, out) = run(dir.path(), &["--junit", "report.xml"]);
    assert_eq!(code, 0, "a skip is no failure: {out}");
    assert!(
        out.contains(
            "SKIP mine/needs.yaml: requires surely-absent-program-4711 (not on the server's PATH)\n"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("1 passed, 0 failed, 1 skipped (1 for a missing need)\n"),
        "{out}"
    );

    // The JUnit report, parsed: one skipped testcase carrying the reason, one passed.
    let xml = std::fs::read_to_string(dir.path().join("report.xml")).expect("junit");
    let cases = testcases(&xml);
    assert_eq!(cases.len(), 2, "{xml}");
    let needs = cases
        .iter()
        .find(|c| c.name == "mine/needs.yaml")
        .expect("needs");
    assert_eq!(
        needs.skipped.as_deref(),
        Some("requires surely-absent-program-4711 (not on the server&apos;s PATH)")
    );
    assert!(needs.failure.is_none());
    let ping = cases
        .iter()
        .find(|c| c.name == "mine/ping.yaml")
        .expect("ping");
    assert!(ping.skipped.is_none() && ping.failure.is_none());
    assert!(
        xml.contains("tests=\"2\" failures=\"0\" skipped=\"1\""),
        "{xml}"
    );

    // Where the machine is meant to have it, a missing need fails the case.
    std::fs::write(
        dir.path().join("installs.txt"),
        "# what this machine installs\nsurely-absent-program-4711\n",
    )
    .expect("manifest");
    let (code, out) = run(
        dir.path(),
        &["--installed", "installs.txt", "--junit", "report.xml"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL mine/needs.yaml: requires surely-absent-program-4711 (not on the server's PATH): the manifest of what this machine installs lists surely-absent-program-4711"),
        "{out}"
    );
    let xml = std::fs::read_to_string(dir.path().join("report.xml")).expect("junit");
    let cases = testcases(&xml);
    let needs = cases
        .iter()
        .find(|c| c.name == "mine/needs.yaml")
        .expect("needs");
    assert!(
        needs
            .failure
            .as_deref()
            .is_some_and(|m| m.starts_with("requires surely-absent-program-4711")),
        "{xml}"
    );
}

/// The JUnit report a CI system reads (issue 29 §6), parsed: the counts of its
/// `<testsuite>`, a failure naming the step that failed, a skip carrying its reason.
#[test]
fn the_junit_report_counts_and_explains_each_case() {
    let failing = "source: t\nsteps:\n  - request: {method: ping}\n  - call: bash\n    args: {command: \"echo hello\"}\n    expect: {contains: [goodbye]}\n";
    let dir = suite(&[
        ("pass.yaml", PING),
        ("fail.yaml", failing),
        ("needs.yaml", NEEDS),
    ]);
    let (code, out) = run(dir.path(), &["--junit", "report.xml"]);
    assert_eq!(code, 1, "{out}");
    let xml = std::fs::read_to_string(dir.path().join("report.xml")).expect("junit");

    let suite = element(&xml, "testsuite").expect("a <testsuite>");
    for (name, want) in [
        ("tests", "3"),
        ("failures", "1"),
        ("skipped", "1"),
        ("errors", "0"),
    ] {
        assert_eq!(
            attribute(suite, name).as_deref(),
            Some(want),
            "{name}: {xml}"
        );
    }
    let cases = testcases(&xml);
    assert_eq!(cases.len(), 3, "{xml}");
    let case = |name: &str| {
        cases
            .iter()
            .find(|c| c.name == format!("mine/{name}"))
            .unwrap_or_else(|| panic!("{name}: {xml}"))
    };
    let pass = case("pass.yaml");
    assert!(pass.failure.is_none() && pass.skipped.is_none(), "{xml}");

    let fail = case("fail.yaml");
    assert!(fail.skipped.is_none(), "{xml}");
    let message = unescape(fail.failure.as_deref().expect("a <failure>"));
    assert!(
        message.starts_with("step 2 (call bash): ") && message.contains("\"goodbye\""),
        "the failure names the step that failed: {message}"
    );
    // The element's text holds every failure of the case, the step included.
    let body = element_text(&xml, "failure").expect("<failure> has text");
    assert!(unescape(body).contains("step 2 (call bash)"), "{xml}");

    let needs = case("needs.yaml");
    assert!(needs.failure.is_none(), "{xml}");
    assert_eq!(
        needs.skipped.as_deref().map(unescape).as_deref(),
        Some("requires surely-absent-program-4711 (not on the server's PATH)"),
        "{xml}"
    );
}

/// A `timing` or `lsp` case runs on stdio (2025-11-25) and HTTP (2026-07-28): each
/// transport and each era once; any other case on all four routes; `--every-route` puts
/// every case on all four (DEC-113).
#[test]
fn a_timing_case_runs_once_per_transport_and_era() {
    // tools/list, not ping: the 2026-07-28 revision has no ping.
    let list = "steps:\n  - request: {method: tools/list}\n";
    let timing = format!("source: t\ntags: [timing]\n{list}");
    let lsp = format!("source: t\ntags: [lsp]\n{list}");
    let plain = format!("source: t\n{list}");
    let dir = suite(&[
        ("timing.yaml", &timing),
        ("lsp.yaml", &lsp),
        ("plain.yaml", &plain),
    ]);
    let runs = |extra: &[&str]| -> Vec<String> {
        let out = Command::new(SPEC)
            .arg("run")
            .args(["--server", &format!("'{BORIS}' --transport stdio")])
            .args(["--spec", "mine", "--junit", "routes.xml"])
            .args(extra)
            .current_dir(dir.path())
            .env_remove("CI")
            .env_remove("BORIS_SPEC_EVERY_ROUTE")
            .output()
            .expect("run boris-spec");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let xml = std::fs::read_to_string(dir.path().join("routes.xml")).expect("junit");
        let mut names: Vec<String> = testcases(&xml).into_iter().map(|c| c.name).collect();
        names.sort();
        names
    };
    let all = |name: &str| {
        ["", " [http-2026]", " [http]", " [stdio-2026]"]
            .map(|r| format!("mine/{name}{r}"))
            .to_vec()
    };
    let mut want: Vec<String> = vec![
        "mine/lsp.yaml".into(),
        "mine/lsp.yaml [http-2026]".into(),
        "mine/timing.yaml".into(),
        "mine/timing.yaml [http-2026]".into(),
    ];
    want.extend(all("plain.yaml"));
    want.sort();
    assert_eq!(runs(&[]), want);

    let mut every: Vec<String> = ["lsp.yaml", "plain.yaml", "timing.yaml"]
        .into_iter()
        .flat_map(all)
        .collect();
    every.sort();
    assert_eq!(runs(&["--every-route"]), every);

    // Only HTTP selected: the cover is both of its eras.
    let http = runs(&["--transport", "http"]);
    assert!(
        http.contains(&"mine/timing.yaml [http]".to_string())
            && http.contains(&"mine/timing.yaml [http-2026]".to_string()),
        "{http:?}"
    );
}

/// The opening tag of the first `<name …>` element (its attributes), if any.
fn element<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let start = xml.find(&format!("<{name} "))?;
    let len = xml[start..].find('>')?;
    Some(&xml[start..start + len])
}

/// The character data of the first `<name …>…</name>` element.
fn element_text<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let tag = element(xml, name)?;
    let start = xml.find(tag)? + tag.len() + 1;
    let len = xml[start..].find(&format!("</{name}>"))?;
    Some(&xml[start..start + len])
}

/// One attribute's raw (still escaped) value in an opening tag.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(tag[start..start + len].to_string())
}

/// XML's five predefined entities back to their characters (`&amp;` last, so an
/// escaped entity stays one).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// An escape case: the attack step writes the marker first, after a preamble.
fn escape_case(preamble: &str, control: &str) -> String {
    format!(
        "source: t\ntags: [sandbox, escape]\nattack_marker: ATTACK_RAN\nboris_args: [\"--deny-dir=.env\"]\n\
         files:\n  - {{path: .env, text: \"SECRET=hunter2\\n\"}}\n\
         steps:\n  - call: bash\n    args: {{command: \"{preamble}echo ATTACK_RAN; cat .env\"}}\n    \
         expect: {{not_contains: [hunter2]}}\n{control}"
    )
}

#[test]
fn an_attack_that_never_ran_fails_and_a_control_must_escape() {
    let refused = escape_case("cd /no/such/dir && ", "");
    let ran = escape_case("", "control:\n  expect: {contains: [hunter2]}\n");
    let no_escape = escape_case("", "control:\n  expect: {contains: [never-printed]}\n");
    let dir = suite(&[
        ("refused.yaml", refused.as_str()),
        ("ran.yaml", ran.as_str()),
        ("no-escape.yaml", no_escape.as_str()),
    ]);
    let (code, out) = run(dir.path(), &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL mine/refused.yaml: step 1 (call bash): the attack did not run"),
        "a refused preamble fails the case: {out}"
    );
    assert!(out.contains("PASS mine/ran.yaml\n"), "{out}");
    assert!(out.contains("PASS mine/no-escape.yaml\n"), "{out}");

    // The controls: only the cases with one, unconfined; each must escape.
    let (code, out) = run(dir.path(), &["--control"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("PASS mine/ran.yaml [control]\n"), "{out}");
    assert!(
        out.contains("FAIL mine/no-escape.yaml [control]: step 1 (call bash): expected text to contain \"never-printed\""),
        "{out}"
    );
    assert!(!out.contains("refused.yaml"), "no control, not run: {out}");
    assert!(out.contains("1 passed, 1 failed\n"), "{out}");
}

#[test]
fn a_stopped_server_fails_its_step_at_the_deadline() {
    let stopped =
        "source: t\nsteps:\n  - signal: STOP\n  - request: {method: ping}\n    timeout_ms: 500\n";
    let dir = suite(&[("stopped.yaml", stopped)]);
    let start = Instant::now();
    let (code, out) = run(dir.path(), &["--exit-timeout-ms", "500"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL mine/stopped.yaml: step 2 (request ping): "),
        "{out}"
    );
    // The step's 500 ms, the end of the case's 500 ms, the harness's own settling.
    assert!(start.elapsed() < Duration::from_secs(20), "{out}");
}

#[test]
fn a_remote_server_has_no_process_checks() {
    let looks = "source: t\nsteps:\n  - request: {method: ping}\n  - assert_no_process: \"sleep 97[.]25\"\n";
    let dir = suite(&[("looks.yaml", looks), ("ping.yaml", PING)]);
    let (code, out) = run(dir.path(), &["--remote"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("UNSUPPORTED mine/looks.yaml: it looks at the server's processes, which a harness on another machine cannot (--remote)\n"),
        "{out}"
    );
    assert!(out.contains("PASS mine/ping.yaml\n"), "{out}");
}

#[test]
fn a_bare_run_passes_without_language_servers() {
    // The lsp cases, on a PATH with no language server: each skips with its reason.
    let out = Command::new(SPEC)
        .arg("run")
        .args(["--server", &format!("'{BORIS}' --transport stdio")])
        .args(["lsp/portable-definition.yaml", "lsp/missing-server.yaml"])
        .env("PATH", "/usr/bin:/bin")
        .env_remove("BORIS_SPEC_LSP_PATH")
        .env_remove("CI")
        .output()
        .expect("run boris-spec");
    let text = String::from_utf8_lossy(&out.stdout);
    if Path::new("/usr/bin/pyright-langserver").exists() {
        return; // this machine has it where the test cannot hide it
    }
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("SKIP spec/lsp/portable-definition.yaml: requires pyright-langserver (not on the server's PATH; tests/lsp/install.sh installs it)\n"),
        "{text}"
    );
    assert!(
        text.contains("PASS spec/lsp/missing-server.yaml\n"),
        "{text}"
    );
}

/// Every program CI's manifest promises is one `.ci/run` installs (from Debian) or
/// tests/lsp/install.sh does; the other names are kernel features and the tests' build.
#[test]
fn ci_installs_every_program_of_its_manifest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("tests/ci-installs.txt")).expect("manifest");
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    let names = boris::spec::requires::parse_manifest(&manifest).expect("parses");
    for name in &names {
        let feature = boris::spec::requires::FEATURES
            .iter()
            .any(|(f, _)| f == name);
        let lsp = ["pyright-langserver", "typescript-language-server", "clangd"];
        assert!(
            feature || lsp.contains(&name.as_str()) || ci.contains(&format!("[{name}]=")),
            "{name}: in tests/ci-installs.txt but .ci/run does not install it"
        );
    }
    for needed in ["nc", "rsync", "curl", "socat"] {
        assert!(names.contains(needed), "{needed}");
    }
}

/// One `<testcase>` of a JUnit report: its name, and the message of its `<skipped>` or
/// `<failure>` if it has one.
#[derive(Debug)]
struct Testcase {
    name: String,
    skipped: Option<String>,
    failure: Option<String>,
}

/// The testcases of a JUnit report (the elements the harness writes: self-closing, or
/// holding one `<skipped>` or `<failure>` and maybe `<system-err>`).
fn testcases(xml: &str) -> Vec<Testcase> {
    let mut out = Vec::new();
    for chunk in xml.split("<testcase ").skip(1) {
        let head_end = chunk.find('>').expect("testcase tag ends");
        let head = format!(" {}", &chunk[..head_end]);
        let body = if head.ends_with('/') {
            ""
        } else {
            &chunk[head_end..chunk.find("</testcase>").expect("testcase closes")]
        };
        let child = |name: &str| {
            body.find(&format!("<{name} "))
                .map(|i| &body[i..])
                .and_then(|t| attribute(&t[..t.find('>').unwrap_or(t.len())], "message"))
        };
        out.push(Testcase {
            name: attribute(&head, "name").expect("name"),
            skipped: child("skipped"),
            failure: child("failure"),
        });
    }
    out
}
