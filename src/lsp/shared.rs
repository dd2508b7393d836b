//! What a running language server's client (`client.rs`) and its start-up (`start.rs`)
//! both use: what the server pushed, the main loop's end, its stderr's last lines. Apart
//! so that neither of the two imports the other's internals.

use crate::exec::{self, Running};
use lsp_types::{Diagnostic, Url};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use tokio::sync::watch;

/// What the server pushed: diagnostics per document, work in progress.
#[derive(Default)]
pub(super) struct Pushed {
    pub(super) diagnostics: HashMap<Url, Published>,
    /// Work-done progress begun and not ended (indexing, analysis).
    pub(super) progress: HashSet<String>,
    /// Bumped on every change, so waiters can tell something arrived.
    pub(super) seq: u64,
}

#[derive(Clone)]
pub struct Published {
    pub version: Option<i32>,
    pub diagnostics: Vec<Diagnostic>,
    /// `Pushed::seq` when it arrived.
    pub seq: u64,
}

/// A lock that a panicked holder did not poison for good: the data is plain state.
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Resolves once the main loop has ended.
pub(super) async fn ended(alive: &mut watch::Receiver<bool>) {
    let _ = alive.wait_for(|a| !*a).await;
}

pub(super) fn stderr_tail(process: &Running) -> String {
    let c = exec::lock(&process.stderr);
    let tail = String::from_utf8_lossy(c.tail());
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let from = lines.len().saturating_sub(5);
    let mut text = lines[from..].join(" | ");
    if text.chars().count() > 600 {
        text = text.chars().take(600).collect::<String>() + "…";
    }
    format!("; it said: {text}")
}
