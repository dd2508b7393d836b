//! Codex's patch envelope, read as leniently as Codex reads it (markers may carry
//! surrounding whitespace; the first hunk of a file may omit its `@@`; a bare empty line
//! inside a hunk is an empty context line), plus what models also write: several `@@`
//! anchors in a row, a unified `@@ -12,7 +12,8 @@` header, `\ No newline at end of file`,
//! and an `Add File` whose empty lines lost their `+`.
//!
//! ```text
//! Patch      := "*** Begin Patch" { FileOp } "*** End Patch"
//! FileOp     := AddFile | DeleteFile | UpdateFile
//! AddFile    := "*** Add File: " path { "+" line }
//! DeleteFile := "*** Delete File: " path
//! UpdateFile := "*** Update File: " path [ "*** Move to: " path ] { Hunk }
//! Hunk       := { "@@" [ " " anchor ] } { (" " | "-" | "+") line } [ "*** End of File" ]
//! ```

use super::hunk::{mark_no_newline, numbers, settle_markers};
use super::{Chunk, FileOp, Line, LineKind, ParseError, Patch, split_cr};

const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
const NO_NEWLINE: &str = "\\ No newline at end of file";

/// Parses `lines[start..=end]`, which begin with `*** Begin Patch` and end with
/// `*** End Patch`.
pub(super) fn parse(lines: &[&str], start: usize, end: usize) -> Result<Patch, ParseError> {
    let mut files = Vec::new();
    let mut i = start + 1;
    while i < end {
        let (line, _) = split_cr(lines[i]);
        let t = line.trim();
        if t.is_empty() {
            i += 1;
            continue;
        }
        let no = i + 1;
        if let Some(path) = header_path(t, ADD, no)? {
            i += 1;
            let (added, no_eol) = add_lines(lines, &mut i, end);
            files.push(FileOp::Add {
                path,
                lines: added,
                no_eol,
            });
        } else if let Some(path) = header_path(t, DELETE, no)? {
            i += 1;
            files.push(FileOp::Delete { path });
        } else if let Some(path) = header_path(t, UPDATE, no)? {
            i += 1;
            let mut move_to = None;
            if i < end
                && let Some(to) = header_path(split_cr(lines[i]).0.trim(), MOVE, i + 1)?
            {
                move_to = Some(to);
                i += 1;
            }
            let chunks = update_chunks(lines, &mut i, end)?;
            if chunks.is_empty() && move_to.is_none() {
                return Err(ParseError::at(
                    no,
                    format!(
                        "'*** Update File: {path}' has no hunks: give @@ and the lines to \
                         change (' ' context, '-' removed, '+' added)"
                    ),
                ));
            }
            files.push(FileOp::Update {
                path,
                move_to,
                chunks,
            });
        } else if t == "*** Begin Patch" || t == "*** End Patch" {
            return Err(ParseError::at(
                no,
                format!(
                    "'{t}' inside the patch: the input holds more than one patch; send one \
                     per call"
                ),
            ));
        } else {
            return Err(ParseError::at(
                no,
                format!(
                    "expected a file header ('*** Add File: PATH', '*** Update File: PATH' or \
                     '*** Delete File: PATH'), got '{}'",
                    shorten(t)
                ),
            ));
        }
    }
    Ok(Patch { files })
}

/// The path of a `marker PATH` line, `None` if the line is another one.
fn header_path(t: &str, marker: &str, no: usize) -> Result<Option<String>, ParseError> {
    let Some(rest) = t.strip_prefix(marker) else {
        return Ok(None);
    };
    let path = rest.trim();
    if path.is_empty() {
        return Err(ParseError::at(no, format!("'{marker}' names no path")));
    }
    Ok(Some(path.to_string()))
}

/// The `+` lines of an `Add File` section, from `lines[*i]` on. A bare empty line
/// between `+` lines is an empty line of the file (models drop the `+` of empty lines);
/// empty lines before the next header are not.
fn add_lines(lines: &[&str], i: &mut usize, end: usize) -> (Vec<Line>, bool) {
    let mut out = Vec::new();
    let mut no_eol = false;
    while *i < end {
        let raw = lines[*i];
        if let Some(text) = raw.strip_prefix('+') {
            let (text, cr) = split_cr(text);
            out.push(Line {
                kind: LineKind::Add,
                text: text.to_string(),
                cr,
            });
        } else if split_cr(raw).0 == NO_NEWLINE && !out.is_empty() {
            no_eol = true;
        } else if split_cr(raw).0.is_empty() {
            let next = (*i + 1..end).find(|&j| !split_cr(lines[j]).0.is_empty());
            if !next.is_some_and(|j| lines[j].starts_with('+')) {
                break;
            }
            out.push(Line::new(LineKind::Add, ""));
        } else {
            break;
        }
        *i += 1;
    }
    (out, no_eol)
}

/// The hunks of an `Update File` section, up to the next file header.
fn update_chunks(lines: &[&str], i: &mut usize, end: usize) -> Result<Vec<Chunk>, ParseError> {
    let mut chunks = Vec::new();
    while *i < end {
        let (line, _) = split_cr(lines[*i]);
        if line.trim().is_empty() {
            // Blank lines before or between hunks (a hunk's own are read with it).
            *i += 1;
            continue;
        }
        if is_file_header(line) {
            break;
        }
        chunks.push(chunk(lines, i, end, chunks.is_empty())?);
    }
    Ok(chunks)
}

/// Whether a line ends the hunks of a file: a `***` marker at the start of the line
/// (a context line begins with a space, so ` *** x` is one).
fn is_file_header(line: &str) -> bool {
    line.starts_with("***") && line.trim_end() != END_OF_FILE
}

/// `@@`, `@@ anchor`; a unified header `@@ -12,7 +12,8 @@ fn f()` gives a line hint and
/// (its section heading) an anchor.
fn hunk_header(line: &str) -> Option<(Option<String>, Option<usize>)> {
    let t = line.trim_end();
    if t == "@@" {
        return Some((None, None));
    }
    let rest = t.strip_prefix("@@ ")?;
    if let Some(h) = numbers(t) {
        let anchor = h.heading.trim();
        return Some((
            (!anchor.is_empty()).then(|| anchor.to_string()),
            Some(h.hint()),
        ));
    }
    Some((Some(rest.to_string()), None))
}

fn chunk(lines: &[&str], i: &mut usize, end: usize, first: bool) -> Result<Chunk, ParseError> {
    let mut c = Chunk {
        source_line: *i + 1,
        ..Chunk::default()
    };
    while *i < end {
        let Some((anchor, hint)) = hunk_header(split_cr(lines[*i]).0) else {
            break;
        };
        c.anchors.extend(anchor);
        if hint.is_some() {
            c.line_hint = hint;
        }
        *i += 1;
    }
    if c.source_line == *i + 1 && !first {
        return Err(ParseError::at(
            *i + 1,
            format!(
                "expected '@@' to start the next hunk, got '{}'",
                shorten(lines[*i])
            ),
        ));
    }
    // Bare empty lines at the end of a hunk are the gap before the next section, not
    // lines the file must have (unless `*** End of File` pins them there).
    let mut bare_tail = 0;
    let mut marks = Vec::new();
    while *i < end {
        let raw = lines[*i];
        let (line, cr) = split_cr(raw);
        if line.trim_end() == END_OF_FILE {
            c.at_eof = true;
            bare_tail = 0;
            *i += 1;
            break;
        }
        if hunk_header(line).is_some() || is_file_header(line) {
            break;
        }
        let kind = match line.as_bytes().first() {
            None => {
                bare_tail += 1;
                c.lines.push(Line::new(LineKind::Context, ""));
                *i += 1;
                continue;
            }
            Some(b' ') => LineKind::Context,
            Some(b'-') => LineKind::Delete,
            Some(b'+') => LineKind::Add,
            Some(b'\\') if line == NO_NEWLINE => {
                mark_no_newline(&c, *i + 1, &mut marks)?;
                *i += 1;
                continue;
            }
            _ => {
                return Err(ParseError::at(
                    *i + 1,
                    format!(
                        "'{}' does not start with ' ' (context), '-' (removed) or '+' \
                         (added); every line of a hunk must",
                        shorten(line)
                    ),
                ));
            }
        };
        bare_tail = 0;
        c.lines.push(Line {
            kind,
            text: line[1..].to_string(),
            cr,
        });
        *i += 1;
    }
    c.lines.truncate(c.lines.len() - bare_tail);
    settle_markers(&mut c, &marks);
    if c.lines.is_empty() {
        return Err(ParseError::at(
            c.source_line,
            "this hunk has no lines: give the lines to change (' ' context, '-' removed, \
             '+' added)",
        ));
    }
    Ok(c)
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// The envelope text of a patch: what [`parse`](super::parse) reads back into the same
/// patch. A hunk with neither anchors nor a line hint gets a bare `@@`; markers go after
/// the last old-side and new-side lines, as `diff` places them.
pub fn render(patch: &Patch) -> String {
    let mut out = String::from("*** Begin Patch\n");
    for op in &patch.files {
        match op {
            FileOp::Add {
                path,
                lines,
                no_eol,
            } => {
                out.push_str(&format!("{ADD} {path}\n"));
                for l in lines {
                    push_line(&mut out, '+', l);
                }
                if *no_eol {
                    out.push_str(NO_NEWLINE);
                    out.push('\n');
                }
            }
            FileOp::Delete { path } => out.push_str(&format!("{DELETE} {path}\n")),
            FileOp::Update {
                path,
                move_to,
                chunks,
            } => {
                out.push_str(&format!("{UPDATE} {path}\n"));
                if let Some(to) = move_to {
                    out.push_str(&format!("{MOVE} {to}\n"));
                }
                for c in chunks {
                    render_chunk(&mut out, c);
                }
            }
        }
    }
    out.push_str("*** End Patch\n");
    out
}

fn render_chunk(out: &mut String, c: &Chunk) {
    if let Some(h) = c.line_hint {
        out.push_str(&format!("@@ -{h} +{h} @@\n"));
    } else if c.anchors.is_empty() {
        out.push_str("@@\n");
    }
    for a in &c.anchors {
        out.push_str(&format!("@@ {a}\n"));
    }
    let last_old = c.lines.iter().rposition(|l| l.kind != LineKind::Add);
    let last_new = c.lines.iter().rposition(|l| l.kind != LineKind::Delete);
    for (k, l) in c.lines.iter().enumerate() {
        let prefix = match l.kind {
            LineKind::Context => ' ',
            LineKind::Delete => '-',
            LineKind::Add => '+',
        };
        push_line(out, prefix, l);
        let marks_old = c.old_no_eol && Some(k) == last_old;
        let marks_new = c.new_no_eol && Some(k) == last_new;
        if marks_old || marks_new {
            out.push_str(NO_NEWLINE);
            out.push('\n');
        }
    }
    if c.at_eof {
        out.push_str(END_OF_FILE);
        out.push('\n');
    }
}

fn push_line(out: &mut String, prefix: char, l: &Line) {
    out.push(prefix);
    out.push_str(&l.text);
    if l.cr {
        out.push('\r');
    }
    out.push('\n');
}
