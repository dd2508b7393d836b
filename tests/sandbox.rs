//! Real work still works inside the sandbox (issue 18 §3): the workflows users of other
//! sandboxes report broken most, run through the bash tool confined — with namespaces,
//! and as on a machine without them (Landlock alone) — and compared with the same
//! workflows unconfined. Real processes, real tools, real files in temp dirs.
//!
//! A tool missing on this machine (npm, cc, cargo…) skips its workflow with a line on
//! stderr; CI has them all.

use crate::common::{BIN, Server};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sandbox_supported() -> bool {
    let out = Command::new(BIN)
        .args(["--sandbox", "on", "--check-config"])
        .current_dir(std::env::temp_dir())
        .output()
        .expect("run boris");
    out.status.success()
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool} >/dev/null")])
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `command` through bash; returns (exit code, stdout and stderr as the result shows).
fn bash(server: &mut Server, command: &str) -> (i32, String) {
    let r = server.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": command, "timeout": 300000}}),
    );
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}"))
        .to_string();
    let code = text
        .lines()
        .find_map(|l| l.strip_prefix("exit_code: "))
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or(-1);
    (code, text)
}

struct Workflow {
    name: &'static str,
    needs: &'static [&'static str],
    /// Commands run one call each, in the workflow's own directory; one starting with
    /// `&` runs in the background (`run_in_background`).
    steps: &'static [&'static str],
}

const WORKFLOWS: &[Workflow] = &[
    // The home directory's control: unconfined, this lands in HOME (checked below).
    Workflow {
        name: "a dot-file written to the home directory",
        needs: &[],
        steps: &["(echo x > \"$HOME/.written-by-a-command\") 2>/dev/null; echo done"],
    },
    Workflow {
        name: "git",
        needs: &["git"],
        steps: &[
            "git init -q -b main repo && cd repo && echo one > a.txt && git add a.txt && git commit -qm first && git branch topic && echo two >> a.txt && git stash -q && git stash list | wc -l && git log --format='%an <%ae> %s' && git branch --list | tr -d ' *'",
            // A linked worktree inside the allowed directory: its .git is a file naming the
            // common directory, whose config and hooks stay read-only; commits still work.
            "cd repo && git worktree add -q ../wt topic && cd ../wt && echo three > b.txt && git add b.txt && git commit -qm second && git log --format=%s topic | head -2",
        ],
    },
    // Issue 25 §7: a repository made in one call is protected from the next; its
    // submodules and commits still work as unconfined.
    Workflow {
        name: "git submodule update with a local submodule",
        needs: &["git"],
        steps: &[
            "git init -q -b main lib && git -C lib commit -q --allow-empty -m lib-one && git init -q -b main super && cd super && git -c protocol.file.allow=always submodule add -q ../lib lib && git commit -qm 'add lib' && echo added",
            "git clone -q super super2 && cd super2 && git submodule init && echo cloned",
            "cd super2 && git -c protocol.file.allow=always submodule update -q && git -C lib log --format=%s && git submodule status | cut -c43-",
            "cd super2/lib && echo x > f && git add f && git commit -qm lib-two && cd .. && git add lib && git commit -qm bump && git log --format=%s | head -2 && git status --short",
        ],
    },
    Workflow {
        name: "git init in a subdirectory, then commits",
        needs: &["git"],
        steps: &[
            "mkdir -p proj/sub && cd proj/sub && git init -q -b main && echo a > a && git add a && git commit -qm first && echo ok",
            "cd proj/sub && echo b > b && git add b && git commit -qm second && git log --format=%s && git status --short",
        ],
    },
    Workflow {
        name: "python venv",
        needs: &["python3"],
        steps: &[
            "python3 -m venv .venv && .venv/bin/python -c 'import sys; print(sys.prefix.endswith(\".venv\"))'",
        ],
    },
    Workflow {
        name: "npm install of a local directory",
        needs: &["npm", "node"],
        steps: &[
            "mkdir -p dep app && echo '{\"name\":\"dep\",\"version\":\"1.0.0\",\"main\":\"index.js\"}' > dep/package.json && echo 'module.exports = 42' > dep/index.js && cd app && echo '{\"name\":\"app\",\"version\":\"1.0.0\",\"dependencies\":{\"dep\":\"file:../dep\"}}' > package.json && npm install --no-audit --no-fund --no-update-notifier --loglevel=error >/dev/null && node -e 'console.log(require(\"dep\"))'",
        ],
    },
    Workflow {
        name: "make with cc",
        needs: &["make", "cc"],
        steps: &[
            "printf 'int main(void) { return 3; }\\n' > a.c && printf 'a: a.c\\n\\tcc -o a a.c\\n' > Makefile && make -s && ./a; echo \"exit $?\"",
        ],
    },
    Workflow {
        name: "cargo build",
        needs: &["cargo"],
        steps: &[
            "cargo new -q --vcs none tiny && cd tiny && cargo build -q --offline && ./target/debug/tiny",
        ],
    },
    Workflow {
        name: "sort and mktemp (temporary files)",
        needs: &["sort", "mktemp"],
        steps: &[
            "seq 1 300000 | sort -S 64K -rn > sorted && head -1 sorted && f=$(mktemp) && echo x > \"$f\" && cat \"$f\" && rm \"$f\" && d=$(mktemp -d) && test -d \"$d\" && echo dir",
        ],
    },
    Workflow {
        name: "a background server the next command reaches and a later one stops",
        needs: &["python3", "curl"],
        steps: &[
            "&mkdir site && echo hello > site/index.html && cd site && exec python3 -u -m http.server 0 --bind 127.0.0.1 > ../server.log 2>&1",
            "for i in $(seq 100); do grep -qs 'port' server.log && break; sleep 0.1; done; port=$(grep -o 'port [0-9]*' server.log | grep -o '[0-9]*'); curl -s http://127.0.0.1:$port/index.html",
            "pkill -f 'http[.]server 0' && sleep 0.2; pgrep -f 'http[.]server 0' || echo stopped",
        ],
    },
    // issue 25 §7, S4: what a call starts in the background outlives the call (never its
    // session), confined as unconfined: `cmd &` then `kill PID` in a later call, nohup,
    // disown, and a dev server started with `&` that the next call reaches.
    Workflow {
        name: "a background process killed by a later call",
        needs: &["sleep"],
        steps: &[
            "sleep 300 & echo $! > bg.pid; echo started",
            "kill $(cat bg.pid) && echo killed",
        ],
    },
    Workflow {
        name: "nohup and disown outlive their call",
        needs: &["nohup", "sleep"],
        steps: &[
            "nohup sleep 301 >/dev/null 2>&1 & echo $! > nohup.pid; sleep 302 & echo $! > disowned.pid; disown; echo started",
            "kill $(cat nohup.pid) && kill $(cat disowned.pid) && echo both-killed",
        ],
    },
    Workflow {
        name: "a dev server started with & and reached by the next call",
        needs: &["python3", "curl"],
        steps: &[
            "mkdir site && echo hello > site/index.html && (cd site && python3 -u -m http.server 0 --bind 127.0.0.1 --directory . > ../dev.log 2>&1 &) ; echo started",
            "for i in $(seq 100); do grep -qs 'port' dev.log && break; sleep 0.1; done; port=$(grep -o 'port [0-9]*' dev.log | grep -o '[0-9]*'); curl -s http://127.0.0.1:$port/index.html",
            "pkill -f 'http[.]server 0 --bind 127.0.0.1 --directory' && sleep 0.2; pgrep -f 'http[.]server 0 --bind 127.0.0.1 --directory' || echo stopped",
        ],
    },
];

/// Every workflow, in its own directory under `dir`, on one server; the outputs with the
/// directory's path replaced.
fn run_all(dir: &Path, home: &Path, extra: &[&str], env: &[(&str, &str)]) -> Vec<(String, String)> {
    let home_s = home.display().to_string();
    let mut all_env: Vec<(&str, &str)> = vec![("HOME", &home_s)];
    all_env.extend_from_slice(env);
    let mut server = Server::start_with_env(dir, extra, "sandbox-test", &all_env);
    let mut out = Vec::new();
    for (i, w) in WORKFLOWS.iter().enumerate() {
        if let Some(missing) = w.needs.iter().find(|t| !have(t)) {
            eprintln!("skipped: {} ({missing} is not installed)", w.name);
            continue;
        }
        let wdir = dir.join(format!("w{i}"));
        std::fs::create_dir_all(&wdir).expect("workflow dir");
        for step in w.steps {
            if let Some(step) = step.strip_prefix('&') {
                let cmd = format!("cd '{}' && {step}", wdir.display());
                let r = server.request(
                    "tools/call",
                    json!({"name": "bash", "arguments": {"command": cmd, "run_in_background": true}}),
                );
                assert!(r["result"]["isError"] != json!(true), "{}: {r}", w.name);
                continue;
            }
            // Braced: a step's own `&` must not take the `cd` with it.
            let (code, text) = bash(
                &mut server,
                &format!("cd '{}' && {{ {step}\n}}", wdir.display()),
            );
            assert_eq!(code, 0, "{} ({extra:?}): `{step}` failed:\n{text}", w.name);
            out.push((
                w.name.to_string(),
                text.replace(&dir.display().to_string(), "<dir>"),
            ));
        }
    }
    out
}

fn real_home_var(name: &str, default_sub: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        PathBuf::from(home).join(default_sub).display().to_string()
    })
}

#[test]
fn workflows_work_confined_as_unconfined() {
    if !sandbox_supported() {
        eprintln!("skipped: this kernel cannot enforce --sandbox on");
        return;
    }
    // The user's git config is read from ~/.gitconfig (outside the allowed directory).
    let gitconfig = "[user]\n\tname = Sandbox Tester\n\temail = tester@example.com\n[init]\n\tdefaultBranch = main\n";
    // rustup's cargo finds its toolchain through these, not through HOME.
    let cargo_home = real_home_var("CARGO_HOME", ".cargo");
    let rustup_home = real_home_var("RUSTUP_HOME", ".rustup");
    let env = [
        ("CARGO_HOME", cargo_home.as_str()),
        ("RUSTUP_HOME", rustup_home.as_str()),
    ];
    // Each run gets a home of its own; returns the outputs and what the home holds after.
    let run = |extra: &[&str], env2: &[(&str, &str)]| {
        let home = tempfile::tempdir().expect("home");
        std::fs::write(home.path().join(".gitconfig"), gitconfig).expect("gitconfig");
        let dir = tempfile::tempdir().expect("workdir");
        let dir = dir.path().canonicalize().expect("canonical").to_path_buf();
        let mut e: Vec<(&str, &str)> = env.to_vec();
        e.extend_from_slice(env2);
        let out = run_all(&dir, home.path(), extra, &e);
        let _ = std::fs::remove_dir_all(&dir);
        let mut left: Vec<String> = std::fs::read_dir(home.path())
            .expect("home")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        (out, left)
    };
    let (unconfined, unconfined_home) = run(&["--sandbox", "off"], &[]);
    // The control: unconfined, a command does write to HOME, so the checks below can fail.
    assert!(
        unconfined_home.iter().any(|f| f == ".written-by-a-command"),
        "the unconfined run did not write to HOME: {unconfined_home:?}"
    );
    let (confined, confined_home) = run(&["--sandbox", "on"], &[]);
    assert_eq!(
        confined, unconfined,
        "confined (namespaces) differs from unconfined"
    );
    let (landlock_only, landlock_home) = run(
        &["--sandbox", "auto"],
        &[("BORIS_SANDBOX_PROBE", "landlock-only")],
    );
    assert_eq!(
        landlock_only, unconfined,
        "confined (Landlock alone) differs from unconfined"
    );
    // Nothing a confined command did was written to the home directory (it is outside
    // the writable ones): it holds the .gitconfig the test put there, and nothing else.
    assert_eq!(confined_home, [".gitconfig"], "confined run wrote to HOME");
    assert_eq!(
        landlock_home,
        [".gitconfig"],
        "Landlock-only run wrote to HOME"
    );
}

/// A Boris started by a confined command (an agent developing Boris) confines its own
/// commands with what is left: Landlock inside Landlock, no namespaces (the outer
/// sandbox forbids mounts), so `auto` warns that git metadata is not protected (and `on`
/// would refuse to start). It cannot lift the outer rules.
#[test]
fn a_boris_inside_the_sandbox_confines_its_own_commands() {
    if !sandbox_supported() {
        eprintln!("skipped: this kernel cannot enforce --sandbox on");
        return;
    }
    let outer = tempfile::tempdir().expect("dir");
    let root = outer.path().canonicalize().expect("canonical");
    let allowed = root.join("w");
    std::fs::create_dir_all(allowed.join("inner")).expect("inner");
    let allow = format!("--allow-dir={}", allowed.display());
    let mut server = Server::start(&root, &["--sandbox", "on", &allow], "outer");
    let script = format!(
        r#"cd '{inner}' && {{
  printf '%s\n' '{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"nested","version":"1"}}}}}}'
  printf '%s\n' '{{"jsonrpc":"2.0","method":"notifications/initialized"}}'
  printf '%s\n' '{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"bash","arguments":{{"command":"echo inner > made-inside.txt && echo ok-inside"}}}}}}'
  printf '%s\n' '{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"bash","arguments":{{"command":"echo pwned > {outside}; echo tried"}}}}}}'
  for i in $(seq 1 100); do grep -q '"id":2' inner.out 2>/dev/null && break; sleep 0.1; done
}} | '{bin}' --transport stdio >inner.out 2>inner.err; grep -o ok-inside inner.out; grep -o 'sandbox on ([^)]*)' inner.err | head -1; grep -o 'not held: git config protected' inner.err | head -1"#,
        inner = allowed.join("inner").display(),
        outside = root.join("outside.txt").display(),
        bin = BIN,
    );
    let (code, text) = bash(&mut server, &script);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok-inside"), "{text}");
    // It says what it enforces, and what not (git metadata needs a mount namespace).
    assert!(text.contains("no namespaces"), "{text}");
    assert!(text.contains("not held: git config protected"), "{text}");
    assert_eq!(
        std::fs::read_to_string(allowed.join("inner/made-inside.txt"))
            .ok()
            .as_deref(),
        Some("inner\n")
    );
    assert!(
        !root.join("outside.txt").exists(),
        "the inner server's command wrote outside"
    );
}

/// Sockets outside the writable directories are out of reach (issue 18 §4): a pathname
/// socket listening outside them (as a container engine's does), and an abstract one.
/// The listeners are this test's, outside any sandbox; unconfined, both are reached.
#[test]
fn sockets_outside_the_scope_are_out_of_reach() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    if !sandbox_supported() {
        eprintln!("skipped: this kernel cannot enforce --sandbox on");
        return;
    }
    if !have("python3") {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let outer = tempfile::tempdir().expect("dir");
    let root = outer.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(root.join("w")).expect("w");
    std::fs::create_dir_all(root.join("run")).expect("run");
    let path = root.join("run/engine.sock");
    let named = UnixListener::bind(&path).expect("bind a pathname socket");
    let name = format!("boris-test-{}", std::process::id());
    let abstract_addr = SocketAddr::from_abstract_name(name.as_bytes()).expect("abstract name");
    let hidden = UnixListener::bind_addr(&abstract_addr).expect("bind an abstract socket");
    for l in [&named, &hidden] {
        l.set_nonblocking(true).expect("nonblocking");
    }
    let probe = format!(
        r#"python3 - <<'EOF'
import socket
for label, addr in (("pathname", "{path}"), ("abstract", "\0{name}")):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(addr)
        print(label, "reached")
    except OSError as e:
        print(label, "refused")
EOF"#,
        path = path.display(),
    );
    let allow = format!("--allow-dir={}", root.join("w").display());
    for (mode, reached) in [("off", true), ("on", false)] {
        let mut server = Server::start(&root, &["--sandbox", mode, &allow], "sockets");
        let (code, text) = bash(&mut server, &probe);
        assert_eq!(code, 0, "{text}");
        for label in ["pathname", "abstract"] {
            let want = format!("{label} {}", if reached { "reached" } else { "refused" });
            assert!(
                text.contains(&want),
                "--sandbox {mode}: expected {want}: {text}"
            );
        }
    }
}

/// Issue 25 §3, the decision on embedded bare repositories: a command can make a
/// directory git takes for a repository (`HEAD`, `objects/`, `refs/`, a `config` with
/// `core.worktree` and `core.fsmonitor`) out of ordinary files, which Boris cannot tell
/// from work. The user's git run there later reads that config — unless the user's
/// `~/.gitconfig` has `safe.bareRepository = explicit`, which the security documentation
/// recommends. Both halves are shown, the first as the remainder the documentation states.
#[test]
fn a_planted_bare_repository_is_refused_by_safe_bare_repository_explicit() {
    if !sandbox_supported() || !have("git") {
        eprintln!("skipped: no sandbox here, or no git");
        return;
    }
    let dir = tempfile::tempdir().expect("workdir");
    let dir = dir.path().canonicalize().expect("canonical");
    let home = tempfile::tempdir().expect("home");
    let home_s = home.path().display().to_string();
    let mut server = Server::start_with_env(
        &dir,
        &["--sandbox", "on"],
        "sandbox-test",
        &[("HOME", &home_s)],
    );
    let (code, text) = bash(
        &mut server,
        "mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD && echo ATTACK_RAN && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = \"touch PLANTED_RAN; false\"\\n' > bare/config",
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ATTACK_RAN"), "{text}");
    server.stop();
    // The user's git, outside the sandbox, in the planted directory.
    let user_git = |gitconfig: &str| {
        std::fs::write(home.path().join(".gitconfig"), gitconfig).expect("gitconfig");
        let _ = std::fs::remove_file(dir.join("PLANTED_RAN"));
        let out = Command::new("git")
            .arg("status")
            .current_dir(dir.join("bare"))
            .env("HOME", home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .output()
            .expect("git");
        (
            dir.join("PLANTED_RAN").exists(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ran, stderr) = user_git("");
    assert!(
        ran,
        "without the setting, git reads the planted config: {stderr}"
    );
    let (ran, stderr) = user_git("[safe]\n\tbareRepository = explicit\n");
    assert!(!ran, "{stderr}");
    assert!(stderr.contains("cannot use bare repository"), "{stderr}");
}
