//! The terminal sessions' key notation (issue 19 §1): any items parse to input or fail
//! with an error naming the item, never panic; parsed input encodes for a terminal and
//! for pipes; items that hold no `<` and name no key come back as their own bytes.
#![no_main]
use boris::terminal::keys::{Modes, key_named, parse_keys, pipe_actions, terminal_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let items: Vec<String> = text.split('\u{1}').map(str::to_string).collect();
    match parse_keys(&items) {
        Ok(input) => {
            for cursor in [false, true] {
                let _ = terminal_bytes(&input, Modes { application_cursor: cursor });
            }
            let _ = pipe_actions(&input);
            if items.iter().all(|i| !i.contains('<') && key_named(i) == Ok(None)) {
                assert_eq!(terminal_bytes(&input, Modes::default()), items.concat().into_bytes());
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
