//! Edits tell what they broke (issue 20 §3): after a write of a file a language server
//! covers, the diagnostics the edit introduced (against those of the content before it),
//! within a bounded wait. One call for every edit tool: [`check`].
//!
//! The server is given the old content first when it does not hold it (so there is a
//! "before" to compare with; a file an agent viewed is usually open already), then the
//! new content and a save. The "before" and the "after" are the server's diagnostics of
//! exactly those two contents, each named by its own document version:
//! [`Server::diagnostics`] says what guarantees that (pull where the server offers it,
//! else a publish tagged with that very version), whatever calls came before. The open
//! documents a command changed on disk are synced first (`refresh`), so the file is
//! checked against the other files as they are. When the server gives nothing for a
//! version in time, the result says it did not report; never another version's list.
//!
//! Only the edited file is checked: an edit that breaks another file (a changed
//! signature and its callers) is not reported here, and the result says so whenever it
//! reports something; the diagnostics tool checks the callers. Nothing here can fail an
//! edit or make it wait past its bound: every problem becomes a line of the result, or
//! nothing.

use super::client::Server;
use super::format::{self, Diag, Severity};
use super::{Lsp, NoServer, StartEnv, servers::Language};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What an edit result says of its language server's diagnostics (issue 20 §3): the
/// value of `--diagnostics-after-edit`, defined here with the check it steers so that
/// the configuration imports the code intelligence and never the reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiagnosticsAfterEdit {
    Off,
    Errors,
    All,
}

/// One edit to check.
pub struct Edit {
    pub language: Language,
    pub ext: String,
    pub root: PathBuf,
    /// The real path written.
    pub real: PathBuf,
    /// How results name it (relative to the working directory).
    pub label: String,
    /// The content before the write (`None`: the write created the file).
    pub old: Option<Vec<u8>>,
    pub new: Vec<u8>,
    pub mode: DiagnosticsAfterEdit,
    pub wait: Duration,
    /// Syncs the server's open documents that changed on disk (a command wrote them).
    pub refresh: Box<dyn FnOnce(&Server) + Send>,
}

/// The text to end the edit's result with, if any (`None`: no server covers the file, or
/// the edit changed nothing the server reports).
pub async fn check(lsp: Arc<Lsp>, edit: Edit, start: StartEnv) -> Option<String> {
    if edit.mode == DiagnosticsAfterEdit::Off {
        return None;
    }
    let started = Instant::now();
    let until = started + edit.wait;
    let new = String::from_utf8(edit.new).ok()?;
    let old = match edit.old {
        Some(o) => Some(String::from_utf8(o).ok()?),
        None => None,
    };
    let server = match lsp
        .server(&edit.language, &edit.root, || start, until)
        .await
    {
        Ok(s) => s,
        Err(NoServer::Starting { language, command }) => {
            return Some(format!(
                "Diagnostics: the {language} language server ({command}) is still starting, so \
                 this edit was not checked; the diagnostics tool shows the file's errors once \
                 it is ready."
            ));
        }
        // Not installed, or broken: an edit says nothing of it (the diagnostics tool says
        // why); a file no server covers gets the same result as without code intelligence.
        Err(_) => return None,
    };
    let id = edit.language.language_id(&edit.ext);
    let enc = server.encoding;
    let name = super::servers::program(&server.command).to_string();
    (edit.refresh)(&server);

    // The "before": the server's diagnostics of the old content.
    let before: Option<Vec<Diag>> = match &old {
        None => Some(Vec::new()),
        Some(old) => {
            let seq = server.seq();
            let synced = server
                .put(&edit.real, &id, Arc::from(old.as_str()), None, false)
                .ok()?;
            let after = if synced.changed { seq } else { 0 };
            // Half the time left for the old version, the rest for the new one.
            let half = Instant::now() + until.saturating_duration_since(Instant::now()) / 2;
            let published = server.diagnostics(&synced, after, half).await;
            published.map(|p| {
                p.diagnostics
                    .iter()
                    .map(|d| format::diag(old, d, enc))
                    .collect()
            })
        }
    };

    let seq = server.seq();
    let stamp = std::fs::metadata(&edit.real)
        .ok()
        .map(|m| crate::text::line_index::FileStamp::of(&m));
    let synced = server
        .put(&edit.real, &id, Arc::from(new.as_str()), stamp, true)
        .ok()?;
    let Some(after) = server.diagnostics(&synced, seq, until).await else {
        return Some(format!(
            "Diagnostics: {name} did not report on {} within {}; the diagnostics tool shows \
             them once it has.",
            edit.label,
            super::seconds(edit.wait)
        ));
    };
    let after: Vec<Diag> = after
        .diagnostics
        .iter()
        .map(|d| format::diag(&new, d, enc))
        .collect();
    let min = match edit.mode {
        DiagnosticsAfterEdit::All => Severity::Hint,
        _ => Severity::Error,
    };
    let what = |n: usize| match (min, n) {
        (Severity::Error, 1) => "1 error".to_string(),
        (Severity::Error, n) => format!("{n} errors"),
        (_, 1) => "1 diagnostic".to_string(),
        (_, n) => format!("{n} diagnostics"),
    };
    let near = first_changed_line(old.as_deref().unwrap_or(""), &new);
    let (introduced, cleared, header) = match before {
        Some(before) => {
            let before = format::at_least(before, min);
            let after = format::at_least(after, min);
            let (introduced, cleared) = format::delta(&before, &after, near);
            let header = format!("The edit introduced {} ({name}):", what(introduced.len()));
            (introduced, cleared, header)
        }
        None => {
            let mut after = format::at_least(after, min);
            format::sort(&mut after);
            let header = format!(
                "After the edit {} has {} ({name}; it had not reported on the file before, so \
                 some may be older than the edit):",
                edit.label,
                what(after.len())
            );
            (after, 0, header)
        }
    };
    let cleared_line = (cleared > 0).then(|| {
        format!(
            "The edit cleared {} the file had before ({name}).",
            what(cleared)
        )
    });
    // Said with every report (issue 26): the edit's own file is all that was checked.
    let only_this = format!(
        "Only {} was checked; files that use what the edit changed are not (the \
         diagnostics tool checks them).",
        edit.label
    );
    if introduced.is_empty() {
        return cleared_line.map(|c| format!("{c}\n{only_this}"));
    }
    let mut out = vec![header];
    for d in introduced.iter().take(format::MAX_EDIT_DIAGNOSTICS) {
        out.push(format!("  {}", format::diag_line(&edit.label, d)));
    }
    if introduced.len() > format::MAX_EDIT_DIAGNOSTICS {
        out.push(format!(
            "  … and {} more; the diagnostics tool lists them all",
            introduced.len() - format::MAX_EDIT_DIAGNOSTICS
        ));
    }
    out.extend(cleared_line);
    out.push(only_this);
    Some(out.join("\n"))
}

/// The 1-based line where `new` first differs from `old`.
fn first_changed_line(old: &str, new: &str) -> usize {
    let common = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    new.as_bytes()[..common.min(new.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
