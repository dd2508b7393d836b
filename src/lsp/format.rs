//! What code-intelligence results look like, pure (issue 20 §2, §3): diagnostics as
//! `path:line:col: severity: message [code]`, the delta an edit introduced, locations,
//! outlines, hover text, and a server's text edits applied to a file's text.

use super::position::{self, Encoding};
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, SymbolKind};

/// Diagnostics one result shows at most per file (the rest are counted).
pub const MAX_DIAGNOSTICS: usize = 50;
/// Lines of introduced diagnostics an edit result shows at most.
pub const MAX_EDIT_DIAGNOSTICS: usize = 10;
/// Locations, symbols or references one result shows at most.
pub const MAX_LOCATIONS: usize = 200;

/// One diagnostic as a model reads it: 1-based line, 1-based column in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    pub line: usize,
    pub col: usize,
    pub severity: Severity,
    pub code: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }

    fn from_lsp(s: Option<DiagnosticSeverity>) -> Severity {
        match s {
            Some(DiagnosticSeverity::WARNING) => Severity::Warning,
            Some(DiagnosticSeverity::INFORMATION) => Severity::Info,
            Some(DiagnosticSeverity::HINT) => Severity::Hint,
            // The spec leaves a missing severity to the client; an error is the safe side.
            _ => Severity::Error,
        }
    }
}

/// A server's diagnostic against the text it was computed for.
pub fn diag(text: &str, d: &Diagnostic, enc: Encoding) -> Diag {
    let line0 = d.range.start.line as usize;
    let col0 = position::line_text(text, line0).map_or(d.range.start.character as usize, |l| {
        position::units_to_chars(l, d.range.start.character, enc)
    });
    let code = d.code.as_ref().map(|c| match c {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.clone(),
    });
    // One line per diagnostic: a multi-line message (pyright's, tsc's chains) is joined.
    let message = d
        .message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Diag {
        line: line0 + 1,
        col: col0 + 1,
        severity: Severity::from_lsp(d.severity),
        code,
        message,
    }
}

/// `app.py:3:5: error: message [code]`.
pub fn diag_line(path: &str, d: &Diag) -> String {
    let code = d
        .code
        .as_deref()
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    format!(
        "{path}:{}:{}: {}: {}{code}",
        d.line,
        d.col,
        d.severity.as_str(),
        d.message
    )
}

/// Sorted by position, then severity.
pub fn sort(diags: &mut [Diag]) {
    diags.sort_by(|a, b| {
        (a.line, a.col, a.severity, &a.message).cmp(&(b.line, b.col, b.severity, &b.message))
    });
}

/// What an edit changed: the diagnostics of `after` that `before` did not have, and how
/// many of `before` are gone. A diagnostic is the same one when its severity, code and
/// message are (positions move when lines are added above it); of several equal ones,
/// the surplus shown is the one nearest `near` (the edited line), so an error the edit
/// made is shown where the edit made it.
pub fn delta(before: &[Diag], after: &[Diag], near: usize) -> (Vec<Diag>, usize) {
    use std::collections::HashMap;
    type Key<'a> = (Severity, Option<&'a str>, &'a str);
    let mut counts: HashMap<Key<'_>, i64> = HashMap::new();
    for d in before {
        *counts
            .entry((d.severity, d.code.as_deref(), d.message.as_str()))
            .or_default() -= 1;
    }
    for d in after {
        *counts
            .entry((d.severity, d.code.as_deref(), d.message.as_str()))
            .or_default() += 1;
    }
    let cleared: i64 = counts.values().filter(|n| **n < 0).map(|n| -n).sum();
    let mut introduced = Vec::new();
    let mut by_key: HashMap<Key<'_>, Vec<&Diag>> = HashMap::new();
    for d in after {
        by_key
            .entry((d.severity, d.code.as_deref(), d.message.as_str()))
            .or_default()
            .push(d);
    }
    for (k, mut ds) in by_key {
        let surplus = counts.get(&k).copied().unwrap_or(0);
        if surplus <= 0 {
            continue;
        }
        ds.sort_by_key(|d| (d.line.abs_diff(near), d.line, d.col));
        introduced.extend(ds.into_iter().take(surplus as usize).cloned());
    }
    sort(&mut introduced);
    (introduced, cleared as usize)
}

/// Keeps the diagnostics at or above `min`.
pub fn at_least(diags: Vec<Diag>, min: Severity) -> Vec<Diag> {
    diags.into_iter().filter(|d| d.severity <= min).collect()
}

/// The words for a symbol kind.
pub fn kind_name(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::FILE => "file",
        SymbolKind::MODULE => "module",
        SymbolKind::NAMESPACE => "namespace",
        SymbolKind::PACKAGE => "package",
        SymbolKind::CLASS => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::PROPERTY => "property",
        SymbolKind::FIELD => "field",
        SymbolKind::CONSTRUCTOR => "constructor",
        SymbolKind::ENUM => "enum",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::FUNCTION => "function",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::CONSTANT => "constant",
        SymbolKind::STRING => "string",
        SymbolKind::NUMBER => "number",
        SymbolKind::BOOLEAN => "boolean",
        SymbolKind::ARRAY => "array",
        SymbolKind::OBJECT => "object",
        SymbolKind::KEY => "key",
        SymbolKind::NULL => "null",
        SymbolKind::ENUM_MEMBER => "enum member",
        SymbolKind::STRUCT => "struct",
        SymbolKind::EVENT => "event",
        SymbolKind::OPERATOR => "operator",
        SymbolKind::TYPE_PARAMETER => "type parameter",
        _ => "symbol",
    }
}

/// Claude Code's capitalised kind names (its LSP tool's output).
pub fn kind_title(kind: SymbolKind) -> String {
    kind_name(kind)
        .split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The text of a hover, markdown kept as the server wrote it, code fences included.
pub fn hover_text(contents: &lsp_types::HoverContents) -> String {
    use lsp_types::{HoverContents, MarkedString};
    let marked = |m: &MarkedString| match m {
        MarkedString::String(s) => s.clone(),
        MarkedString::LanguageString(ls) => format!("```{}\n{}\n```", ls.language, ls.value),
    };
    let text = match contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(ms) => ms.iter().map(marked).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(m) => m.value.clone(),
    };
    text.trim().to_string()
}

/// One text edit in a server's coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub start: (u32, u32),
    pub end: (u32, u32),
    pub new_text: String,
}

/// Applies `edits` (positions against `text`, in `enc` units) all at once, as LSP
/// requires: each against the original text, none overlapping. Line breaks in the new
/// text are written in the file's ending where the file uses CRLF throughout.
pub fn apply_edits(text: &str, edits: &[TextEdit], enc: Encoding) -> Result<String, String> {
    let crlf = text.contains("\r\n") && !text.replace("\r\n", "").contains('\n');
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            let a = position::byte_offset(text, e.start.0, e.start.1, enc);
            let b = position::byte_offset(text, e.end.0, e.end.1, enc);
            (a, b.max(a), e.new_text.as_str())
        })
        .collect();
    // Equal starts keep the server's order (an insertion before a replacement).
    spans.sort_by_key(|s| (s.0, s.1));
    for pair in spans.windows(2) {
        if pair[1].0 < pair[0].1 {
            return Err("the server sent overlapping edits".to_string());
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b, new) in spans {
        out.push_str(&text[at..a]);
        if crlf {
            out.push_str(&new.replace("\r\n", "\n").replace('\n', "\r\n"));
        } else {
            out.push_str(new);
        }
        at = b;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(line: usize, msg: &str) -> Diag {
        Diag {
            line,
            col: 1,
            severity: Severity::Error,
            code: Some("c".into()),
            message: msg.into(),
        }
    }

    #[test]
    fn delta_ignores_moved_lines() {
        let before = vec![d(3, "old"), d(5, "dup")];
        let after = vec![d(4, "old"), d(6, "dup"), d(2, "dup"), d(2, "new")];
        let (intro, cleared) = delta(&before, &after, 2);
        assert_eq!(intro, vec![d(2, "dup"), d(2, "new")]);
        assert_eq!(cleared, 0);
        let (intro, cleared) = delta(&after, &before, 2);
        assert!(intro.is_empty());
        assert_eq!(cleared, 2);
    }

    #[test]
    fn lines() {
        assert_eq!(
            diag_line("a.py", &d(3, "bad")),
            "a.py:3:1: error: bad [c]".to_string()
        );
    }

    #[test]
    fn edits_apply_at_once() {
        let edits = [
            TextEdit {
                start: (0, 4),
                end: (0, 7),
                new_text: "bar".into(),
            },
            TextEdit {
                start: (1, 0),
                end: (1, 3),
                new_text: "bar".into(),
            },
        ];
        assert_eq!(
            apply_edits("def foo():\nfoo()\n", &edits, Encoding::Utf16).unwrap(),
            "def bar():\nbar()\n"
        );
        let overlap = [edits[0].clone(), edits[0].clone()];
        assert!(apply_edits("def foo():\n", &overlap, Encoding::Utf16).is_err());
        let nl = [TextEdit {
            start: (0, 1),
            end: (0, 1),
            new_text: "\n".into(),
        }];
        assert_eq!(
            apply_edits("ab\r\ncd\r\n", &nl, Encoding::Utf8).unwrap(),
            "a\r\nb\r\ncd\r\n"
        );
    }

    proptest! {
        /// Nothing changed is nothing introduced or cleared; from nothing, everything is
        /// introduced.
        #[test]
        fn delta_properties(lines in proptest::collection::vec((1usize..20, "[ab]"), 0..8)) {
            let ds: Vec<Diag> = lines.iter().map(|(l, m)| d(*l, m)).collect();
            prop_assert_eq!(delta(&ds, &ds, 1), (vec![], 0));
            let (intro, cleared) = delta(&[], &ds, 1);
            prop_assert_eq!((intro.len(), cleared), (ds.len(), 0));
        }

        /// Replacing a range by its own text changes nothing; edits never panic.
        #[test]
        fn edits_properties(text in "[a-c\n é]{0,30}", l in 0u32..4, c in 0u32..8, l2 in 0u32..4, c2 in 0u32..8) {
            let a = position::byte_offset(&text, l, c, Encoding::Utf16);
            let b = position::byte_offset(&text, l2, c2, Encoding::Utf16);
            let (start, end) = if a <= b { ((l, c), (l2, c2)) } else { ((l2, c2), (l, c)) };
            let own = text[a.min(b)..a.max(b)].to_string();
            let e = TextEdit { start, end, new_text: own };
            prop_assert_eq!(apply_edits(&text, &[e], Encoding::Utf16).unwrap(), text.clone());
        }
    }
}
