//! `boris --help` lists each tool profile's tools (issue 28 §3: the texts had gone stale,
//! the default naming 8 of its 23 tools and codex omitting exec_command, write_stdin and
//! apply_patch). The help is generated from the tool table; this checks it against what
//! a live server of each profile actually lists, and against the table itself
//! (`tools::catalogue::profile_tools`), so none can drift from the others.

use crate::common::{BIN, Server};
use std::process::Command;

const PROFILES: &[&str] = &[
    "default",
    "anthropic-compat",
    "claude-code",
    "gemini-cli",
    "codex",
];

/// The names after `- PROFILE: … (N):` in the long help's possible values.
fn help_tools(help: &str, profile: &str) -> Vec<String> {
    let line = help
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&format!("- {profile}:")))
        .unwrap_or_else(|| panic!("--help has no line for profile {profile}:\n{help}"));
    let (_, list) = line
        .split_once("): ")
        .unwrap_or_else(|| panic!("no tool list in {line:?}"));
    list.split(", ").map(str::to_string).collect()
}

/// `boris --help`.
fn help() -> String {
    let out = Command::new(BIN)
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("utf-8 help")
}

/// Each profile's line names exactly the tools its rows of the table list, in
/// `tools/list` order, and every profile has a line.
#[test]
fn help_is_generated_from_the_tool_table() {
    use clap::ValueEnum as _;
    let help = help();
    let profiles = boris::config::ToolProfile::value_variants();
    assert_eq!(profiles.len(), PROFILES.len());
    for &profile in profiles {
        assert!(PROFILES.contains(&profile.name()), "{}", profile.name());
        let table = boris::tools::catalogue::profile_tools(profile);
        assert_eq!(
            help_tools(&help, profile.name()),
            table,
            "{}",
            profile.name()
        );
    }
}

#[test]
fn help_lists_every_tool_each_profile_serves() {
    let help = help();
    let dir = tempfile::tempdir().expect("tempdir");
    for profile in PROFILES {
        let named = help_tools(&help, profile);
        let count = format!("({}): ", named.len());
        assert!(
            help.lines()
                .any(|l| l.trim().starts_with(&format!("- {profile}:")) && l.contains(&count)),
            "{profile}: the count does not match the list"
        );
        let mut server = Server::start(dir.path(), &["--tool-profile", profile], "profile-help");
        let listed = server.request("tools/list", serde_json::json!({}));
        let listed: Vec<String> = listed["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_string())
            .collect();
        // A profile may list fewer than it can offer (code intelligence without a
        // language server, say), never a tool its help leaves out.
        for tool in &listed {
            assert!(
                named.contains(tool),
                "{profile}: serves {tool} but --help does not name it: {named:?}"
            );
        }
        assert!(
            listed.len() * 2 > named.len(),
            "{profile}: --help names {named:?}, the server lists only {listed:?}"
        );
        server.stop();
    }
}
