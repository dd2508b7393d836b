//! Unified diffs: `diff -u`, `git diff` (with its `diff --git` headers, renames,
//! `/dev/null` for added and deleted files, quoted paths) and what models write in their
//! style. Hunk bodies are read by the counts of their `@@ -a,b +c,d @@` header, the
//! only reliable way to tell a removed `-- x` line from a header; a header whose counts
//! do not fit the lines after it (models miscount) is read line by line instead, up to
//! the next header.

use super::hunk::{mark_no_newline, numbers, settle_markers};
use super::{Chunk, FileOp, Line, LineKind, ParseError, Patch, split_cr};

/// Parses the diff that starts at `lines[start]`; returns it and the index of its last
/// line (what follows is not part of it).
pub(super) fn parse(lines: &[&str], start: usize) -> Result<(Patch, usize), ParseError> {
    let mut files = Vec::new();
    let mut i = start;
    let mut last = start;
    while i < lines.len() {
        let line = lines[i];
        let next = if line.starts_with("diff --git ") {
            let (op, next) = git_section(lines, i)?;
            files.extend(op);
            next
        } else if is_file_pair(lines, i) {
            let (op, next) = file_section(lines, i, None)?;
            files.push(op);
            next
        } else if (i + 1..lines.len()).any(|j| starts_section(lines, j)) {
            // Between sections: `Index:` and `====` lines, a mode change, prose.
            i += 1;
            continue;
        } else {
            break;
        };
        last = next - 1;
        i = next;
    }
    if let Some(j) = (last + 1..lines.len()).find(|&j| numbers(lines[j]).is_some()) {
        return Err(ParseError::at(
            j + 1,
            "this @@ hunk belongs to no file section: the counts of the hunk before it \
             (@@ -a,b +c,d @@: b old and d new lines) may be wrong, or its '--- a/PATH' and \
             '+++ b/PATH' lines are missing",
        ));
    }
    Ok((Patch { files }, last))
}

fn starts_section(lines: &[&str], i: usize) -> bool {
    lines[i].starts_with("diff --git ") || is_file_pair(lines, i)
}

fn is_file_pair(lines: &[&str], i: usize) -> bool {
    lines[i].starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ "))
}

/// What git's extended headers said about a file.
#[derive(Debug, Default)]
struct GitHeaders {
    old: Option<String>,
    new: Option<String>,
    new_file: bool,
    deleted: bool,
    rename_from: Option<String>,
    rename_to: Option<String>,
}

/// `diff --git a/X b/Y`, its extended headers, and the file section if it has one.
fn git_section(lines: &[&str], at: usize) -> Result<(Option<FileOp>, usize), ParseError> {
    let (old, new) = git_line_paths(&lines[at]["diff --git ".len()..]);
    let mut h = GitHeaders {
        old,
        new,
        ..GitHeaders::default()
    };
    let mut j = at + 1;
    while j < lines.len() {
        let l = split_cr(lines[j]).0;
        if is_file_pair(lines, j) {
            let (op, next) = file_section(lines, j, Some(&h))?;
            return Ok((Some(op), next));
        }
        if let Some(p) = l.strip_prefix("rename from ") {
            h.rename_from = Some(unquote(p).trim().to_string());
        } else if let Some(p) = l.strip_prefix("rename to ") {
            h.rename_to = Some(unquote(p).trim().to_string());
        } else if l.starts_with("new file mode ") {
            h.new_file = true;
        } else if l.starts_with("deleted file mode ") {
            h.deleted = true;
        } else if l.starts_with("Binary files ") || l == "GIT binary patch" {
            return Err(ParseError::at(
                j + 1,
                "a binary diff: apply_patch changes text files only",
            ));
        } else if l.starts_with("copy from ") || l.starts_with("copy to ") {
            return Err(ParseError::at(
                j + 1,
                "a git copy: give the new file as an added file instead",
            ));
        } else if ![
            "old mode ",
            "new mode ",
            "index ",
            "similarity index ",
            "dissimilarity index ",
        ]
        .iter()
        .any(|p| l.starts_with(p))
        {
            break;
        }
        j += 1;
    }
    // No `---`/`+++`: an empty file added or deleted, a pure rename, or a mode change
    // (modes are not applied: an existing file keeps its own).
    let named = |p: &Option<String>| p.as_deref().is_some_and(|p| !p.is_empty());
    if [&h.rename_from, &h.rename_to, &h.old, &h.new]
        .iter()
        .any(|p| p.is_some() && !named(p))
    {
        return Err(ParseError::at(at + 1, "this file section names no path"));
    }
    let op = if let (Some(from), Some(to)) = (h.rename_from.clone(), h.rename_to.clone()) {
        Some(FileOp::Update {
            path: from,
            move_to: Some(to),
            chunks: Vec::new(),
        })
    } else if h.new_file {
        h.new.map(|path| FileOp::Add {
            path,
            lines: Vec::new(),
            no_eol: false,
        })
    } else if h.deleted {
        h.old.map(|path| FileOp::Delete { path })
    } else {
        None
    };
    Ok((op, j))
}

/// The two paths of `diff --git a/X b/Y` (quoted or not). With spaces in unquoted
/// names the split is a guess; `---`/`+++` or `rename` lines, when present, win.
fn git_line_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = split_cr(rest).0;
    if rest.starts_with('"') {
        let (first, tail) = take_quoted(rest);
        return (
            first.map(|p| strip_side(&p, "a/")),
            Some(strip_side(&unquote(tail.trim()), "b/")),
        );
    }
    // `a/NAME b/NAME`: the same name twice is the usual case.
    let half = rest.len() / 2;
    if rest.len() % 2 == 1 && rest.as_bytes()[half] == b' ' {
        let (a, b) = (&rest[..half], &rest[half + 1..]);
        if a.strip_prefix("a/") == b.strip_prefix("b/") {
            return (Some(strip_side(a, "a/")), Some(strip_side(b, "b/")));
        }
    }
    match rest.find(" b/") {
        Some(k) => (
            Some(strip_side(&rest[..k], "a/")),
            Some(strip_side(&rest[k + 1..], "b/")),
        ),
        None => (None, None),
    }
}

/// `--- OLD`, `+++ NEW` and the hunks after them.
fn file_section(
    lines: &[&str],
    at: usize,
    git: Option<&GitHeaders>,
) -> Result<(FileOp, usize), ParseError> {
    let old = header_path(&lines[at][4..]);
    let new = header_path(&lines[at + 1][4..]);
    let git_style = git.is_some()
        || (old.as_deref().is_none_or(|p| p.starts_with("a/"))
            && new.as_deref().is_none_or(|p| p.starts_with("b/")));
    let side = |p: Option<String>, prefix: &str| {
        p.map(|p| if git_style { strip_side(&p, prefix) } else { p })
    };
    let (old, new) = (side(old, "a/"), side(new, "b/"));
    for (path, line) in [(&old, at), (&new, at + 1)] {
        if path.as_deref() == Some("") {
            return Err(ParseError::at(line + 1, "this line names no path"));
        }
    }
    let mut chunks = Vec::new();
    let mut i = at + 2;
    while i < lines.len() && lines[i].starts_with("@@") {
        let (c, next) = hunk(lines, i)?;
        chunks.push(c);
        i = next;
    }
    let renamed = git.and_then(|g| g.rename_from.clone().zip(g.rename_to.clone()));
    if chunks.is_empty() && renamed.is_none() {
        return Err(ParseError::at(
            at + 1,
            "this file section has no @@ hunks after its '---' and '+++' lines",
        ));
    }
    let op = match (old, new) {
        (None, None) => {
            return Err(ParseError::at(
                at + 1,
                "both sides of this diff are /dev/null",
            ));
        }
        (None, Some(path)) => {
            let mut added = Vec::new();
            let mut no_eol = false;
            for c in chunks {
                if c.lines.iter().any(|l| l.kind != LineKind::Add) {
                    return Err(ParseError::at(
                        c.source_line,
                        "a new file's hunk (--- /dev/null) may only add lines",
                    ));
                }
                no_eol |= c.new_no_eol;
                added.extend(c.lines);
            }
            FileOp::Add {
                path,
                lines: added,
                no_eol,
            }
        }
        (Some(path), None) => FileOp::Delete { path },
        (Some(old), Some(new)) => {
            let (path, move_to) = match renamed {
                Some((from, to)) => (from, Some(to)),
                None if old == new => (old, None),
                // git names both sides; a plain `diff -u a.orig a` names the result by
                // the new one.
                None if git_style => (old, Some(new)),
                None => (new, None),
            };
            FileOp::Update {
                path,
                move_to,
                chunks,
            }
        }
    };
    Ok((op, i))
}

/// The path of a `---`/`+++` line: `None` for `/dev/null`; a timestamp after a tab
/// (`diff -u`) is dropped; a quoted name is unquoted.
fn header_path(rest: &str) -> Option<String> {
    let rest = split_cr(rest).0;
    let name = rest.split('\t').next().unwrap_or(rest).trim_end();
    let name = unquote(name).trim().to_string();
    (name != "/dev/null").then_some(name)
}

/// A path without git's `a/` or `b/`, and without surrounding whitespace (as the
/// envelope's paths: a name that begins or ends with a space is not one a patch names).
fn strip_side(p: &str, prefix: &str) -> String {
    p.strip_prefix(prefix).unwrap_or(p).trim().to_string()
}

/// A C-style quoted name as git writes it (`"a/caf\303\251 x.txt"`), or the text as is.
fn unquote(s: &str) -> String {
    let s = split_cr(s).0.trim_end();
    if s.starts_with('"') {
        let (name, _) = take_quoted(s);
        if let Some(n) = name {
            return n;
        }
    }
    s.to_string()
}

/// A leading quoted string: its unescaped value and what follows it.
fn take_quoted(s: &str) -> (Option<String>, &str) {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                return (
                    Some(String::from_utf8_lossy(&out).into_owned()),
                    &s[i + 1..],
                );
            }
            b'\\' if i + 1 < bytes.len() => {
                let c = bytes[i + 1];
                let octal = bytes
                    .get(i + 1..i + 4)
                    .filter(|o| o.iter().all(|d| (b'0'..=b'7').contains(d)));
                if let Some(o) = octal {
                    out.push((o[0] - b'0') * 64 + (o[1] - b'0') * 8 + (o[2] - b'0'));
                    i += 4;
                    continue;
                }
                out.push(match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'a' => 7,
                    b'b' => 8,
                    b'f' => 12,
                    b'v' => 11,
                    other => other,
                });
                i += 2;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    (None, s)
}

/// One hunk: its header at `lines[at]`, its body read by the header's counts, or line by
/// line when they do not fit.
fn hunk(lines: &[&str], at: usize) -> Result<(Chunk, usize), ParseError> {
    let header = split_cr(lines[at]).0;
    let nums = numbers(header);
    if nums.is_none() && header.trim_end() != "@@" && !header.starts_with("@@ ") {
        return Err(ParseError::at(
            at + 1,
            "expected a hunk header '@@ -START,COUNT +START,COUNT @@'",
        ));
    }
    let mut c = Chunk {
        source_line: at + 1,
        line_hint: nums.map(|n| n.hint()),
        ..Chunk::default()
    };
    let counted = nums.and_then(|n| counted_body(lines, at + 1, n.old_count, n.new_count));
    let next = match counted {
        Some((body, next)) => {
            fill(&mut c, lines, &body)?;
            next
        }
        None => {
            let end = greedy_end(lines, at + 1);
            let body: Vec<usize> = (at + 1..end).collect();
            fill(&mut c, lines, &body)?;
            end
        }
    };
    if c.lines.is_empty() {
        return Err(ParseError::at(at + 1, "this hunk has no lines"));
    }
    Ok((c, next))
}

/// The indices of a hunk's body read by its counts, and the index after it; `None` when
/// the lines do not fit the counts.
fn counted_body(
    lines: &[&str],
    from: usize,
    mut old: usize,
    mut new: usize,
) -> Option<(Vec<usize>, usize)> {
    let mut body = Vec::new();
    let mut i = from;
    while old > 0 || new > 0 {
        let (l, _) = split_cr(lines.get(i)?);
        match l.as_bytes().first() {
            None | Some(b' ') => {
                old = old.checked_sub(1)?;
                new = new.checked_sub(1)?;
            }
            Some(b'-') => old = old.checked_sub(1)?,
            Some(b'+') => new = new.checked_sub(1)?,
            Some(b'\\') if !body.is_empty() => {}
            _ => return None,
        }
        body.push(i);
        i += 1;
    }
    if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        body.push(i);
        i += 1;
    }
    // The counts are used up; a next line that still reads as a hunk line means they
    // were too small.
    if let Some(l) = lines.get(i) {
        let (l, _) = split_cr(l);
        let content = matches!(l.as_bytes().first(), Some(b' ' | b'+' | b'-'));
        if content && !is_file_pair(lines, i) && l.trim_end() != "--" {
            return None;
        }
    }
    Some((body, i))
}

/// Where a hunk read line by line ends: at the first line that is not a hunk line, or
/// that starts a header. Trailing blank lines are left out.
fn greedy_end(lines: &[&str], from: usize) -> usize {
    let mut end = from;
    let mut i = from;
    while i < lines.len() {
        let (l, _) = split_cr(lines[i]);
        if l.starts_with("@@") || l.starts_with("diff ") || is_file_pair(lines, i) {
            break;
        }
        match l.as_bytes().first() {
            Some(b' ' | b'+' | b'-' | b'\\') => end = i + 1,
            None => {}
            _ => break,
        }
        i += 1;
    }
    end
}

fn fill(c: &mut Chunk, lines: &[&str], body: &[usize]) -> Result<(), ParseError> {
    let mut marks = Vec::new();
    for &i in body {
        let (l, cr) = split_cr(lines[i]);
        let kind = match l.as_bytes().first() {
            None => LineKind::Context,
            Some(b' ') => LineKind::Context,
            Some(b'-') => LineKind::Delete,
            Some(b'+') => LineKind::Add,
            Some(b'\\') => {
                mark_no_newline(c, i + 1, &mut marks)?;
                continue;
            }
            _ => {
                return Err(ParseError::at(
                    i + 1,
                    "not a hunk line (' ', '-', '+' or '\\')",
                ));
            }
        };
        c.lines.push(Line {
            kind,
            text: l.get(1..).unwrap_or_default().to_string(),
            cr,
        });
    }
    settle_markers(c, &marks);
    Ok(())
}
