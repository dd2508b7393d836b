//! Every edit's diagnostics answer the edit that was made (issue 26), checked against
//! pyright's own CLI on the same content.
//!
//! A seeded run of random steps on two projects — a two-file fixture and pallets/click
//! (tests/lsp/click.sh's layout of its pinned wheel) — interleaves queries (definition,
//! references, hover, symbols), edits that add and remove type errors in one file and
//! across files (a signature its caller then breaks), and shell commands that change
//! files between calls. Each edit's result is compared with the truth: `pyright
//! --outputjson` on every file's content just before and just after the edit, all the
//! states checked in one CLI run at the end (one copy per state, one execution
//! environment each). The delta — introduced errors by rule and line, cleared errors by
//! count — must be the CLI's.
//!
//! Seeds: `BORIS_LSP_SEED` (a number) or the fixed default; the seed and every step are
//! printed, so a failure replays. Needs tests/lsp/install.sh's pyright: outside CI a
//! missing pyright (or a click that cannot be unpacked) skips the test with the reason;
//! in CI it fails it.

use crate::common;

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

/// splitmix64: a small seeded generator, so a run replays from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A project the steps run on.
struct Project {
    name: &'static str,
    /// Where its files come from (copied into a temporary directory).
    source: PathBuf,
    /// The files steps change, relative to the root.
    files: Vec<&'static str>,
    /// Where imports resolve from, relative to the root ("" or "src").
    import_root: &'static str,
    /// Queries: (tool, arguments).
    queries: Vec<(&'static str, Value)>,
    /// A signature edit that breaks callers in another file: (file, old, new).
    signature: Option<(&'static str, &'static str, &'static str)>,
    /// A function the rename tool renames back and forth: (file, one name, the other).
    rename: Option<(&'static str, &'static str, &'static str)>,
    steps: usize,
}

/// The state of the changed files: their contents, in `Project::files` order.
type State = Vec<String>;

/// One checked edit.
struct Checked {
    step: usize,
    file: &'static str,
    before: usize,
    after: usize,
    answer: String,
}

fn pyright_bin() -> PathBuf {
    Path::new(MANIFEST).join("tests/lsp/.cache/node_modules/.bin")
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Skips (outside CI) or fails (in CI) with `why`.
fn unavailable(why: &str) {
    assert!(!in_ci(), "{why}");
    eprintln!("lsp_edits: skipped: {why}");
}

fn fixture() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("boris-lsp-fixture-src-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("fixture dir");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).expect("write");
    write(
        "pyproject.toml",
        "[tool.pyright]\ntypeCheckingMode = \"standard\"\n",
    );
    write(
        "lib.py",
        "def helper(x: int) -> int:\n    return x + 1\n\n\ndef other(y: str) -> str:\n    return y\n",
    );
    write(
        "main.py",
        "from lib import helper, other\n\n\ndef run() -> int:\n    return helper(2)\n\n\n\
         def name() -> str:\n    return other(\"a\")\n",
    );
    dir
}

fn projects(click: &Path) -> Vec<Project> {
    vec![
        Project {
            name: "fixture",
            source: fixture(),
            files: vec!["lib.py", "main.py"],
            import_root: "",
            queries: vec![
                ("definition", json!({"path": "main.py", "symbol": "helper"})),
                ("references", json!({"path": "lib.py", "symbol": "helper"})),
                ("hover", json!({"path": "main.py", "symbol": "helper"})),
                ("symbols", json!({"path": "lib.py"})),
            ],
            signature: Some(("lib.py", "def helper(x: int)", "def helper(x: str)")),
            rename: Some(("lib.py", "other", "other_b")),
            steps: 20,
        },
        Project {
            name: "click",
            source: click.to_path_buf(),
            files: vec!["src/click/utils.py", "src/click/termui.py"],
            import_root: "src",
            queries: vec![
                (
                    "definition",
                    json!({"path": "src/click/termui.py", "symbol": "echo"}),
                ),
                (
                    "references",
                    json!({"path": "src/click/utils.py", "symbol": "echo"}),
                ),
                (
                    "references",
                    json!({"path": "src/click/utils.py", "symbol": "echo"}),
                ),
                (
                    "hover",
                    json!({"path": "src/click/utils.py", "symbol": "echo"}),
                ),
                ("symbols", json!({"path": "src/click/termui.py"})),
            ],
            signature: None,
            rename: None,
            steps: 12,
        },
    ]
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read project") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn text_of(v: &Value) -> String {
    v["result"]["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_else(|| v.to_string())
}

fn call(s: &mut common::Server, tool: &str, args: Value) -> (bool, String) {
    let id = s.send_request("tools/call", json!({"name": tool, "arguments": args}));
    let v = s
        .wait_for(id, Duration::from_secs(180))
        .unwrap_or_else(|| panic!("no answer to {tool}"));
    let is_error = v["result"]["isError"].as_bool().unwrap_or(true);
    (is_error, text_of(&v))
}

/// The top-level `def NAME(` lines of `text` that occur once: where an error line can go.
fn anchors(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .filter(|l| l.starts_with("def "))
        .filter(|l| lines.iter().filter(|m| m == l).count() == 1)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The error lines steps added (by edits, `_e`, or commands, `_c`) that `text` holds.
fn added(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(prefix) && l.contains(" = "))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn read_state(root: &Path, p: &Project) -> State {
    p.files
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).expect("read a changed file"))
        .collect()
}

fn state_index(states: &mut Vec<State>, s: State) -> usize {
    match states.iter().position(|x| *x == s) {
        Some(i) => i,
        None => {
            states.push(s);
            states.len() - 1
        }
    }
}

/// Runs `p`'s random steps; returns the states seen and the edits to check.
fn run_steps(p: &Project, root: &Path, rng: &mut Rng) -> (Vec<State>, Vec<Checked>) {
    let lsp_path = format!(
        "{}:{}",
        pyright_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut s = common::Server::start_with_env(
        root,
        &[
            "--diagnostics-wait",
            "90",
            "--lsp-timeout",
            "120",
            "--sandbox",
            "off",
        ],
        "lsp-edits",
        &[("PATH", lsp_path.as_str())],
    );
    let mut states = vec![read_state(root, p)];
    let mut checked = Vec::new();
    let mut counter = 0usize;
    for step in 0..p.steps {
        counter += 1;
        let roll = rng.below(10);
        let file = p.files[rng.below(p.files.len())];
        let text = std::fs::read_to_string(root.join(file)).expect("read");
        // What the edit (or command) is: old and new text, or a command.
        let mut edit: Option<(String, String)> = None;
        match roll {
            0..=2 => {
                let (tool, args) = &p.queries[rng.below(p.queries.len())];
                let (err, out) = call(&mut s, tool, args.clone());
                eprintln!("  {step}: {tool} {args} -> error={err}");
                assert!(!err, "step {step}: {tool} failed: {out}");
            }
            3 => {
                // A command adds an error line at the end of the file, or takes the ones
                // commands added out.
                let command = if added(&text, "_c").is_empty() || rng.below(2) == 0 {
                    format!("printf \"_c{counter}: int = 'c{counter}'\\n\" >> {file}")
                } else {
                    format!("sed -i '/^_c[0-9]*: int = /d' {file}")
                };
                let (err, out) = call(&mut s, "bash", json!({"command": command}));
                eprintln!("  {step}: bash {command:?}");
                assert!(!err, "step {step}: the command failed: {out}");
                states.push(read_state(root, p));
            }
            4 if p.signature.is_some() => {
                // The signature edit (its callers in another file break), or its undoing.
                let (sig_file, a, b) = p.signature.expect("signature");
                let sig_text = std::fs::read_to_string(root.join(sig_file)).expect("read");
                let (old, new) = if sig_text.contains(a) { (a, b) } else { (b, a) };
                call(&mut s, "view", json!({"path": sig_file}));
                checked_edit(
                    &mut s,
                    p,
                    root,
                    sig_file,
                    old,
                    new,
                    step,
                    &mut states,
                    &mut checked,
                );
                continue;
            }
            5 if p.rename.is_some() => {
                // A rename changes both files through the server's workspace edit; it
                // may refuse (a file a command changed since it was viewed): either way
                // the files are as they are now for the next edit.
                let (in_file, a, b) = p.rename.expect("rename");
                let in_text = std::fs::read_to_string(root.join(in_file)).expect("read");
                let (from, to) = if in_text.contains(&format!("def {a}(")) {
                    (a, b)
                } else {
                    (b, a)
                };
                for f in &p.files {
                    call(&mut s, "view", json!({"path": f}));
                }
                let (err, out) = call(
                    &mut s,
                    "rename",
                    json!({"path": in_file, "symbol": from, "new_name": to}),
                );
                eprintln!("  {step}: rename {from} -> {to}: error={err}");
                assert!(!err || out.contains("["), "step {step}: rename: {out}");
                states.push(read_state(root, p));
            }
            _ => {
                let mine = added(&text, "_e");
                if !mine.is_empty() && rng.below(2) == 0 {
                    let line = mine[rng.below(mine.len())].clone();
                    edit = Some((line, String::new()));
                } else {
                    let spots = anchors(&text);
                    let at = spots[rng.below(spots.len())].clone();
                    // Two kinds of error, two rules: a wrong type, an undefined name.
                    let error = if rng.below(2) == 0 {
                        format!("_e{counter}: int = 'e{counter}'")
                    } else {
                        format!("_e{counter} = undefined_{counter}")
                    };
                    let new = format!("{error}\n\n\n{at}");
                    edit = Some((at, new));
                }
            }
        }
        if let Some((old, new)) = edit {
            call(&mut s, "view", json!({"path": file}));
            checked_edit(
                &mut s,
                p,
                root,
                file,
                &old,
                &new,
                step,
                &mut states,
                &mut checked,
            );
        }
    }
    s.stop();
    (states, checked)
}

#[allow(clippy::too_many_arguments)]
fn checked_edit(
    s: &mut common::Server,
    p: &Project,
    root: &Path,
    file: &'static str,
    old: &str,
    new: &str,
    step: usize,
    states: &mut Vec<State>,
    checked: &mut Vec<Checked>,
) {
    let before = state_index(states, read_state(root, p));
    let (err, answer) = call(
        s,
        "str_replace",
        json!({"path": file, "old_str": old, "new_str": new}),
    );
    assert!(!err, "step {step}: the edit failed: {answer}");
    let after = state_index(states, read_state(root, p));
    eprintln!(
        "  {step}: str_replace {file} {:?} -> {:?}\n    {}",
        old.trim_end(),
        new.trim_end(),
        answer
            .rsplit("\n\n")
            .next()
            .unwrap_or("")
            .replace('\n', "\n    ")
    );
    checked.push(Checked {
        step,
        file,
        before,
        after,
        answer,
    });
}

/// An error: (rule, 1-based line).
type Err = (String, usize);

/// The CLI's errors of every changed file in every state: `[state][file]`.
fn truth(p: &Project, root: &Path, states: &[State]) -> Vec<Vec<Vec<Err>>> {
    let snap = root.with_extension("truth");
    let _ = std::fs::remove_dir_all(&snap);
    let mut envs = Vec::new();
    let mut targets = Vec::new();
    for (i, state) in states.iter().enumerate() {
        let dir = snap.join(format!("s{i}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        copy_dir(root, &dir);
        for (f, text) in p.files.iter().zip(state) {
            std::fs::write(dir.join(f), text).expect("write a state");
            targets.push(dir.join(f));
        }
        let _ = std::fs::remove_file(dir.join("pyproject.toml"));
        let env_root = if p.import_root.is_empty() {
            format!("s{i}")
        } else {
            format!("s{i}/{}", p.import_root)
        };
        envs.push(format!("{{ root = \"{env_root}\" }}"));
    }
    // The project's settings, one execution environment per state (imports resolve in
    // their own copy).
    let settings = std::fs::read_to_string(root.join("pyproject.toml")).expect("pyproject");
    let settings = settings
        .lines()
        .filter(|l| !l.starts_with("include"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(
        snap.join("pyproject.toml"),
        format!(
            "{settings}\nexecutionEnvironments = [{}]\n",
            envs.join(", ")
        ),
    )
    .expect("write settings");
    let out = Command::new(pyright_bin().join("pyright"))
        .arg("--outputjson")
        .args(&targets)
        .current_dir(&snap)
        .output()
        .expect("run the pyright CLI");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "pyright --outputjson: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut by_file: HashMap<PathBuf, Vec<Err>> = HashMap::new();
    for d in report["generalDiagnostics"]
        .as_array()
        .expect("diagnostics")
    {
        if d["severity"] != "error" {
            continue;
        }
        let file = PathBuf::from(d["file"].as_str().expect("file"));
        let rule = d["rule"].as_str().unwrap_or("").to_string();
        let line = d["range"]["start"]["line"].as_u64().expect("line") as usize + 1;
        by_file.entry(file).or_default().push((rule, line));
    }
    let _ = std::fs::remove_dir_all(&snap);
    let snap = snap.canonicalize().unwrap_or(snap);
    (0..states.len())
        .map(|i| {
            p.files
                .iter()
                .map(|f| {
                    by_file
                        .get(&snap.join(format!("s{i}")).join(f))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect()
}

/// What Boris's answer says the edit did: introduced (rule, line), cleared count.
fn reported(answer: &str, label: &str) -> (Vec<Err>, usize) {
    let mut introduced = Vec::new();
    let mut cleared = 0;
    for line in answer.lines() {
        if let Some(rest) = line.strip_prefix(&format!("  {label}:"))
            && rest.contains(": error: ")
        {
            let n = rest
                .split(':')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let rule = line
                .rsplit_once('[')
                .map(|(_, r)| r.trim_end_matches(']').to_string())
                .unwrap_or_default();
            introduced.push((rule, n));
        }
        if let Some(rest) = line.strip_prefix("The edit cleared ") {
            cleared = rest
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    (introduced, cleared)
}

/// The multiset difference of rules, and each rule's lines in `after`.
fn expected(before: &[Err], after: &[Err]) -> (BTreeMap<String, i64>, usize) {
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (r, _) in before {
        *counts.entry(r.clone()).or_default() -= 1;
    }
    for (r, _) in after {
        *counts.entry(r.clone()).or_default() += 1;
    }
    let cleared = counts.values().filter(|n| **n < 0).map(|n| -n).sum::<i64>() as usize;
    counts.retain(|_, n| *n > 0);
    (counts, cleared)
}

fn check(p: &Project, truth: &[Vec<Vec<Err>>], checked: &[Checked]) -> Vec<String> {
    let mut wrong = Vec::new();
    for c in checked {
        let fi = p
            .files
            .iter()
            .position(|f| *f == c.file)
            .expect("a changed file");
        let (before, after) = (&truth[c.before][fi], &truth[c.after][fi]);
        let (want, want_cleared) = expected(before, after);
        let (got, got_cleared) = reported(&c.answer, c.file);
        let mut got_counts: BTreeMap<String, i64> = BTreeMap::new();
        for (r, _) in &got {
            *got_counts.entry(r.clone()).or_default() += 1;
        }
        let lines_right = got.iter().all(|e| after.contains(e));
        let silent = !c.answer.contains("Diagnostics:");
        if got_counts != want || got_cleared != want_cleared || !lines_right || !silent {
            wrong.push(format!(
                "{} step {}: {} — the CLI says introduced {want:?} cleared {want_cleared} \
                 (before {before:?}, after {after:?}); Boris said introduced {got:?} cleared \
                 {got_cleared}:\n{}",
                p.name,
                c.step,
                c.file,
                c.answer.rsplit("\n\n").next().unwrap_or("")
            ));
        }
    }
    wrong
}

#[test]
fn every_edit_answers_its_own_content() {
    if !pyright_bin().join("pyright-langserver").exists() {
        return unavailable("pyright is not installed: run tests/lsp/install.sh");
    }
    let click = Command::new("bash")
        .arg(Path::new(MANIFEST).join("tests/lsp/click.sh"))
        .output();
    let click = match click {
        Ok(o) if o.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim().to_string())
        }
        Ok(o) => {
            return unavailable(&format!(
                "tests/lsp/click.sh could not unpack click: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Err(e) => return unavailable(&format!("tests/lsp/click.sh: {e}")),
    };
    let seed: u64 = std::env::var("BORIS_LSP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(26);
    eprintln!("lsp_edits: seed {seed} (BORIS_LSP_SEED replays it)");
    let mut rng = Rng(seed);
    let mut wrong = Vec::new();
    let mut edits = 0;
    for p in projects(&click) {
        let root =
            std::env::temp_dir().join(format!("boris-lsp-edits-{}-{}", p.name, std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("work dir");
        copy_dir(&p.source, &root);
        eprintln!("lsp_edits: {} ({} steps)", p.name, p.steps);
        let started = std::time::Instant::now();
        let (states, checked) = run_steps(&p, &root, &mut rng);
        let stepped = started.elapsed();
        let truth = truth(&p, &root, &states);
        eprintln!(
            "lsp_edits: {}: steps {:.1} s, the CLI on {} states {:.1} s",
            p.name,
            stepped.as_secs_f64(),
            states.len(),
            (started.elapsed() - stepped).as_secs_f64()
        );
        edits += checked.len();
        wrong.extend(check(&p, &truth, &checked));
        let _ = std::fs::remove_dir_all(&root);
        if p.name == "fixture" {
            let _ = std::fs::remove_dir_all(&p.source);
        }
    }
    assert!(edits >= 6, "seed {seed}: only {edits} edits were checked");
    assert!(
        wrong.is_empty(),
        "seed {seed}: {} of {edits} edits were answered wrongly:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    eprintln!("lsp_edits: {edits} edits, every answer the CLI's");
}
