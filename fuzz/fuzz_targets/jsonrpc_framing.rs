//! Incoming message screening: any bytes are classified without a panic, every reply is
//! a JSON-RPC error response, and the id scanner — fed the same bytes in any chunking —
//! agrees with itself and, for a message that parses, with the parser's top-level id.
#![no_main]
use boris::transport::framing::{IdScanner, Inbound, classify};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<u8>, u8)| {
    let (bytes, split) = input;
    if let Inbound::Reply(reply) = classify(&bytes) {
        let v: serde_json::Value = serde_json::from_slice(&reply.body).expect("a reply is JSON");
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["error"]["code"].as_i64(), Some(reply.code));
        assert!(v.get("id").is_some());
    }
    let mut whole = IdScanner::new();
    whole.feed(&bytes);
    let mut chunked = IdScanner::new();
    for chunk in bytes.chunks(usize::from(split).max(1)) {
        chunked.feed(chunk);
    }
    assert_eq!(whole.id(), chunked.id());
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && let Some(id) = map.get("id")
        && (id.is_i64()
            || id.is_u64()
            || id
                .as_str()
                .is_some_and(|s| s.len() <= 200 && !s.contains('\\')))
        && !bytes.contains(&b'\\')
    {
        // One top-level "id" spelled plainly: the scanner finds it.
        let keys = bytes.windows(4).filter(|w| w == b"\"id\"").count();
        if keys == 1 {
            assert_eq!(whole.id().as_ref(), Some(id));
        }
    }
});
