//! `grep`: regex search of file contents on ripgrep's engine (seed 002, DESIGN §8).
//!
//! One parallel walk (`search::walk`) finds the matching files; what each needs is kept
//! small — a path and a count (content, count) or a path and an mtime (files) — so memory
//! does not grow with the number of matching lines. Results are then ordered (files by
//! mtime newest first, ties by path; content and count by path) and paged. In content
//! mode the files of the page are searched a second time to gather their lines with
//! context, stopping as soon as the page is full (`search::output`).

use super::{Ctx, define, read_only, text_result};
use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::search::output::{
    self, ContentRenderer, ContentStyle, LineCollector, ListStyle, MAX_RESULT_CHARS, Page, plural,
};
use crate::search::pattern::{self, PathGlob};
use crate::search::walk::{self, Root};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, LineIter, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch,
};
use ignore::WalkState;
use ignore::types::Types;
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// The arguments as received: both name sets (seed 002 decision 11) are accepted in
/// either mode and merged.
#[derive(Debug, Deserialize)]
pub struct GrepArgs {
    pub pattern: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub include: Option<String>,
    #[serde(default)]
    pub glob: Option<String>,
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    #[serde(default)]
    pub output_mode: Option<String>,
    #[serde(default)]
    pub case_insensitive: Option<bool>,
    #[serde(default, rename = "-i")]
    pub dash_i: Option<bool>,
    #[serde(default)]
    pub line_numbers: Option<bool>,
    #[serde(default, rename = "-n")]
    pub dash_n: Option<bool>,
    #[serde(default)]
    pub context_before: Option<usize>,
    #[serde(default, rename = "-B")]
    pub dash_b: Option<usize>,
    #[serde(default)]
    pub context_after: Option<usize>,
    #[serde(default, rename = "-A")]
    pub dash_a: Option<usize>,
    #[serde(default)]
    pub context: Option<usize>,
    #[serde(default, rename = "-C")]
    pub dash_c: Option<usize>,
    #[serde(default)]
    pub multiline: Option<bool>,
    #[serde(default)]
    pub head_limit: Option<usize>,
    #[serde(default)]
    pub offset: Option<usize>,
}

fn output_mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["files_with_matches", "content", "count"],
        "description": "`files_with_matches` (default): paths of matching files, newest first. \
            `content`: matching lines as `path:line:text` (context lines `path-line-text`). \
            `count`: matching lines per file as `path:count`."
    })
}

fn compat_output_mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["content", "files_with_matches", "count"],
        "description": "Output mode: \"content\" shows matching lines, \"files_with_matches\" \
            shows file paths (default), \"count\" shows match counts."
    })
}

// The schema of the default mode (no doc comment: it would become the schema's description).
#[derive(Debug, JsonSchema)]
#[schemars(rename = "GrepArgs")]
#[allow(dead_code)]
struct GrepSchema {
    /// The regular expression to search for (Rust regex syntax, as ripgrep: `\bfoo\b`,
    /// `fn\s+\w+`, `log.*Error`). Escape literal braces: `interface\{\}`.
    pattern: String,
    /// File or directory to search: absolute, or relative to the working directory.
    /// Default: the working directory.
    path: Option<String>,
    /// Only search files whose path relative to `path`, or whose name, matches this glob:
    /// `*.js`, `*.{ts,tsx}`, `src/**/*.py`.
    include: Option<String>,
    /// Only search files of this ripgrep file type: `rust`, `py`, `js`, `ts`, `go`,
    /// `java`, `c`, `cpp`, `md`, ... (more efficient than include for standard types).
    #[schemars(rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    #[schemars(schema_with = "output_mode_schema")]
    output_mode: Option<String>,
    /// Case-insensitive search.
    case_insensitive: Option<bool>,
    /// Show line numbers in content mode (default true).
    line_numbers: Option<bool>,
    /// Lines of context before each match (content mode).
    context_before: Option<usize>,
    /// Lines of context after each match (content mode).
    context_after: Option<usize>,
    /// Lines of context before and after each match (content mode).
    context: Option<usize>,
    /// Let `.` match newlines and patterns span lines (e.g. `struct \{[\s\S]*?field`).
    multiline: Option<bool>,
    /// Show at most this many entries: matching lines (content), files (files_with_matches,
    /// count). 0 or absent: all (the result is still capped at 30,000 characters).
    head_limit: Option<usize>,
    /// Skip this many entries first (same units as head_limit), to page through results.
    offset: Option<usize>,
}

// The schema with Claude Code's names (`--anthropic-compat`).
#[derive(Debug, JsonSchema)]
#[schemars(rename = "GrepArgs")]
#[allow(dead_code)]
struct CompatGrepSchema {
    /// The regular expression pattern to search for in file contents.
    pattern: String,
    /// File or directory to search in. Defaults to the current working directory.
    path: Option<String>,
    /// Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}").
    glob: Option<String>,
    /// File type to search (rg --type). Common types: js, py, rust, go, java, etc. More
    /// efficient than glob for standard file types.
    #[schemars(rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    #[schemars(schema_with = "compat_output_mode_schema")]
    output_mode: Option<String>,
    /// Case insensitive search (rg -i).
    #[schemars(rename = "-i")]
    dash_i: Option<bool>,
    /// Show line numbers in output (rg -n). Requires output_mode "content". Defaults to
    /// true.
    #[schemars(rename = "-n")]
    dash_n: Option<bool>,
    /// Number of lines to show before each match (rg -B). Requires output_mode "content".
    #[schemars(rename = "-B")]
    dash_b: Option<usize>,
    /// Number of lines to show after each match (rg -A). Requires output_mode "content".
    #[schemars(rename = "-A")]
    dash_a: Option<usize>,
    /// Number of lines to show before and after each match (rg -C). Requires output_mode
    /// "content".
    #[schemars(rename = "-C")]
    dash_c: Option<usize>,
    /// Alias for -C.
    context: Option<usize>,
    /// Enable multiline mode where . matches newlines and patterns can span lines (rg -U
    /// --multiline-dotall). Default: false.
    multiline: Option<bool>,
    /// Limit output to the first N lines/entries (head -N). Works across all output
    /// modes. 0 or absent: unlimited.
    head_limit: Option<usize>,
    /// Skip the first N lines/entries before applying head_limit (tail -n +N).
    offset: Option<usize>,
}

const DESCRIPTION: &str = "Search file contents with a regular expression, on ripgrep's engine \
    (Rust regex syntax). Searches `path` (default: the working directory) recursively, in \
    parallel, honouring .gitignore, .ignore and .git/info/exclude; .git and node_modules are \
    skipped, hidden files are searched, binary files (a NUL byte) are skipped. output_mode: \
    files_with_matches (default; paths, newest first), content (`path:line:text`, context \
    lines `path-line-text`, `--` between groups), count (`path:count`). Filter files with \
    include (a glob on the relative path or the file name, e.g. `*.{ts,tsx}`, `src/**/*.py`) \
    or type (a ripgrep file type: rust, py, ts, go, ...). Page with offset and head_limit \
    (matching lines in content mode, files otherwise). Results are capped at 30,000 \
    characters.";

const COMPAT_DESCRIPTION: &str = "A powerful search tool built on ripgrep's engine.\n\
    - Supports full regex syntax (e.g. \"log.*Error\", \"function\\s+\\w+\")\n\
    - Filter files with the glob parameter (e.g. \"*.js\", \"**/*.tsx\") or the type parameter \
    (e.g. \"js\", \"py\", \"rust\")\n\
    - Output modes: \"content\" shows matching lines, \"files_with_matches\" shows only file \
    paths (default), \"count\" shows match counts\n\
    - Pattern syntax: literal braces need escaping (use `interface\\{\\}` to find \
    `interface{}`)\n\
    - Multiline matching: by default patterns match within single lines only; for \
    cross-line patterns use multiline: true\n\
    - Page through results with offset and head_limit; output is capped at 30,000 characters";

pub fn tool(compat: bool) -> Tool {
    if compat {
        define::<CompatGrepSchema>(
            "grep",
            "Search file contents",
            COMPAT_DESCRIPTION,
            read_only("Search file contents"),
        )
    } else {
        define::<GrepSchema>(
            "grep",
            "Search file contents",
            DESCRIPTION,
            read_only("Search file contents"),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Files,
    Content,
    Count,
}

const MODES: &str = "files_with_matches, content, count";

/// One argument given under either of its names; both given must agree.
fn either<T: PartialEq + Copy + std::fmt::Debug>(
    a: (&str, Option<T>),
    b: (&str, Option<T>),
) -> ToolResult<Option<T>> {
    match (a.1, b.1) {
        (Some(x), Some(y)) if x != y => Err(ToolError::invalid(format!(
            "{} and {} are the same argument and were given different values ({x:?}, {y:?}); give one",
            a.0, b.0
        ))),
        (x, y) => Ok(x.or(y)),
    }
}

/// Everything a search needs, validated.
struct Request {
    matcher: RegexMatcher,
    mode: Mode,
    include: Option<PathGlob>,
    types: Option<Types>,
    multiline: bool,
    before: usize,
    after: usize,
    line_numbers: bool,
    page: Page,
    pattern: String,
}

fn validate(args: GrepArgs) -> ToolResult<(Request, Option<String>)> {
    if args.pattern.is_empty() {
        return Err(ToolError::invalid(
            "pattern must not be empty; give a regular expression to search for",
        ));
    }
    let mode = match args.output_mode.as_deref() {
        None | Some("files_with_matches") => Mode::Files,
        Some("content") => Mode::Content,
        Some("count") => Mode::Count,
        Some(other) => {
            return Err(ToolError::new(
                ErrorCode::GrepInvalidOutputMode,
                format!("output_mode {other:?} is not one of: {MODES}"),
            ));
        }
    };
    let case_insensitive = either(
        ("case_insensitive", args.case_insensitive),
        ("-i", args.dash_i),
    )?;
    let line_numbers = either(("line_numbers", args.line_numbers), ("-n", args.dash_n))?;
    let context = either(("context", args.context), ("-C", args.dash_c))?;
    let before = either(("context_before", args.context_before), ("-B", args.dash_b))?;
    let after = either(("context_after", args.context_after), ("-A", args.dash_a))?;
    let include = match (args.include, args.glob) {
        (Some(a), Some(b)) if a != b => {
            return Err(ToolError::invalid(
                "include and glob are the same argument and were given different values; give one",
            ));
        }
        (a, b) => a.or(b).filter(|g| !g.trim().is_empty()),
    };
    let include = include
        .map(|g| {
            PathGlob::new(&g)
                .map_err(|e| ToolError::invalid(format!("include {g:?} is not a valid glob: {e}")))
        })
        .transpose()?;
    let types = match args.file_type.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(name) => Some(pattern::file_type(name).ok_or_else(|| {
            ToolError::invalid(format!(
                "type {name:?} is not a known file type. Valid types: {}",
                pattern::type_names().join(", ")
            ))
        })?),
    };
    let multiline = args.multiline.unwrap_or(false);
    let matcher = build_matcher(&args.pattern, case_insensitive.unwrap_or(false), multiline)?;
    let request = Request {
        matcher,
        mode,
        include,
        types,
        multiline,
        before: before.or(context).unwrap_or(0),
        after: after.or(context).unwrap_or(0),
        line_numbers: line_numbers.unwrap_or(true),
        page: Page {
            offset: args.offset.unwrap_or(0),
            head_limit: args.head_limit.unwrap_or(0),
        },
        pattern: args.pattern,
    };
    Ok((request, args.path))
}

/// The matcher as ripgrep builds it: `^`/`$` at line boundaries, no match across a line
/// end unless multiline (then `.` matches `\n` too, seed 002 decision 9).
fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    multiline: bool,
) -> ToolResult<RegexMatcher> {
    let mut b = RegexMatcherBuilder::new();
    b.multi_line(true)
        .octal(false)
        .case_insensitive(case_insensitive);
    if multiline {
        b.dot_matches_new_line(true);
    } else {
        b.line_terminator(Some(b'\n'));
    }
    b.build(pattern).map_err(|e| {
        let hint = match e.kind() {
            grep_regex::ErrorKind::NotAllowed(_) => " (set multiline: true to match across lines)",
            _ => "",
        };
        // grep-regex reports syntax errors against its wrapped pattern `(?:…)`; the same
        // parser on the pattern as given points at the right column.
        let detail = match regex::RegexBuilder::new(pattern).build() {
            Err(plain) => plain.to_string(),
            Ok(_) => e.to_string(),
        };
        ToolError::new(
            ErrorCode::GrepInvalidPattern,
            format!("{pattern:?} is not a valid regular expression{hint}: {detail}"),
        )
    })
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

/// A matching file found by the walk.
struct Hit {
    path: PathBuf,
    /// Matching lines (content, count modes).
    count: usize,
    /// Files mode.
    mtime: SystemTime,
}

pub fn run(ctx: &Ctx, args: GrepArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    let (req, path) = validate(args)?;
    let root = Root::open(ctx, path.as_deref(), "search")?;
    let max_size = ctx.max_file_size();
    let too_large = AtomicUsize::new(0);

    let (tx, rx) = std::sync::mpsc::channel::<Hit>();
    walk::builder(ctx, &root).build_parallel().run(|| {
        let tx = tx.clone();
        let matcher = req.matcher.clone();
        let mut searcher = searcher(req.multiline, 0, 0);
        let (req, root, too_large) = (&req, &root, &too_large);
        Box::new(move |entry| {
            if ct.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(ent) = entry else {
                return WalkState::Continue;
            };
            if !ent.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            if let Some(g) = &req.include {
                let name = std::path::Path::new(ent.file_name());
                let path = ent.path();
                if !g.is_match(name, || root.relative(path), || root.display(path)) {
                    return WalkState::Continue;
                }
            }
            if let Some(t) = &req.types
                && !t.matched(ent.path(), false).is_whitelist()
            {
                return WalkState::Continue;
            }
            if req.multiline && ent.metadata().is_ok_and(|m| m.len() > max_size) {
                too_large.fetch_add(1, Ordering::Relaxed);
                return WalkState::Continue;
            }
            let count = if req.mode == Mode::Files {
                let mut sink = FirstMatch(false);
                let ok = searcher
                    .search_path(&matcher, ent.path(), &mut sink)
                    .is_ok();
                usize::from(ok && sink.0)
            } else {
                let mut sink = CountLines(0);
                match searcher.search_path(&matcher, ent.path(), &mut sink) {
                    Ok(()) => sink.0,
                    Err(_) => 0,
                }
            };
            if count > 0 {
                let mtime = if req.mode == Mode::Files {
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
            WalkState::Continue
        })
    });
    drop(tx);
    let mut hits: Vec<Hit> = rx.into_iter().collect();
    if ct.is_cancelled() {
        return Ok(text_result("grep was cancelled."));
    }

    let skipped = match too_large.into_inner() {
        0 => String::new(),
        n => format!(
            "[{} larger than --max-file-size ({max_size} bytes) not searched: multiline mode \
             reads whole files.]",
            plural(n, "file", "files")
        ),
    };
    if hits.is_empty() {
        let mut text = format!(
            "No matches found for pattern {:?} in {}",
            req.pattern,
            root.shown.display()
        );
        if !skipped.is_empty() {
            text.push('\n');
            text.push_str(&skipped);
        }
        return Ok(text_result(text));
    }
    let cap = if skipped.is_empty() {
        MAX_RESULT_CHARS
    } else {
        MAX_RESULT_CHARS - skipped.chars().count() - 1
    };

    let mut text = match req.mode {
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
            output::render_list(&entries, req.page, &style)
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
            output::render_list(&entries, req.page, &style)
        }
        Mode::Content => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            match content_page(&req, &root, &hits, cap, ct) {
                Some(text) => text,
                None => return Ok(text_result("grep was cancelled.")),
            }
        }
    };
    if !skipped.is_empty() {
        text.push('\n');
        text.push_str(&skipped);
    }
    Ok(text_result(text))
}

/// Content mode: searches the page's files again, in path order, for their lines with
/// context. `None` when cancelled.
fn content_page(
    req: &Request,
    root: &Root,
    hits: &[Hit],
    cap: usize,
    ct: &CancellationToken,
) -> Option<String> {
    let total: usize = hits.iter().map(|h| h.count).sum();
    let style = ContentStyle {
        before: req.before,
        after: req.after,
        line_numbers: req.line_numbers,
        cap,
    };
    let mut renderer = ContentRenderer::new(total, hits.len(), req.page, style);
    let mut searcher = searcher(req.multiline, req.before, req.after);
    for hit in hits {
        if renderer.is_full() {
            break;
        }
        if ct.is_cancelled() {
            return None;
        }
        let Some(plan) = renderer.plan(hit.count) else {
            continue;
        };
        let mut sink = Collect(LineCollector::new(
            plan,
            req.before,
            req.after,
            renderer.budget(),
        ));
        // A file that cannot be read any more shows nothing; the renderer notices.
        let _ = searcher.search_path(&req.matcher, &hit.path, &mut sink);
        let shown = root.display(&hit.path).to_string_lossy().into_owned();
        renderer.push_file(&shown, &sink.0.into_lines());
    }
    Some(renderer.finish())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: serde_json::Value) -> GrepArgs {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn both_name_sets_merge() {
        let (r, _) = validate(args(
            serde_json::json!({"pattern": "x", "-i": true, "-C": 2, "-A": 1, "glob": "*.rs"}),
        ))
        .unwrap();
        assert_eq!((r.before, r.after), (2, 1));
        assert!(r.include.is_some());
        let err = validate(args(
            serde_json::json!({"pattern": "x", "context": 1, "-C": 2}),
        ))
        .err()
        .unwrap();
        assert_eq!(err.code, ErrorCode::InvalidInput);
        assert!(
            validate(args(
                serde_json::json!({"pattern": "x", "context": 2, "-C": 2})
            ))
            .is_ok()
        );
    }

    #[test]
    fn errors_have_their_codes() {
        let e = |v| validate(args(v)).err().unwrap();
        assert_eq!(
            e(serde_json::json!({"pattern": ""})).code,
            ErrorCode::InvalidInput
        );
        let m = e(serde_json::json!({"pattern": "x", "output_mode": "lines"}));
        assert_eq!(m.code, ErrorCode::GrepInvalidOutputMode);
        assert!(m.message.contains(MODES));
        let p = e(serde_json::json!({"pattern": "a("}));
        assert_eq!(p.code, ErrorCode::GrepInvalidPattern);
        assert!(p.message.contains("unclosed group"), "{}", p.message);
        let n = e(serde_json::json!({"pattern": "a\\nb"}));
        assert!(n.message.contains("multiline"), "{}", n.message);
        let t = e(serde_json::json!({"pattern": "x", "type": "klingon"}));
        assert_eq!(t.code, ErrorCode::InvalidInput);
        assert!(
            t.message.contains("rust") && t.message.contains("python"),
            "{}",
            t.message
        );
    }
}
