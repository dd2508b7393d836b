//! `rename` (issue 20 §2): a symbol renamed everywhere the language server finds it,
//! applied to every file at once or not at all, undone as a whole by `undo_edit`.

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::fsutil;
use crate::lsp::format::{self, TextEdit};
use crate::scope::ScopedPath;
use crate::text::line_index::FileStamp;
use crate::tool_name::ToolName;
use crate::tools::Ctx;
use crate::tools::boris::navigate::{self, Asked, PositionArgs};
use crate::tools::engine::code;
use crate::tools::engine::schema::{define, writes};
use lsp_types::request as req;
use lsp_types::{DocumentChanges, Url, WorkspaceEdit};
use rmcp::model::{CallToolResult, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameArgs {
    #[serde(flatten)]
    pub at: PositionArgs,
    /// The new name.
    pub new_name: String,
    /// Write nothing; return the diff of every file the rename would change.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub fn tool() -> Tool {
    define::<RenameArgs>(
        ToolName::Rename,
        "Rename a symbol everywhere",
        "Rename the symbol at a position everywhere its language server finds it (its \
         definition, every use, imports), across files. Give the position as line (1-based) \
         and symbol (the name as written on that line), and new_name. Every file is written \
         at once or none is; the result is the diff of each. dry_run: true writes nothing \
         and returns the diffs. undo_edit of any changed file undoes the whole rename. The \
         file named must have been viewed in this session; no file may have changed since \
         it was viewed.",
        writes("Rename a symbol everywhere", false),
    )
}

/// One file of a rename: what it held and what it will hold.
struct Change {
    path: ScopedPath,
    meta: std::fs::Metadata,
    before: Vec<u8>,
    after: String,
    edits: usize,
}

/// The server's edits per file, in its coordinates.
fn edits_by_file(edit: WorkspaceEdit) -> ToolResult<BTreeMap<Url, Vec<TextEdit>>> {
    let mut by_file: BTreeMap<Url, Vec<TextEdit>> = BTreeMap::new();
    let mut add = |uri: Url, e: &lsp_types::TextEdit| {
        by_file.entry(uri).or_default().push(TextEdit {
            start: (e.range.start.line, e.range.start.character),
            end: (e.range.end.line, e.range.end.character),
            new_text: e.new_text.clone(),
        });
    };
    if let Some(changes) = edit.document_changes {
        let docs = match changes {
            DocumentChanges::Edits(docs) => docs,
            DocumentChanges::Operations(ops) => {
                let mut docs = Vec::new();
                for op in ops {
                    match op {
                        lsp_types::DocumentChangeOperation::Edit(d) => docs.push(d),
                        lsp_types::DocumentChangeOperation::Op(_) => {
                            return Err(ToolError::invalid(
                                "the language server's rename also creates, moves or deletes \
                                 files, which Boris does not do for it; nothing was written",
                            ));
                        }
                    }
                }
                docs
            }
        };
        for d in docs {
            for e in &d.edits {
                let e = match e {
                    lsp_types::OneOf::Left(e) => e,
                    lsp_types::OneOf::Right(a) => &a.text_edit,
                };
                add(d.text_document.uri.clone(), e);
            }
        }
    } else if let Some(changes) = edit.changes {
        for (uri, edits) in changes {
            for e in &edits {
                add(uri.clone(), e);
            }
        }
    }
    Ok(by_file)
}

pub fn run(ctx: &Ctx, args: RenameArgs, ct: &CancellationToken) -> ToolResult<CallToolResult> {
    let new_name = args.new_name.trim().to_string();
    if new_name.is_empty() {
        return Err(ToolError::invalid("new_name must not be empty"));
    }
    let dry_run = args.dry_run.unwrap_or(false);
    navigate::with_restart(ctx, &args.at, ct, |a| {
        // The file named is edited like any other: it must have been viewed.
        let (content, meta) =
            crate::tools::engine::edit::read_for_edit(ctx, &a.target.path, "rename in")?;
        drop((content, meta));
        let params = lsp_types::RenameParams {
            text_document_position: lsp_types::TextDocumentPositionParams {
                text_document: lsp_types::TextDocumentIdentifier { uri: a.uri.clone() },
                position: a.position,
            },
            new_name: new_name.clone(),
            work_done_progress_params: Default::default(),
        };
        let (resp, readiness) = navigate::request::<req::Rename>(a, params, ct)?;
        let Some(edit) = resp else {
            return Err(ToolError::invalid(format!(
                "the language server cannot rename {} (not a symbol it can rename)",
                a.symbol
            )));
        };
        let by_file = edits_by_file(edit)?;
        if by_file.is_empty() {
            return Err(ToolError::invalid(format!(
                "the language server found nothing to rename for {}",
                a.symbol
            )));
        }
        let files = resolve_files(ctx, by_file)?;
        // Locked all at once, by stripe: two files on one stripe must not lock it twice
        // (a call that waited on itself forever, seen in CI as a rename that never
        // answered once the language server had).
        let _locks = ctx
            .shared
            .edit_locks
            .lock_many(files.iter().map(|(p, _)| p.real.as_path()));
        let changes = files
            .iter()
            .map(|(path, edits)| prepare_change(ctx, a, path, edits))
            .collect::<ToolResult<Vec<Change>>>()?;
        let (what, diffs) = describe(ctx, &changes);
        let lang = a.target.language.name.clone();
        if dry_run {
            return Ok(code::finish(
                format!(
                    "Dry run: nothing was written. Renaming {} to {new_name} would make {what}:\n{diffs}",
                    a.symbol
                ),
                &lang,
                readiness,
                None,
            ));
        }
        write_all(&changes)?;
        record_and_sync(ctx, a, changes);
        Ok(code::finish(
            format!(
                "Renamed {} to {new_name}: {what} (undo_edit of any of them undoes the whole \
                 rename):\n{diffs}",
                a.symbol
            ),
            &lang,
            readiness,
            None,
        ))
    })
}

/// Every file the server named, resolved and checked before any is read for writing,
/// in path order (the order their locks are taken in).
fn resolve_files(
    ctx: &Ctx,
    by_file: BTreeMap<Url, Vec<TextEdit>>,
) -> ToolResult<Vec<(ScopedPath, Vec<TextEdit>)>> {
    let mut files: Vec<(ScopedPath, Vec<TextEdit>)> = Vec::new();
    for (uri, edits) in by_file {
        let path: PathBuf = uri.to_file_path().map_err(|_| {
            ToolError::invalid(format!("the server named {uri}, which is not a file"))
        })?;
        let scoped = ctx
            .resolve(&path.to_string_lossy())
            .map_err(|e| ToolError::new(e.code, format!("{} Nothing was renamed.", e.message)))?;
        files.push((scoped, edits));
    }
    files.sort_by(|a, b| a.0.real.cmp(&b.0.real));
    Ok(files)
}

/// One file read (under its lock) and checked: within the size limit, UTF-8, what
/// the server holds of it, unchanged since viewed; then the server's edits applied.
fn prepare_change(
    ctx: &Ctx,
    a: &Asked,
    path: &ScopedPath,
    edits: &[TextEdit],
) -> ToolResult<Change> {
    let meta = fsutil::regular_file_meta(&path.real, &path.shown)?;
    fsutil::check_size(
        meta.len(),
        ctx.max_file_size(),
        &path.shown,
        "renaming in",
        "raise --max-file-size",
    )?;
    let before = fsutil::read_file(&path.real, &path.shown, meta.len())?;
    let text = std::str::from_utf8(&before)
        .map_err(|_| ToolError::invalid(format!("{} is not UTF-8 text", path.shown.display())))?;
    // The server computed its edits from what it holds of an open file: that must
    // be what the disk holds now.
    if let Some((_, held)) = a.server.open_text(&path.real)
        && *held != *text
    {
        return Err(ToolError::new(
            ErrorCode::FileChanged,
            format!(
                "{} changed on disk while the rename was computed; nothing was \
                 renamed, try again",
                path.shown.display()
            ),
        ));
    }
    // A file the agent viewed must not have changed since (view-before-edit);
    // one never viewed is edited as the server found it.
    if ctx.shared.require_view {
        match ctx.ws.check_viewed(
            &path.real,
            &path.shown,
            FileStamp::of(&meta),
            &before,
            "rename in",
        ) {
            Ok(()) => {}
            Err(e) if e.code == ErrorCode::FileNotViewed => {}
            Err(e) => return Err(e),
        }
    }
    let after = format::apply_edits(text, edits, a.server.encoding).map_err(|e| {
        ToolError::invalid(format!(
            "{e} for {}; nothing was renamed",
            path.shown.display()
        ))
    })?;
    Ok(Change {
        path: path.clone(),
        meta,
        before,
        after,
        edits: edits.len(),
    })
}

/// "N edits in M files", and the diff of every file.
fn describe(ctx: &Ctx, changes: &[Change]) -> (String, String) {
    let total: usize = changes.iter().map(|c| c.edits).sum();
    let mut diffs = String::new();
    for c in changes {
        diffs.push_str(&crate::tools::engine::edit::diff_text(
            ctx,
            &c.path,
            Some(&c.before),
            c.after.as_bytes(),
        ));
    }
    let what = format!(
        "{total} edit{} in {} file{}",
        if total == 1 { "" } else { "s" },
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    (what, diffs)
}

/// After the files are written: one undo group for all of them, and the server told
/// each new text of a file it covers (so its next answer is about what is on disk).
fn record_and_sync(ctx: &Ctx, a: &Asked, changes: Vec<Change>) {
    let group = ctx.ws.history().new_group();
    for c in changes {
        ctx.ws.record_write_in(
            &c.path.real,
            Some(c.before),
            c.after.as_bytes(),
            Some(group),
        );
        if let Some((language, ext)) = code::covering(ctx, &c.path.real) {
            let stamp = crate::beneath::metadata(&c.path.real)
                .ok()
                .map(|m| FileStamp::of(&m));
            let _ = a.server.put(
                &c.path.real,
                &language.language_id(&ext),
                Arc::from(c.after.as_str()),
                stamp,
                true,
            );
        }
    }
}

/// Writes every file atomically; if one fails, puts back those already written, so the
/// rename is all or nothing.
fn write_all(changes: &[Change]) -> ToolResult<()> {
    for (i, c) in changes.iter().enumerate() {
        if let Err(e) = fsutil::atomic_write_over(
            &c.path.real,
            &c.path.shown,
            c.after.as_bytes(),
            Some(&c.meta),
        ) {
            for done in &changes[..i] {
                let _ = fsutil::atomic_write_over(
                    &done.path.real,
                    &done.path.shown,
                    &done.before,
                    Some(&done.meta),
                );
            }
            return Err(ToolError::new(
                e.code,
                format!(
                    "{} Nothing was renamed: the files already written were put back.",
                    e.message
                ),
            ));
        }
    }
    Ok(())
}
