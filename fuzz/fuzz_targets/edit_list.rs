//! Edit lists and their diffs (issue 15 §2, §3): no panics on any bytes; a list that
//! succeeds equals its edits applied one by one, one that fails names an edit in range;
//! the diff of a change is empty exactly when the (lossy) texts are equal.
#![no_main]
use boris::text::diff::unified;
use boris::text::replace::{Edit, apply_edits, replace};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<u8>, Vec<(Vec<u8>, Vec<u8>, bool)>)| {
    let (content, raw) = input;
    let edits: Vec<Edit<'_>> = raw
        .iter()
        .filter(|(old, _, _)| !old.is_empty())
        .take(8)
        .map(|(old, new, all)| Edit {
            old,
            new,
            replace_all: *all,
        })
        .collect();
    match apply_edits(&content, &edits) {
        Ok(done) => {
            let mut current = content.clone();
            for e in &edits {
                current = replace(&current, e.old, e.new, e.replace_all)
                    .expect("each edit succeeds in turn")
                    .content;
            }
            assert_eq!(done.content, current);
            let diff = unified(Some(&content), &done.content, "f");
            assert_eq!(
                diff.is_empty(),
                String::from_utf8_lossy(&content) == String::from_utf8_lossy(&done.content)
            );
        }
        Err(failed) => assert!(failed.index < edits.len()),
    }
});
