//! Sentinel parsing: any user output (even one carrying fake sentinels) followed by the
//! trap's line comes back byte-exact with the last cwd, and the marker never leaks.
#![no_main]
use boris::text::sentinel::{find, marker, strip};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<u8>, String, Vec<u8>)| {
    let (user, cwd, junk) = input;
    let nonce = "c0ffee00";
    // Arbitrary bytes alone never panic.
    let _ = strip(&junk, nonce);
    let needle = format!("\n{}", marker(nonce));
    if cwd.contains('\n') || memchr::memmem::find(&user, needle.as_bytes()).is_some() {
        return;
    }
    let mut stream = user.clone();
    stream.extend_from_slice(needle.as_bytes());
    stream.extend_from_slice(cwd.as_bytes());
    stream.push(b'\n');
    let (out, got) = strip(&stream, nonce);
    assert_eq!(out, user);
    assert_eq!(got.as_deref(), Some(cwd.as_str()));
    assert!(find(&out, nonce).is_none());
});
