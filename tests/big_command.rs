//! A command longer than the kernel lets one argument be (128 KiB) runs like any other
//! (issue 12 §4): Boris hands a long script to the shell in a file instead of `-c`, and
//! the exit code, the sentinel and the cwd rule are unchanged. A YAML case cannot carry
//! a 1 MiB argument, so this is a process test.

use crate::common::Server;
use serde_json::json;

fn bash(s: &mut Server, command: &str) -> String {
    let r = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": command}}),
    );
    assert_eq!(r["result"]["isError"], json!(false), "{r:.300}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_one_mebibyte_command_runs_with_the_usual_exit_code_and_cwd() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    let mut s = Server::start(dir.path(), &[], "big-command");
    // 1 MiB of comment lines, then real work: the output proves the whole script ran.
    let filler = "# filler line that the shell reads and ignores\n".repeat(1 << 20 >> 6);
    let command = format!("{filler}echo \"args: $#\"; cd sub; echo done; exit 7");
    assert!(command.len() > 1 << 19, "{}", command.len());
    let text = bash(&mut s, &command);
    assert_eq!(text, "exit_code: 7\nstdout:\nargs: 0\ndone", "{text:.300}");
    // The `cd` stuck, as for any command (the sentinel still reports the cwd).
    let text = bash(&mut s, "pwd");
    let sub = dir.path().canonicalize().expect("canon").join("sub");
    assert_eq!(text, format!("exit_code: 0\nstdout:\n{}", sub.display()));
    // And a short one still runs inline.
    assert_eq!(bash(&mut s, "false"), "exit_code: 1");
    // No script file is left behind once the command has ended.
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .expect("tmp")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("boris-"))
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("script-") && n.ends_with(".sh")
        })
        .filter(|e| {
            std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("echo \"args: $#\""))
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
