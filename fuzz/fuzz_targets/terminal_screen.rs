//! Arbitrary bytes through a session's terminal emulator and out as text (issue 19 §1):
//! never a panic, never an escape sequence in what a model reads, every answer within
//! its budget, for a terminal as for pipes, across a resize.
#![no_main]
use boris::terminal::screen::Screen;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, bytes)) = data.split_first() else {
        return;
    };
    let pipe = control & 1 == 1;
    let budget = usize::from(control >> 1) * 8;
    let mut screen = Screen::new(5, 12, pipe);
    let (first, second) = bytes.split_at(bytes.len() / 2);
    for (i, part) in [first, second].into_iter().enumerate() {
        screen.feed(part);
        let update = screen.take_update(budget, i == 1);
        let shown = update.lines.len() + update.screen.as_ref().map_or(0, String::len);
        assert!(shown <= budget, "{shown} > {budget}");
        for text in [Some(&update.lines), update.screen.as_ref()].into_iter().flatten() {
            assert!(!text.contains('\u{1b}'), "{text:?}");
        }
        let _ = screen.take_replies();
        let _ = screen.cursor_line();
        if i == 0 {
            screen.resize(7, 20);
        }
    }
});
