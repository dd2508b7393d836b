//! `definition`, `references`, `hover` and `symbols` (issue 20 §2): questions about code
//! answered by its language server, at a position a model can give (a line and the
//! symbol's name on it).

use crate::error::{ToolError, ToolResult};
use crate::lsp::format::{self, MAX_LOCATIONS};
use crate::lsp::position::{self, Encoding};
use crate::lsp::{Readiness, client::Server};
use crate::tool_name::ToolName;
use crate::tools::Ctx;
use crate::tools::engine::code::{self, Target};
use crate::tools::engine::schema::{define, read_only};
use lsp_types::request as req;
use lsp_types::{Range, Url};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// A position as a model gives it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PositionArgs {
    /// The file: absolute, or relative to the working directory.
    pub path: String,
    /// The line (1-based, as view shows it). Without it: the first line where symbol
    /// occurs.
    #[serde(default)]
    pub line: Option<usize>,
    /// The symbol's name as written on that line (e.g. a function name); its first
    /// occurrence on the line unless occurrence says otherwise. Give this or column.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Which occurrence of symbol on the line (1-based; default 1).
    #[serde(default)]
    pub occurrence: Option<usize>,
    /// The column (1-based, in characters), when no symbol is given.
    #[serde(default)]
    pub column: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReferencesArgs {
    #[serde(flatten)]
    pub at: PositionArgs,
    /// Include the declaration itself (default true).
    #[serde(default)]
    pub include_declaration: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SymbolsArgs {
    /// A file: list its symbols (classes, functions, methods…) as an outline.
    #[serde(default)]
    pub path: Option<String>,
    /// A name (or part of one) to search for across the workspace; with path, the
    /// search goes to that file's language server, else to every one running.
    #[serde(default)]
    pub query: Option<String>,
}

pub fn definition_tool() -> Tool {
    define::<PositionArgs>(
        ToolName::Definition,
        "Go to a symbol's definition",
        "Find where the symbol at a position is defined, from the file's language server \
         (pyright, typescript-language-server, gopls, rust-analyzer, clangd). Give the \
         position as line (1-based) and symbol (the name as written on that line); column \
         (1-based) instead of symbol also works. Answers path:line:col and the line's text, \
         then a status line: lsp: LANGUAGE ready|indexing|partial|unavailable.",
        read_only("Go to a symbol's definition"),
    )
}

pub fn references_tool() -> Tool {
    define::<ReferencesArgs>(
        ToolName::References,
        "Find a symbol's references",
        "Find every reference to the symbol at a position across the workspace, from the \
         file's language server: calls and uses, not comments or other symbols of the same \
         name. Give the position as line (1-based) and symbol (the name as written on that \
         line); column (1-based) instead of symbol also works. One path:line:col and line \
         text per reference (at most 200), then the status line.",
        read_only("Find a symbol's references"),
    )
}

pub fn hover_tool() -> Tool {
    define::<PositionArgs>(
        ToolName::Hover,
        "Show a symbol's type and docs",
        "Show the type, signature and documentation of the symbol at a position, as an \
         editor's hover does, from the file's language server. Give the position as line \
         (1-based) and symbol (the name as written on that line); column (1-based) instead \
         of symbol also works.",
        read_only("Show a symbol's type and docs"),
    )
}

pub fn symbols_tool() -> Tool {
    define::<SymbolsArgs>(
        ToolName::Symbols,
        "List or search symbols",
        "With path: the file's outline (classes, functions, methods, variables, nested, with \
         their lines). With query: symbols whose name matches, across the workspace (with \
         path, from that file's language server; without, from every one this session \
         runs). At most 200 lines, then the status line.",
        read_only("List or search symbols"),
    )
}

/// A located line for results: `path:line:col: text`.
pub fn located(ctx: &Ctx, uri: &Url, range: &Range, enc: Encoding, cache: &mut Files) -> String {
    let Ok(path) = uri.to_file_path() else {
        return format!(
            "{uri}:{}:{}",
            range.start.line + 1,
            range.start.character + 1
        );
    };
    let shown = code::label(ctx, &path);
    match cache.line(ctx, &path, range.start.line as usize) {
        Some(line) => {
            let col = position::units_to_chars(&line, range.start.character, enc) + 1;
            let text = line.trim();
            let text: String = text.chars().take(200).collect();
            format!("{shown}:{}:{col}: {text}", range.start.line + 1)
        }
        None => format!(
            "{shown}:{}:{}",
            range.start.line + 1,
            range.start.character + 1
        ),
    }
}

/// Files read for the lines results show: each once, only those the scope lets a view
/// read (a definition in the standard library outside it is named, not quoted).
#[derive(Default)]
pub struct Files(HashMap<PathBuf, Option<Arc<str>>>);

impl Files {
    pub fn line(&mut self, ctx: &Ctx, path: &Path, line0: usize) -> Option<String> {
        let text = self
            .0
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let scoped = ctx.resolve_read(&path.to_string_lossy()).ok()?;
                code::read_text(ctx, &scoped).ok().map(|(t, _)| t)
            })
            .clone()?;
        position::line_text(&text, line0).map(str::to_string)
    }
}

/// Where a server's answer points: `(uri, range)` pairs in a stable order.
pub fn locations(resp: Option<lsp_types::GotoDefinitionResponse>) -> Vec<(Url, Range)> {
    use lsp_types::GotoDefinitionResponse as G;
    let mut out: Vec<(Url, Range)> = match resp {
        None => Vec::new(),
        Some(G::Scalar(l)) => vec![(l.uri, l.range)],
        Some(G::Array(ls)) => ls.into_iter().map(|l| (l.uri, l.range)).collect(),
        Some(G::Link(ls)) => ls
            .into_iter()
            .map(|l| (l.target_uri, l.target_selection_range))
            .collect(),
    };
    out.sort_by(|a, b| {
        (a.0.as_str(), a.1.start.line, a.1.start.character).cmp(&(
            b.0.as_str(),
            b.1.start.line,
            b.1.start.character,
        ))
    });
    out.dedup();
    out
}

/// A started, synced server and the position asked about.
pub struct Asked {
    pub target: Target,
    pub server: Arc<Server>,
    pub synced: crate::lsp::client::Synced,
    /// The server's change counter before the document was synced.
    pub seq: u64,
    pub position: lsp_types::Position,
    pub uri: Url,
    pub until: Instant,
    pub symbol: String,
}

/// The common start of a positional call: resolve, start, sync, find the position.
pub fn ask(
    ctx: &Ctx,
    at: &PositionArgs,
    until: Instant,
    ct: &CancellationToken,
) -> ToolResult<Asked> {
    let target = code::target(ctx, &at.path)?;
    tracing::debug!(target: "boris::lsp::call", path = %target.label, "asking for the server");
    let server = code::server(ctx, &target, until, ct)?;
    let seq = server.seq();
    let synced = code::sync(ctx, &server, &target)?;
    tracing::debug!(target: "boris::lsp::call", version = synced.version, changed = synced.changed, "document synced");
    let line = match (at.line, at.symbol.as_deref().filter(|s| !s.is_empty())) {
        (Some(l), _) => l,
        (None, Some(symbol)) => {
            position::first_line_with(&synced.text, symbol).ok_or_else(|| {
                ToolError::invalid(format!(
                    "{symbol:?} does not occur in {}; give line and symbol as view shows them",
                    target.label
                ))
            })?
        }
        (None, None) => {
            return Err(ToolError::invalid(
                "give line (1-based) and symbol (the name on that line), or line and column",
            ));
        }
    };
    let position = code::position(
        &target,
        &synced.text,
        line,
        at.symbol.as_deref(),
        at.occurrence,
        at.column,
        server.encoding,
    )?;
    let symbol = match at.symbol.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => s.to_string(),
        None => format!("the symbol at {line}:{}", at.column.unwrap_or(1)),
    };
    Ok(Asked {
        target,
        server,
        position,
        uri: synced.uri.clone(),
        synced,
        seq,
        until,
        symbol,
    })
}

/// Sends `R` for `a`, answering a dead or silent server as the error it is.
pub fn request<R: lsp_types::request::Request>(
    a: &Asked,
    params: R::Params,
    ct: &CancellationToken,
) -> ToolResult<(R::Result, Readiness)>
where
    R::Params: Clone + Send + 'static,
    R::Result: Send + 'static,
{
    let readiness = code::settle(&a.server, &a.synced, a.seq, a.until, ct)?;
    tracing::debug!(target: "boris::lsp::call", method = R::METHOD, readiness = readiness.as_str(), "settled; sending");
    let (server, until) = (a.server.clone(), a.until);
    let answer = code::run(ct, until, async move {
        server.request::<R>(params, until).await
    })?;
    tracing::debug!(target: "boris::lsp::call", method = R::METHOD, ok = answer.is_ok(), "answered");
    answer.map(|r| (r, readiness)).map_err(|e| {
        let r = match e {
            crate::lsp::client::Failure::TimedOut => Readiness::Indexing,
            _ => Readiness::Unavailable,
        };
        code::unavailable(&e.to_string(), Some(&a.target.language.name), r)
    })
}

/// Runs a positional call, restarting a server that died under it once.
pub fn with_restart<T>(
    ctx: &Ctx,
    at: &PositionArgs,
    ct: &CancellationToken,
    call: impl Fn(&Asked) -> ToolResult<T>,
) -> ToolResult<T> {
    // One deadline for the call, the restart included: a crash does not buy a second
    // --lsp-timeout.
    let until = Instant::now() + ctx.shared.config.lsp_timeout;
    let a = ask(ctx, at, until, ct)?;
    match call(&a) {
        Err(_) if !a.server.is_alive() => {
            // The crash is noticed by the next ask, which starts it again (once).
            let a = ask(ctx, at, until, ct)?;
            call(&a)
        }
        other => other,
    }
}

fn text_doc(a: &Asked) -> lsp_types::TextDocumentPositionParams {
    lsp_types::TextDocumentPositionParams {
        text_document: lsp_types::TextDocumentIdentifier { uri: a.uri.clone() },
        position: a.position,
    }
}

pub fn definition(
    ctx: &Ctx,
    args: PositionArgs,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    with_restart(ctx, &args, ct, |a| {
        let params = lsp_types::GotoDefinitionParams {
            text_document_position_params: text_doc(a),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let (resp, r) = request::<req::GotoDefinition>(a, params, ct)?;
        let locs = locations(resp);
        let text = list(ctx, a, &locs, |n| match n {
            0 => format!("No definition found for {}.", a.symbol),
            1 => format!("Definition of {}:", a.symbol),
            n => format!("{n} definitions of {}:", a.symbol),
        });
        Ok(code::finish(text, &a.target.language.name, r, None))
    })
}

pub fn references(
    ctx: &Ctx,
    args: ReferencesArgs,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    let include = args.include_declaration.unwrap_or(true);
    with_restart(ctx, &args.at, ct, |a| {
        let params = lsp_types::ReferenceParams {
            text_document_position: text_doc(a),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: lsp_types::ReferenceContext {
                include_declaration: include,
            },
        };
        let (resp, r) = request::<req::References>(a, params, ct)?;
        let locs = locations(resp.map(lsp_types::GotoDefinitionResponse::Array));
        let files = {
            let mut f: Vec<&str> = locs.iter().map(|l| l.0.as_str()).collect();
            f.dedup();
            f.len()
        };
        let text = list(ctx, a, &locs, |n| match n {
            0 => format!("No references to {} found.", a.symbol),
            1 => format!("1 reference to {}:", a.symbol),
            n => format!(
                "{n} references to {} in {files} file{}:",
                a.symbol,
                if files == 1 { "" } else { "s" }
            ),
        });
        Ok(code::finish(text, &a.target.language.name, r, None))
    })
}

fn list(ctx: &Ctx, a: &Asked, locs: &[(Url, Range)], header: impl Fn(usize) -> String) -> String {
    let mut files = Files::default();
    let mut out = vec![header(locs.len())];
    for (uri, range) in locs.iter().take(MAX_LOCATIONS) {
        out.push(located(ctx, uri, range, a.server.encoding, &mut files));
    }
    if locs.len() > MAX_LOCATIONS {
        out.push(format!("… and {} more", locs.len() - MAX_LOCATIONS));
    }
    out.join("\n")
}

pub fn hover(ctx: &Ctx, args: PositionArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    with_restart(ctx, &args, ct, |a| {
        let params = lsp_types::HoverParams {
            text_document_position_params: text_doc(a),
            work_done_progress_params: Default::default(),
        };
        let (resp, r) = request::<req::HoverRequest>(a, params, ct)?;
        let text = match resp {
            Some(h) if !format::hover_text(&h.contents).is_empty() => {
                format::hover_text(&h.contents)
            }
            _ => format!("No hover information for {}.", a.symbol),
        };
        Ok(code::finish(text, &a.target.language.name, r, None))
    })
}

/// Outline lines of a document's symbols.
pub fn outline(resp: Option<lsp_types::DocumentSymbolResponse>) -> Vec<String> {
    use lsp_types::DocumentSymbolResponse as D;
    let mut out = Vec::new();
    fn walk(out: &mut Vec<String>, syms: &[lsp_types::DocumentSymbol], depth: usize) {
        for s in syms {
            let detail = s
                .detail
                .as_deref()
                .filter(|d| !d.is_empty())
                .map(|d| format!(" {}", d.lines().next().unwrap_or_default()))
                .unwrap_or_default();
            let (a, b) = (s.range.start.line + 1, s.range.end.line + 1);
            let lines = if a == b {
                format!("line {a}")
            } else {
                format!("lines {a}-{b}")
            };
            out.push(format!(
                "{}{} {}{detail} ({lines})",
                "  ".repeat(depth),
                format::kind_name(s.kind),
                s.name
            ));
            if let Some(children) = &s.children {
                walk(out, children, depth + 1);
            }
        }
    }
    match resp {
        None => {}
        Some(D::Nested(syms)) => walk(&mut out, &syms, 0),
        #[allow(deprecated)]
        Some(D::Flat(syms)) => {
            for s in syms {
                let line = s.location.range.start.line;
                let container = s
                    .container_name
                    .map(|c| format!(" in {c}"))
                    .unwrap_or_default();
                out.push(format!(
                    "{} {}{container} (line {})",
                    format::kind_name(s.kind),
                    s.name,
                    line + 1
                ));
            }
        }
    }
    out
}

pub fn symbols(ctx: &Ctx, args: SymbolsArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    let query = args.query.filter(|q| !q.trim().is_empty());
    match (args.path, query) {
        (None, None) => Err(ToolError::invalid(
            "give path (a file's outline) or query (a name to search the workspace for)",
        )),
        (Some(path), None) => {
            let target = code::target(ctx, &path)?;
            let until = Instant::now() + ctx.shared.config.lsp_timeout;
            let server = code::server(ctx, &target, until, ct)?;
            let seq = server.seq();
            let synced = code::sync(ctx, &server, &target)?;
            let r = code::settle(&server, &synced, seq, until, ct)?;
            let params = lsp_types::DocumentSymbolParams {
                text_document: lsp_types::TextDocumentIdentifier {
                    uri: synced.uri.clone(),
                },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let s = server.clone();
            let resp = code::run(ct, until, async move {
                s.request::<req::DocumentSymbolRequest>(params, until).await
            })?
            .map_err(|e| code::unavailable(&e.to_string(), Some(&target.language.name), r))?;
            let lines = outline(resp);
            let mut out = vec![if lines.is_empty() {
                format!("No symbols in {}.", target.label)
            } else {
                format!("Symbols in {}:", target.label)
            }];
            let n = lines.len();
            out.extend(lines.into_iter().take(MAX_LOCATIONS));
            if n > MAX_LOCATIONS {
                out.push(format!("… and {} more", n - MAX_LOCATIONS));
            }
            Ok(code::finish(out.join("\n"), &target.language.name, r, None))
        }
        (path, Some(query)) => workspace_symbols(ctx, path, &query, ct),
    }
}

fn workspace_symbols(
    ctx: &Ctx,
    path: Option<String>,
    query: &str,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    let until = Instant::now() + ctx.shared.config.lsp_timeout;
    let mut readiness = Readiness::Ready;
    let servers: Vec<Arc<Server>> = match &path {
        Some(p) => {
            let t = code::target(ctx, p)?;
            let s = code::server(ctx, &t, until, ct)?;
            let seq = s.seq();
            let synced = code::sync(ctx, &s, &t)?;
            readiness = code::settle(&s, &synced, seq, until, ct)?;
            vec![s]
        }
        None => ctx.ws.lsp.running(),
    };
    if servers.is_empty() {
        return Err(code::unavailable(
            "no language server runs in this session yet; give path (a file of the language \
             to search) to start one",
            None,
            Readiness::Unavailable,
        ));
    }
    let mut found: Vec<(String, String)> = Vec::new();
    let mut languages = Vec::new();
    for server in servers {
        languages.push(server.language.clone());
        code::refresh_open_docs(ctx, &server);
        if code::settle_idle(&server, until, ct)? == Readiness::Indexing {
            readiness = Readiness::Indexing;
        }
        let params = lsp_types::WorkspaceSymbolParams {
            query: query.to_string(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let s = server.clone();
        let resp = code::run(ct, until, async move {
            s.request::<req::WorkspaceSymbolRequest>(params, until)
                .await
        })?;
        let resp = match resp {
            Ok(r) => r,
            Err(_) => {
                readiness = Readiness::Partial;
                continue;
            }
        };
        let mut files = Files::default();
        let items: Vec<(String, SymbolKindName, Url, Range, Option<String>)> = match resp {
            None => Vec::new(),
            Some(lsp_types::WorkspaceSymbolResponse::Flat(v)) => v
                .into_iter()
                .map(|s| {
                    (
                        s.name,
                        format::kind_name(s.kind),
                        s.location.uri,
                        s.location.range,
                        s.container_name,
                    )
                })
                .collect(),
            Some(lsp_types::WorkspaceSymbolResponse::Nested(v)) => v
                .into_iter()
                .filter_map(|s| match s.location {
                    lsp_types::OneOf::Left(l) => Some((
                        s.name,
                        format::kind_name(s.kind),
                        l.uri,
                        l.range,
                        s.container_name,
                    )),
                    lsp_types::OneOf::Right(_) => None,
                })
                .collect(),
        };
        for (name, kind, uri, range, container) in items {
            let at = located(ctx, &uri, &range, server.encoding, &mut files);
            let loc = at.split(": ").next().unwrap_or(&at).to_string();
            let container = container
                .filter(|c| !c.is_empty())
                .map(|c| format!(" in {c}"))
                .unwrap_or_default();
            found.push((loc.clone(), format!("{kind} {name}{container} {loc}")));
        }
    }
    found.sort();
    found.dedup();
    let n = found.len();
    let mut out = vec![match n {
        0 => format!("No symbols match {query:?}."),
        1 => format!("1 symbol matches {query:?}:"),
        n => format!("{n} symbols match {query:?}:"),
    }];
    out.extend(found.into_iter().take(MAX_LOCATIONS).map(|(_, l)| l));
    if n > MAX_LOCATIONS {
        out.push(format!("… and {} more", n - MAX_LOCATIONS));
    }
    Ok(code::finish(
        out.join("\n"),
        &languages.join(", "),
        readiness,
        None,
    ))
}

type SymbolKindName = &'static str;
