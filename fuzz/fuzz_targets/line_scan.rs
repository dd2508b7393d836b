//! Line scanning and long-line truncation: any bytes, any chunking; the lines seen are
//! the file's lines, kept text is bounded, and formatting never splits a character.
#![no_main]
use boris::text::lines::{MAX_LINE_CHARS, format_line, hash_bytes, scan_lines, truncate_line};
use libfuzzer_sys::fuzz_target;
use std::io::{BufReader, Cursor};

fuzz_target!(|input: (u8, Vec<u8>)| {
    let (chunk, data) = input;
    let reader = BufReader::with_capacity(chunk as usize % 64 + 1, Cursor::new(&data[..]));
    let mut numbers = Vec::new();
    let mut out = String::new();
    let summary = scan_lines(
        reader,
        |_| true,
        |n, kept, chars| {
            numbers.push(n);
            assert!(kept.len() <= MAX_LINE_CHARS * 4 + 4);
            format_line(&mut out, n, kept, chars);
        },
    )
    .expect("reading from memory cannot fail");
    assert_eq!(summary.total_bytes, data.len() as u64);
    assert_eq!(summary.hash, hash_bytes(&data));
    assert_eq!(numbers, (1..=summary.total_lines).collect::<Vec<_>>());
    let newlines = data.iter().filter(|&&b| b == b'\n').count();
    assert!(summary.total_lines == newlines || summary.total_lines == newlines + 1);

    let text = String::from_utf8_lossy(&data);
    let max = chunk as usize % 40;
    let cut = truncate_line(&text, text.chars().count(), max);
    let prefix: String = text.chars().take(max).collect();
    assert!(cut.starts_with(&prefix));
});
