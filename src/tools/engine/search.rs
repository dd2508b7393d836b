//! What every profile's search tools share: the regex matcher as ripgrep builds it, with
//! Boris's error for a bad pattern, and the search root in the caller's workspace and
//! scope (Boris's `grep` and `glob`, Claude Code's `Grep`/`Glob`, Codex's `grep_files`,
//! Gemini CLI's `grep_search`, `glob`, `list_directory`). The search itself is
//! `crate::search`.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::search::walk::Root;
use crate::text::quote::quoted;
use crate::tools::Ctx;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

/// The matcher as ripgrep builds it: `^`/`$` at line boundaries, no match across a line
/// end unless multiline (then `.` matches `\n` too, seed 002 decision 9).
pub fn build_matcher(
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
        // The regex crate draws the pattern and a caret line under it: for a long pattern,
        // keep only what it says is wrong (issue 28 §7).
        let detail = if pattern.len() > crate::text::quote::QUOTE_MAX_BYTES {
            let said: Vec<&str> = detail.lines().filter(|l| l.starts_with("error:")).collect();
            if said.is_empty() {
                crate::text::quote::cut_long_quotes(&detail)
            } else {
                said.join(" ")
            }
        } else {
            detail
        };
        ToolError::new(
            ErrorCode::GrepInvalidPattern,
            format!(
                "{} is not a valid regular expression{hint}: {detail}",
                quoted(pattern)
            ),
        )
    })
}

/// The search root of grep and glob: `path` (default: the working directory), resolved
/// in this workspace and checked against the scope.
pub fn open_root(ctx: &Ctx, path: Option<&str>) -> ToolResult<Root> {
    let input = match path {
        Some(p) if !p.trim().is_empty() => p.to_string(),
        _ => ctx.ws.cwd().to_string_lossy().into_owned(),
    };
    Root::open(ctx.resolve_read(&input)?, "search")
}
