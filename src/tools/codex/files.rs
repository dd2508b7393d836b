//! Codex's `read_file` and `list_dir` over Boris's `view` engine and a bounded
//! breadth-first walk.

use crate::error::{ToolError, ToolResult};
use crate::fsutil;
use crate::text::indent_block::{self, BlockOptions};
use crate::text::lines::hash_bytes;
use crate::tools::engine::view::{self, Svg, ViewArgs, ViewStyle};
use crate::tools::{Ctx, text_result};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ReadFileArgs")]
pub struct ReadFileArgs {
    /// Absolute path to the file
    pub file_path: String,
    /// The line number to start reading from. Must be 1 or greater.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// The maximum number of lines to return.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// Optional mode selector: "slice" for simple ranges (default) or "indentation" to
    /// expand around an anchor line.
    #[serde(default)]
    #[schemars(schema_with = "mode_schema")]
    pub mode: Option<String>,
    /// Options of the indentation mode.
    #[serde(default)]
    pub indentation: Option<IndentationArgs>,
}

fn mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["slice", "indentation"],
        "description": "Optional mode selector: \"slice\" for simple ranges (default) or \"indentation\" to expand around an anchor line."
    })
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[schemars(inline)]
#[serde(deny_unknown_fields)]
pub struct IndentationArgs {
    /// Anchor line to center the indentation lookup on (defaults to offset).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub anchor_line: Option<u64>,
    /// How many parent indentation levels (smaller indents) to include.
    #[serde(default)]
    pub max_levels: Option<u64>,
    /// When true, include additional blocks that share the anchor indentation.
    #[serde(default)]
    pub include_siblings: Option<bool>,
    /// Include doc comments or attributes directly above the selected block.
    #[serde(default)]
    pub include_header: Option<bool>,
    /// Hard cap on the number of lines returned when using indentation mode.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_lines: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "ListDirArgs")]
pub struct ListDirArgs {
    /// Absolute path to the directory to list.
    pub dir_path: String,
    /// The entry number to start listing from. Must be 1 or greater.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// The maximum number of entries to return.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// The maximum directory depth to traverse. Must be 1 or greater.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub depth: Option<u64>,
}

/// Codex's defaults and limits.
const READ_DEFAULT_LIMIT: u64 = 2000;
const MAX_LINE_BYTES: usize = 500;
const LIST_DEFAULT_LIMIT: u64 = 25;
const LIST_DEFAULT_DEPTH: u64 = 2;
/// Entries one `list_dir` collects at most before sorting (memory stays bounded in a
/// huge tree; the listing says so).
const LIST_MAX_COLLECTED: usize = 50_000;

/// A line as Codex shows it: `L12: text`, cut at 500 bytes on a character boundary.
fn codex_line(out: &mut String, number: usize, kept: &[u8], _total_chars: usize) {
    let text = String::from_utf8_lossy(kept);
    out.push_str(&format!(
        "L{number}: {}\n",
        cut_bytes(&text, MAX_LINE_BYTES)
    ));
}

fn cut_bytes(text: &str, max: usize) -> &str {
    crate::text::truncate::prefix_bytes(text, max)
}

/// `read_file`: a slice through `view`, or an indentation block.
pub fn read_file(ctx: &Ctx, args: ReadFileArgs) -> ToolResult<CallToolResult> {
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(READ_DEFAULT_LIMIT);
    if offset == 0 {
        return Err(ToolError::invalid("offset must be a 1-indexed line number"));
    }
    if limit == 0 {
        return Err(ToolError::invalid("limit must be greater than zero"));
    }
    match args.mode.as_deref().unwrap_or("slice") {
        "slice" => {}
        "indentation" => {
            return read_block(
                ctx,
                &args.file_path,
                offset,
                limit,
                args.indentation.unwrap_or_default(),
            );
        }
        other => {
            return Err(ToolError::invalid(format!(
                "mode must be \"slice\" or \"indentation\", got {other:?}"
            )));
        }
    }
    let path = ctx.resolve_read(&args.file_path)?;
    if path.real.is_dir() {
        return Err(ToolError::invalid(format!(
            "{} is a directory; list it with list_dir",
            path.shown.display()
        )));
    }
    let clamp = |n: u64| n.min(i64::MAX as u64) as i64;
    let end = offset.saturating_add(limit - 1);
    let viewed = view::read(
        ctx,
        ViewArgs {
            path: args.file_path,
            view_range: Some(vec![clamp(offset), clamp(end)]),
        },
        ViewStyle {
            svg: Svg::AsText,
            line: codex_line,
        },
    )?;
    Ok(viewed.into_result(|text, more| {
        let mut text = text.trim_end_matches('\n').to_string();
        if let Some(n) = more {
            text.push_str(&format!(
                "\n[Showing lines {}-{} of {}: at most 2000 lines per call. Continue with \
                 offset {} and limit {}.]",
                n.start,
                n.end,
                n.total,
                n.next,
                n.next_end - n.next + 1
            ));
        }
        text
    }))
}

/// `read_file` in indentation mode: the whole file (within `--max-file-size`) is read,
/// which also counts as a view of it.
fn read_block(
    ctx: &Ctx,
    file_path: &str,
    offset: u64,
    limit: u64,
    opts: IndentationArgs,
) -> ToolResult<CallToolResult> {
    let anchor = opts.anchor_line.unwrap_or(offset);
    if anchor == 0 {
        return Err(ToolError::invalid(
            "anchor_line must be a 1-indexed line number",
        ));
    }
    let max_lines = opts.max_lines.unwrap_or(limit);
    if max_lines == 0 {
        return Err(ToolError::invalid("max_lines must be greater than zero"));
    }
    let path = ctx.resolve_read(file_path)?;
    let meta = fsutil::regular_file_meta(&path.real, &path.shown)?;
    fsutil::check_size(
        meta.len(),
        ctx.max_file_size(),
        &path.shown,
        "read_file in indentation mode",
        "read it in slices with offset and limit",
    )?;
    let bytes = fsutil::read_file(&path.real, &path.shown, meta.len())?;
    ctx.ws.record_view(&path.real, hash_bytes(&bytes));
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text
        .split_inclusive('\n')
        .map(|l| {
            let l = l.strip_suffix('\n').unwrap_or(l);
            l.strip_suffix('\r').unwrap_or(l)
        })
        .collect();
    let anchor = usize::try_from(anchor).unwrap_or(usize::MAX);
    if anchor > lines.len() {
        return Err(ToolError::invalid("anchor_line exceeds file length"));
    }
    let as_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let picked = indent_block::block(
        &lines,
        BlockOptions {
            anchor: anchor - 1,
            max_levels: as_usize(opts.max_levels.unwrap_or(0)),
            include_siblings: opts.include_siblings.unwrap_or(false),
            include_header: opts.include_header.unwrap_or(true),
            limit: as_usize(limit.min(max_lines)),
        },
    );
    let out: Vec<String> = picked
        .into_iter()
        .map(|i| format!("L{}: {}", i + 1, cut_bytes(lines[i], MAX_LINE_BYTES)))
        .collect();
    Ok(text_result(out.join("\n")))
}

/// `list_dir`: entries up to `depth` levels, sorted by relative path (so a directory's
/// entries follow it), indented two spaces a level, `/` after a directory, `@` after a
/// symlink (never followed), `?` after anything else that is not a file.
pub fn list_dir(ctx: &Ctx, args: ListDirArgs) -> ToolResult<CallToolResult> {
    let offset = args.offset.unwrap_or(1);
    let limit = args.limit.unwrap_or(LIST_DEFAULT_LIMIT);
    let depth = args.depth.unwrap_or(LIST_DEFAULT_DEPTH);
    if offset == 0 {
        return Err(ToolError::invalid(
            "offset must be a 1-indexed entry number",
        ));
    }
    if limit == 0 {
        return Err(ToolError::invalid("limit must be greater than zero"));
    }
    if depth == 0 {
        return Err(ToolError::invalid("depth must be greater than zero"));
    }
    let path = ctx.resolve_read(&args.dir_path)?;
    let meta =
        crate::beneath::metadata(&path.real).map_err(|e| e.into_tool(&path.shown, "list"))?;
    if !meta.is_dir() {
        return Err(ToolError::invalid(format!(
            "{} is not a directory",
            path.shown.display()
        )));
    }
    let (mut entries, capped) = collect(ctx, &path.real, &path.shown, depth)
        .map_err(|e| ToolError::io(&path.shown, "read directory", &e))?;
    entries.sort_by(|a, b| a.key.cmp(&b.key));
    let mut out = vec![format!("Absolute path: {}", path.shown.display())];
    if !entries.is_empty() {
        let start = usize::try_from(offset - 1).unwrap_or(usize::MAX);
        if start >= entries.len() {
            return Err(ToolError::invalid("offset exceeds directory entry count"));
        }
        let take = usize::try_from(limit)
            .unwrap_or(usize::MAX)
            .min(entries.len() - start);
        for e in &entries[start..start + take] {
            out.push(format!("{}{}{}", "  ".repeat(e.depth), e.name, e.kind));
        }
        if start + take < entries.len() {
            out.push(format!("More than {take} entries found"));
        }
    }
    if capped {
        out.push(format!(
            "[Listing stopped after {LIST_MAX_COLLECTED} entries; list a subdirectory or a \
             smaller depth]"
        ));
    }
    Ok(text_result(out.join("\n")))
}

struct ListEntry {
    /// The path relative to the listed directory, `/`-separated: the sort key.
    key: String,
    name: String,
    depth: usize,
    kind: &'static str,
}

/// Breadth-first, `depth` levels; denied paths left out.
fn collect(
    ctx: &Ctx,
    real: &Path,
    shown: &Path,
    depth: u64,
) -> std::io::Result<(Vec<ListEntry>, bool)> {
    let mut out = Vec::new();
    let mut queue: VecDeque<(PathBuf, PathBuf, String, u64)> = VecDeque::new();
    queue.push_back((
        real.to_path_buf(),
        shown.to_path_buf(),
        String::new(),
        depth,
    ));
    let mut first = true;
    while let Some((dir, dir_shown, prefix, left)) = queue.pop_front() {
        let read = match std::fs::read_dir(&dir) {
            Ok(r) => r,
            Err(e) if first => return Err(e),
            Err(_) => continue,
        };
        first = false;
        let mut children: Vec<_> = read.filter_map(Result::ok).collect();
        children.sort_by_key(|c| c.file_name());
        for child in children {
            if out.len() >= LIST_MAX_COLLECTED {
                return Ok((out, true));
            }
            let name = child.file_name().to_string_lossy().into_owned();
            let child_shown = dir_shown.join(child.file_name());
            if ctx.shared.scope.is_denied(&child.path()) || ctx.shared.scope.is_denied(&child_shown)
            {
                continue;
            }
            let kind = match child.file_type() {
                Ok(t) if t.is_symlink() => "@",
                Ok(t) if t.is_dir() => "/",
                Ok(t) if t.is_file() => "",
                _ => "?",
            };
            let key = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if kind == "/" && left > 1 {
                queue.push_back((child.path(), child_shown, key.clone(), left - 1));
            }
            out.push(ListEntry {
                depth: key.matches('/').count(),
                key: cut_bytes(&key, MAX_LINE_BYTES).to_string(),
                name: cut_bytes(&name, MAX_LINE_BYTES).to_string(),
                kind,
            });
        }
    }
    Ok((out, false))
}
