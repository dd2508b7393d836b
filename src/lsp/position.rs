//! Positions, pure (issue 20 §2): what a model has (a 1-based line, and the symbol's name
//! on that line or a 1-based column in characters) to what a language server takes (a
//! 0-based line and a column in the negotiated encoding's code units), and back.
//!
//! Lines are split as LSP splits them: at `\n`, `\r\n` and a lone `\r`.

/// The unit an LSP column counts (`general.positionEncodings`, LSP 3.17): UTF-16 code
/// units unless the server chose another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    /// The encoding a server announced in `capabilities.positionEncoding`.
    pub fn from_lsp(kind: Option<&str>) -> Encoding {
        match kind {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        }
    }

    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// The byte ranges of each line's text (without its line break), as LSP counts lines.
pub fn line_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                spans.push((start, i));
                start = i + 1;
            }
            b'\r' => {
                spans.push((start, i));
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    spans.push((start, bytes.len()));
    spans
}

/// The text of line `line0` (0-based), without its line break.
pub fn line_text(text: &str, line0: usize) -> Option<&str> {
    line_spans(text).get(line0).map(|&(a, b)| &text[a..b])
}

/// The column in `enc` units of the `chars0`-th character of `line` (past the end: the
/// end of the line).
pub fn chars_to_units(line: &str, chars0: usize, enc: Encoding) -> u32 {
    line.chars()
        .take(chars0)
        .map(|c| enc.units(c))
        .sum::<usize>()
        .min(u32::MAX as usize) as u32
}

/// The character index (0-based) at column `units` (in `enc` units) of `line`; a column
/// inside a character counts as that character, one past the end as the end.
pub fn units_to_chars(line: &str, units: u32, enc: Encoding) -> usize {
    let mut seen = 0usize;
    for (i, c) in line.chars().enumerate() {
        let next = seen + enc.units(c);
        if units as usize <= seen || (units as usize) < next {
            return i;
        }
        seen = next;
    }
    line.chars().count()
}

/// The byte offset in `text` of an LSP position; a line past the end is the end of the
/// text, a column past the end of its line the end of that line.
pub fn byte_offset(text: &str, line0: u32, units: u32, enc: Encoding) -> usize {
    let spans = line_spans(text);
    let Some(&(start, end)) = spans.get(line0 as usize) else {
        return text.len();
    };
    let line = &text[start..end];
    let chars = units_to_chars(line, units, enc);
    start
        + line
            .char_indices()
            .nth(chars)
            .map_or(line.len(), |(byte, _)| byte)
}

/// Why a position could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PositionError {
    /// The line is past the end of the file (which has this many lines).
    LineOutOfRange { lines: usize },
    /// The symbol does not occur on the line (its text is given).
    SymbolNotOnLine { line_text: String },
    /// The symbol occurs on the line fewer times than asked.
    OccurrenceOutOfRange { found: usize },
    /// Neither a symbol nor a column was given.
    NoColumn,
}

impl PositionError {
    /// The message for a model, about `path` line `line1`.
    pub fn describe(&self, path: &str, line1: usize, symbol: Option<&str>) -> String {
        match self {
            PositionError::LineOutOfRange { lines } => format!(
                "line {line1} is past the end of {path}, which has {lines} line{}",
                if *lines == 1 { "" } else { "s" }
            ),
            PositionError::SymbolNotOnLine { line_text } => format!(
                "{:?} does not occur on line {line1} of {path}, which reads: {:?}",
                symbol.unwrap_or_default(),
                cut(line_text, 200)
            ),
            PositionError::OccurrenceOutOfRange { found } => format!(
                "{:?} occurs {found} time{} on line {line1} of {path}; occurrence must be at \
                 most {found}",
                symbol.unwrap_or_default(),
                if *found == 1 { "" } else { "s" }
            ),
            PositionError::NoColumn => {
                "give symbol (the name on that line) or column (1-based)".to_string()
            }
        }
    }
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The character columns (0-based) where `name` occurs on `line`: whole-word occurrences
/// (not inside a longer identifier) when there are any, else every occurrence.
pub fn symbol_columns(line: &str, name: &str) -> Vec<usize> {
    if name.is_empty() {
        return Vec::new();
    }
    let mut all = Vec::new();
    let mut whole = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find(name) {
        let byte = from + at;
        let before = line[..byte].chars().next_back();
        let after = line[byte + name.len()..].chars().next();
        let col = line[..byte].chars().count();
        all.push(col);
        let bounded = |c: Option<char>, edge: Option<char>| {
            !(c.is_some_and(is_ident) && edge.is_some_and(is_ident))
        };
        if bounded(before, name.chars().next()) && bounded(after, name.chars().next_back()) {
            whole.push(col);
        }
        from = byte + name.len().max(1);
        while !line.is_char_boundary(from) {
            from += 1;
        }
    }
    if whole.is_empty() { all } else { whole }
}

/// The first line (1-based) on which `symbol` occurs as a whole word (else at all).
pub fn first_line_with(text: &str, symbol: &str) -> Option<usize> {
    if symbol.is_empty() {
        return None;
    }
    let lines: Vec<&str> = line_spans(text).iter().map(|&(a, b)| &text[a..b]).collect();
    let whole = |l: &str| {
        let n = symbol.chars().count();
        symbol_columns(l, symbol).iter().any(|&c| {
            let before = c.checked_sub(1).and_then(|p| l.chars().nth(p));
            let after = l.chars().nth(c + n);
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
    };
    lines
        .iter()
        .position(|l| whole(l))
        .or_else(|| lines.iter().position(|l| l.contains(symbol)))
        .map(|i| i + 1)
}

/// A position a model gave: `line1` (1-based), and `symbol` (its `occurrence`-th
/// occurrence on the line, 1-based, default the first) or `column1` (1-based, in
/// characters). The symbol wins when both are given. Returns the 0-based line and
/// character column.
pub fn resolve(
    text: &str,
    line1: usize,
    symbol: Option<&str>,
    occurrence: Option<usize>,
    column1: Option<usize>,
) -> Result<(usize, usize), PositionError> {
    let spans = line_spans(text);
    // A file ending in a line break has an empty last "line" that no model means.
    let lines = if text.ends_with('\n') || text.ends_with('\r') {
        spans.len() - 1
    } else {
        spans.len()
    };
    if line1 == 0 || line1 > lines.max(1) {
        return Err(PositionError::LineOutOfRange { lines });
    }
    let (a, b) = spans[line1 - 1];
    let line = &text[a..b];
    match (symbol.filter(|s| !s.is_empty()), column1) {
        (Some(name), _) => {
            let cols = symbol_columns(line, name);
            if cols.is_empty() {
                return Err(PositionError::SymbolNotOnLine {
                    line_text: line.to_string(),
                });
            }
            let n = occurrence.unwrap_or(1).max(1);
            cols.get(n - 1)
                .map(|&c| (line1 - 1, c))
                .ok_or(PositionError::OccurrenceOutOfRange { found: cols.len() })
        }
        (None, Some(col)) => Ok((line1 - 1, col.saturating_sub(1))),
        (None, None) => Err(PositionError::NoColumn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_split_as_lsp_does() {
        assert_eq!(
            line_spans("a\nb\r\nc\rd"),
            vec![(0, 1), (2, 3), (5, 6), (7, 8)]
        );
        assert_eq!(line_text("x\n", 1), Some(""));
        assert_eq!(line_text("x", 1), None);
    }

    #[test]
    fn units_and_chars() {
        let line = "a😀b";
        assert_eq!(chars_to_units(line, 2, Encoding::Utf16), 3);
        assert_eq!(chars_to_units(line, 2, Encoding::Utf8), 5);
        assert_eq!(chars_to_units(line, 2, Encoding::Utf32), 2);
        assert_eq!(units_to_chars(line, 3, Encoding::Utf16), 2);
        assert_eq!(
            units_to_chars(line, 2, Encoding::Utf16),
            1,
            "inside the pair"
        );
        assert_eq!(units_to_chars(line, 99, Encoding::Utf16), 3);
        assert_eq!(byte_offset("ab\ncd", 1, 1, Encoding::Utf16), 4);
        assert_eq!(byte_offset("ab\ncd", 5, 0, Encoding::Utf16), 5);
    }

    #[test]
    fn symbols_on_a_line() {
        assert_eq!(
            symbol_columns("x = add(add_one(1), add)", "add"),
            vec![4, 20]
        );
        assert_eq!(
            symbol_columns("  helper()", "help"),
            vec![2],
            "no whole word: any"
        );
        assert_eq!(symbol_columns("é = é + 1", "é"), vec![0, 4]);
        assert_eq!(
            resolve("def f():\n    return g(1)\n", 2, Some("g"), None, None),
            Ok((1, 11))
        );
        assert_eq!(
            resolve("a a\n", 1, Some("a"), Some(3), None),
            Err(PositionError::OccurrenceOutOfRange { found: 2 })
        );
        assert_eq!(
            resolve("a\n", 2, Some("a"), None, None),
            Err(PositionError::LineOutOfRange { lines: 1 })
        );
        assert_eq!(resolve("abc", 1, None, None, Some(3)), Ok((0, 2)));
        assert_eq!(
            first_line_with("import helpers\nhelper()\n", "helper"),
            Some(2)
        );
        assert_eq!(
            first_line_with("helpers\n", "helper"),
            Some(1),
            "no whole word: any"
        );
        assert_eq!(first_line_with("x\n", "helper"), None);
        assert!(matches!(
            resolve("abc", 1, Some("zz"), None, None),
            Err(PositionError::SymbolNotOnLine { .. })
        ));
    }

    proptest! {
        /// Characters to units and back is the identity at every character boundary, in
        /// every encoding.
        #[test]
        fn columns_round_trip(line in "\\PC{0,40}", at in 0usize..45) {
            let n = line.chars().count();
            let at = at.min(n);
            for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
                let units = chars_to_units(&line, at, enc);
                prop_assert_eq!(units_to_chars(&line, units, enc), at);
            }
        }

        /// Every occurrence found is where the name is, and a byte offset is always a
        /// character boundary of the text.
        #[test]
        fn found_symbols_are_there(line in "[a-c _é(]{0,30}", name in "[a-c]{1,3}", l in 0u32..4, u in 0u32..40) {
            for col in symbol_columns(&line, &name) {
                let rest: String = line.chars().skip(col).collect();
                prop_assert!(rest.starts_with(&name));
            }
            let text = format!("{line}\n{line}\r\n{line}");
            for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
                prop_assert!(text.is_char_boundary(byte_offset(&text, l, u, enc)));
            }
        }
    }
}
