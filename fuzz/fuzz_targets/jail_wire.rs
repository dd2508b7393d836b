//! The jail's messages (issue 18): no panics on any bytes; whatever decodes encodes back
//! to the same bytes.
#![no_main]
use boris::sandbox::wire::{Reply, Request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(r) = Request::decode(bytes) {
        assert_eq!(r.encode(), bytes);
    }
    if let Ok(r) = Reply::decode(bytes) {
        assert_eq!(r.encode(), bytes);
    }
});
