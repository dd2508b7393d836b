//! Cut command output as a resource (issue 12 §5): the `resource_link` a bash result
//! carries can be read with `resources/read` in the same session, and gives the whole
//! output; nothing else can be read that way. The link's URI is only known at run time,
//! which a YAML case cannot carry over to a later step, so this is a process test.

use crate::common::Server;
use serde_json::{Value, json};

#[test]
fn the_linked_spill_file_reads_back_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Server::start(dir.path(), &[], "resources");
    let r = s.request(
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "seq 1 20000"}}),
    );
    let content = r["result"]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let link = content
        .iter()
        .find(|c| c["type"] == "resource_link")
        .unwrap_or_else(|| panic!("no resource_link in {r:.300}"));
    let uri = link["uri"].as_str().expect("uri").to_string();
    assert!(uri.starts_with("file:///"), "{uri}");
    let whole: String = (1..=20000).map(|n| format!("{n}\n")).collect();
    assert_eq!(link["size"], json!(whole.len()));

    let read = s.request("resources/read", json!({"uri": uri}));
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], json!(uri));
    assert_eq!(contents["mimeType"], json!("text/plain"));
    assert_eq!(
        contents["text"].as_str(),
        Some(whole.as_str()),
        "{read:.300}"
    );

    // Anything not linked in this session is not a resource, however it is spelled.
    for other in [
        "file:///etc/passwd".to_string(),
        uri.replace("stdout", "stderr"),
        format!("{uri}/.."),
        "http://example.com/x".to_string(),
    ] {
        let r = s.request("resources/read", json!({"uri": other}));
        assert_eq!(r["error"]["code"], json!(-32002), "{other}: {r}");
    }
    let listed = s.request("resources/list", Value::Null);
    assert_eq!(listed["result"]["resources"], json!([]), "{listed}");
}
