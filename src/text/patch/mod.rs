//! `apply_patch` apart from all I/O (issue 19 §2): the patch a model sends — Codex's
//! envelope (`*** Begin Patch` … `*** End Patch`) or a unified diff (`---`/`+++`/`@@`),
//! bare or wrapped in a code fence, prose or a heredoc — parsed into file operations,
//! and each file's hunks matched and applied to its bytes.
//!
//! The behaviour follows openai/codex's `apply-patch` crate (its grammar, its lenient
//! markers, its context matching: exact, then ignoring trailing whitespace, then
//! surrounding whitespace, then typographic punctuation), with Boris's fidelity rules on
//! top: every byte outside a hunk's deleted lines is kept (context lines are copied from
//! the file, not from the patch), new lines take the file's line ending (issue 21 §1),
//! and a file's last line keeps or loses its line break only where the patch says so.

mod apply;
mod envelope;
mod generate;
mod hunk;
mod seek;
mod unified;
mod unwrap;

pub use apply::{FileEdit, HunkFailure, HunkMiss, apply_chunks, lines_of};
pub use envelope::render;
pub use generate::file_op_for;
pub use seek::Fuzz;
pub use unwrap::Wrapping;

/// A parsed patch: the file operations in the order the patch gives them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    pub files: Vec<FileOp>,
}

/// One file section of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// A new file (or, as in Codex, one that replaces an existing file whole); every line
    /// is an [`LineKind::Add`] line.
    Add {
        path: String,
        lines: Vec<Line>,
        /// The last line has no line break (`\ No newline at end of file`).
        no_eol: bool,
    },
    Delete {
        path: String,
    },
    /// Hunks applied to an existing file, which may move (`*** Move to:`, a git rename).
    /// No hunks and a move: a pure rename.
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

impl FileOp {
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }

    /// Whether its lines say which ending each has (a line carries a `\r` before its
    /// line break, as `git diff` prints a CRLF file's lines): then an added line is
    /// written with the ending the patch gives it. Otherwise the patch was written
    /// seeing no CR, as a model reads files, and new lines take the file's ending.
    pub fn ending_aware(&self) -> bool {
        match self {
            FileOp::Add { lines, .. } => lines.iter().any(|l| l.cr),
            FileOp::Delete { .. } => false,
            FileOp::Update { chunks, .. } => chunks.iter().any(|c| c.lines.iter().any(|l| l.cr)),
        }
    }
}

/// One hunk of an update: where it goes and the lines it changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// `@@ text` lines, in order: each is found after the one before (and after the
    /// previous hunk), and the hunk's lines are looked for after the last.
    pub anchors: Vec<String>,
    /// The 1-based line where the hunk's old lines start, from a unified header
    /// (`@@ -12,7 +12,8 @@`): a hint, the nearest match wins.
    pub line_hint: Option<usize>,
    pub lines: Vec<Line>,
    /// `*** End of File`: the old lines end at the end of the file.
    pub at_eof: bool,
    /// `\ No newline at end of file` after an old-side line: the file's last line has
    /// no line break (so the hunk ends at the end of the file).
    pub old_no_eol: bool,
    /// The same after a new-side line: the new last line gets none.
    pub new_no_eol: bool,
    /// 1-based line of the input where the hunk begins, for errors.
    pub source_line: usize,
}

impl Chunk {
    /// The lines the hunk expects in the file: context and deleted lines.
    pub fn old_lines(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.kind != LineKind::Add)
    }

    pub fn counts(&self) -> (usize, usize) {
        let added = self
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Add)
            .count();
        let removed = self
            .lines
            .iter()
            .filter(|l| l.kind == LineKind::Delete)
            .count();
        (added, removed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// ` text`: in the file before and after; kept from the file byte for byte.
    Context,
    /// `-text`
    Delete,
    /// `+text`
    Add,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub kind: LineKind,
    /// The line without its prefix and without its line break.
    pub text: String,
    /// The patch wrote it with a `\r` before the line break.
    pub cr: bool,
}

impl Line {
    pub fn new(kind: LineKind, text: impl Into<String>) -> Self {
        Line {
            kind,
            text: text.into(),
            cr: false,
        }
    }
}

/// Which of the two formats the patch was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Codex's `*** Begin Patch` envelope.
    Envelope,
    /// A unified diff (`diff -u`, `git diff`).
    Unified,
}

/// A patch as read from a tool call's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub patch: Patch,
    pub format: Format,
    /// What the patch was found inside, outermost first; empty for a bare patch.
    pub wrappings: Vec<Wrapping>,
    /// `cd DIR && apply_patch <<'EOF'`: relative paths are relative to DIR.
    pub workdir: Option<String>,
}

/// Why the input is not a patch Boris can apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the input it is about, if any.
    pub line: Option<usize>,
    pub message: String,
}

impl ParseError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line: Some(line),
            message: message.into(),
        }
    }

    fn whole(message: impl Into<String>) -> Self {
        ParseError {
            line: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(n) => write!(f, "line {n}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Reads a patch from a tool call's input: finds it inside whatever wraps it, then
/// parses the envelope or the unified diff it is.
pub fn parse(input: &str) -> Result<Parsed, ParseError> {
    let found = unwrap::locate(input)?;
    let lines: Vec<&str> = found.text.split('\n').collect();
    let (patch, end) = match found.format {
        Format::Envelope => (envelope::parse(&lines, found.start, found.end)?, found.end),
        Format::Unified => unified::parse(&lines, found.start)?,
    };
    let mut wrappings = found.wrappings;
    unwrap::note_outside(&lines, found.start, end, &found.skip, &mut wrappings);
    if patch.files.is_empty() {
        return Err(ParseError::whole(
            "the patch has no file sections: nothing to apply (a patch that changes nothing \
             is refused)",
        ));
    }
    Ok(Parsed {
        patch,
        format: found.format,
        wrappings,
        workdir: found.workdir,
    })
}

/// Strips one `\r` before the line break: (text, had it).
fn split_cr(line: &str) -> (&str, bool) {
    match line.strip_suffix('\r') {
        Some(t) => (t, true),
        None => (line, false),
    }
}

#[cfg(test)]
mod tests;
