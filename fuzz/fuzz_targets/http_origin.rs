//! The HTTP transport's Origin check (issue 27 §3): no panics on any header value or
//! `--allowed-origin` entry; an allowed Origin is `scheme://host[:port]` and nothing
//! more (no path, user info, query or fragment); a valid entry allows itself.
#![no_main]
use boris::transport::http::{origin_allowed, valid_origin_entry};
use libfuzzer_sys::fuzz_target;

// The input is an Origin value and an allowed entry separated by a NUL byte.
fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |&b| b == 0);
    let origin = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let entry = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let allowed = vec![entry.clone()];
    if origin_allowed(&origin, &allowed) && origin != "null" {
        let rest = origin.split_once("://").map_or("", |(_, r)| r);
        assert!(!rest.contains(['/', '@', '?', '#']), "{origin:?} allowed by {entry:?}");
        assert!(valid_origin_entry(&entry));
    }
    if valid_origin_entry(&entry) && entry != "null" && !entry.ends_with(":*") {
        assert!(origin_allowed(&entry, &allowed), "{entry:?} does not allow itself");
    }
});
