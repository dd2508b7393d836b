//! view_range parsing and clamping: never panics, and a successful clamp stays inside
//! the file, inside the request and under the per-call cap.
#![no_main]
use boris::text::ranges::{MAX_VIEW_LINES, clamp, parse_view_range};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Vec<i64>, u32)| {
    let (range, total) = input;
    let total = total as usize % 10_000_000;
    let Ok(req) = parse_view_range(Some(&range)) else {
        return;
    };
    if let Ok(shown) = clamp(req, total) {
        assert!(shown.end <= total);
        assert_eq!(shown.start, req.start);
        if total > 0 {
            assert!(shown.start <= shown.end);
            assert!(shown.end - shown.start < MAX_VIEW_LINES);
        }
        if let Some(end) = req.end {
            assert!(shown.end <= end);
        }
    } else {
        assert!(req.start > total);
    }
});
