//! Gemini CLI's search tools over Boris's search engines: `glob` (the glob walk) and
//! `grep_search` (the grep engine), laid out as Gemini CLI lays them out; and the file
//! finding `read_many_files` and `list_directory` share.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::scope::ScopedPath;
use crate::search::Cancelled;
use crate::search::grep::{self as engine, LineLimits, Query};
use crate::search::output::{LineKind, Page};
use crate::search::pattern::PathGlob;
use crate::search::walk::Root;
use crate::text::quote::quoted;
use crate::tools::{Ctx, text_result};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "GlobArgs")]
pub struct GlobArgs {
    /// The glob pattern to match against (e.g., '**/*.py', 'docs/*.md').
    pub pattern: String,
    /// Optional: The path to the directory to search within, absolute or relative to the
    /// working directory. If omitted, searches the working directory.
    #[serde(default)]
    pub dir_path: Option<String>,
    /// Optional: Whether the search should be case-sensitive. Defaults to false.
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Optional: Whether to respect .gitignore patterns when finding files. Defaults to
    /// true.
    #[serde(default)]
    pub respect_git_ignore: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "GrepSearchArgs")]
pub struct GrepSearchArgs {
    /// The pattern to search for. By default, treated as a Rust-flavored regular
    /// expression. Use '\b' for precise symbol matching (e.g., '\bMatchMe\b').
    pub pattern: String,
    /// Directory or file to search. Directories are searched recursively. Relative paths
    /// are resolved against the working directory. Defaults to the working directory
    /// ('.') if omitted.
    #[serde(default)]
    pub dir_path: Option<String>,
    /// Glob pattern to filter files (e.g., '*.ts', 'src/**'). Recommended for large
    /// repositories to reduce noise. Defaults to all files if omitted.
    #[serde(default)]
    pub include_pattern: Option<String>,
    /// Optional: A regular expression pattern to exclude from the search results. If a
    /// line matches both the pattern and the exclude_pattern, it will be omitted.
    #[serde(default)]
    pub exclude_pattern: Option<String>,
    /// Optional: If true, only the file paths of the matches will be returned, without
    /// the line content or line numbers.
    #[serde(default)]
    pub names_only: Option<bool>,
    /// Optional: Maximum number of matches to return per file.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_matches_per_file: Option<u64>,
    /// Optional: Maximum number of total matches to return. Defaults to 100 if omitted.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub total_max_matches: Option<u64>,
    /// If true, search is case-sensitive. Defaults to false (ignore case) if omitted.
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// If true, treats the `pattern` as a literal string instead of a regular expression.
    /// Defaults to false.
    #[serde(default)]
    pub fixed_strings: Option<bool>,
    /// Show this many lines of context around each match (equivalent to grep -C).
    #[serde(default)]
    pub context: Option<u64>,
    /// Show this many lines after each match (equivalent to grep -A).
    #[serde(default)]
    pub after: Option<u64>,
    /// Show this many lines before each match (equivalent to grep -B).
    #[serde(default)]
    pub before: Option<u64>,
    /// If true, searches all files including those usually ignored (like in .gitignore).
    /// .git and node_modules are never searched. Defaults to false.
    #[serde(default)]
    pub no_ignore: Option<bool>,
}

/// The root of a search: `dir_path`, or the working directory.
fn open_root(ctx: &Ctx, dir_path: Option<&str>) -> ToolResult<Root> {
    crate::tools::engine::search::open_root(ctx, dir_path)
}

/// `glob`: Gemini CLI's order (files changed in the last day first, newest first; the
/// rest by path) and its header.
pub fn glob(ctx: &Ctx, args: GlobArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    if args.pattern.trim().is_empty() {
        return Err(ToolError::invalid(
            "The 'pattern' parameter cannot be empty.",
        ));
    }
    let matcher = PathGlob::with_case(&args.pattern, !args.case_sensitive.unwrap_or(false))
        .map_err(|e| {
            ToolError::new(
                ErrorCode::GlobInvalidPattern,
                format!("{} is not a valid glob: {e}", quoted(&args.pattern)),
            )
        })?;
    let root = open_root(ctx, args.dir_path.as_deref())?;
    if !root.is_dir {
        return Err(ToolError::invalid(format!(
            "Search path is not a directory: {}",
            root.shown.display()
        )));
    }
    let respect = args.respect_git_ignore.unwrap_or(true);
    let found = match crate::search::glob::collect(
        &root,
        &ctx.shared.scope,
        &matcher,
        false,
        respect,
        ct,
    ) {
        Ok(found) => found,
        Err(Cancelled) => return Ok(text_result("glob was cancelled.")),
    };
    if found.is_empty() {
        return Ok(text_result(format!(
            "No files found matching pattern \"{}\" within {}",
            args.pattern,
            root.shown.display()
        )));
    }
    let now = SystemTime::now();
    let paths: Vec<(PathBuf, SystemTime)> = found
        .into_iter()
        .map(|(p, t)| (root.display(&p), t))
        .collect();
    let sorted = recent_first(paths, now, Duration::from_secs(24 * 3600));
    let mut text = format!(
        "Found {} file(s) matching \"{}\" within {}, sorted by modification time (newest \
         first):",
        sorted.len(),
        args.pattern,
        root.shown.display()
    );
    let mut shown = 0;
    for p in &sorted {
        let line = p.to_string_lossy();
        if text.len() + line.len() > crate::search::output::MAX_RESULT_CHARS {
            break;
        }
        text.push('\n');
        text.push_str(&line);
        shown += 1;
    }
    if shown < sorted.len() {
        text.push_str(&format!(
            "\n[{} more files not listed (the result is capped at 30,000 characters); narrow \
             the pattern or dir_path]",
            sorted.len() - shown
        ));
    }
    Ok(text_result(text))
}

/// Gemini CLI's glob order (`sortFileEntries`): entries modified within `recent` of
/// `now` first, newest first; the others after them, by path.
pub fn recent_first(
    mut entries: Vec<(PathBuf, SystemTime)>,
    now: SystemTime,
    recent: Duration,
) -> Vec<PathBuf> {
    let is_recent = |t: &SystemTime| now.duration_since(*t).map_or(true, |d| d < recent);
    entries.sort_by(|(pa, ta), (pb, tb)| match (is_recent(ta), is_recent(tb)) {
        (true, true) => tb.cmp(ta).then_with(|| pa.cmp(pb)),
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (false, false) => pa.cmp(pb),
    });
    entries.into_iter().map(|(p, _)| p).collect()
}

/// Matching lines `grep_search` shows when `total_max_matches` is not given.
const DEFAULT_TOTAL_MAX_MATCHES: u64 = 100;

/// `grep_search`: the grep engine's matching lines, grouped by file as Gemini CLI
/// groups them, with its automatic context for 1 to 3 matches.
pub fn grep_search(
    ctx: &Ctx,
    args: GrepSearchArgs,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    if args.max_matches_per_file == Some(0) {
        return Err(ToolError::invalid(
            "max_matches_per_file must be at least 1.",
        ));
    }
    if args.total_max_matches == Some(0) {
        return Err(ToolError::invalid("total_max_matches must be at least 1."));
    }
    let case_insensitive = !args.case_sensitive.unwrap_or(false);
    let pattern = if args.fixed_strings.unwrap_or(false) {
        regex::escape(&args.pattern)
    } else {
        args.pattern.clone()
    };
    let matcher = crate::tools::engine::search::build_matcher(&pattern, case_insensitive, false)?;
    let exclude = match args.exclude_pattern.as_deref().filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => Some(
            regex::bytes::RegexBuilder::new(p)
                .case_insensitive(case_insensitive)
                .build()
                .map_err(|e| {
                    ToolError::new(
                        ErrorCode::GrepInvalidPattern,
                        format!("Invalid exclude regular expression pattern provided: {p}. {e}"),
                    )
                })?,
        ),
    };
    let include = match args.include_pattern.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(g) => Some(PathGlob::new(g).map_err(|e| {
            ToolError::new(
                ErrorCode::GlobInvalidPattern,
                format!("include_pattern {} is not a valid glob: {e}", quoted(g)),
            )
        })?),
    };
    let root = open_root(ctx, args.dir_path.as_deref())?;
    let asked_context = args.context.is_some() || args.before.is_some() || args.after.is_some();
    let context = args.context.unwrap_or(0) as usize;
    let mut query = Query {
        matcher,
        pattern: args.pattern.clone(),
        mode: engine::Mode::Content,
        include,
        types: None,
        multiline: false,
        before: args.before.map_or(context, |b| b as usize),
        after: args.after.map_or(context, |a| a as usize),
        line_numbers: true,
        page: Page::default(),
        respect_ignore: !args.no_ignore.unwrap_or(false),
    };
    let total = args.total_max_matches.unwrap_or(DEFAULT_TOTAL_MAX_MATCHES);
    let limits = LineLimits {
        total: usize::try_from(total).unwrap_or(usize::MAX),
        per_file: args
            .max_matches_per_file
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
    };
    let scope = &ctx.shared.scope;
    let size = ctx.max_file_size();
    let search = |q: &Query| engine::lines(q, &root, scope, size, limits, exclude.as_ref(), ct);
    let Ok((mut files, mut more)) = search(&query) else {
        return Ok(text_result("grep_search was cancelled."));
    };
    let count: usize = files.iter().map(|f| matches(&f.lines)).sum();
    // Few matches and no context asked for: Gemini CLI shows lines around them, so the
    // model need not read the file next (50 lines for one match, 15 for two or three).
    if (1..=3).contains(&count) && !asked_context && !args.names_only.unwrap_or(false) {
        let around = if count == 1 { 50 } else { 15 };
        query.before = around;
        query.after = around;
        if let Ok(found) = search(&query) {
            (files, more) = found;
        }
    }
    let where_ = format!(
        "in path \"{}\"",
        args.dir_path
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or(".")
    );
    let filter = args
        .include_pattern
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(|p| format!(" (filter: \"{p}\")"))
        .unwrap_or_default();
    if files.is_empty() {
        return Ok(text_result(format!(
            "No matches found for pattern \"{}\" {where_}{filter}.",
            args.pattern
        )));
    }
    let limited = if more || count as u64 >= total {
        format!(" (results limited to {total} matches for performance)")
    } else {
        String::new()
    };
    let rel = |p: &Path| -> String {
        let shown = root.relative(p);
        if shown.as_os_str().is_empty() {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            shown.to_string_lossy().into_owned()
        }
    };
    if args.names_only.unwrap_or(false) {
        let mut names: Vec<String> = files.iter().map(|f| rel(&f.path)).collect();
        names.sort();
        return Ok(text_result(format!(
            "Found {} files with matches for pattern \"{}\" {where_}{filter}{limited}:\n{}",
            names.len(),
            args.pattern,
            names.join("\n")
        )));
    }
    let mut text = format!(
        "Found {count} {} for pattern \"{}\" {where_}{filter}{limited}:\n---\n",
        if count == 1 { "match" } else { "matches" },
        args.pattern
    );
    for file in &files {
        if text.len() > crate::search::output::MAX_RESULT_CHARS {
            text.push_str("[more files with matches not shown: the result is capped at 30,000 characters; narrow the search]\n");
            break;
        }
        text.push_str(&format!("File: {}\n", rel(&file.path)));
        for line in &file.lines {
            let sep = if line.kind == LineKind::Match {
                ':'
            } else {
                '-'
            };
            text.push_str(&format!("L{}{sep} {}\n", line.number, line.text.trim_end()));
        }
        text.push_str("---\n");
    }
    Ok(text_result(text.trim_end().to_string()))
}

fn matches(lines: &[crate::search::output::Line]) -> usize {
    lines.iter().filter(|l| l.kind == LineKind::Match).count()
}

/// A file `read_many_files` reads, and whether the call named it (not a glob).
#[derive(Debug)]
pub struct Found {
    pub path: ScopedPath,
    pub named: bool,
}

/// The files `read_many_files` reads: each include that names a file is that file; one
/// that names a directory is every file below it; anything else is a glob (letters in
/// any case, as Gemini CLI) under the working directory. Excludes are globs on the path
/// relative to the working directory (or on any of its directories); sorted by path,
/// each once.
pub fn files_for_patterns(
    ctx: &Ctx,
    include: &[String],
    exclude: &[String],
    recursive: bool,
    respect_ignore: bool,
    ct: &CancellationToken,
) -> ToolResult<Vec<Found>> {
    let cwd = ctx.ws.cwd();
    let excludes: Vec<PathGlob> = exclude
        .iter()
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            PathGlob::with_case(e.trim().trim_end_matches('/'), true).map_err(|err| {
                ToolError::new(
                    ErrorCode::GlobInvalidPattern,
                    format!("exclude pattern {} is not a valid glob: {err}", quoted(e)),
                )
            })
        })
        .collect::<ToolResult<_>>()?;
    let cwd_root = Root::open(ctx.resolve_read(&cwd.to_string_lossy())?, "search")?;
    let mut out: Vec<Found> = Vec::new();
    let add = |path: ScopedPath, named: bool, out: &mut Vec<Found>| {
        let rel = path
            .shown
            .strip_prefix(&cwd)
            .unwrap_or(&path.shown)
            .to_path_buf();
        let excluded = rel
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| {
                let name = Path::new(a.file_name().unwrap_or_default());
                excludes
                    .iter()
                    .any(|g| g.is_match(name, || a, || path.shown.clone()))
            });
        if !excluded && !out.iter().any(|f| f.path.real == path.real) {
            out.push(Found { path, named });
        }
    };
    for pattern in include {
        let p = pattern.trim();
        if let Ok(path) = ctx.resolve_read(p) {
            match std::fs::metadata(&path.real) {
                Ok(m) if m.is_file() => {
                    add(path, true, &mut out);
                    continue;
                }
                Ok(m) if m.is_dir() => {
                    let root = Root::open(path, "search")?;
                    let glob = PathGlob::new("**").map_err(ToolError::invalid)?;
                    let dir = root.shown.clone();
                    walk_into(ctx, &root, &glob, respect_ignore, ct, &mut |p| {
                        // Not recursive: the directory's own files only.
                        let depth = p
                            .shown
                            .strip_prefix(&dir)
                            .map_or(0, |r| r.components().count());
                        if recursive || depth == 1 {
                            add(p, false, &mut out)
                        }
                    })?;
                    continue;
                }
                _ => {}
            }
        }
        let glob = PathGlob::with_case(p, true).map_err(|e| {
            ToolError::new(
                ErrorCode::GlobInvalidPattern,
                format!("include pattern {} is not a valid glob: {e}", quoted(p)),
            )
        })?;
        walk_into(ctx, &cwd_root, &glob, respect_ignore, ct, &mut |p| {
            add(p, false, &mut out)
        })?;
    }
    out.sort_by(|a, b| a.path.shown.cmp(&b.path.shown));
    Ok(out)
}

/// The files below `root` that `glob` matches, handed over as scoped paths.
fn walk_into(
    ctx: &Ctx,
    root: &Root,
    glob: &PathGlob,
    respect_ignore: bool,
    ct: &CancellationToken,
    each: &mut dyn FnMut(ScopedPath),
) -> ToolResult<()> {
    let found =
        crate::search::glob::collect(root, &ctx.shared.scope, glob, false, respect_ignore, ct)
            .map_err(|Cancelled| ToolError::invalid("read_many_files was cancelled"))?;
    for (walked, _) in found {
        let shown = root.display(&walked);
        each(ScopedPath {
            shown,
            real: walked,
        });
    }
    Ok(())
}

/// One entry of a directory, for `list_directory`.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
    pub size: u64,
}

/// A directory's entries, with how many the ignore files (and `.git`) left out.
#[derive(Debug)]
pub struct Listing {
    pub entries: Vec<Entry>,
    /// Every entry the directory has (denied paths excepted).
    pub total: usize,
    pub ignored: usize,
}

/// One level of `dir`: its entries (symlinks followed for their kind and size), denied
/// paths left out, ignore files applied when `respect_ignore`, `.git` never listed.
pub fn one_level(ctx: &Ctx, dir: &ScopedPath, respect_ignore: bool) -> std::io::Result<Listing> {
    let mut names: Vec<std::ffi::OsString> = Vec::new();
    for child in std::fs::read_dir(&dir.real)? {
        let child = child?;
        if ctx.shared.scope.is_denied(&child.path())
            || ctx
                .shared
                .scope
                .is_denied(&dir.shown.join(child.file_name()))
        {
            continue;
        }
        names.push(child.file_name());
    }
    let total = names.len();
    let mut kept: std::collections::HashSet<std::ffi::OsString> = Default::default();
    if respect_ignore {
        let walk = ignore::WalkBuilder::new(&dir.real)
            .max_depth(Some(1))
            .standard_filters(true)
            .hidden(false)
            .git_global(false)
            .require_git(false)
            .build();
        for ent in walk.flatten() {
            if ent.depth() == 1 {
                kept.insert(ent.file_name().to_os_string());
            }
        }
    } else {
        kept.extend(names.iter().cloned());
    }
    let mut entries = Vec::new();
    for name in names {
        if name == ".git" || !kept.contains(&name) {
            continue;
        }
        let path = dir.real.join(&name);
        let (is_dir, size) = match std::fs::metadata(&path) {
            Ok(m) => (m.is_dir(), if m.is_dir() { 0 } else { m.len() }),
            // A dangling link: listed as a file of no size.
            Err(_) => (false, 0),
        };
        entries.push(Entry {
            name: name.to_string_lossy().into_owned(),
            is_dir,
            size,
        });
    }
    let ignored = total - entries.len();
    Ok(Listing {
        entries,
        total,
        ignored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_first_then_the_rest_by_path() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let day = Duration::from_secs(24 * 3600);
        let at = |s: u64| now - Duration::from_secs(s);
        let got = recent_first(
            vec![
                ("/b".into(), at(10 * 24 * 3600)),
                ("/new".into(), at(10)),
                ("/a".into(), at(20 * 24 * 3600)),
                ("/newer".into(), at(5)),
            ],
            now,
            day,
        );
        let want: Vec<PathBuf> = ["/newer", "/new", "/a", "/b"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
    }
}
