//! `view`: a file with line numbers, a range of it, an image, or a directory listing
//! (seeds 000 D9–D13 and 003, DESIGN §7).

use super::{Ctx, define, read_only, text_result};
use crate::error::{ToolError, ToolResult};
use crate::fsutil;
use crate::text::line_index::{self, FileStamp};
use crate::text::lines;
use crate::text::ranges;
use crate::tool_name::ToolName;
use crate::workspace::Seen;
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::fd::AsFd;
use std::path::Path;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ViewArgs {
    /// The file or directory to view: absolute, or relative to the working directory.
    pub path: String,
    /// Optional `[start, end]` line range, 1-based and inclusive; `end` = -1 reads to the
    /// end of the file, and `[-n, -1]` shows the last n lines. An end past the last line
    /// is clamped. At most 2000 lines are shown per call.
    #[serde(default)]
    pub view_range: Option<Vec<i64>>,
}

pub fn tool() -> Tool {
    define::<ViewArgs>(
        ToolName::View,
        "View a file or directory",
        "View a text file with line numbers (cat -n style), an image (PNG, JPEG, GIF, WebP, SVG), \
         or a directory listing two levels deep. Shows up to 2000 lines per call; use view_range \
         [start, end] (1-based, end -1 = to the end; [-n, -1] = the last n lines) for other parts. Lines longer than 2000 \
         characters are cut. Viewing a file is required before editing or overwriting it.",
        read_only("View a file or directory"),
    )
}

/// Directory entries listed per call.
const MAX_LISTED_ENTRIES: usize = 1000;

/// Names never listed (seed 000 D11).
const HIDDEN_NAMES: &[&str] = &[".git", "node_modules"];

/// Most a whole-file view reserves for its result ahead of reading: a large file may
/// show only its first 2000 lines, so beyond this the buffer grows as lines come.
const MAX_RESERVED_BYTES: u64 = 2 << 20;

/// Bytes looked at for image magic and for the NUL byte that marks a binary file.
const SNIFF_BYTES: usize = 8192;

pub fn run(ctx: &Ctx, args: ViewArgs, svg_as_image: bool) -> ToolResult<CallToolResult> {
    run_with(ctx, args, svg_as_image, lines::format_line)
}

/// How one shown line is written: its number, the kept bytes (without the line break)
/// and the line's length in characters. `view`'s is `lines::format_line` (`cat -n`);
/// other profiles show lines their own way (Gemini CLI's `read_file` plain, Codex's
/// `L12: text`).
pub type LineFormat = fn(&mut String, usize, &[u8], usize);

/// `view` with another line format: every rule of `view` (scope, size, images, binary
/// files, the 2000-line cap and its notice, view-before-edit records) holds.
pub fn run_with(
    ctx: &Ctx,
    args: ViewArgs,
    svg_as_image: bool,
    format_line: LineFormat,
) -> ToolResult<CallToolResult> {
    let request =
        ranges::parse_view_range(args.view_range.as_deref()).map_err(ToolError::invalid)?;
    let path = ctx.resolve_read(&args.path)?;
    // Opened beneath its allowed root and checked by identity (issue 25 §2): what is
    // listed or read is what was checked, whatever a command renames meanwhile.
    let (file, meta) =
        crate::beneath::open_read(&path.real).map_err(|e| e.into_tool(&path.shown, "view"))?;
    if meta.is_dir() {
        if request.explicit {
            return Err(ToolError::invalid(format!(
                "view_range applies to files, and {} is a directory",
                path.shown.display()
            )));
        }
        return list_directory(ctx, file, &path.real, &path.shown);
    }
    // One stat serves both the directory check above and this one.
    fsutil::ensure_regular(&meta, &path.shown)?;
    // A file a language server covers: its server starts (or is told of the file) in the
    // background, so the edit that usually follows a view is checked against it.
    super::code::warm(ctx, &path);

    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = sniff(&mut reader).map_err(|e| ToolError::io(&path.shown, "view", &e))?;

    let mime = image_mime(&head)
        .or_else(|| (svg_as_image && has_svg_extension(&path.real)).then_some("image/svg+xml"));
    if let Some(mime) = mime {
        fsutil::check_size(
            meta.len(),
            ctx.max_file_size(),
            &path.shown,
            "images",
            "raise --max-file-size to view it",
        )?;
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| ToolError::io(&path.shown, "view", &e))?;
        ctx.ws.record_view(&path.real, lines::hash_bytes(&bytes));
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        return Ok(CallToolResult::success(vec![ContentBlock::image(
            data, mime,
        )]));
    }

    if memchr::memchr(0, &head).is_some() {
        // Its size is all a view shows: it is read (hashed) only as a text view would
        // be, under the same rules for view-before-edit (below).
        let stamp = FileStamp::of(
            &reader
                .get_ref()
                .metadata()
                .map_err(|e| ToolError::io(&path.shown, "view", &e))?,
        );
        if !stamp.is_racy() {
            ctx.ws.record_seen(&path.real, Seen::Stamp(stamp));
        } else if meta.len() > ctx.max_file_size() {
            ctx.ws.forget_view(&path.real);
        } else if stamp.size >= line_index::MIN_INDEXED_BYTES {
            ctx.ws.record_seen(
                &path.real,
                Seen::Range {
                    stamp,
                    start: 0,
                    len: head.len() as u64,
                    hash: lines::hash_bytes(&head),
                },
            );
        } else {
            let summary = lines::scan_lines(reader, |_| false, |_, _, _| {})
                .map_err(|e| ToolError::io(&path.shown, "view", &e))?;
            ctx.ws.record_view(&path.real, summary.hash);
        }
        return Ok(text_result(format!(
            "{} is a binary file ({} bytes); view shows text and images only.",
            path.shown.display(),
            stamp.size
        )));
    }

    // A whole-file view holds the file's first 2000 lines; a range view streams any
    // size (seed 000 D12), so only the former is bound by --max-file-size.
    if !request.explicit {
        fsutil::check_size(
            meta.len(),
            ctx.max_file_size(),
            &path.shown,
            "view without view_range",
            "view it in parts with view_range [start, end]",
        )?;
    }
    // The stamp of the file being read: when it is older than the racy window it stands
    // for the content (view-before-edit needs no hash). Otherwise a file under 1 MiB is
    // hashed whole (cheap), and a larger one only where the view read (issue 21 §2: a
    // view costs what it shows at any --max-file-size; `Seen::Range`). Every scan stops
    // after its last shown line but a whole hash's.
    let stamp = FileStamp::of(
        &reader
            .get_ref()
            .metadata()
            .map_err(|e| ToolError::io(&path.shown, "view", &e))?,
    );
    let io_err = |e: std::io::Error| ToolError::io(&path.shown, "view", &e);
    let trusted = !stamp.is_racy();
    let large = stamp.size >= line_index::MIN_INDEXED_BYTES;
    // A file over --max-file-size cannot be edited; only create_file could overwrite it,
    // so a racy one is not hashed: its view record is dropped instead (see below).
    let editable = meta.len() <= ctx.max_file_size();
    let hash_whole = !trusted && !large && editable;
    let hash_read = !trusted && large && editable;
    // A large file's line numbers come from its line index (cached per file, extended
    // when the file grew); the last lines of one are found from its end.
    let mut index = None;
    // Where the scan starts: (line number, byte offset), when not at the top.
    let mut start_at = None;
    let request = match request.last_lines {
        Some(n) if large => {
            let idx = line_index::index_for(&path.real, stamp, reader.get_ref()).map_err(io_err)?;
            let total = idx.total_lines();
            let request = if n <= ranges::MAX_VIEW_LINES {
                let (offset, found) =
                    line_index::tail_start(reader.get_ref(), idx.len(), n).map_err(io_err)?;
                let first = total.saturating_sub(found).saturating_add(1);
                start_at = Some((first, offset));
                // Up to the last line the index counted: a line written since is not
                // numbered by it.
                ranges::LineRequest {
                    start: first,
                    end: Some(total),
                    ..request.resolve_last(total)
                }
            } else {
                request.resolve_last(total)
            };
            index = Some(idx);
            request
        }
        Some(_) => {
            // Under 1 MiB one counting pass costs less than an index.
            let total = line_index::LineIndex::build(&mut reader)
                .map_err(io_err)?
                .total_lines();
            reader.seek(SeekFrom::Start(0)).map_err(io_err)?;
            request.resolve_last(total)
        }
        None => request,
    };
    let last_kept = request.last_kept();
    // A whole-file view shows about the file plus a number column: reserving that up
    // front spares the copies of a growing buffer (a range view may be of a huge file).
    let mut body = if request.explicit {
        String::new()
    } else {
        let estimate = meta.len().saturating_add(meta.len() / 4).saturating_add(64);
        String::with_capacity(estimate.min(MAX_RESERVED_BYTES) as usize)
    };
    // A large file starts at the line index's checkpoint before the first shown line.
    if start_at.is_none() && large && request.start > 1 {
        let idx = match index.take() {
            Some(idx) => idx,
            None => line_index::index_for(&path.real, stamp, reader.get_ref()).map_err(io_err)?,
        };
        start_at = Some(idx.seek_point(request.start));
        index = Some(idx);
    }
    let (first_line, scan_start) = start_at.unwrap_or((1, 0));
    if start_at.is_some() {
        reader.seek(SeekFrom::Start(scan_start)).map_err(io_err)?;
    }
    let from = lines::ScanFrom {
        first_line,
        stop_after: (!hash_whole).then_some(last_kept),
        hash: hash_whole || hash_read,
    };
    let (summary, complete) = lines::scan_lines_from(
        &mut reader,
        from,
        |n| n >= request.start && n <= last_kept,
        |n, kept, chars| format_line(&mut body, n, kept, chars),
    )
    .map_err(io_err)?;
    let total_lines = if complete {
        summary.total_lines
    } else if request.end.is_some_and(|e| e <= last_kept) {
        // Everything asked for was shown and nothing past it is reported: the total
        // is not needed, and the last line read stands for it.
        summary.total_lines
    } else {
        // Lines exist past the cap: the notice names the total.
        match &index {
            Some(index) => index.total_lines(),
            None if large => line_index::index_for(&path.real, stamp, reader.get_ref())
                .map_err(io_err)?
                .total_lines(),
            None => {
                let rest = lines::ScanFrom {
                    first_line: summary.total_lines + 1,
                    stop_after: None,
                    hash: false,
                };
                lines::scan_lines_from(&mut reader, rest, |_| false, |_, _, _| {})
                    .map_err(io_err)?
                    .0
                    .total_lines
            }
        }
    };
    let shown = ranges::clamp(request, total_lines).map_err(ToolError::invalid)?;
    if trusted {
        ctx.ws.record_seen(&path.real, Seen::Stamp(stamp));
    } else if hash_whole {
        ctx.ws.record_view(&path.real, summary.hash);
    } else if hash_read {
        ctx.ws.record_seen(
            &path.real,
            Seen::Range {
                stamp,
                start: scan_start,
                len: summary.total_bytes,
                hash: summary.hash,
            },
        );
    } else {
        // Neither a trusted stamp nor a hash: an overwrite must wait for a later view.
        ctx.ws.forget_view(&path.real);
    }

    if total_lines == 0 {
        return Ok(text_result(format!(
            "(the file {} is empty)",
            path.shown.display()
        )));
    }
    if shown.more_after {
        let next_end = (shown.end + ranges::MAX_VIEW_LINES).min(match request.end {
            Some(e) => e.min(shown.total),
            None => shown.total,
        });
        body.push_str(&format!(
            "\n[Showing lines {}-{} of {}. To see more, view with view_range [{}, {}].]\n",
            shown.start,
            shown.end,
            shown.total,
            shown.end + 1,
            next_end
        ));
    }
    Ok(text_result(body))
}

/// The closing notice of a view cut at its line cap (`[Showing lines 1-2000 of 2500. To
/// see more, view with view_range [2001, 2500].]`), which other profiles reword in
/// their parameters' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoreNotice {
    pub start: u64,
    pub end: u64,
    pub total: u64,
    /// The range the notice asks for next.
    pub next: u64,
    pub next_end: u64,
}

/// Splits a view's text into what it shows and its closing notice, if it has one. Only
/// the notice `view` appends is taken (the same words inside the file are the file's:
/// they are numbered, or not last).
pub fn split_more_notice(text: &str) -> (&str, Option<MoreNotice>) {
    static NOTICE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = NOTICE.get_or_init(|| {
        regex::Regex::new(
            r"\n\[Showing lines (\d+)-(\d+) of (\d+)\. To see more, view with view_range \[(\d+), (\d+)\]\.\]\n\z",
        )
        .ok()
    }) else {
        return (text, None);
    };
    let Some(c) = re.captures(text) else {
        return (text, None);
    };
    let num = |i: usize| c[i].parse::<u64>().unwrap_or(0);
    let at = c.get(0).map_or(text.len(), |m| m.start());
    (
        &text[..at],
        Some(MoreNotice {
            start: num(1),
            end: num(2),
            total: num(3),
            next: num(4),
            next_end: num(5),
        }),
    )
}

/// Fills the reader's buffer with up to [`SNIFF_BYTES`] bytes without consuming them.
fn sniff(reader: &mut BufReader<File>) -> std::io::Result<Vec<u8>> {
    let buf = reader.fill_buf()?;
    Ok(buf[..buf.len().min(SNIFF_BYTES)].to_vec())
}

/// The MIME type of an image, from its magic bytes only: a `.png` that is really text is
/// shown as text, and a PNG without an extension as an image.
pub fn image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

fn has_svg_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
}

/// Two levels of a directory, dotfiles included but `.git` and `node_modules` left out,
/// symlinks shown as `name -> target` and not followed, denied entries left out.
fn list_directory(ctx: &Ctx, dir: File, real: &Path, shown: &Path) -> ToolResult<CallToolResult> {
    let mut entries = Vec::new();
    let mut omitted = 0usize;
    collect_entries(ctx, dir.as_fd(), real, "", 1, &mut entries, &mut omitted)
        .map_err(|e| ToolError::io(shown, "list", &e))?;
    let mut out = format!(
        "{}/ (two levels deep; .git and node_modules not listed)\n",
        shown.display().to_string().trim_end_matches('/')
    );
    if entries.is_empty() {
        out.push_str("(empty directory)\n");
    }
    for e in &entries {
        out.push_str(e);
        out.push('\n');
    }
    if omitted > 0 {
        out.push_str(&format!(
            "[{omitted} more entries not listed; view a subdirectory to see them]\n"
        ));
    }
    Ok(text_result(out))
}

/// Lists the directory open at `fd` (named `dir`), its subdirectories opened beneath it
/// without following a symlink: a directory swapped for a link meanwhile is not entered.
fn collect_entries(
    ctx: &Ctx,
    fd: std::os::fd::BorrowedFd<'_>,
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<String>,
    omitted: &mut usize,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let listing = fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
    let mut children: Vec<_> = listing.filter_map(Result::ok).collect();
    children.sort_by_key(|e| e.file_name());
    for child in children {
        let name = child.file_name().to_string_lossy().into_owned();
        if HIDDEN_NAMES.contains(&name.as_str()) {
            continue;
        }
        let path = dir.join(child.file_name());
        if ctx.shared.scope.is_denied(&path) || !ctx.walk_may_enter(&path) {
            continue;
        }
        if out.len() >= MAX_LISTED_ENTRIES {
            *omitted += 1;
            continue;
        }
        let rel = format!("{prefix}{name}");
        let file_type = child.file_type()?;
        if file_type.is_symlink() {
            let target = nix::fcntl::readlinkat(fd, child.file_name().as_os_str())
                .map(|t| Path::new(&t).display().to_string())
                .unwrap_or_else(|_| "?".to_string());
            out.push(format!("{rel} -> {target}"));
        } else if file_type.is_dir() {
            let at = out.len();
            out.push(format!("{rel}/"));
            if depth < 2 {
                let sub = crate::beneath::open_at(
                    fd,
                    Path::new(&child.file_name()),
                    nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY,
                    nix::sys::stat::Mode::empty(),
                );
                let listed = match sub {
                    Ok(sub) => collect_entries(
                        ctx,
                        sub.as_fd(),
                        &path,
                        &format!("{rel}/"),
                        depth + 1,
                        out,
                        omitted,
                    ),
                    Err(crate::beneath::Error::Io(e)) => Err(e),
                    Err(_) => Err(std::io::Error::other("it was swapped for a symlink")),
                };
                if let Err(e) = listed {
                    out[at] = format!("{rel}/ (contents not listed: {})", io_reason(&e));
                }
            }
        } else {
            out.push(rel);
        }
    }
    Ok(())
}

fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_more_notice_splits_off() {
        let body = "     1\ta\n";
        let text = format!(
            "{body}\n[Showing lines 1-2000 of 2500. To see more, view with view_range [2001, 2500].]\n"
        );
        let (shown, notice) = split_more_notice(&text);
        assert_eq!(shown, body);
        assert_eq!(
            notice,
            Some(MoreNotice {
                start: 1,
                end: 2000,
                total: 2500,
                next: 2001,
                next_end: 2500
            })
        );
        let inside =
            "     1\t[Showing lines 1-2 of 3. To see more, view with view_range [3, 3].]\n";
        assert_eq!(split_more_notice(inside), (inside, None));
    }

    #[test]
    fn magic_bytes() {
        assert_eq!(image_mime(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(image_mime(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(image_mime(b"GIF89a..."), Some("image/gif"));
        assert_eq!(image_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_mime(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(image_mime(b"<svg"), None);
        assert_eq!(image_mime(b"\x89PN"), None);
    }
}
