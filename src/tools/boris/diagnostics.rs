//! `diagnostics` and `language_servers` (issue 20 §2, §4): what the language server
//! reports of one file or of every file this session changed, and which servers run.

use crate::error::{ToolError, ToolResult};
use crate::lsp::format::{self, Diag, MAX_DIAGNOSTICS, Severity};
use crate::lsp::{self, Readiness};
use crate::tool_name::ToolName;
use crate::tools::engine::code;
use crate::tools::engine::schema::{define, read_only};
use crate::tools::{Ctx, text_result};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Lines one result shows at most, over every file.
const MAX_LINES: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiagnosticsArgs {
    /// The file to check. Without it: every file this session changed (edited, created,
    /// renamed) that a language server covers.
    #[serde(default)]
    pub path: Option<String>,
    /// The least severity shown: error, warning, info or hint (default: hint, all).
    #[serde(default)]
    pub severity: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct LanguageServersArgs {}

pub fn tool() -> Tool {
    define::<DiagnosticsArgs>(
        ToolName::Diagnostics,
        "Show a file's errors and warnings",
        "The errors, warnings and hints the file's language server reports (type errors, \
         undefined names, unused imports…), one per line as path:line:col: severity: \
         message [code]; at most 50 per file. Without path: every file this session \
         changed. Ends with a status line: lsp: LANGUAGE ready|indexing|partial|unavailable.",
        read_only("Show a file's errors and warnings"),
    )
}

pub fn servers_tool() -> Tool {
    define::<LanguageServersArgs>(
        ToolName::LanguageServers,
        "List the language servers",
        "The language servers of this session (language, command, workspace root, state, \
         pid, memory, open files) and those Boris would start for other languages or cannot \
         find (with what to install).",
        read_only("List the language servers"),
    )
}

fn parse_severity(s: Option<&str>) -> ToolResult<Severity> {
    match s.map(str::to_ascii_lowercase).as_deref() {
        None | Some("hint" | "all") => Ok(Severity::Hint),
        Some("info" | "information") => Ok(Severity::Info),
        Some("warning" | "warn") => Ok(Severity::Warning),
        Some("error") => Ok(Severity::Error),
        Some(other) => Err(ToolError::invalid(format!(
            "severity {other:?} is not error, warning, info or hint"
        ))),
    }
}

/// The diagnostics of one file, waited for up to `until`; `None` if the server has not
/// reported on its current content in time.
fn of_file(
    ctx: &Ctx,
    t: &code::Target,
    until: Instant,
    ct: &CancellationToken,
) -> ToolResult<(Option<Vec<Diag>>, Readiness)> {
    let server = code::server(ctx, t, until, ct)?;
    let seq = server.seq();
    let synced = code::sync(ctx, &server, t)?;
    let (s, held) = (server.clone(), synced.clone());
    let after = if synced.changed { seq } else { 0 };
    let published = code::run(ct, until, async move {
        s.diagnostics(&held, after, until).await
    })?;
    let readiness = if server.busy() {
        Readiness::Indexing
    } else {
        Readiness::Ready
    };
    Ok(match published {
        Some(p) => {
            let mut ds: Vec<Diag> = p
                .diagnostics
                .iter()
                .map(|d| format::diag(&synced.text, d, server.encoding))
                .collect();
            format::sort(&mut ds);
            (Some(ds), readiness)
        }
        None => (None, Readiness::Indexing),
    })
}

fn count(ds: &[Diag]) -> String {
    let n = |s: Severity| ds.iter().filter(|d| d.severity == s).count();
    let mut parts = Vec::new();
    for (s, word) in [
        (Severity::Error, "error"),
        (Severity::Warning, "warning"),
        (Severity::Info, "info"),
        (Severity::Hint, "hint"),
    ] {
        match n(s) {
            0 => {}
            1 => parts.push(format!("1 {word}")),
            k => parts.push(format!("{k} {word}s")),
        }
    }
    if parts.is_empty() {
        "no diagnostics".into()
    } else {
        parts.join(", ")
    }
}

pub fn run(ctx: &Ctx, args: DiagnosticsArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    let min = parse_severity(args.severity.as_deref())?;
    let until = Instant::now() + ctx.shared.config.lsp_timeout;
    let targets: Vec<code::Target> = match &args.path {
        Some(p) => vec![code::target(ctx, p)?],
        None => {
            let files = ctx.ws.history().files();
            files
                .into_iter()
                .filter(|f| f.is_file() && code::covering(ctx, f).is_some())
                .filter_map(|f| code::target(ctx, &f.to_string_lossy()).ok())
                .collect()
        }
    };
    if targets.is_empty() {
        return Ok(text_result(format!(
            "No file this session changed is covered by a language server; give path to \
             check one.\n{}",
            code::status_line(None, Readiness::Ready, None)
        )));
    }
    let mut out = Vec::new();
    let mut readiness = Readiness::Ready;
    let mut languages: Vec<String> = Vec::new();
    let mut shown = 0usize;
    for t in &targets {
        if !languages.contains(&t.language.name) {
            languages.push(t.language.name.clone());
        }
        let (ds, r) = match of_file(ctx, t, until, ct) {
            Ok(x) => x,
            Err(e) if targets.len() > 1 => {
                readiness = Readiness::Partial;
                out.push(format!(
                    "{}: {}",
                    t.label,
                    e.message.lines().next().unwrap_or_default()
                ));
                continue;
            }
            Err(e) => return Err(e),
        };
        if r != Readiness::Ready && readiness == Readiness::Ready {
            readiness = r;
        }
        let Some(ds) = ds else {
            out.push(format!(
                "{}: the server has not reported on it yet (it may still be indexing)",
                t.label
            ));
            continue;
        };
        let ds = format::at_least(ds, min);
        out.push(format!("{}: {}", t.label, count(&ds)));
        for d in ds.iter().take(MAX_DIAGNOSTICS) {
            if shown == MAX_LINES {
                break;
            }
            out.push(format!("  {}", format::diag_line(&t.label, d)));
            shown += 1;
        }
        if ds.len() > MAX_DIAGNOSTICS {
            out.push(format!("  … and {} more", ds.len() - MAX_DIAGNOSTICS));
        }
    }
    if shown == MAX_LINES {
        out.push(format!(
            "(cut at {MAX_LINES} lines; give path to see one file's)"
        ));
    }
    Ok(code::finish(
        out.join("\n"),
        &languages.join(", "),
        readiness,
        None,
    ))
}

pub fn servers(ctx: &Ctx, _args: LanguageServersArgs) -> ToolResult<CallToolResult> {
    let mut out = Vec::new();
    let report = ctx.ws.lsp.report();
    if report.is_empty() {
        out.push("No language server runs in this session yet.".to_string());
    }
    for r in &report {
        let mut line = format!(
            "{}: `{}`, root {}, {}",
            r.language,
            r.command,
            r.root.display(),
            r.state
        );
        if let Some(pid) = r.pid {
            line.push_str(&format!(", pid {pid}"));
        }
        if let Some(rss) = r.rss {
            line.push_str(&format!(", {:.1} MiB", rss as f64 / (1024.0 * 1024.0)));
        }
        line.push_str(&format!(
            ", {} open file{}",
            r.open_files,
            if r.open_files == 1 { "" } else { "s" }
        ));
        if r.restarts > 0 {
            line.push_str(", restarted once after it exited");
        }
        out.push(line);
    }
    out.push(format!(
        "Available: {}.",
        lsp::summary(&ctx.shared.config.languages)
    ));
    Ok(text_result(out.join("\n")))
}
