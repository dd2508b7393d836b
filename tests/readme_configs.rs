//! The client configuration blocks of the README and docs/clients.md are copy-paste
//! material: each one marked `<!-- readme-config: NAME -->` must parse (JSON or TOML), and
//! every `boris` command in it must be accepted by `boris … --check-config`. A block that
//! goes missing from both fails too.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_boris");

/// The documents that hold the blocks: the README's quick start and one client, the rest
/// in docs/clients.md (issue 28 §4).
const DOCS: &[&str] = &["README.md", "docs/clients.md"];

/// Every block the documents must keep between them, by marker name.
const EXPECTED: &[&str] = &[
    "quick-start",
    "claude-code",
    "claude-desktop",
    "vscode",
    "cursor",
    "codex",
    "http-server",
    "http-client",
    "codex-http",
];

struct Block {
    name: String,
    lang: String,
    body: String,
}

/// The fenced block right after each marker line.
fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .trim()
            .strip_prefix("<!-- readme-config:")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap_or_default();
        let lang = fence
            .strip_prefix("```")
            .unwrap_or_else(|| panic!("block {name}: a fence must follow the marker"));
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.push(Block {
            name: name.trim().to_string(),
            lang: lang.to_string(),
            body: body.join("\n"),
        });
    }
    out
}

/// Runs `boris ARGS --check-config` in `project`, with placeholders standing for it.
fn check_args(block: &str, args: &[String], project: &Path) {
    let project_str = project.to_str().expect("utf-8 temp path");
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("/path/to/project", project_str)
                .replace("${workspaceFolder}", project_str)
        })
        .collect();
    let mut cmd = Command::new(BIN);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("BORIS_") {
            cmd.env_remove(name);
        }
    }
    let out = cmd
        .args(&args)
        .arg("--check-config")
        .current_dir(project)
        .output()
        .expect("run boris");
    assert!(
        out.status.success(),
        "block {block}: boris {args:?} --check-config failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().expect("args are strings").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A server entry of any client's format: a command that must be `boris` with accepted
/// args, or an HTTP URL to `/mcp` with a bearer token from somewhere.
fn check_server(block: &str, entry: &serde_json::Value, project: &Path) {
    if let Some(command) = entry.get("command") {
        assert_eq!(command, "boris", "block {block}");
        let args = strings(&entry["args"]);
        assert!(args.iter().any(|a| a == "stdio"), "block {block}: {args:?}");
        check_args(block, &args, project);
        return;
    }
    let url = entry["url"]
        .as_str()
        .unwrap_or_else(|| panic!("block {block}: a server entry has a command or a url: {entry}"));
    assert!(
        url.starts_with("http://") && url.ends_with("/mcp"),
        "block {block}: {url}"
    );
    let header = entry["headers"]["Authorization"].as_str();
    let env_var = entry["bearer_token_env_var"].as_str();
    assert!(
        header.is_some_and(|h| h.starts_with("Bearer ")) || env_var.is_some(),
        "block {block}: no bearer token: {entry}"
    );
}

#[test]
fn every_readme_config_block_parses_and_boris_accepts_it() {
    let mut blocks = Vec::new();
    for doc in DOCS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {doc}: {e}"));
        blocks.extend(self::blocks(&text));
    }
    let names: Vec<&str> = blocks.iter().map(|b| b.name.as_str()).collect();
    for expected in EXPECTED {
        assert!(
            names.contains(expected),
            "the {expected} block is in none of {DOCS:?}"
        );
    }
    let project = tempfile::tempdir().expect("tempdir");
    for block in &blocks {
        let name = block.name.as_str();
        match block.lang.as_str() {
            "json" => {
                let doc: serde_json::Value = serde_json::from_str(&block.body)
                    .unwrap_or_else(|e| panic!("block {name}: invalid JSON: {e}"));
                // VS Code's key is `servers` (each with a `type`); the others' `mcpServers`.
                let servers = doc
                    .get("servers")
                    .or_else(|| doc.get("mcpServers"))
                    .and_then(|s| s.as_object())
                    .unwrap_or_else(|| panic!("block {name}: no servers map"));
                if doc.get("servers").is_some() {
                    for entry in servers.values() {
                        assert!(
                            entry.get("type").is_some(),
                            "block {name}: VS Code needs type"
                        );
                    }
                }
                assert!(servers.contains_key("boris"), "block {name}");
                for entry in servers.values() {
                    check_server(name, entry, project.path());
                }
            }
            "toml" => {
                let doc: toml::Table = block
                    .body
                    .parse()
                    .unwrap_or_else(|e| panic!("block {name}: invalid TOML: {e}"));
                let servers = doc["mcp_servers"]
                    .as_table()
                    .unwrap_or_else(|| panic!("block {name}: no [mcp_servers] table"));
                assert!(servers.contains_key("boris"), "block {name}");
                for entry in servers.values() {
                    let json = serde_json::to_value(entry).expect("TOML to JSON");
                    check_server(name, &json, project.path());
                }
            }
            "sh" => {
                // Shell lines: `claude mcp add NAME -- boris ARGS…` or `boris ARGS…`. No
                // quoting in these blocks, so splitting on whitespace is exact.
                let mut checked = 0;
                for line in block.body.lines().map(str::trim) {
                    let words: Vec<String> = line.split_whitespace().map(String::from).collect();
                    let command = match words.iter().position(|w| w == "--") {
                        Some(at) if line.starts_with("claude mcp add") => &words[at + 1..],
                        _ => &words[..],
                    };
                    if command.first().map(String::as_str) == Some("boris") {
                        check_args(name, &command[1..], project.path());
                        checked += 1;
                    }
                }
                assert!(checked > 0, "block {name}: no boris command");
            }
            other => panic!("block {name}: unexpected fence language {other:?}"),
        }
    }
}
