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
    // Sign-in per mode (issue 30 §4): token mode, then OAuth mode.
    "claude-code-http-token",
    "vscode-http-token",
    "python-sdk-token",
    "http-server-oauth",
    "claude-code-oauth",
    "vscode-oauth",
    "codex-oauth",
    "codex-login",
    "python-sdk-oauth",
    "ts-sdk-token",
    "ts-sdk-oauth",
];

/// A block for `--auth oauth` (its name says so): the client signs in, so it must carry no
/// static token — Claude Code ignores a configured header when the server advertises OAuth
/// discovery (anthropics/claude-code #59467). Every other HTTP block must carry one.
fn is_oauth(block: &str) -> bool {
    block.contains("oauth")
}

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
    // OAuth mode: the public HTTPS URL clients sign in for (`--public-url`).
    let scheme_ok = if is_oauth(block) {
        url.starts_with("https://")
    } else {
        url.starts_with("http://") || url.starts_with("https://")
    };
    assert!(scheme_ok && url.ends_with("/mcp"), "block {block}: {url}");
    let header = entry["headers"]["Authorization"].as_str();
    let env_var = entry["bearer_token_env_var"].as_str();
    if is_oauth(block) {
        assert!(
            header.is_none() && env_var.is_none() && entry.get("headers").is_none(),
            "block {block}: an OAuth client signs in; a static token here would be ignored or wrong: {entry}"
        );
    } else {
        assert!(
            header.is_some_and(|h| h.starts_with("Bearer ")) || env_var.is_some(),
            "block {block}: no bearer token: {entry}"
        );
    }
}

/// Words of a shell line: whitespace-separated, `"…"` and `'…'` quoting one word.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    words.extend(word);
    words
}

/// `claude mcp add --transport http NAME URL [--header "Authorization: Bearer …"]`: an
/// HTTP URL to `/mcp`, with the bearer header in token mode and none with OAuth.
fn check_claude_http(block: &str, words: &[String]) {
    let rest = &words[3..];
    let positional: Vec<&String> = rest
        .iter()
        .enumerate()
        .filter(|(i, w)| !w.starts_with("--") && (*i == 0 || !rest[i - 1].starts_with("--")))
        .map(|(_, w)| w)
        .collect();
    let [name, url] = positional[..] else {
        panic!("block {block}: expected NAME URL in {words:?}");
    };
    assert_eq!(name, "boris", "block {block}");
    let header = rest
        .iter()
        .position(|w| w == "--header")
        .map(|at| rest[at + 1].as_str());
    let entry = serde_json::json!({
        "url": url,
        "headers": header.map(|h| {
            let (k, v) = h.split_once(": ").expect("a header is NAME: VALUE");
            serde_json::json!({ k: v })
        }),
    });
    let mut entry = entry;
    if header.is_none() {
        entry.as_object_mut().expect("object").remove("headers");
    }
    check_server(block, &entry, Path::new("/"));
}

/// A Python SDK snippet (REPL style, top-level `await`): it parses, connects to an HTTP
/// URL to `/mcp`, and authenticates as its mode says — a bearer header in token mode, the
/// SDK's `OAuthClientProvider` and no header with OAuth. Parsed by `python3` when present
/// (CI: required).
fn check_python(block: &str, body: &str) {
    assert!(
        body.contains("streamable_http_client(\"http") && body.contains("/mcp\""),
        "block {block}: no streamable HTTP client to /mcp"
    );
    if is_oauth(block) {
        assert!(
            body.contains("OAuthClientProvider(") && !body.contains("\"Authorization\""),
            "block {block}: an OAuth client signs in, with no static header"
        );
    } else {
        assert!(
            body.contains("\"Authorization\": f\"Bearer "),
            "block {block}: no bearer header"
        );
    }
    let parse = "import ast, sys; compile(sys.stdin.read(), 'block', 'exec', ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)";
    let child = Command::new("python3")
        .args(["-c", parse])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        assert!(
            std::env::var_os("CI").is_none(),
            "block {block}: python3 is needed to parse it (CI=true)"
        );
        eprintln!("block {block}: not parsed (no python3)");
        return;
    };
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.as_bytes())
        .expect("write the block");
    let out = child.wait_with_output().expect("python3");
    assert!(
        out.status.success(),
        "block {block}: not valid Python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A TypeScript SDK snippet (an ES module, top-level `await`): it imports the SDK's
/// streamable HTTP client, connects to an HTTP URL to `/mcp`, and authenticates as its
/// mode says — a bearer header in token mode, an `authProvider` and no header with
/// OAuth. Parsed by `node --check` when node is present (CI: required).
/// `tests/clients/run.sh` also runs the token block against a live Boris.
fn check_js(block: &str, body: &str) {
    assert!(
        body.contains("@modelcontextprotocol/sdk/client/streamableHttp.js")
            && body.contains("new StreamableHTTPClientTransport(")
            && body.contains("/mcp\")"),
        "block {block}: no streamable HTTP client to /mcp"
    );
    if is_oauth(block) {
        assert!(
            body.contains("authProvider")
                && body.contains("finishAuth(")
                && !body.contains("Authorization"),
            "block {block}: an OAuth client signs in through authProvider, with no static header"
        );
    } else {
        assert!(
            body.contains("Authorization: `Bearer ${process.env.BORIS_TOKEN}`"),
            "block {block}: no bearer header from BORIS_TOKEN"
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("block.mjs");
    std::fs::write(&file, body).expect("write the block");
    // The node on PATH, else the one tests/auth/install.sh installs (CI runs it first).
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/auth/.cache/node-path");
    let node = match Command::new("node").arg("--version").output() {
        Ok(_) => "node".to_string(),
        Err(_) => std::fs::read_to_string(installed)
            .map(|p| p.trim().to_string())
            .unwrap_or_else(|_| "node".into()),
    };
    match Command::new(&node).arg("--check").arg(&file).output() {
        Ok(out) => assert!(
            out.status.success(),
            "block {block}: not a valid ES module: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "block {block}: node is needed to parse it (CI=true)"
            );
            eprintln!("block {block}: not parsed (no node)");
        }
    }
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
                // Shell lines: `claude mcp add NAME -- boris ARGS…`, `claude mcp add
                // --transport http NAME URL …`, `codex mcp login boris`, or `boris ARGS…`.
                let mut checked = 0;
                for line in block.body.lines().map(str::trim) {
                    let words = shell_words(line);
                    if line.starts_with("claude mcp add --transport http ") {
                        check_claude_http(name, &words);
                        checked += 1;
                        continue;
                    }
                    if line.starts_with("codex mcp login ") {
                        assert_eq!(words[3..], ["boris"], "block {name}");
                        checked += 1;
                        continue;
                    }
                    let command = match words.iter().position(|w| w == "--") {
                        Some(at) if line.starts_with("claude mcp add") => &words[at + 1..],
                        _ => &words[..],
                    };
                    if command.first().map(String::as_str) == Some("boris") {
                        assert_eq!(
                            is_oauth(name),
                            line.contains("--auth oauth"),
                            "block {name}: the mode its name says"
                        );
                        check_args(name, &command[1..], project.path());
                        checked += 1;
                    }
                }
                assert!(checked > 0, "block {name}: no boris command");
            }
            "python" => check_python(name, &block.body),
            "js" => check_js(name, &block.body),
            other => panic!("block {name}: unexpected fence language {other:?}"),
        }
    }
}
