//! The stdio writer's encoder (sonic-rs) produces exactly serde_json's bytes for a tool
//! result holding any text, and the line parses back to that text.
#![no_main]
use boris::transport::stdio::encode_line;
use libfuzzer_sys::fuzz_target;
use rmcp::model::{CallToolResult, ContentBlock, RequestId, ServerJsonRpcMessage, ServerResult};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let item = ServerJsonRpcMessage::response(
        ServerResult::CallToolResult(CallToolResult::success(vec![ContentBlock::text(
            text.clone(),
        )])),
        RequestId::Number(1),
    );
    let line = encode_line(&item).expect("every result encodes");
    let mut reference = serde_json::to_vec(&item).expect("serde_json encodes it");
    reference.push(b'\n');
    assert_eq!(line, reference);
    let back: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
    assert_eq!(
        back["result"]["content"][0]["text"].as_str(),
        Some(text.as_str())
    );
});
