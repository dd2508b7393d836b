//! The block around a line, by indentation: Codex's `read_file` in `indentation` mode
//! (issue 19 §3). Pure: it picks line indices; the tool reads and shows them.
//!
//! From the anchor line the block grows up and down, one line each way in turn, over
//! lines indented at least `floor` (the anchor's indentation less `max_levels` levels of
//! four columns; 0 levels: no floor). A blank line counts as indented like the last line
//! above it that is not blank. At the floor itself, unless siblings are wanted, the
//! block takes one line upwards (the header that opens it, and above that only comments
//! when `include_header`) and one downwards (the line that closes it). Blank lines at
//! either end are dropped. At most `limit` lines.

/// Columns a tab counts for.
pub const TAB_WIDTH: usize = 4;

/// Prefixes of a comment line (for `include_header`).
const COMMENT_PREFIXES: &[&str] = &["#", "//", "--"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockOptions {
    /// The anchor line, 0-based.
    pub anchor: usize,
    /// Parent levels to include (0: all).
    pub max_levels: usize,
    pub include_siblings: bool,
    pub include_header: bool,
    /// Most lines returned.
    pub limit: usize,
}

/// The indices of the block's lines, in order (empty when the anchor is past the end or
/// the limit is 0).
pub fn block(lines: &[&str], opts: BlockOptions) -> Vec<usize> {
    let n = lines.len();
    if opts.anchor >= n || opts.limit == 0 {
        return Vec::new();
    }
    let indents = effective_indents(lines);
    let floor = if opts.max_levels == 0 {
        0
    } else {
        indents[opts.anchor].saturating_sub(opts.max_levels.saturating_mul(TAB_WIDTH))
    };
    let limit = opts.limit.min(n);
    let (mut start, mut end) = (opts.anchor, opts.anchor);
    let (mut up_open, mut down_open) = (opts.anchor > 0, opts.anchor + 1 < n);
    let (mut up_floor, mut down_floor) = (0usize, 0usize);
    while end - start + 1 < limit && (up_open || down_open) {
        if up_open {
            let i = start - 1;
            let take = indents[i] >= floor
                && (indents[i] != floor || opts.include_siblings || {
                    let header_comment = opts.include_header && is_comment(lines[i]);
                    let first = up_floor == 0;
                    up_floor += 1;
                    header_comment || first
                });
            if take {
                start = i;
                up_open = start > 0;
            } else {
                up_open = false;
            }
        }
        if end - start + 1 >= limit {
            break;
        }
        if down_open {
            let j = end + 1;
            let take = indents[j] >= floor
                && (indents[j] != floor || opts.include_siblings || {
                    down_floor += 1;
                    down_floor == 1
                });
            if take {
                end = j;
                down_open = end + 1 < n;
            } else {
                down_open = false;
            }
        }
    }
    while start < end && lines[start].trim().is_empty() {
        start += 1;
    }
    while end > start && lines[end].trim().is_empty() {
        end -= 1;
    }
    (start..=end).collect()
}

/// Each line's indentation in columns; a blank line takes the last non-blank one's.
fn effective_indents(lines: &[&str]) -> Vec<usize> {
    let mut last = 0;
    lines
        .iter()
        .map(|l| {
            if !l.trim().is_empty() {
                last = l
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .map(|c| if c == '\t' { TAB_WIDTH } else { 1 })
                    .sum();
            }
            last
        })
        .collect()
}

fn is_comment(line: &str) -> bool {
    let t = line.trim();
    COMMENT_PREFIXES.iter().any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn opts(anchor_line: usize, max_levels: usize, siblings: bool, header: bool) -> BlockOptions {
        BlockOptions {
            anchor: anchor_line - 1,
            max_levels,
            include_siblings: siblings,
            include_header: header,
            limit: 200,
        }
    }

    /// 1-based line numbers of the block.
    fn numbers(text: &str, o: BlockOptions) -> Vec<usize> {
        let lines: Vec<&str> = text.lines().collect();
        block(&lines, o).into_iter().map(|i| i + 1).collect()
    }

    const NESTED: &str = "mod root {\n    fn outer() {\n        if cond {\n            inner();\n        }\n    }\n}\n";

    #[test]
    fn levels_widen_the_block() {
        assert_eq!(
            numbers(NESTED, opts(4, 2, false, true)),
            vec![2, 3, 4, 5, 6]
        );
        assert_eq!(
            numbers(NESTED, opts(4, 3, false, true)),
            (1..=7).collect::<Vec<_>>()
        );
        assert_eq!(
            numbers(NESTED, opts(4, 0, false, true)),
            (1..=7).collect::<Vec<_>>()
        );
    }

    const TWO_IFS: &str = "fn wrapper() {\n    if first {\n        do_first();\n    }\n    if second {\n        do_second();\n    }\n}\n";

    #[test]
    fn siblings_only_when_asked() {
        assert_eq!(numbers(TWO_IFS, opts(3, 1, false, true)), vec![2, 3, 4]);
        assert_eq!(
            numbers(TWO_IFS, opts(3, 1, true, true)),
            vec![2, 3, 4, 5, 6, 7]
        );
    }

    const CPP: &str = "#include <vector>\n#include <string>\n\nnamespace sample {\nclass Runner {\npublic:\n    void setup() {\n        if (enabled_) {\n            init();\n        }\n    }\n\n    // Run the code\n    int run() const {\n        switch (mode_) {\n            case Mode::Fast:\n                return fast();\n            case Mode::Slow:\n                return slow();\n            default:\n                return fallback();\n        }\n    }\n\nprivate:\n    bool enabled_ = false;\n};\n}\n";

    #[test]
    fn header_comments_and_trimmed_blank_ends() {
        assert_eq!(
            numbers(CPP, opts(18, 1, false, true)),
            (15..=22).collect::<Vec<_>>()
        );
        assert_eq!(
            numbers(CPP, opts(18, 2, false, true)),
            (13..=23).collect::<Vec<_>>()
        );
        assert_eq!(
            numbers(CPP, opts(18, 2, false, false)),
            (14..=23).collect::<Vec<_>>()
        );
        assert_eq!(
            numbers(CPP, opts(18, 2, true, false)),
            (7..=23).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_limit_grows_the_block_both_ways() {
        let lines: Vec<&str> = NESTED.lines().collect();
        let mut o = opts(4, 0, false, true);
        o.limit = 1;
        assert_eq!(block(&lines, o), vec![3]);
        o.limit = 3;
        assert_eq!(block(&lines, o), vec![2, 3, 4]);
        o.anchor = 99;
        assert!(block(&lines, o).is_empty());
    }

    proptest! {
        /// The block is a contiguous run holding the anchor (unless trimmed blank), within
        /// the limit, never starting or ending with a blank line (unless one line).
        #[test]
        fn blocks_are_contiguous_and_bounded(
            lines in proptest::collection::vec("( {0,8}|\t)[a-c#/ ]{0,4}", 1..40),
            anchor in 0usize..40,
            levels in 0usize..4,
            siblings: bool,
            header: bool,
            limit in 1usize..50,
        ) {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let o = BlockOptions { anchor: anchor % refs.len(), max_levels: levels, include_siblings: siblings, include_header: header, limit };
            let got = block(&refs, o);
            prop_assert!(!got.is_empty());
            prop_assert!(got.len() <= limit);
            prop_assert!(got.windows(2).all(|w| w[1] == w[0] + 1));
            if got.len() > 1 {
                prop_assert!(!refs[got[0]].trim().is_empty());
                prop_assert!(!refs[*got.last().unwrap_or(&0)].trim().is_empty());
            }
        }
    }
}
