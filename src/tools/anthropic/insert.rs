//! `str_replace_editor insert` (compat mode only): insert text after a given line
//! (DESIGN §7; Claude's text editor tool).

use crate::error::{ToolError, ToolResult};
use crate::fsutil;
use crate::scope::ScopedPath;
use crate::text::lines::numbered_excerpt;
use crate::text::replace::{Eol, eol_at, with_eol};
use crate::tools::{Ctx, text_result};
use rmcp::model::CallToolResult;

pub fn run(
    ctx: &Ctx,
    path: &ScopedPath,
    insert_line: i64,
    text: &str,
) -> ToolResult<CallToolResult> {
    let _edit = ctx.shared.edit_locks.lock(&path.real);
    let (content, meta) = crate::tools::engine::edit::read_for_edit(ctx, path, "insert into")?;
    let total = count_lines(&content);
    let after = usize::try_from(insert_line)
        .ok()
        .filter(|&n| n <= total)
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "insert_line {insert_line} is out of range: {} has {total} lines, so use 0 (the \
                 beginning) to {total} (the end)",
                path.shown.display()
            ))
        })?;
    let (updated, first, count) = insert_after(&content, after, text.as_bytes());
    fsutil::atomic_write_over(&path.real, &path.shown, &updated, Some(&meta))?;
    ctx.ws
        .record_write(&path.real, Some(content.clone()), &updated);
    drop(_edit);
    let note = crate::tools::engine::code::after_write(ctx, path, Some(&content), &updated);
    let excerpt = numbered_excerpt(&updated, first.saturating_sub(4).max(1), first + count + 3);
    let place = if after == 0 {
        "at the top".to_string()
    } else {
        format!("after line {after}")
    };
    let result = text_result(format!(
        "Inserted {count} line{} {place} of {}. The lines around it now read:\n{excerpt}",
        if count == 1 { "" } else { "s" },
        path.shown.display()
    ));
    Ok(crate::tools::engine::code::with_diagnostics(result, note))
}

fn count_lines(content: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', content).count();
    newlines + usize::from(!content.is_empty() && !content.ends_with(b"\n"))
}

/// Inserts `text` as whole lines after line `after` (0 = at the top), its line breaks in
/// the ending of the line it follows (the first line's, at the top: `eol_at`), so a
/// mixed file keeps every other line as it was. Returns the new content, the first
/// inserted line's number and how many lines were inserted.
pub fn insert_after(content: &[u8], after: usize, text: &[u8]) -> (Vec<u8>, usize, usize) {
    let offset = if after == 0 {
        0
    } else {
        memchr::memchr_iter(b'\n', content)
            .nth(after - 1)
            .map(|i| i + 1)
            .unwrap_or(content.len())
    };
    let eol = eol_at(content, offset.saturating_sub(1)).unwrap_or(Eol::Lf);
    let mut block = with_eol(text, eol).into_owned();
    if !block.ends_with(b"\n") {
        block.extend_from_slice(eol.bytes());
    }
    let eol = eol.bytes();
    let mut out = Vec::with_capacity(content.len() + block.len() + 2);
    out.extend_from_slice(&content[..offset]);
    // Appending after a last line that has no newline: end that line first.
    if offset == content.len() && !content.is_empty() && !content.ends_with(b"\n") {
        out.extend_from_slice(eol);
    }
    out.extend_from_slice(&block);
    out.extend_from_slice(&content[offset..]);
    let inserted = memchr::memchr_iter(b'\n', &block).count();
    (out, after + 1, inserted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_whole_lines() {
        assert_eq!(insert_after(b"a\nb\n", 0, b"x").0, b"x\na\nb\n");
        assert_eq!(
            insert_after(b"a\nb\n", 1, b"x\ny\n"),
            (b"a\nx\ny\nb\n".to_vec(), 2, 2)
        );
        assert_eq!(insert_after(b"a\nb", 2, b"x").0, b"a\nb\nx\n");
        assert_eq!(
            insert_after(b"a\r\nb\r\n", 1, b"x\ny").0,
            b"a\r\nx\r\ny\r\nb\r\n"
        );
        assert_eq!(insert_after(b"", 0, b"x").0, b"x\n");
        // A mixed file: the inserted lines take the ending of the line they follow.
        assert_eq!(
            insert_after(b"a\r\nb\nc\r\n", 2, b"x\r\ny").0,
            b"a\r\nb\nx\ny\nc\r\n"
        );
        assert_eq!(insert_after(b"a\nb\r\n", 0, b"x\ny").0, b"x\ny\na\nb\r\n");
        // Appended after a last line without a break: that line's predecessor's ending.
        assert_eq!(insert_after(b"a\r\nb", 2, b"x").0, b"a\r\nb\r\nx\r\n");
    }
}
