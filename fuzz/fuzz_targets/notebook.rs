//! Notebooks: any bytes either fail to parse or parse, render, and survive a cell edit;
//! what an edit writes always parses again and renders the edited source.
#![no_main]
use boris::text::notebook::{EditMode, Notebook};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut nb) = Notebook::parse(data) else {
        return;
    };
    let _ = nb.render();
    let first = nb
        .render()
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("<cell id=\""))
        .and_then(|l| l.split('"').next())
        .map(str::to_string);
    let _ = nb.edit(EditMode::Insert, first.as_deref(), "fuzz\n", Some("code"));
    if let Some(id) = &first {
        let _ = nb.edit(EditMode::Replace, Some(id), "x = 1", None);
    }
    let bytes = nb.to_bytes();
    let again = Notebook::parse(&bytes).expect("what an edit writes parses");
    assert!(again.render().contains("fuzz"));
    assert_eq!(again.to_bytes(), bytes, "writing is stable");
});
