//! Claude Code's `LSP` tool (`--tool-profile claude-code`, issue 20 §2): its nine
//! operations with its parameters (`operation`, `filePath`, `line`, `character`, 1-based;
//! `query` for `workspaceSymbol`) and its answers' shapes ("Defined in PATH:L:C", "Found
//! N references across M files:"…), over the same engine as Boris's own tools. Every
//! answer ends with the status line (`lsp: LANGUAGE ready`).

use crate::error::{ToolError, ToolResult};
use crate::lsp::format;
use crate::tool_name::ToolName;
use crate::tools::Ctx;
use crate::tools::boris::navigate::{self, Asked, PositionArgs};
use crate::tools::engine::code;
use crate::tools::engine::schema::{define, read_only};
use lsp_types::request as req;
use lsp_types::{CallHierarchyItem, Range, Url};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LspArgs {
    /// The LSP operation to perform: goToDefinition, findReferences, hover,
    /// documentSymbol, workspaceSymbol, goToImplementation, prepareCallHierarchy,
    /// incomingCalls or outgoingCalls.
    pub operation: String,
    /// The absolute or relative path to the file.
    pub file_path: String,
    /// The line number (1-based, as shown in editors).
    pub line: usize,
    /// The character offset (1-based, as shown in editors).
    pub character: usize,
    /// For workspaceSymbol: the symbol name or partial name to search for.
    #[serde(default)]
    pub query: Option<String>,
}

pub fn tool() -> Tool {
    define::<LspArgs>(
        ToolName::CcLsp,
        "LSP",
        "Interact with Language Server Protocol (LSP) servers to get code intelligence \
         features. Supported operations: goToDefinition (where a symbol is defined), \
         findReferences (all references to a symbol), hover (documentation and type info), \
         documentSymbol (all symbols in a document), workspaceSymbol (symbols matching query \
         across the workspace), goToImplementation (implementations of an interface or \
         abstract method), prepareCallHierarchy (the call hierarchy item at a position), \
         incomingCalls (functions that call the function at a position), outgoingCalls \
         (functions called by it). All operations take filePath, line and character \
         (1-based, as shown in editors); workspaceSymbol also takes query. Servers: pyright, \
         typescript-language-server, gopls, rust-analyzer, clangd, found on PATH.",
        read_only("LSP"),
    )
}

const OPERATIONS: &[&str] = &[
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
];

fn at(args: &LspArgs) -> PositionArgs {
    PositionArgs {
        path: args.file_path.clone(),
        line: Some(args.line),
        symbol: None,
        occurrence: None,
        column: Some(args.character),
    }
}

/// `path:L:C`, as Claude Code prints a location.
fn loc(ctx: &Ctx, uri: &Url, r: &Range) -> String {
    let path = uri
        .to_file_path()
        .map(|p| code::label(ctx, &p))
        .unwrap_or_else(|_| uri.to_string());
    format!("{path}:{}:{}", r.start.line + 1, r.start.character + 1)
}

fn done(a: &Asked, text: String, r: crate::lsp::Readiness) -> CallToolResult {
    code::finish(text, &a.target.language.name, r, None)
}

fn definitions(ctx: &Ctx, a: &Asked, locs: &[(Url, Range)]) -> String {
    match locs {
        [] => "No definition found. This may occur if the cursor is not on a symbol, or if \
               the definition is in an external library not indexed by the LSP server."
            .into(),
        [one] => format!("Defined in {}", loc(ctx, &one.0, &one.1)),
        many => {
            let _ = a;
            let lines: Vec<String> = many
                .iter()
                .map(|l| format!("  {}", loc(ctx, &l.0, &l.1)))
                .collect();
            format!("Found {} definitions:\n{}", many.len(), lines.join("\n"))
        }
    }
}

pub fn run(ctx: &Ctx, args: LspArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    if !OPERATIONS.contains(&args.operation.as_str()) {
        return Err(ToolError::invalid(format!(
            "operation {:?} is not one of {}",
            args.operation,
            OPERATIONS.join(", ")
        )));
    }
    if args.line == 0 || args.character == 0 {
        return Err(ToolError::invalid(
            "line and character are 1-based, as shown in editors",
        ));
    }
    let p = at(&args);
    match args.operation.as_str() {
        "documentSymbol" => {
            let r = navigate::symbols(
                ctx,
                navigate::SymbolsArgs {
                    path: Some(args.file_path),
                    query: None,
                },
                ct,
            )?;
            Ok(reword_outline(r))
        }
        "workspaceSymbol" => navigate::symbols(
            ctx,
            navigate::SymbolsArgs {
                path: Some(args.file_path),
                query: Some(args.query.unwrap_or_default()).filter(|q| !q.is_empty()),
            },
            ct,
        )
        .map_err(|e| {
            if e.message.starts_with("give path") {
                ToolError::invalid(
                    "workspaceSymbol needs query: the symbol name or partial name to search for",
                )
            } else {
                e
            }
        }),
        op => navigate::with_restart(ctx, &p, ct, |a| position_op(ctx, a, op, ct)),
    }
}

/// documentSymbol in Claude Code's heading.
fn reword_outline(mut r: CallToolResult) -> CallToolResult {
    if let Some(t) = r.content.first_mut().and_then(|c| match c {
        rmcp::model::ContentBlock::Text(t) => Some(t),
        _ => None,
    }) && let Some(rest) = t.text.strip_prefix("Symbols in ")
        && let Some(nl) = rest.find('\n')
    {
        t.text = format!("Document symbols:{}", &rest[nl..]);
    }
    r
}

fn tdp(a: &Asked) -> lsp_types::TextDocumentPositionParams {
    lsp_types::TextDocumentPositionParams {
        text_document: lsp_types::TextDocumentIdentifier { uri: a.uri.clone() },
        position: a.position,
    }
}

fn position_op(
    ctx: &Ctx,
    a: &Asked,
    op: &str,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    match op {
        "goToDefinition" | "goToImplementation" => {
            let params = lsp_types::GotoDefinitionParams {
                text_document_position_params: tdp(a),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let (resp, r) = if op == "goToDefinition" {
                navigate::request::<req::GotoDefinition>(a, params, ct)?
            } else {
                navigate::request::<req::GotoImplementation>(a, params, ct)?
            };
            Ok(done(a, definitions(ctx, a, &navigate::locations(resp)), r))
        }
        "findReferences" => {
            let params = lsp_types::ReferenceParams {
                text_document_position: tdp(a),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
                context: lsp_types::ReferenceContext {
                    include_declaration: true,
                },
            };
            let (resp, r) = navigate::request::<req::References>(a, params, ct)?;
            let locs = navigate::locations(resp.map(lsp_types::GotoDefinitionResponse::Array));
            let text = match locs.as_slice() {
                [] => "No references found. This may occur if the symbol has no usages, or if \
                       the LSP server has not fully indexed the workspace."
                    .to_string(),
                [one] => format!("Found 1 reference:\n  {}", loc(ctx, &one.0, &one.1)),
                many => {
                    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
                    for (uri, range) in many {
                        let file = loc(ctx, uri, range);
                        let file = file.rsplitn(3, ':').nth(2).unwrap_or_default().to_string();
                        let entry = format!(
                            "  Line {}:{}",
                            range.start.line + 1,
                            range.start.character + 1
                        );
                        match groups.last_mut() {
                            Some((f, v)) if *f == file => v.push(entry),
                            _ => groups.push((file, vec![entry])),
                        }
                    }
                    let mut out = vec![format!(
                        "Found {} references across {} files:",
                        many.len(),
                        groups.len()
                    )];
                    for (f, v) in groups {
                        out.push(format!("\n{f}:"));
                        out.extend(v);
                    }
                    out.join("\n")
                }
            };
            Ok(done(a, text, r))
        }
        "hover" => {
            let params = lsp_types::HoverParams {
                text_document_position_params: tdp(a),
                work_done_progress_params: Default::default(),
            };
            let (resp, r) = navigate::request::<req::HoverRequest>(a, params, ct)?;
            let text = match resp.map(|h| (format::hover_text(&h.contents), h.range)) {
                Some((t, range)) if !t.is_empty() => {
                    let at = range.map_or(a.position, |r| r.start);
                    format!("Hover info at {}:{}:\n\n{t}", at.line + 1, at.character + 1)
                }
                _ => "No hover information available. This may occur if the cursor is not on a \
                      symbol, or if the LSP server has not fully indexed the file."
                    .into(),
            };
            Ok(done(a, text, r))
        }
        _ => call_hierarchy(ctx, a, op, ct),
    }
}

fn item_line(ctx: &Ctx, i: &CallHierarchyItem) -> String {
    format!(
        "{} ({}) - {}",
        i.name,
        format::kind_title(i.kind),
        loc(ctx, &i.uri, &i.selection_range)
    )
}

fn call_hierarchy(
    ctx: &Ctx,
    a: &Asked,
    op: &str,
    ct: &CancellationToken,
) -> ToolResult<CallToolResult> {
    let params = lsp_types::CallHierarchyPrepareParams {
        text_document_position_params: tdp(a),
        work_done_progress_params: Default::default(),
    };
    let (items, r) = navigate::request::<req::CallHierarchyPrepare>(a, params, ct)?;
    let items = items.unwrap_or_default();
    let Some(first) = items.first().cloned() else {
        return Ok(done(
            a,
            "No call hierarchy item found at this position".into(),
            r,
        ));
    };
    match op {
        "prepareCallHierarchy" => {
            let lines: Vec<String> = items.iter().map(|i| item_line(ctx, i)).collect();
            let text = if lines.len() == 1 {
                format!("Call hierarchy item: {}", lines[0])
            } else {
                format!(
                    "Found {} call hierarchy items:\n  {}",
                    lines.len(),
                    lines.join("\n  ")
                )
            };
            Ok(done(a, text, r))
        }
        "incomingCalls" => {
            let params = lsp_types::CallHierarchyIncomingCallsParams {
                item: first,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let (calls, r) = navigate::request::<req::CallHierarchyIncomingCalls>(a, params, ct)?;
            let calls = calls.unwrap_or_default();
            let text = calls_text(
                ctx,
                calls.iter().map(|c| (&c.from, c.from_ranges.as_slice())),
                "incoming",
                "calls at",
                "No incoming calls found (nothing calls this function)",
            );
            Ok(done(a, text, r))
        }
        _ => {
            let params = lsp_types::CallHierarchyOutgoingCallsParams {
                item: first,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let (calls, r) = navigate::request::<req::CallHierarchyOutgoingCalls>(a, params, ct)?;
            let calls = calls.unwrap_or_default();
            let text = calls_text(
                ctx,
                calls.iter().map(|c| (&c.to, c.from_ranges.as_slice())),
                "outgoing",
                "called from",
                "No outgoing calls found (this function calls nothing)",
            );
            Ok(done(a, text, r))
        }
    }
}

/// Claude Code's text for incoming or outgoing calls: each item with the positions of its
/// calls (`[calls at: 12:5, 30:9]`), or the sentence for none.
fn calls_text<'a>(
    ctx: &Ctx,
    calls: impl Iterator<Item = (&'a lsp_types::CallHierarchyItem, &'a [lsp_types::Range])>,
    direction: &str,
    at_label: &str,
    none: &str,
) -> String {
    let lines: Vec<String> = calls
        .map(|(item, ranges)| {
            let at: Vec<String> = ranges
                .iter()
                .map(|r| format!("{}:{}", r.start.line + 1, r.start.character + 1))
                .collect();
            format!("  {} [{at_label}: {}]", item_line(ctx, item), at.join(", "))
        })
        .collect();
    if lines.is_empty() {
        none.to_string()
    } else {
        format!(
            "Found {} {direction} call{}:\n{}",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            lines.join("\n")
        )
    }
}
