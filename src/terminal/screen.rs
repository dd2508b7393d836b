//! Pure: what a terminal session's output looks like to a model (issue 19 §1).
//!
//! Every byte a session's program writes goes through a terminal emulator (`vt100`), so
//! escape sequences, `\r` redraws and cursor movement are applied, never shown. Each
//! answer ([`Screen::take_update`]) then says what is new since the previous one:
//!
//! - *A line program* (the main screen): the rows that scrolled off the top since the
//!   last answer, then the screen, as logical lines (a row the terminal wrapped is joined
//!   to the next). Both are compared with the screen as the last answer saw it: the rows
//!   that scrolled off were its top rows, so the sequence "scrolled rows, then screen"
//!   lines up row for row with the screen then. Everything before the first row that
//!   differs was shown already and is left out; everything from it on is shown. So no
//!   line is lost (a line that was never shown always differs) and none is shown twice
//!   unless it sits between two changes (a redrawn line above it).
//! - *A full-screen program* (the alternate screen: `less`, `vim`, `top`): its whole
//!   screen, row for row — after any main-screen lines it printed before it started.
//!
//! Memory is bounded whatever the output: the rows that scrolled off are kept as a head
//! and a tail of at most [`HEAD_KEEP`] and [`TAIL_KEEP`] characters, the rows between
//! counted as omitted.

use super::lines::{Bounded, Item, Owned, Row, cut_chars, render_lines};
use super::queries::{osc_reply, query_reply};
use vt100::capture::BasicFormattedCaptureState;

/// Characters of scrolled-off rows kept from the start of what is new.
pub const HEAD_KEEP: usize = 25_000;
/// Characters of scrolled-off rows kept from the end of what is new.
pub const TAIL_KEEP: usize = 100_000;

/// The emulator's callbacks: rows of the main screen that scroll off its top, and the
/// answers a terminal owes to the program's queries.
struct Scrolled {
    rows: Bounded,
    /// Answers to queries (cursor position, device attributes, colours), to be written
    /// back to the program: vim, less and readline ask and wait for them.
    replies: Vec<u8>,
    /// Pipes have no terminal to answer.
    answer_queries: bool,
    /// Carries whether the last row ended its line (vt100 writes the line break before
    /// the next row).
    state: BasicFormattedCaptureState,
    any: bool,
    scratch: String,
}

impl vt100::Callbacks for Scrolled {
    fn on_scroll(&mut self, row: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        if alternate_screen {
            return;
        }
        self.scratch.clear();
        let _ = row.write_formatted_basic(&mut self.scratch, &mut self.state);
        let (broke, formatted) = match self.scratch.strip_prefix('\n') {
            Some(rest) => (true, rest),
            None => (false, self.scratch.as_str()),
        };
        let text: String = vt100::capture::basic_formatted_to_plain(formatted).collect();
        let continues = self.any && !broke;
        self.any = true;
        self.rows.push(Row { text, continues });
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if self.answer_queries
            && let Some(reply) = query_reply(i1, params, c, screen.cursor_position())
        {
            self.replies.extend(reply);
        }
    }

    fn unhandled_osc(&mut self, _screen: &mut vt100::Screen, params: &[&[u8]]) {
        if self.answer_queries
            && let Some(reply) = osc_reply(params)
        {
            self.replies.extend(reply);
        }
    }
}

impl Scrolled {
    /// Whether the last row that scrolled off wrapped into the screen's top row. The
    /// capture state keeps it (as the line break it owes the next row) but has no
    /// accessor, so it is read from its `Debug` form; a unit test holds this.
    fn last_wrapped(&self) -> bool {
        self.any && !format!("{:?}", self.state).contains("newline_pending: true")
    }
}

/// What is new in a session's output since the last update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    /// New lines of the main screen: what scrolled off, then the screen's changed part.
    pub lines: String,
    /// Lines left out of `lines` to keep it within the budget (or memory's bound).
    pub omitted: u64,
    /// Where the omitted lines were left out (a byte offset in `lines`, at a line start).
    pub omitted_at: usize,
    /// The whole screen of a full-screen program (the alternate screen), row by row.
    pub screen: Option<String>,
    /// The full-screen program's screen is what the last update showed.
    pub screen_unchanged: bool,
}

/// A session's terminal: the emulator and what the last update showed.
pub struct Screen {
    parser: vt100::Parser<Scrolled>,
    /// The main screen's rows as the last update left them (`None`: nothing shown yet).
    shown: Option<Vec<Row>>,
    /// Main-screen lines decided before a switch to the alternate screen or a resize,
    /// waiting for the next update.
    carried: Bounded,
    /// The alternate screen as last shown.
    shown_alternate: Option<String>,
    /// Output from pipes: a line feed is also a carriage return (a terminal's `ONLCR`).
    pipe: bool,
}

/// Escape sequences that switch to the alternate screen.
const ALTERNATE_ON: [&[u8]; 3] = [b"\x1b[?1049h", b"\x1b[?1047h", b"\x1b[?47h"];

impl Screen {
    pub fn new(rows: u16, cols: u16, pipe: bool) -> Screen {
        let callbacks = Scrolled {
            rows: Bounded::new(HEAD_KEEP, TAIL_KEEP),
            replies: Vec::new(),
            answer_queries: !pipe,
            state: BasicFormattedCaptureState::new(),
            any: false,
            scratch: String::new(),
        };
        Screen {
            parser: vt100::Parser::new_with_callbacks(nonzero(rows), nonzero(cols), 0, callbacks),
            shown: None,
            carried: Bounded::new(HEAD_KEEP, TAIL_KEEP),
            shown_alternate: None,
            pipe,
        }
    }

    /// Feeds output to the emulator.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.pipe {
            let mut start = 0;
            for at in memchr::memchr_iter(b'\n', bytes) {
                self.feed_terminal(&bytes[start..at]);
                self.feed_terminal(b"\r\n");
                start = at + 1;
            }
            self.feed_terminal(&bytes[start..]);
        } else {
            self.feed_terminal(bytes);
        }
    }

    /// Feeds terminal output, settling the main screen's new lines just before the
    /// program switches to the alternate screen (the main screen cannot be read while
    /// the alternate one is up, and the program may print more before a model reads).
    fn feed_terminal(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(at) = memchr::memmem::find(rest, b"\x1b[?") {
            let (before, from) = rest.split_at(at);
            self.parser.process(before);
            if !self.parser.screen().alternate_screen()
                && ALTERNATE_ON.iter().any(|seq| from.starts_with(seq))
            {
                self.settle_main();
            }
            self.parser.process(&from[..3]);
            rest = &from[3..];
        }
        self.parser.process(rest);
    }

    /// Moves the main screen's new lines into `carried` and marks the screen as shown.
    fn settle_main(&mut self) {
        let (items, _) = self.main_diff();
        for item in items {
            match item {
                Owned::Row(r) => self.carried.push(r),
                Owned::Gap(n) => self.carried.push_gap(n),
            }
        }
        self.mark_main_shown();
    }

    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    /// Resizes the terminal. What the main screen showed until now is settled first, and
    /// rows the resize itself pushes off are not news.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let alternate = self.parser.screen().alternate_screen();
        if !alternate {
            self.settle_main();
        }
        self.parser.set_size(nonzero(rows), nonzero(cols));
        self.parser.callbacks_mut().rows.clear();
        if alternate {
            // The main screen changed shape under its snapshot: show it whole on return.
            self.shown = None;
            self.shown_alternate = None;
        } else {
            self.mark_main_shown();
        }
    }

    /// Whether a full-screen program has the alternate screen up.
    pub fn alternate(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// The cursor position, 0-based (row, column).
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// The key modes the program set (application cursor keys).
    pub fn modes(&self) -> super::keys::Modes {
        super::keys::Modes {
            application_cursor: self.parser.screen().application_cursor(),
        }
    }

    /// The text of the cursor's row left of the cursor: where a prompt ends.
    pub fn cursor_line(&self) -> String {
        let screen = self.parser.screen();
        let (row, col) = screen.cursor_position();
        let mut text = screen
            .rows(0, col)
            .nth(usize::from(row))
            .unwrap_or_default();
        for _ in unicode_width(&text)..usize::from(col) {
            text.push(' ');
        }
        text
    }

    /// The visible rows, the cursor's padded with spaces up to the cursor (so a prompt
    /// keeps its trailing space), with their continuation flags.
    fn visible_rows(&self) -> Vec<Row> {
        let screen = self.parser.screen();
        let (_, cols) = self.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        let first_continues = !screen.alternate_screen() && self.parser.callbacks().last_wrapped();
        screen
            .rows(0, cols)
            .enumerate()
            .map(|(i, mut text)| {
                let i = i as u16;
                if i == cursor_row {
                    let width = unicode_width(&text);
                    for _ in width..usize::from(cursor_col) {
                        text.push(' ');
                    }
                }
                let continues = if i == 0 {
                    first_continues
                } else {
                    screen.row_wrapped(i - 1)
                };
                Row { text, continues }
            })
            .collect()
    }

    /// The rows of the main screen to show: from the first row that differs from the
    /// last update to the last non-blank row (or the cursor's), and whether any differ.
    fn main_diff(&self) -> (Vec<Owned>, bool) {
        let screen_rows = self.visible_rows();
        let scrolled = &self.parser.callbacks().rows;
        let shown = self.shown.as_deref().unwrap_or(&[]);
        let cursor_row = usize::from(self.cursor().0);
        let last = screen_rows
            .iter()
            .rposition(|r| !r.text.trim_end().is_empty())
            .map_or(cursor_row, |l| l.max(cursor_row));
        let screen_rows = &screen_rows[..(last + 1).min(screen_rows.len())];
        let sequence: Vec<Item<'_>> = scrolled
            .items()
            .chain(screen_rows.iter().map(Item::Row))
            .collect();
        // The first row that is new or changed.
        let mut first = sequence.len();
        for (i, item) in sequence.iter().enumerate() {
            let same = match (item, shown.get(i)) {
                (Item::Row(r), Some(s)) => *r == s,
                _ => false,
            };
            if !same {
                first = i;
                break;
            }
        }
        // Whole logical lines: back up to the start of a wrapped line.
        while first > 0
            && first < sequence.len()
            && matches!(sequence[first], Item::Row(r) if r.continues)
            && matches!(sequence[first - 1], Item::Row(_))
        {
            first -= 1;
        }
        let changed = first < sequence.len();
        let owned = sequence[first..]
            .iter()
            .map(|item| match item {
                Item::Row(r) => Owned::Row((*r).clone()),
                Item::Gap(n) => Owned::Gap(*n),
            })
            .collect();
        (owned, changed)
    }

    /// Records the main screen as shown: later rows line up against it.
    fn mark_main_shown(&mut self) {
        self.shown = Some(self.visible_rows());
        self.parser.callbacks_mut().rows.clear();
    }

    /// What is new since the last update, within `budget` characters (the full screen of
    /// a full-screen program comes first; the new lines share the rest, keeping their
    /// first quarter and their end). `whole`: the whole current screen instead of what
    /// changed on it.
    pub fn take_update(&mut self, budget: usize, whole: bool) -> Update {
        let mut rows: Vec<Owned> = self
            .carried
            .items()
            .map(|i| match i {
                Item::Row(r) => Owned::Row(r.clone()),
                Item::Gap(n) => Owned::Gap(n),
            })
            .collect();
        self.carried.clear();
        let mut update = Update::default();
        if self.alternate() {
            let screen = self.render_alternate();
            update.screen_unchanged =
                !whole && self.shown_alternate.as_deref() == Some(screen.as_str());
            self.shown_alternate = Some(screen.clone());
            update.screen = Some(cut_chars(&screen, budget));
        } else {
            self.shown_alternate = None;
            if whole {
                self.shown = None;
                self.parser.callbacks_mut().rows.clear();
            }
            let (main, _) = self.main_diff();
            rows.extend(main);
            self.mark_main_shown();
        }
        let room = budget.saturating_sub(update.screen.as_ref().map_or(0, |s| s.len()));
        let (lines, omitted, at) = render_lines(&rows, room);
        update.lines = lines;
        update.omitted = omitted;
        update.omitted_at = at;
        update
    }

    /// The alternate screen, every row up to the last non-blank one (or the cursor's).
    fn render_alternate(&self) -> String {
        let rows = self.visible_rows();
        let cursor_row = usize::from(self.cursor().0);
        let last = rows
            .iter()
            .rposition(|r| !r.text.trim_end().is_empty())
            .map_or(cursor_row, |l| l.max(cursor_row));
        rows[..(last + 1).min(rows.len())]
            .iter()
            .map(|r| r.text.trim_end())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The whole screen now, as shown (for the end of a session's transcript).
    pub fn contents(&self) -> String {
        self.parser.screen().contents()
    }

    /// The answers owed to the program's queries since the last call (bounded: a
    /// program that floods queries gets the first few kilobytes answered).
    pub fn take_replies(&mut self) -> Vec<u8> {
        let replies = &mut self.parser.callbacks_mut().replies;
        replies.truncate(4096);
        std::mem::take(replies)
    }

    /// Whether output arrived that the next update would show.
    pub fn has_news(&self) -> bool {
        !self.carried.is_empty() || !self.parser.callbacks().rows.is_empty()
    }
}

/// Columns `text` takes on a terminal.
fn unicode_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

fn nonzero(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap_or(std::num::NonZeroU16::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(s: &mut Screen) -> String {
        s.take_update(100_000, false).lines
    }

    #[test]
    fn a_line_program_shows_what_is_new() {
        let mut s = Screen::new(24, 80, false);
        s.feed(b"hello\r\nworld\r\n$ ");
        assert_eq!(lines(&mut s), "hello\nworld\n$ ");
        // The terminal echoes the command over the prompt's row: that row changed.
        s.feed(b"echo x\r\nx\r\n$ ");
        assert_eq!(lines(&mut s), "$ echo x\nx\n$ ");
        assert_eq!(lines(&mut s), "");
    }

    #[test]
    fn scrolled_rows_are_neither_lost_nor_repeated() {
        let mut s = Screen::new(5, 40, false);
        s.feed(b"a1\r\na2\r\na3\r\n");
        assert_eq!(lines(&mut s), "a1\na2\na3\n");
        for i in 1..=10 {
            s.feed(format!("b{i}\r\n").as_bytes());
        }
        let expected: Vec<String> = (1..=10).map(|i| format!("b{i}")).collect();
        assert_eq!(lines(&mut s), format!("{}\n", expected.join("\n")));
    }

    #[test]
    fn a_wrapped_line_comes_back_whole() {
        let mut s = Screen::new(4, 10, false);
        let long = "0123456789abcdefghijABCDEFGHIJxyz";
        s.feed(format!("{long}\r\nnext\r\nmore\r\n$ ").as_bytes());
        // The long line took 4 rows, two of which scrolled off; it is one line again.
        assert_eq!(lines(&mut s), format!("{long}\nnext\nmore\n$ "));
    }

    #[test]
    fn the_last_scrolled_row_wrapping_into_the_screen_is_known() {
        // Guards `Scrolled::last_wrapped`, which reads vt100's capture state.
        let mut s = Screen::new(2, 10, false);
        s.feed(b"0123456789abcde");
        assert_eq!(lines(&mut s), "0123456789abcde");
        s.feed(b"\r\n\r\n");
        let mut t = Screen::new(2, 10, false);
        t.feed(b"0123456789abcdefghijkl");
        assert_eq!(lines(&mut t), "0123456789abcdefghijkl");
    }

    #[test]
    fn a_full_screen_program_shows_its_screen() {
        let mut s = Screen::new(5, 20, false);
        s.feed(b"before\r\n\x1b[?1049h\x1b[H\x1b[2Jline one\r\nline two\x1b[5;1H:");
        let u = s.take_update(10_000, false);
        assert_eq!(u.lines, "before\n");
        assert_eq!(u.screen.as_deref(), Some("line one\nline two\n\n\n:"));
        assert!(!u.screen_unchanged);
        let u = s.take_update(10_000, false);
        assert!(u.screen_unchanged);
        // Leaving it: the main screen is back as it was; only the new prompt is news.
        s.feed(b"\x1b[?1049l$ ");
        let u = s.take_update(10_000, false);
        assert_eq!((u.lines.as_str(), u.screen), ("$ ", None));
    }

    #[test]
    fn output_before_a_full_screen_program_is_kept() {
        let mut s = Screen::new(3, 20, false);
        s.feed(b"x1\r\nx2\r\nx3\r\nx4\r\n\x1b[?1049hFULL");
        let u = s.take_update(10_000, false);
        assert_eq!(u.lines, "x1\nx2\nx3\nx4\n");
        assert_eq!(u.screen.as_deref(), Some("FULL"));
    }

    #[test]
    fn the_budget_keeps_the_start_and_the_end() {
        let mut s = Screen::new(5, 40, false);
        for i in 0..1000 {
            s.feed(format!("line {i}\r\n").as_bytes());
        }
        s.feed(b"$ ");
        let u = s.take_update(400, false);
        assert!(u.lines.len() <= 400, "{}", u.lines.len());
        assert!(u.lines.starts_with("line 0\n"), "{}", u.lines);
        assert!(u.lines.ends_with("line 999\n$ "), "{}", u.lines);
        let shown = u.lines.lines().count() as u64;
        assert_eq!(shown + u.omitted, 1001);
        assert!(u.lines[u.omitted_at..].starts_with("line "));
    }

    #[test]
    fn memory_stays_bounded() {
        let mut s = Screen::new(24, 80, false);
        let chunk = "0123456789".repeat(7) + "\r\n";
        for _ in 0..200_000 {
            s.feed(chunk.as_bytes());
        }
        let rows = &s.parser.callbacks().rows;
        assert!(rows.head_chars <= HEAD_KEEP && rows.tail_chars <= TAIL_KEEP);
        let u = s.take_update(30_000, false);
        assert!(u.lines.len() <= 30_000);
        assert!(u.omitted > 190_000);
    }

    #[test]
    fn pipes_get_carriage_returns() {
        let mut s = Screen::new(24, 80, true);
        s.feed(b"one\ntwo\n");
        assert_eq!(lines(&mut s), "one\ntwo\n");
    }

    #[test]
    fn escapes_and_redraws_never_show() {
        let mut s = Screen::new(24, 80, false);
        s.feed(b"\x1b[31mred\x1b[0m 10%\r\x1b[Kred 100%\r\n\x1b]0;title\x07done\r\n");
        assert_eq!(lines(&mut s), "red 100%\ndone\n");
    }

    #[test]
    fn queries_are_answered() {
        let mut s = Screen::new(24, 80, false);
        s.feed(b"ab\x1b[6n\x1b[c\x1b[>c\x1b]11;?\x07");
        assert_eq!(
            s.take_replies(),
            b"\x1b[1;3R\x1b[?62;22c\x1b[>1;10;0c\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        assert!(s.take_replies().is_empty());
        let mut p = Screen::new(24, 80, true);
        p.feed(b"\x1b[6n");
        assert!(p.take_replies().is_empty());
    }

    #[test]
    fn the_whole_screen_on_request() {
        let mut s = Screen::new(24, 80, false);
        s.feed(b"a\r\nb\r\n$ ");
        lines(&mut s);
        assert_eq!(s.take_update(1000, true).lines, "a\nb\n$ ");
    }

    proptest! {
        /// Whole lines printed in any chunks, read at any points: every line comes back
        /// exactly once, in order (the screen is small, so most scroll off between reads).
        #[test]
        fn every_line_once(
            texts in proptest::collection::vec("[a-z]{0,30}", 1..60),
            reads in proptest::collection::vec(proptest::bool::ANY, 60),
            rows in 2u16..8,
            cols in 10u16..40,
        ) {
            let mut s = Screen::new(rows, cols, false);
            let mut seen = String::new();
            for (i, t) in texts.iter().enumerate() {
                s.feed(format!("{t}\r\n").as_bytes());
                if reads[i] {
                    seen.push_str(&lines(&mut s));
                }
            }
            seen.push_str(&lines(&mut s));
            let got: Vec<&str> = seen.split('\n').collect();
            let mut want: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
            // Each update ends with the empty row under the cursor.
            let got: Vec<&str> = got.into_iter().filter(|l| !l.is_empty()).collect();
            want.retain(|l| !l.is_empty());
            prop_assert_eq!(got, want);
        }

        /// Any bytes through the emulator: an update, never a panic, within the budget.
        #[test]
        fn any_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), budget in 0usize..300) {
            let mut s = Screen::new(4, 12, false);
            s.feed(&bytes);
            let u = s.take_update(budget, false);
            prop_assert!(u.lines.len() + u.screen.as_ref().map_or(0, |s| s.len()) <= budget);
            let _ = s.cursor_line();
        }
    }
}
