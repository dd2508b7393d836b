//! The view engine every profile's read tools share (Boris's `view`, Claude Code's
//! `Read`, Codex's and Gemini CLI's `read_file`): a file with line numbers as a style
//! writes them, a range of it, an image, or a directory listing (seeds 000 D9–D13 and
//! 003, DESIGN §7), as a structured [`Viewed`] the faces word.

use crate::error::{ToolError, ToolResult};
use crate::fsutil;
use crate::scope::ScopedPath;
use crate::text::line_index::{self, FileStamp, LineIndex};
use crate::text::lines::{self, ScanSummary};
use crate::text::ranges;
use crate::tools::{Ctx, text_result};
use crate::workspace::Seen;
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fs::{self, File, Metadata};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

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

/// Directory entries listed per call.
const MAX_LISTED_ENTRIES: usize = 1000;

/// Names never listed (seed 000 D11).
const HIDDEN_NAMES: &[&str] = &[".git", "node_modules"];

/// Bytes looked at for image magic and for the NUL byte that marks a binary file.
const SNIFF_BYTES: usize = 8192;

/// How a reader shows an `.svg` file: as an image (Boris's own `view`), or as the text
/// it is, as Claude Code reads it (the profiles that follow its contracts, DESIGN §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Svg {
    AsImage,
    AsText,
}

/// How one shown line is written: its number, the kept bytes (without the line break)
/// and the line's length in characters. `view`'s is `lines::format_line` (`cat -n`);
/// other profiles show lines their own way (Gemini CLI's `read_file` plain, Codex's
/// `L12: text`).
pub type LineFormat = fn(&mut String, usize, &[u8], usize);

/// What a reader built on `view` shows its own way; every other rule of `view` (scope,
/// size, images, binary files, the 2000-line cap, view-before-edit records) holds.
#[derive(Debug, Clone, Copy)]
pub struct ViewStyle {
    pub svg: Svg,
    pub line: LineFormat,
}

impl ViewStyle {
    /// `view`'s own lines (`cat -n`), with SVG shown as `svg` says.
    pub fn cat_n(svg: Svg) -> ViewStyle {
        ViewStyle {
            svg,
            line: lines::format_line,
        }
    }
}

/// What a view found, before a profile words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewed {
    /// A text file's numbered lines, and where they stopped when the line cap cut them.
    Lines {
        text: String,
        more: Option<MoreNotice>,
    },
    /// Text in place of lines: an empty file's note, a directory listing.
    Note(String),
    /// A binary file: its size, in place of its bytes.
    Binary(String),
    /// An image, base64-encoded.
    Image { data: String, mime: &'static str },
}

impl Viewed {
    /// The tool result; `lines` words a text file's lines and their closing notice.
    pub fn into_result(
        self,
        lines: impl FnOnce(String, Option<MoreNotice>) -> String,
    ) -> CallToolResult {
        match self {
            Viewed::Lines { text, more } => text_result(lines(text, more)),
            Viewed::Note(text) | Viewed::Binary(text) => text_result(text),
            Viewed::Image { data, mime } => {
                CallToolResult::success(vec![ContentBlock::image(data, mime)])
            }
        }
    }
}

/// Where a view cut at its line cap stopped (`[Showing lines 1-2000 of 2500. To see
/// more, view with view_range [2001, 2500].]`), which other profiles word in their
/// parameters' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoreNotice {
    pub start: u64,
    pub end: u64,
    pub total: u64,
    /// The range the notice asks for next.
    pub next: u64,
    pub next_end: u64,
}

impl MoreNotice {
    /// `view`'s own words, after the lines.
    pub fn in_view_words(&self) -> String {
        format!(
            "\n[Showing lines {}-{} of {}. To see more, view with view_range [{}, {}].]\n",
            self.start, self.end, self.total, self.next, self.next_end
        )
    }
}

/// `view`'s lines with its own closing notice.
pub fn view_words(text: String, more: Option<MoreNotice>) -> String {
    match more {
        Some(more) => text + &more.in_view_words(),
        None => text,
    }
}

/// `view`'s reading: a directory's listing, an image, a binary file's note, or a text
/// file's lines as `style` writes them.
pub fn read(ctx: &Ctx, args: ViewArgs, style: ViewStyle) -> ToolResult<Viewed> {
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
        return list_directory(ctx, file, &path.real, &path.shown).map(Viewed::Note);
    }
    // One stat serves both the directory check above and this one.
    fsutil::ensure_regular(&meta, &path.shown)?;
    // A file a language server covers: its server starts (or is told of the file) in the
    // background, so the edit that usually follows a view is checked against it.
    crate::tools::engine::code::warm(ctx, &path);

    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = sniff(&mut reader).map_err(|e| ToolError::io(&path.shown, "view", &e))?;
    let svg = style.svg == Svg::AsImage && has_svg_extension(&path.real);
    if let Some(mime) = image_mime(&head).or_else(|| svg.then_some("image/svg+xml")) {
        return read_image(ctx, reader, &meta, &path, mime);
    }
    if memchr::memchr(0, &head).is_some() {
        return read_binary(ctx, reader, &meta, &path, &head);
    }
    read_text(ctx, reader, &meta, &path, request, style.line)
}

/// An image, within --max-file-size; its bytes count as a view of it.
fn read_image(
    ctx: &Ctx,
    mut reader: BufReader<File>,
    meta: &Metadata,
    path: &ScopedPath,
    mime: &'static str,
) -> ToolResult<Viewed> {
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
    Ok(Viewed::Image { data, mime })
}

/// A binary file: its size is all a view shows. It is read (hashed) only as a text view
/// would be, under the same rules for view-before-edit (see [`Proof`]).
fn read_binary(
    ctx: &Ctx,
    reader: BufReader<File>,
    meta: &Metadata,
    path: &ScopedPath,
    head: &[u8],
) -> ToolResult<Viewed> {
    let io_err = |e: std::io::Error| ToolError::io(&path.shown, "view", &e);
    let stamp = FileStamp::of(&reader.get_ref().metadata().map_err(io_err)?);
    match Proof::of(stamp, meta.len() <= ctx.max_file_size()) {
        Proof::Stamp => ctx.ws.record_seen(&path.real, Seen::Stamp(stamp)),
        Proof::Forget => ctx.ws.forget_view(&path.real),
        Proof::ReadHash => ctx.ws.record_seen(
            &path.real,
            Seen::Range {
                stamp,
                start: 0,
                len: head.len() as u64,
                hash: lines::hash_bytes(head),
            },
        ),
        Proof::WholeHash => {
            let summary = lines::scan_lines(reader, |_| false, |_, _, _| {}).map_err(io_err)?;
            ctx.ws.record_view(&path.real, summary.hash);
        }
    }
    Ok(Viewed::Binary(format!(
        "{} is a binary file ({} bytes); view shows text and images only.",
        path.shown.display(),
        stamp.size
    )))
}

/// What a view leaves for view-before-edit. The stamp of a file older than the racy
/// window stands for its content (no hash needed). Otherwise a file under 1 MiB is
/// hashed whole (cheap), and a larger one only where the view read (issue 21 §2: a view
/// costs what it shows at any --max-file-size; `Seen::Range`). A file over
/// --max-file-size cannot be edited (only create_file could overwrite it), so a racy one
/// is not hashed: its view record is dropped, and an overwrite must wait for a later view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proof {
    Stamp,
    WholeHash,
    ReadHash,
    Forget,
}

impl Proof {
    fn of(stamp: FileStamp, editable: bool) -> Proof {
        let large = stamp.size >= line_index::MIN_INDEXED_BYTES;
        match (stamp.is_racy(), editable, large) {
            (false, _, _) => Proof::Stamp,
            (true, false, _) => Proof::Forget,
            (true, true, false) => Proof::WholeHash,
            (true, true, true) => Proof::ReadHash,
        }
    }

    /// Records the view: `read` is what the scan read (from `start`, `len` bytes) and
    /// its hash.
    fn record(self, ctx: &Ctx, real: &Path, stamp: FileStamp, start: u64, read: &ScanSummary) {
        match self {
            Proof::Stamp => ctx.ws.record_seen(real, Seen::Stamp(stamp)),
            Proof::WholeHash => ctx.ws.record_view(real, read.hash),
            Proof::ReadHash => ctx.ws.record_seen(
                real,
                Seen::Range {
                    stamp,
                    start,
                    len: read.total_bytes,
                    hash: read.hash,
                },
            ),
            Proof::Forget => ctx.ws.forget_view(real),
        }
    }
}

/// A text file's lines as `request` asks, at most 2000 of them. A whole-file view holds
/// the file's first 2000 lines; a range view streams any size (seed 000 D12), so only the
/// former is bound by --max-file-size. Every scan stops after its last shown line but a
/// whole hash's.
fn read_text(
    ctx: &Ctx,
    reader: BufReader<File>,
    meta: &Metadata,
    path: &ScopedPath,
    request: ranges::LineRequest,
    format_line: LineFormat,
) -> ToolResult<Viewed> {
    if !request.explicit {
        fsutil::check_size(
            meta.len(),
            ctx.max_file_size(),
            &path.shown,
            "view without view_range",
            "view it in parts with view_range [start, end]",
        )?;
    }
    let io_err = |e: std::io::Error| ToolError::io(&path.shown, "view", &e);
    let stamp = FileStamp::of(&reader.get_ref().metadata().map_err(io_err)?);
    let proof = Proof::of(stamp, meta.len() <= ctx.max_file_size());
    let mut file = TextFile {
        reader,
        real: &path.real,
        stamp,
        index: None,
    };
    let (request, (first_line, scan_start)) = file.locate(request).map_err(io_err)?;
    let last_kept = request.last_kept();
    let mut body = reserve(request, meta.len());
    let from = lines::ScanFrom {
        first_line,
        stop_after: (proof != Proof::WholeHash).then_some(last_kept),
        hash: matches!(proof, Proof::WholeHash | Proof::ReadHash),
    };
    let (summary, complete) = lines::scan_lines_from(
        &mut file.reader,
        from,
        |n| n >= request.start && n <= last_kept,
        |n, kept, chars| format_line(&mut body, n, kept, chars),
    )
    .map_err(io_err)?;
    let total_lines = if complete || request.end.is_some_and(|e| e <= last_kept) {
        // Read to the end; or everything asked for was shown and nothing past it is
        // reported: the total is not needed, and the last line read stands for it.
        summary.total_lines
    } else {
        // Lines exist past the cap: the notice names the total.
        file.total_lines(summary.total_lines).map_err(io_err)?
    };
    let shown = ranges::clamp(request, total_lines).map_err(ToolError::invalid)?;
    proof.record(ctx, &path.real, stamp, scan_start, &summary);
    if total_lines == 0 {
        return Ok(Viewed::Note(format!(
            "(the file {} is empty)",
            path.shown.display()
        )));
    }
    let more = shown.more_after.then(|| {
        let next_end = (shown.end + ranges::MAX_VIEW_LINES).min(match request.end {
            Some(e) => e.min(shown.total),
            None => shown.total,
        });
        MoreNotice {
            start: shown.start as u64,
            end: shown.end as u64,
            total: shown.total as u64,
            next: shown.end as u64 + 1,
            next_end: next_end as u64,
        }
    });
    Ok(Viewed::Lines { text: body, more })
}

/// Most a whole-file view reserves for its result ahead of reading: a large file may
/// show only its first 2000 lines, so beyond this the buffer grows as lines come.
const MAX_RESERVED_BYTES: u64 = 2 << 20;

/// The buffer a view's lines are written to. A whole-file view shows about the file plus
/// a number column: reserving that up front spares the copies of a growing buffer (a
/// range view may be of a huge file).
fn reserve(request: ranges::LineRequest, file_len: u64) -> String {
    if request.explicit {
        String::new()
    } else {
        let estimate = file_len.saturating_add(file_len / 4).saturating_add(64);
        String::with_capacity(estimate.min(MAX_RESERVED_BYTES) as usize)
    }
}

/// The text file a view reads. A large file's line numbers come from its line index
/// (cached per file, extended when the file grew); the last lines of one are found from
/// its end.
struct TextFile<'a> {
    reader: BufReader<File>,
    real: &'a Path,
    stamp: FileStamp,
    index: Option<Arc<LineIndex>>,
}

impl TextFile<'_> {
    fn large(&self) -> bool {
        self.stamp.size >= line_index::MIN_INDEXED_BYTES
    }

    /// The file's line index, made (or taken from the cache) on first use.
    fn index(&mut self) -> std::io::Result<Arc<LineIndex>> {
        if let Some(index) = &self.index {
            return Ok(index.clone());
        }
        let index = line_index::index_for(self.real, self.stamp, self.reader.get_ref())?;
        self.index = Some(index.clone());
        Ok(index)
    }

    /// The request with its last lines resolved, and where the scan starts (line number,
    /// byte offset), the reader placed there.
    fn locate(
        &mut self,
        request: ranges::LineRequest,
    ) -> std::io::Result<(ranges::LineRequest, (usize, u64))> {
        let mut start_at = None;
        let request = match request.last_lines {
            Some(n) if self.large() => {
                let idx = self.index()?;
                let total = idx.total_lines();
                if n <= ranges::MAX_VIEW_LINES {
                    let (offset, found) =
                        line_index::tail_start(self.reader.get_ref(), idx.len(), n)?;
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
                }
            }
            Some(_) => {
                // Under 1 MiB one counting pass costs less than an index.
                let total = LineIndex::build(&mut self.reader)?.total_lines();
                self.reader.seek(SeekFrom::Start(0))?;
                request.resolve_last(total)
            }
            None => request,
        };
        // A large file starts at the line index's checkpoint before the first shown line.
        if start_at.is_none() && self.large() && request.start > 1 {
            start_at = Some(self.index()?.seek_point(request.start));
        }
        if let Some((_, offset)) = start_at {
            self.reader.seek(SeekFrom::Start(offset))?;
        }
        Ok((request, start_at.unwrap_or((1, 0))))
    }

    /// The file's line count, from its index or by counting on from `counted` lines
    /// (where the scan stopped).
    fn total_lines(&mut self, counted: usize) -> std::io::Result<usize> {
        if self.index.is_some() || self.large() {
            return Ok(self.index()?.total_lines());
        }
        let rest = lines::ScanFrom {
            first_line: counted + 1,
            stop_after: None,
            hash: false,
        };
        let (summary, _) = lines::scan_lines_from(&mut self.reader, rest, |_| false, |_, _, _| {})?;
        Ok(summary.total_lines)
    }
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
fn list_directory(ctx: &Ctx, dir: File, real: &Path, shown: &Path) -> ToolResult<String> {
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
    Ok(out)
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
    fn views_notice_follows_its_lines() {
        let more = MoreNotice {
            start: 1,
            end: 2000,
            total: 2500,
            next: 2001,
            next_end: 2500,
        };
        assert_eq!(
            view_words("     1\ta\n".into(), Some(more)),
            "     1\ta\n\n[Showing lines 1-2000 of 2500. To see more, view with view_range [2001, 2500].]\n"
        );
        assert_eq!(view_words("     1\ta\n".into(), None), "     1\ta\n");
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
