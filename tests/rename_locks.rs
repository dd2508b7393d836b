//! A rename across two files whose paths share an edit-lock stripe (`fsutil::PathLocks`),
//! and its undo, answer (CI saw a rename that never answered once pyright had: each file
//! was locked on its own, and the second lock of one stripe waited on the first forever,
//! about one two-file rename in 64). Needs tests/lsp/install.sh's pyright: outside CI a
//! missing pyright skips the test with the reason; in CI it fails it.

use crate::common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn pyright_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/.cache/node_modules/.bin")
}

fn call(s: &mut common::Server, tool: &str, args: Value) -> (bool, String) {
    let id = s.send_request("tools/call", json!({"name": tool, "arguments": args}));
    let v = s
        .wait_for(id, Duration::from_secs(100))
        .unwrap_or_else(|| panic!("no answer to {tool} within 100 s (a lock waited on itself?)"));
    let is_error = v["result"]["isError"].as_bool().unwrap_or(true);
    (
        is_error,
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

#[test]
fn a_rename_and_its_undo_across_files_on_one_lock_stripe_answer() {
    if !pyright_bin().join("pyright-langserver").exists() {
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!in_ci, "pyright is not installed: run tests/lsp/install.sh");
        eprintln!("rename_locks: skipped: pyright is not installed (tests/lsp/install.sh)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let locks = boris::fsutil::PathLocks::default();
    let lib = root.join("lib.py");
    // A caller's file name whose real path takes the same lock as lib.py's.
    let caller = (0..100_000)
        .map(|n| root.join(format!("m{n}.py")))
        .find(|p| locks.stripe(p) == locks.stripe(&lib))
        .expect("a name on lib.py's stripe");
    std::fs::write(&lib, "def helper(x: int) -> int:\n    return x + 1\n").expect("write");
    std::fs::write(
        &caller,
        "from lib import helper\n\n\ndef run() -> int:\n    return helper(2)\n",
    )
    .expect("write");
    let path = format!(
        "{}:{}",
        pyright_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut s = common::Server::start_with_env(
        &root,
        &["--lsp-timeout", "90", "--sandbox", "off"],
        "rename-locks",
        &[("PATH", path.as_str())],
    );
    let (err, text) = call(&mut s, "view", json!({"path": "lib.py"}));
    assert!(!err, "{text}");
    let (err, text) = call(
        &mut s,
        "rename",
        json!({"path": "lib.py", "line": 1, "symbol": "helper", "new_name": "compute"}),
    );
    assert!(!err && text.contains("3 edits in 2 files"), "{text}");
    let read = |p: &Path| std::fs::read_to_string(p).expect("read");
    assert!(
        read(&caller).contains("return compute(2)"),
        "{}",
        read(&caller)
    );
    let (err, text) = call(&mut s, "undo_edit", json!({"path": "lib.py"}));
    assert!(
        !err && text.contains("Undid the rename across 2 files"),
        "{text}"
    );
    assert!(read(&caller).contains("return helper(2)") && read(&lib).contains("def helper("));
    s.stop();
}
