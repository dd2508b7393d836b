//! What the tools cost a model to read (issue 28 §6): the compact JSON of each profile's
//! `tools/list` result, with no language server on PATH, within its budget. A size, not a
//! timing: the budget is the (the default profile at most 20,000 bytes) and, for
//! the other profiles, their size after that issue with a little room, each below its
//! size before it. `bench/tool_bytes.py` prints the bytes per tool.

use crate::common::Server;
use serde_json::json;

/// (flags, budget in bytes, size before issue 28 §6).
const BUDGETS: [(&[&str], usize, usize); 5] = [
    (&[], 20_000, 32_028),
    (&["--tool-profile", "anthropic-compat"], 11_000, 19_606),
    (&["--tool-profile", "claude-code"], 14_500, 16_705),
    (&["--tool-profile", "gemini-cli"], 14_800, 15_233),
    (&["--tool-profile", "codex"], 7_600, 7_958),
];

/// A PATH holding only the shells: no language server is found.
fn bare_path() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for shell in ["/bin/bash", "/bin/sh"] {
        if std::path::Path::new(shell).exists() {
            let name = shell.rsplit('/').next().unwrap_or(shell);
            std::os::unix::fs::symlink(shell, dir.path().join(name)).expect("symlink");
        }
    }
    dir
}

#[test]
fn every_profile_lists_its_tools_within_budget() {
    let bin = bare_path();
    let path = bin.path().to_string_lossy().to_string();
    let mut over = Vec::new();
    for (flags, budget, before) in BUDGETS {
        assert!(
            budget < before,
            "{flags:?}: the budget must be below the old size"
        );
        let work = tempfile::tempdir().expect("tempdir");
        let mut server =
            Server::start_with_env(work.path(), flags, "tool-budget", &[("PATH", &path)]);
        let reply = server.request("tools/list", json!({}));
        let result = &reply["result"];
        let tools = result["tools"].as_array().map(Vec::len).unwrap_or(0);
        assert!(tools > 0, "{flags:?}: no tools listed: {reply}");
        let bytes = serde_json::to_string(result).expect("json").len();
        println!("{flags:?}: {tools} tools, {bytes} bytes (budget {budget}, before {before})");
        if bytes > budget {
            over.push(format!("{flags:?}: {bytes} bytes > {budget}"));
        }
    }
    assert!(over.is_empty(), "over budget: {}", over.join("; "));
}
