//! Pure: the numbers and the text of Codex's `exec_command` / `write_stdin` answers
//! (issue 19 §3), taken from openai/codex `codex-rs`: the yield clamps and defaults
//! (`core/src/unified_exec/mod.rs`, `process_manager.rs`, `tools/handlers/unified_exec/`),
//! the answer's header (`core/src/tools/context.rs`, `ExecCommandToolOutput`), and the
//! token-budget cut (`utils/string/src/truncate.rs`, `utils/output-truncation`): about 4
//! bytes a token, half the budget kept from the start and half from the end around
//! `…N tokens truncated…`.

use std::time::Duration;

/// `exec_command`'s wait when none is asked, and the bounds of any asked.
pub const DEFAULT_EXEC_YIELD_MS: u64 = 10_000;
pub const MIN_YIELD_MS: u64 = 250;
pub const MAX_YIELD_MS: u64 = 30_000;
/// `write_stdin`'s wait when none is asked.
pub const DEFAULT_WRITE_YIELD_MS: u64 = 250;
/// An empty `write_stdin` (a poll) waits at least this long, and at most the longer cap
/// (Codex's background terminal timeout), unless the process ends first.
pub const MIN_POLL_MS: u64 = 5_000;
pub const MAX_POLL_MS: u64 = 300_000;
/// Tokens of output in an answer when none is asked; Boris's cap on any asked (the
/// terminal engine's largest answer, 100,000 characters).
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;
pub const MAX_OUTPUT_TOKENS: u64 = 25_000;
/// Codex's estimate: a token is about four bytes.
const BYTES_PER_TOKEN: usize = 4;

/// `exec_command`'s wait: 10 s by default, 250 ms to 30 s.
pub fn exec_yield(requested: Option<u64>) -> Duration {
    Duration::from_millis(
        requested
            .unwrap_or(DEFAULT_EXEC_YIELD_MS)
            .clamp(MIN_YIELD_MS, MAX_YIELD_MS),
    )
}

/// `write_stdin`'s wait: 250 ms by default; a write waits 250 ms to 30 s, a poll (no
/// characters) 5 s to 5 min, so that polling a long build does not spin.
pub fn write_yield(requested: Option<u64>, poll: bool) -> Duration {
    let ms = requested
        .unwrap_or(DEFAULT_WRITE_YIELD_MS)
        .max(MIN_YIELD_MS);
    Duration::from_millis(if poll {
        ms.clamp(MIN_POLL_MS, MAX_POLL_MS)
    } else {
        ms.min(MAX_YIELD_MS)
    })
}

/// The token budget of an answer: 10,000 by default, at most [`MAX_OUTPUT_TOKENS`].
pub fn output_tokens(requested: Option<u64>) -> usize {
    let tokens = requested
        .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
        .min(MAX_OUTPUT_TOKENS);
    usize::try_from(tokens).unwrap_or(usize::MAX)
}

/// Codex's token estimate of a text: its bytes / 4, rounded up.
pub fn approx_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// `text` cut to about `max_tokens` tokens: the first half of the byte budget and the
/// last half, on character boundaries, around `…N tokens truncated…` (N: the bytes over
/// the budget, in tokens). Unchanged when it fits.
pub fn truncate_middle(text: &str, max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    if text.len() <= budget {
        return text.to_string();
    }
    let marker = |bytes: usize| format!("…{} tokens truncated…", bytes.div_ceil(BYTES_PER_TOKEN));
    if budget == 0 {
        return marker(text.len());
    }
    let left = budget / 2;
    let right = budget - left;
    let tail_from = text.len() - right;
    // The longest prefix of whole characters within `left` bytes, and the suffix from the
    // first character that starts at or after `tail_from`.
    let head_end = (0..=left)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let tail_start = (tail_from..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
        .max(head_end);
    format!(
        "{}{}{}",
        &text[..head_end],
        marker(text.len() - budget),
        &text[tail_start..]
    )
}

/// The output as a Codex answer carries it: unchanged within the budget; over it, a
/// warning with the original token count and line count, then the cut text.
pub fn formatted_output(text: &str, max_tokens: usize) -> String {
    if text.len() <= max_tokens.saturating_mul(BYTES_PER_TOKEN) {
        return text.to_string();
    }
    format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}",
        approx_tokens(text),
        text.lines().count(),
        truncate_middle(text, max_tokens)
    )
}

/// Where the process stands when a call answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Exited(i32),
    /// Still running: the id to pass to `write_stdin`.
    Running(u64),
}

/// One answer of `exec_command` or `write_stdin`.
#[derive(Debug, Clone)]
pub struct Answer<'a> {
    /// Six hex digits, new for every answer.
    pub chunk_id: &'a str,
    pub wall_time: Duration,
    pub state: State,
    /// What the process printed since the last answer (before the token cut).
    pub output: &'a str,
    pub max_tokens: usize,
}

/// The answer's text, as Codex lays it out: `Chunk ID`, `Wall time` (4 decimals), the
/// exit code or the session id, `Original token count`, then `Output:` and the output.
pub fn render(answer: &Answer<'_>) -> String {
    let state = match answer.state {
        State::Exited(code) => format!("Process exited with code {code}"),
        State::Running(id) => format!("Process running with session ID {id}"),
    };
    format!(
        "Chunk ID: {}\nWall time: {:.4} seconds\n{state}\nOriginal token count: {}\nOutput:\n{}",
        answer.chunk_id,
        answer.wall_time.as_secs_f64(),
        approx_tokens(answer.output),
        formatted_output(answer.output, answer.max_tokens)
    )
}

/// A fresh chunk id: six hex digits from `random`.
pub fn chunk_id(random: u32) -> String {
    format!("{:06x}", random & 0x00ff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cuts_as_codex_does() {
        // Codex's own cases (utils/output-truncation/src/truncate_tests.rs).
        let long = "this is an example of a long output that should be truncated";
        assert_eq!(
            truncate_middle(long, 5),
            "this is an…10 tokens truncated… truncated"
        );
        assert_eq!(
            truncate_middle("example output", 1),
            "ex…3 tokens truncated…ut"
        );
        assert_eq!(truncate_middle("example output", 10), "example output");
        let two = format!("{long}\nalso some other line");
        assert_eq!(
            formatted_output(&two, 10),
            "Warning: truncated output (original token count: 21)\nTotal output lines: 2\n\n\
             this is an example o…11 tokens truncated…also some other line"
        );
        assert_eq!(truncate_middle("abc", 0), "…1 tokens truncated…");
    }

    #[test]
    fn clamps() {
        assert_eq!(exec_yield(None), Duration::from_millis(10_000));
        assert_eq!(exec_yield(Some(1)), Duration::from_millis(250));
        assert_eq!(exec_yield(Some(100_000)), Duration::from_millis(30_000));
        assert_eq!(write_yield(None, false), Duration::from_millis(250));
        assert_eq!(write_yield(None, true), Duration::from_millis(5_000));
        assert_eq!(
            write_yield(Some(60_000), false),
            Duration::from_millis(30_000)
        );
        assert_eq!(
            write_yield(Some(60_000), true),
            Duration::from_millis(60_000)
        );
        assert_eq!(
            write_yield(Some(u64::MAX), true),
            Duration::from_millis(300_000)
        );
        assert_eq!(output_tokens(None), 10_000);
        assert_eq!(output_tokens(Some(1 << 40)), 25_000);
    }

    #[test]
    fn renders_both_states() {
        let a = Answer {
            chunk_id: "6e6db0",
            wall_time: Duration::from_millis(30_002),
            state: State::Running(3),
            output: "hi\n",
            max_tokens: 10,
        };
        assert_eq!(
            render(&a),
            "Chunk ID: 6e6db0\nWall time: 30.0020 seconds\nProcess running with session ID 3\n\
             Original token count: 1\nOutput:\nhi\n"
        );
        let a = Answer {
            state: State::Exited(0),
            ..a
        };
        assert!(render(&a).contains("\nProcess exited with code 0\n"));
        assert_eq!(chunk_id(0xabcdef12), "cdef12");
        assert_eq!(chunk_id(1), "000001");
    }

    proptest! {
        /// The cut keeps a prefix and a suffix of the text, never more than the budget of
        /// bytes between them, and is the text itself when it fits.
        #[test]
        fn cut_is_head_and_tail(text in "\\PC{0,300}", tokens in 0usize..80) {
            let cut = truncate_middle(&text, tokens);
            if text.len() <= tokens * 4 {
                prop_assert_eq!(&cut, &text);
            } else {
                // Some occurrence of the marker splits the cut into a prefix and a suffix
                // of the text within the budget (the text may hold the same characters).
                let budget = tokens * 4;
                let removed = text.len() - budget;
                let marker = format!("…{} tokens truncated…", removed.div_ceil(4));
                let split = cut.match_indices(&marker).any(|(at, _)| {
                    let (head, tail) = (&cut[..at], &cut[at + marker.len()..]);
                    text.starts_with(head) && text.ends_with(tail) && head.len() + tail.len() <= budget
                });
                prop_assert!(split, "{:?}", cut);
            }
        }

        #[test]
        fn yields_stay_in_bounds(ms in proptest::option::of(any::<u64>()), poll: bool) {
            let e = exec_yield(ms).as_millis() as u64;
            prop_assert!((MIN_YIELD_MS..=MAX_YIELD_MS).contains(&e));
            let w = write_yield(ms, poll).as_millis() as u64;
            if poll {
                prop_assert!((MIN_POLL_MS..=MAX_POLL_MS).contains(&w));
            } else {
                prop_assert!((MIN_YIELD_MS..=MAX_YIELD_MS).contains(&w));
            }
        }
    }
}
