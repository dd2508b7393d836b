//! Finding the patch in what a model sent. Models wrap patches: in a Markdown code
//! fence, between sentences, in the heredoc of Codex's shell form (`apply_patch <<'EOF'`
//! … `EOF`), now and then with every line break written as `\n`. Each is tolerated and
//! named, so the result can say what was applied.

use super::{Format, ParseError};
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// Something the patch was found inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wrapping {
    /// The whole input was one line with `\n` escapes for line breaks.
    EscapedNewlines,
    /// A Markdown code fence (```` ``` ```` or `~~~`).
    Fence,
    /// A shell heredoc: `apply_patch <<'EOF'` … `EOF`.
    Heredoc,
    /// Other text before or after the patch.
    Prose,
}

impl Wrapping {
    pub fn describe(self) -> &'static str {
        match self {
            Wrapping::EscapedNewlines => "written on one line with \\n for its line breaks",
            Wrapping::Fence => "inside a code fence",
            Wrapping::Heredoc => "inside a heredoc (apply_patch <<'EOF')",
            Wrapping::Prose => "surrounded by prose",
        }
    }
}

/// Where the patch is in the (normalised) input.
pub(super) struct Located<'a> {
    pub text: Cow<'a, str>,
    pub format: Format,
    /// Index of the patch's first line (`*** Begin Patch`, or the first diff header).
    pub start: usize,
    /// Index of `*** End Patch` (envelope); for a unified diff the parser finds its end.
    pub end: usize,
    pub wrappings: Vec<Wrapping>,
    pub workdir: Option<String>,
    /// Lines outside the patch that belong to a wrapper (a heredoc's closing word).
    pub skip: Vec<String>,
}

/// `apply_patch <<'EOF'`, `cd DIR && apply_patch <<EOF`, `<<"PATCH"`, `<<-EOF`, or the
/// bare `<<'EOF'` Codex's lenient mode takes.
static HEREDOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^\s*(?:cd\s+("[^"]*"|'[^']*'|\S+)\s*&&\s*)?(?:(?:apply_patch|applypatch)\s*)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(['"]?)\s*$"#,
    )
    .unwrap_or_else(|e| unreachable!("a constant pattern: {e}"))
});

pub(super) fn locate(input: &str) -> Result<Located<'_>, ParseError> {
    let mut wrappings = Vec::new();
    let mut text: Cow<'_, str> = Cow::Borrowed(input);
    if !input.contains('\n') && input.contains("\\n") {
        text = Cow::Owned(unescape(input));
        wrappings.push(Wrapping::EscapedNewlines);
    }
    // Every line break a CRLF (a patch that went through a Windows clipboard or file):
    // the CRs belong to the transport, not to the lines. A `git diff` of a CRLF file has
    // CRs on its content lines only, never on its headers, so it is not taken for one.
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    if breaks > 0 && memchr::memmem::find_iter(text.as_bytes(), b"\r\n").count() == breaks {
        text = Cow::Owned(text.replace("\r\n", "\n"));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    // Whichever comes first: a unified diff may hold a line ` *** Begin Patch` (context)
    // of a file that mentions the envelope.
    let begin = lines
        .iter()
        .position(|l| l.trim() == "*** Begin Patch")
        .filter(|&b| unified_start(&lines).is_none_or(|u| b < u));
    let (format, start, end) = match begin {
        Some(b) => {
            let end = lines
                .iter()
                .rposition(|l| l.trim() == "*** End Patch")
                .filter(|&e| e > b)
                .ok_or_else(|| {
                    ParseError::at(
                        b + 1,
                        "'*** Begin Patch' has no '*** End Patch' after it: the patch may \
                         have been cut off, so none of it was applied",
                    )
                })?;
            (Format::Envelope, b, end)
        }
        None => match unified_start(&lines) {
            Some(s) => (Format::Unified, s, s),
            None => return Err(not_a_patch(&lines)),
        },
    };
    let mut workdir = None;
    let mut skip = Vec::new();
    for line in &lines[..start] {
        if let Some(c) = HEREDOC.captures(line)
            && c.get(2).map(|m| m.as_str()) == c.get(4).map(|m| m.as_str())
        {
            workdir = c.get(1).map(|m| unquote_word(m.as_str()));
            if let Some(word) = c.get(3) {
                skip.push(word.as_str().to_string());
            }
        }
    }
    Ok(Located {
        text,
        format,
        start,
        end,
        wrappings,
        workdir,
        skip,
    })
}

/// The first line of a unified diff: `diff --git`, or `--- X` followed by `+++ Y`.
fn unified_start(lines: &[&str]) -> Option<usize> {
    (0..lines.len()).find(|&i| {
        lines[i].starts_with("diff --git ")
            || (lines[i].starts_with("--- ")
                && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")))
    })
}

fn not_a_patch(lines: &[&str]) -> ParseError {
    if let Some(i) = lines.iter().position(|l| l.starts_with("@@")) {
        return ParseError::at(
            i + 1,
            "this hunk names no file: a unified diff needs '--- a/PATH' and '+++ b/PATH' \
             lines before its first @@, and the envelope '*** Begin Patch', '*** Update \
             File: PATH'",
        );
    }
    ParseError::whole(
        "the input is not a patch: it has neither a '*** Begin Patch' line (Codex's \
         envelope: *** Begin Patch, *** Add File: / *** Update File: / *** Delete File: \
         PATH, hunks, *** End Patch) nor a unified diff ('--- a/PATH', '+++ b/PATH', \
         '@@ -1,3 +1,4 @@')",
    )
}

/// Notes what the lines outside the patch (before `start`, after `end`) were: fence
/// lines, a heredoc's opening and closing lines, or prose (any other non-blank line).
pub(super) fn note_outside(
    lines: &[&str],
    start: usize,
    end: usize,
    skip: &[String],
    wrappings: &mut Vec<Wrapping>,
) {
    let outside = lines[..start]
        .iter()
        .chain(lines.get(end + 1..).unwrap_or_default());
    for line in outside {
        let t = line.trim();
        let kind = if t.is_empty() {
            continue;
        } else if t.starts_with("```") || t.starts_with("~~~") {
            Wrapping::Fence
        } else if HEREDOC.is_match(line) || skip.iter().any(|w| w == t) {
            Wrapping::Heredoc
        } else {
            Wrapping::Prose
        };
        if !wrappings.contains(&kind) {
            wrappings.push(kind);
        }
    }
    wrappings.sort();
}

/// A shell word as `cd` would get it: one layer of quotes removed.
fn unquote_word(word: &str) -> String {
    for q in ['"', '\''] {
        if let Some(inner) = word.strip_prefix(q).and_then(|w| w.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    word.to_string()
}

/// A one-line input with `\n` escapes, as a model that encoded the patch twice sends
/// it: the JSON string escapes read once more.
fn unescape(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
