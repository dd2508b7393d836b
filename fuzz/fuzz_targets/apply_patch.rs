//! apply_patch's parser and applier (issue 19 §2): no panics on any input; a patch that
//! parses renders and parses back to itself; a hunk that fails names a hunk in range; and
//! a patch made from two versions of a file turns the first into the second exactly.
#![no_main]
use boris::text::patch::{FileOp, Patch, apply_chunks, file_op_for, parse, render};
use libfuzzer_sys::fuzz_target;

// The input is four parts separated by NUL bytes — the patch, a file's content, and two
// versions of a file — so that a seed is a patch as written.
fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(4, |&b| b == 0);
    let mut next = || parts.next().unwrap_or_default();
    let text = String::from_utf8_lossy(next()).into_owned();
    let content = next().to_vec();
    let old = String::from_utf8_lossy(next()).into_owned();
    let new = String::from_utf8_lossy(next()).into_owned();
    if let Ok(parsed) = parse(&text) {
        for op in &parsed.patch.files {
            if let FileOp::Update { chunks, .. } = op {
                match apply_chunks(&content, chunks, op.ending_aware()) {
                    Ok(_) => {}
                    Err(f) => assert!(f.index < chunks.len()),
                }
            }
        }
        // The envelope of what was read reads back the same (positions aside).
        let again = parse(&render(&parsed.patch)).expect("a rendered patch parses");
        assert_eq!(strip(again.patch), strip(parsed.patch));
    }
    if old != new && !old.contains('\r') && !new.contains('\r') {
        let op = file_op_for("f", &old, &new);
        if let FileOp::Update { chunks, .. } = &op {
            let done = apply_chunks(old.as_bytes(), chunks, op.ending_aware())
                .expect("a generated patch applies");
            assert_eq!(done.content, new.as_bytes());
        }
    }
});

fn strip(mut p: Patch) -> Patch {
    for op in &mut p.files {
        if let FileOp::Update { chunks, .. } = op {
            for c in chunks {
                c.source_line = 0;
            }
        }
    }
    p
}
