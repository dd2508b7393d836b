//! The `grep` engine: regex search of file contents on ripgrep's crates (grep-regex,
//! grep-searcher), over the shared walk (seed 002, DESIGN §8). The tool
//! (`tools::grep`) validates its arguments into a [`Query`] and formats nothing itself.
//!
//! One parallel walk finds the matching files; what each needs is kept small — a path
//! and a count (content, count) or a path and an mtime (files) — so memory does not grow
//! with the number of matching lines. Results are then ordered (files by mtime newest
//! first, ties by path; content and count by path) and paged. In content mode the files
//! of the page are searched a second time to gather their lines with context, stopping as
//! soon as the page is full (`search::output`).

use super::Cancelled;
use super::output::{
    self, ContentRenderer, ContentStyle, LineCollector, ListStyle, MAX_RESULT_CHARS, Page, plural,
};
use super::pattern::PathGlob;
use super::walk::{self, Root};
use crate::scope::Scope;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, LineIter, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch,
};
use ignore::types::Types;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// What a search shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Paths of matching files, newest first.
    Files,
    /// Matching lines with context.
    Content,
    /// Matching lines per file.
    Count,
}

/// One search, validated.
#[derive(Debug)]
pub struct Query {
    /// Built as ripgrep builds it (the tool's `build_matcher`).
    pub matcher: RegexMatcher,
    /// The pattern as given, for the no-match message.
    pub pattern: String,
    pub mode: Mode,
    /// Only files whose relative path or name matches.
    pub include: Option<PathGlob>,
    /// Only files of these ripgrep types.
    pub types: Option<Types>,
    /// Matches may span lines; whole files are read, so larger than `max_file_size`
    /// ones are skipped.
    pub multiline: bool,
    pub before: usize,
    pub after: usize,
    pub line_numbers: bool,
    pub page: Page,
    /// Apply `.gitignore`, `.ignore` and `.git/info/exclude` (false: Gemini CLI's
    /// `no_ignore`).
    pub respect_ignore: bool,
}

/// A matching file found by the walk.
struct Hit {
    path: PathBuf,
    /// Matching lines (content, count modes).
    count: usize,
    /// Files mode.
    mtime: SystemTime,
}

/// Runs `query` below `root` (paths outside `scope` are skipped) and renders the
/// result, notices included, within the 30,000-character cap.
pub fn search(
    query: &Query,
    root: &Root,
    scope: &Scope,
    max_file_size: u64,
    ct: &CancellationToken,
) -> Result<String, Cancelled> {
    let too_large = AtomicUsize::new(0);
    let mut hits = find(query, root, scope, max_file_size, &too_large, ct);
    if ct.is_cancelled() {
        return Err(Cancelled);
    }

    let skipped = match too_large.into_inner() {
        0 => String::new(),
        n => format!(
            "[{} larger than --max-file-size ({max_file_size} bytes) not searched: multiline \
             mode reads whole files.]",
            plural(n, "file", "files")
        ),
    };
    if hits.is_empty() {
        let mut text = format!(
            "No matches found for pattern {:?} in {}",
            query.pattern,
            root.shown.display()
        );
        if !skipped.is_empty() {
            text.push('\n');
            text.push_str(&skipped);
        }
        return Ok(text);
    }
    let cap = if skipped.is_empty() {
        MAX_RESULT_CHARS
    } else {
        MAX_RESULT_CHARS - skipped.chars().count() - 1
    };

    let mut text = match query.mode {
        Mode::Files => {
            // Newest first at full precision; ties by path (DESIGN §8).
            hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
            let entries: Vec<String> = hits
                .iter()
                .map(|h| root.display(&h.path).to_string_lossy().into_owned())
                .collect();
            let style = ListStyle {
                header: Some(format!("Found {}", plural(entries.len(), "file", "files"))),
                one: "file",
                many: "files",
                pageable: true,
                cap,
            };
            output::render_list(&entries, query.page, &style)
        }
        Mode::Count => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            let total: usize = hits.iter().map(|h| h.count).sum();
            let entries: Vec<String> = hits
                .iter()
                .map(|h| format!("{}:{}", root.display(&h.path).to_string_lossy(), h.count))
                .collect();
            let style = ListStyle {
                header: Some(format!(
                    "Found {} in {}",
                    plural(total, "matching line", "matching lines"),
                    plural(entries.len(), "file", "files")
                )),
                one: "file",
                many: "files",
                pageable: true,
                cap,
            };
            output::render_list(&entries, query.page, &style)
        }
        Mode::Content => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            content_page(query, root, &hits, cap, ct)?
        }
    };
    if !skipped.is_empty() {
        text.push('\n');
        text.push_str(&skipped);
    }
    Ok(text)
}

/// The walk: every file that matches, with its count (content, count) or mtime (files).
fn find(
    query: &Query,
    root: &Root,
    scope: &Scope,
    max_file_size: u64,
    too_large: &AtomicUsize,
    ct: &CancellationToken,
) -> Vec<Hit> {
    let (tx, rx) = std::sync::mpsc::channel::<Hit>();
    walk::run_with(root, scope, ct, query.respect_ignore, || {
        let tx = tx.clone();
        let mut searcher = searcher(query.multiline, 0, 0);
        move |ent: ignore::DirEntry| {
            if !ent.file_type().is_some_and(|t| t.is_file()) {
                return;
            }
            if let Some(g) = &query.include {
                let name = Path::new(ent.file_name());
                let path = ent.path();
                if !g.is_match(name, || root.relative(path), || root.display(path)) {
                    return;
                }
            }
            if let Some(t) = &query.types
                && !t.matched(ent.path(), false).is_whitelist()
            {
                return;
            }
            if query.multiline && ent.metadata().is_ok_and(|m| m.len() > max_file_size) {
                too_large.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let count = if query.mode == Mode::Files {
                let mut sink = FirstMatch(false);
                let ok = crate::beneath::open_found(ent.path())
                    .is_some_and(|f| searcher.search_file(&query.matcher, &f, &mut sink).is_ok());
                usize::from(ok && sink.0)
            } else {
                let mut sink = CountLines(0);
                // Opened beneath its root, no symlink swapped in followed (issue 25 §2).
                match crate::beneath::open_found(ent.path())
                    .map(|f| searcher.search_file(&query.matcher, &f, &mut sink))
                {
                    Some(Ok(())) => sink.0,
                    _ => 0,
                }
            };
            if count > 0 {
                let mtime = if query.mode == Mode::Files {
                    ent.metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH)
                } else {
                    SystemTime::UNIX_EPOCH
                };
                let _ = tx.send(Hit {
                    path: ent.into_path(),
                    count,
                    mtime,
                });
            }
        }
    });
    drop(tx);
    rx.into_iter().collect()
}

/// One file's lines, as [`lines`] found them.
#[derive(Debug, Clone)]
pub struct FileLines {
    /// As walked: [`Root::display`] shows it.
    pub path: PathBuf,
    /// Matching lines and their context, in file order.
    pub lines: Vec<output::Line>,
}

/// How many matching lines [`lines`] gathers.
#[derive(Debug, Clone, Copy)]
pub struct LineLimits {
    /// Across all files.
    pub total: usize,
    /// In any one file.
    pub per_file: Option<usize>,
}

/// A structured content search, for profiles that lay results out their own way
/// (gemini-cli's `grep_search`): the matching files in path order, each with its
/// matching lines (within `limits`, counted across files in that order) and
/// `query.before`/`query.after` lines of context. A line `exclude` matches is left out,
/// matching or context, and does not count. `query.mode` and `query.page` are not used.
/// Also returns whether more matching lines exist than `limits` let through.
pub fn lines(
    query: &Query,
    root: &Root,
    scope: &Scope,
    max_file_size: u64,
    limits: LineLimits,
    exclude: Option<&regex::bytes::Regex>,
    ct: &CancellationToken,
) -> Result<(Vec<FileLines>, bool), Cancelled> {
    let counting = Query {
        mode: Mode::Content,
        ..query.clone_plan()
    };
    let too_large = AtomicUsize::new(0);
    let mut hits = find(&counting, root, scope, max_file_size, &too_large, ct);
    if ct.is_cancelled() {
        return Err(Cancelled);
    }
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let mut searcher = searcher(query.multiline, query.before, query.after);
    let mut out = Vec::new();
    let mut left = limits.total;
    let mut more = false;
    for hit in hits {
        if ct.is_cancelled() {
            return Err(Cancelled);
        }
        if left == 0 {
            more = true;
            break;
        }
        let take = limits.per_file.map_or(left, |p| p.min(left));
        let collector = LineCollector::new(
            output::FilePlan { skip: 0, take },
            query.before,
            query.after,
            // Lines are cut at 2000 characters; this only stops a runaway context.
            usize::MAX / 2,
        );
        let mut sink = Filtered {
            inner: Collect(collector),
            exclude,
        };
        // A file that cannot be read any more shows nothing.
        if let Some(f) = crate::beneath::open_found(&hit.path) {
            let _ = searcher.search_file(&query.matcher, &f, &mut sink);
        }
        let lines = sink.inner.0.into_lines();
        let kept = lines
            .iter()
            .filter(|l| l.kind == output::LineKind::Match)
            .count();
        if kept == 0 {
            continue;
        }
        if exclude.is_none() && hit.count > kept && limits.per_file.is_none_or(|p| kept < p) {
            more = true;
        }
        left -= kept.min(left);
        out.push(FileLines {
            path: hit.path,
            lines,
        });
    }
    Ok((out, more))
}

/// The files with a matching line, newest first (ties by path), as walked: Codex's
/// `grep_files` (`rg --files-with-matches --sortr=modified`).
pub fn files_by_mtime(
    query: &Query,
    root: &Root,
    scope: &Scope,
    max_file_size: u64,
    ct: &CancellationToken,
) -> Result<Vec<PathBuf>, Cancelled> {
    let listing = Query {
        mode: Mode::Files,
        ..query.clone_plan()
    };
    let too_large = AtomicUsize::new(0);
    let mut hits = find(&listing, root, scope, max_file_size, &too_large, ct);
    if ct.is_cancelled() {
        return Err(Cancelled);
    }
    hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
    Ok(hits.into_iter().map(|h| h.path).collect())
}

impl Query {
    /// A copy to change the mode of (the matcher is cheap to clone: it shares its
    /// compiled regex).
    fn clone_plan(&self) -> Query {
        Query {
            matcher: self.matcher.clone(),
            pattern: self.pattern.clone(),
            mode: self.mode,
            include: self.include.clone(),
            types: self.types.clone(),
            multiline: self.multiline,
            before: self.before,
            after: self.after,
            line_numbers: self.line_numbers,
            page: self.page,
            respect_ignore: self.respect_ignore,
        }
    }
}

/// Leaves out the lines `exclude` matches, before the collector sees them.
struct Filtered<'a> {
    inner: Collect,
    exclude: Option<&'a regex::bytes::Regex>,
}

impl Sink for Filtered<'_> {
    type Error = io::Error;
    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = m.line_number().unwrap_or(0);
        for (n, line) in (first..).zip(m.lines()) {
            if self.excluded(line) {
                continue;
            }
            if !self.inner.0.push(n, true, line) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        let first = c.line_number().unwrap_or(0);
        for (n, line) in (first..).zip(LineIter::new(b'\n', c.bytes())) {
            if self.excluded(line) {
                continue;
            }
            if !self.inner.0.push(n, false, line) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl Filtered<'_> {
    fn excluded(&self, line: &[u8]) -> bool {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        self.exclude.is_some_and(|r| r.is_match(line))
    }
}

fn searcher(multiline: bool, before: usize, after: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .multi_line(multiline)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(before)
        .after_context(after)
        .build()
}

/// Content mode: searches the page's files again, in path order, for their lines with
/// context.
fn content_page(
    query: &Query,
    root: &Root,
    hits: &[Hit],
    cap: usize,
    ct: &CancellationToken,
) -> Result<String, Cancelled> {
    let total: usize = hits.iter().map(|h| h.count).sum();
    let style = ContentStyle {
        before: query.before,
        after: query.after,
        line_numbers: query.line_numbers,
        cap,
    };
    let mut renderer = ContentRenderer::new(total, hits.len(), query.page, style);
    let mut searcher = searcher(query.multiline, query.before, query.after);
    for hit in hits {
        if renderer.is_full() {
            break;
        }
        if ct.is_cancelled() {
            return Err(Cancelled);
        }
        let Some(plan) = renderer.plan(hit.count) else {
            continue;
        };
        let mut sink = Collect(LineCollector::new(
            plan,
            query.before,
            query.after,
            renderer.budget(),
        ));
        // A file that cannot be read any more shows nothing; the renderer notices.
        if let Some(f) = crate::beneath::open_found(&hit.path) {
            let _ = searcher.search_file(&query.matcher, &f, &mut sink);
        }
        let shown = root.display(&hit.path).to_string_lossy().into_owned();
        renderer.push_file(&shown, &sink.0.into_lines());
    }
    Ok(renderer.finish())
}

/// Files mode: stop at the first match (as `rg -l`).
struct FirstMatch(bool);

impl Sink for FirstMatch {
    type Error = io::Error;
    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.0 = true;
        Ok(false)
    }
}

/// Content and count modes, first pass: matching lines (a match spanning lines counts
/// each of them, as content mode shows each).
struct CountLines(usize);

impl Sink for CountLines {
    type Error = io::Error;
    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.0 += m.lines().count().max(1);
        Ok(true)
    }
}

/// Content mode, second pass.
struct Collect(LineCollector);

impl Sink for Collect {
    type Error = io::Error;
    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = m.line_number().unwrap_or(0);
        let mut any = false;
        for (n, line) in (first..).zip(m.lines()) {
            any = true;
            if !self.0.push(n, true, line) {
                return Ok(false);
            }
        }
        if !any {
            return Ok(self.0.push(first, true, b""));
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        let first = c.line_number().unwrap_or(0);
        for (n, line) in (first..).zip(LineIter::new(b'\n', c.bytes())) {
            if !self.0.push(n, false, line) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
