//! What the code-intelligence tools share (issue 20): which server covers a file, how to
//! start it in the session's sandbox, a model's position on a line, the status line every
//! result ends with, and the hook every edit tool calls afterwards ([`after_write`]).

use crate::error::{ErrorCode, ToolError, ToolResult};
use crate::lsp::after_edit::DiagnosticsAfterEdit;
use crate::lsp::client::{Server, Synced};
use crate::lsp::servers::{self, Language};
use crate::lsp::{self, NoServer, Readiness, StartEnv};
use crate::scope::ScopedPath;
use crate::tools::Ctx;
use rmcp::model::{CallToolResult, ContentBlock};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// A file a server is asked about.
pub struct Target {
    pub path: ScopedPath,
    pub language: Language,
    pub ext: String,
    pub root: PathBuf,
    /// The path as results show it (relative to the working directory).
    pub label: String,
}

/// The language that covers `real`, when its server is not turned off.
pub fn covering(ctx: &Ctx, real: &Path) -> Option<(Language, String)> {
    servers::language_of(&ctx.shared.config.languages, real)
        .filter(|(l, _)| !l.commands.is_empty())
        .map(|(l, e)| (l.clone(), e))
}

/// How results name `path`: relative to the working directory, else absolute.
pub fn label(ctx: &Ctx, path: &Path) -> String {
    let cwd = ctx.ws.cwd();
    match path.strip_prefix(&cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The workspace root of a file: the nearest directory with one of its language's
/// markers, within the allowed directory that holds it (or the working directory).
pub fn root_of(ctx: &Ctx, real: &Path, language: &Language) -> PathBuf {
    let config = &ctx.shared.config;
    let limit = config
        .allow_dirs
        .iter()
        .filter(|d| real.starts_with(d))
        .max_by_key(|d| d.as_os_str().len())
        .cloned()
        .unwrap_or_else(|| config.workdir.clone());
    servers::root_for(real, &limit, &language.root_markers, |p| p.exists())
}

/// What a server start needs from this session (its sandbox started if it was not).
pub fn start_env(ctx: &Ctx) -> StartEnv {
    let jail = crate::tools::engine::shell::session_jail(ctx).map_err(|e| e.message);
    let scratch = match &jail {
        Ok(Some(j)) => j.host_tmp().to_path_buf(),
        _ => ctx.shared.spill.path().to_path_buf(),
    };
    StartEnv {
        shell: ctx.shared.shell.clone(),
        env: ctx.shared.command_env.clone(),
        jail,
        scratch,
    }
}

/// Resolves `path` for a code-intelligence call: a readable regular file that a
/// language covers.
pub fn target(ctx: &Ctx, path: &str) -> ToolResult<Target> {
    let path = ctx.resolve_read(path)?;
    crate::fsutil::regular_file_meta(&path.real, &path.shown)?;
    let Some((language, ext)) = covering(ctx, &path.real) else {
        return Err(unavailable(
            &NoServer::NotCovered.message(&path.shown),
            None,
            Readiness::Unavailable,
        ));
    };
    let root = root_of(ctx, &path.real, &language);
    let label = label(ctx, &path.shown);
    Ok(Target {
        path,
        language,
        ext,
        root,
        label,
    })
}

/// `[LSP_UNAVAILABLE] message` with the status line.
pub fn unavailable(message: &str, language: Option<&str>, r: Readiness) -> ToolError {
    ToolError::new(
        ErrorCode::LspUnavailable,
        format!("{message}\n{}", status_line(language, r, None)),
    )
}

/// The line every code-intelligence result ends with.
pub fn status_line(language: Option<&str>, r: Readiness, note: Option<&str>) -> String {
    let who = language.map(|l| format!(" {l}")).unwrap_or_default();
    let note = note.map(|n| format!(" ({n})")).unwrap_or_default();
    format!("lsp:{who} {}{note}", r.as_str())
}

/// Runs `fut` on the language-server runtime from this blocking thread, stopping at the
/// call's cancellation, and at `until` (the deadline `fut` itself honours) plus a grace
/// whatever `fut` does: a call never waits on its language server past its deadline.
pub fn run<T: Send + 'static>(
    ct: &CancellationToken,
    until: Instant,
    fut: impl std::future::Future<Output = T> + Send + 'static,
) -> ToolResult<T> {
    lsp::block_on(ct, until, fut).map_err(|stopped| match stopped {
        lsp::Stopped::Cancelled => ToolError::new(
            ErrorCode::LspUnavailable,
            "the call was cancelled while it waited for its language server",
        ),
        lsp::Stopped::Overran => ToolError::new(
            ErrorCode::LspUnavailable,
            "the language server did not answer within --lsp-timeout; nothing was changed",
        ),
    })
}

/// The server for `t`, started if needed, by `until` (the call's one deadline, from
/// `--lsp-timeout`): or the error to answer.
pub fn server(
    ctx: &Ctx,
    t: &Target,
    until: Instant,
    ct: &CancellationToken,
) -> ToolResult<Arc<Server>> {
    let env = start_env(ctx);
    let (lsp, language, root) = (ctx.ws.lsp.clone(), t.language.clone(), t.root.clone());
    let got = run(ct, until, async move {
        lsp.server(&language, &root, || env, until).await
    })?;
    got.map_err(|e| {
        unavailable(
            &e.message(&t.path.shown),
            Some(&t.language.name),
            e.readiness(),
        )
    })
}

/// Brings every open document of `server` up to date with the disk (a command may have
/// changed or removed it), then opens `t` with its current content.
pub fn sync(ctx: &Ctx, server: &Server, t: &Target) -> ToolResult<Synced> {
    refresh_open_docs(ctx, server);
    let (text, stamp) = read_text(ctx, &t.path)?;
    let id = t.language.language_id(&t.ext);
    server
        .put(&t.path.real, &id, text, stamp, false)
        .map_err(|e| {
            unavailable(
                &e.to_string(),
                Some(&t.language.name),
                Readiness::Unavailable,
            )
        })
}

/// Re-sends the open documents that changed on disk since the server was told, closes
/// those that are gone (issue 20 §1: files a command changed are synced before the next
/// request, by their stamps).
pub fn refresh_open_docs(ctx: &Ctx, server: &Server) {
    refresher(ctx, None)(server)
}

/// [`refresh_open_docs`] as a task that needs no session (the edit hook's runs on the
/// language-server runtime): a file gone, unreadable, not UTF-8 or over --max-file-size
/// is closed. `except`: a file the caller syncs itself (the edit hook's own file: sent
/// here, its new content would reach the server before the old one the hook compares
/// with).
fn refresher(ctx: &Ctx, except: Option<PathBuf>) -> Box<dyn FnOnce(&Server) + Send> {
    let languages = ctx.shared.config.languages.clone();
    let max = ctx.max_file_size();
    Box::new(move |server: &Server| {
        for (path, stamp) in server.stale_docs() {
            if except.as_ref() == Some(&path) {
                continue;
            }
            let Some((language, ext)) = servers::language_of(&languages, &path) else {
                continue;
            };
            let text = stamp.and_then(|_| {
                let meta = crate::fsutil::regular_file_meta(&path, &path).ok()?;
                (meta.len() <= max).then_some(())?;
                let bytes = crate::fsutil::read_file(&path, &path, meta.len()).ok()?;
                String::from_utf8(bytes).ok()
            });
            match text {
                Some(text) => {
                    let id = language.language_id(&ext);
                    let _ = server.put(&path, &id, Arc::from(text), stamp, false);
                }
                None => server.close(&path),
            }
        }
    })
}

/// A file's text for a server: UTF-8, within --max-file-size.
pub fn read_text(
    ctx: &Ctx,
    path: &ScopedPath,
) -> ToolResult<(Arc<str>, Option<crate::text::line_index::FileStamp>)> {
    let meta = crate::fsutil::regular_file_meta(&path.real, &path.shown)?;
    crate::fsutil::check_size(
        meta.len(),
        ctx.max_file_size(),
        &path.shown,
        "code intelligence",
        "raise --max-file-size",
    )?;
    let bytes = crate::fsutil::read_file(&path.real, &path.shown, meta.len())?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::invalid(format!(
            "{} is not UTF-8 text, which language servers read",
            path.shown.display()
        ))
    })?;
    Ok((
        Arc::from(text),
        Some(crate::text::line_index::FileStamp::of(&meta)),
    ))
}

/// The readiness of an answer about `synced` from `server`, waiting first (up to
/// `until`) for the server to have checked the document as it is now (its diagnostics
/// given, `Server::diagnostics`: the project around it is loaded then; typescript-language-server answers
/// references with the open file only before that) and for any indexing to end.
/// `seq` is the server's change counter from before the document was synced.
pub fn settle(
    server: &Arc<Server>,
    synced: &Synced,
    seq: u64,
    until: Instant,
    ct: &CancellationToken,
) -> ToolResult<Readiness> {
    let s = server.clone();
    let synced = synced.clone();
    let after = if synced.changed { seq } else { 0 };
    let ready = run(ct, until, async move {
        // Once is enough: pulling again would only cost the server a round trip.
        let checked =
            s.has_checked(&synced) || s.diagnostics(&synced, after, until).await.is_some();
        let idle = s.wait_idle(until).await;
        checked && idle
    })?;
    Ok(if ready {
        Readiness::Ready
    } else {
        Readiness::Indexing
    })
}

/// The readiness of a server with no document in question: waits up to `until` for any
/// indexing to end.
pub fn settle_idle(
    server: &Arc<Server>,
    until: Instant,
    ct: &CancellationToken,
) -> ToolResult<Readiness> {
    let s = server.clone();
    let idle = run(ct, until, async move { s.wait_idle(until).await })?;
    Ok(if idle {
        Readiness::Ready
    } else {
        Readiness::Indexing
    })
}

/// A result's text with its status line.
pub fn finish(text: String, language: &str, r: Readiness, note: Option<&str>) -> CallToolResult {
    let mut text = text;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&status_line(Some(language), r, note));
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// A model's position in `text`: 1-based `line`, and `symbol` on it or 1-based `column`.
/// Returns the LSP position in `server`'s encoding, and the character column (0-based).
pub fn position(
    t: &Target,
    text: &str,
    line: usize,
    symbol: Option<&str>,
    occurrence: Option<usize>,
    column: Option<usize>,
    enc: lsp::position::Encoding,
) -> ToolResult<lsp_types::Position> {
    let (line0, char0) = lsp::position::resolve(text, line, symbol, occurrence, column)
        .map_err(|e| ToolError::invalid(e.describe(&t.label, line, symbol)))?;
    let line_text = lsp::position::line_text(text, line0).unwrap_or_default();
    Ok(lsp_types::Position {
        line: line0 as u32,
        character: lsp::position::chars_to_units(line_text, char0, enc),
    })
}

/// Whether edits start language servers and report diagnostics.
fn edits_checked(ctx: &Ctx) -> bool {
    ctx.shared.config.diagnostics_after_edit != DiagnosticsAfterEdit::Off
}

/// Whether [`after_write`] would check an edit of `path`: edits are checked and an
/// installed language server covers the file.
pub fn covered(ctx: &Ctx, path: &ScopedPath) -> bool {
    edits_checked(ctx)
        && covering(ctx, &path.real)
            .is_some_and(|(language, _)| lsp::command_for(&language).is_ok())
}

/// The edit hook (issue 20 §3), for every tool that writes a file (and the patch tool):
/// after `path` was written with `new` (it held `old`; `None`: created), the lines to end
/// the result with, if a language server covers the file. Bounded by
/// `--diagnostics-wait`; never an error. Call it after releasing the file's edit lock.
pub fn after_write(ctx: &Ctx, path: &ScopedPath, old: Option<&[u8]>, new: &[u8]) -> Option<String> {
    if !edits_checked(ctx) {
        return None;
    }
    let (language, ext) = covering(ctx, &path.real)?;
    // A language whose server is not installed costs nothing and says nothing.
    lsp::command_for(&language).ok()?;
    let edit = lsp::after_edit::Edit {
        root: root_of(ctx, &path.real, &language),
        language,
        ext,
        real: path.real.clone(),
        label: label(ctx, &path.shown),
        old: old.map(<[u8]>::to_vec),
        new: new.to_vec(),
        mode: ctx.shared.config.diagnostics_after_edit,
        wait: ctx.shared.config.diagnostics_wait,
        refresh: refresher(ctx, Some(path.real.clone())),
    };
    let env = start_env(ctx);
    let lsp = ctx.ws.lsp.clone();
    let ct = crate::exec::shutdown_token().child_token();
    let until = Instant::now() + ctx.shared.config.diagnostics_wait;
    lsp::block_on(&ct, until, lsp::after_edit::check(lsp, edit, env))
        .ok()
        .flatten()
}

/// Ends an edit's result with [`after_write`]'s lines, after a blank line.
pub fn with_diagnostics(mut result: CallToolResult, note: Option<String>) -> CallToolResult {
    let Some(note) = note else {
        return result;
    };
    if let Some(text) = result.content.first_mut().and_then(|c| match c {
        rmcp::model::ContentBlock::Text(t) => Some(t),
        _ => None,
    }) {
        if !text.text.ends_with('\n') {
            text.text.push('\n');
        }
        text.text.push('\n');
        text.text.push_str(&note);
    }
    result
}

/// A view of a file a language covers starts its server in the background and opens
/// the file there, so that a later edit has the "before" to compare with and the first
/// code-intelligence call finds the server warm. Never waits; the view's result does not
/// change.
pub fn warm(ctx: &Ctx, path: &ScopedPath) {
    if !edits_checked(ctx) {
        return;
    }
    let Some((language, ext)) = covering(ctx, &path.real) else {
        return;
    };
    if lsp::command_for(&language).is_err() {
        return;
    }
    let root = root_of(ctx, &path.real, &language);
    let Ok((text, stamp)) = read_text(ctx, path) else {
        return;
    };
    let env = start_env(ctx);
    let lsp = ctx.ws.lsp.clone();
    let real = path.real.clone();
    // Not waited for: the task goes on after the view answers.
    lsp::runtime().spawn(async move {
        let until = Instant::now() + std::time::Duration::from_secs(60);
        if let Ok(server) = lsp.server(&language, &root, || env, until).await {
            let seq = server.seq();
            if let Ok(synced) = server.put(&real, &language.language_id(&ext), text, stamp, false) {
                // Asked now so the server checks it while the agent reads: an edit's
                // "before" is then ready (a server that pulls checks only when asked).
                let after = if synced.changed { seq } else { 0 };
                let _ = server.diagnostics(&synced, after, until).await;
            }
        }
    });
}

/// The readiness a `NoServer` error carries, for the claude-code words.
pub fn no_server_error(t: &Target, e: &NoServer) -> ToolError {
    unavailable(
        &e.message(&t.path.shown),
        Some(&t.language.name),
        e.readiness(),
    )
}
