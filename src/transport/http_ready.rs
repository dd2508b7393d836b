//! `GET /ready` (issue 31 §3): whether this instance should get traffic, for a load
//! balancer or an orchestrator's readiness probe. `/health` only says the process
//! serves; `/ready` also checks that the workdir is there, a directory and writable (a
//! vanished or read-only mount is not ready), reports the sandbox as the server set it
//! up at start, and answers 503 `shutting down` once a signal has begun the drain.
//! Like `/health` it needs no token and checks `Host`; its reasons name no path.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A workdir on a hung network mount must not hang the probe.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Readiness {
    pub workdir: PathBuf,
    /// Commands run confined (the sandbox the configuration asked for came up at start;
    /// `--sandbox on` refuses to start without it).
    pub confined: bool,
}

/// Why `workdir` cannot take work, or `None` when it can.
pub fn workdir_problem(workdir: &Path) -> Option<String> {
    use nix::unistd::{AccessFlags, access};
    match std::fs::metadata(workdir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some("the workdir does not exist".into())
        }
        Err(e) => Some(format!("the workdir cannot be read: {e}")),
        Ok(meta) if !meta.is_dir() => Some("the workdir is not a directory".into()),
        // access(2) answers for this process, read-only mounts included (EROFS).
        Ok(_) => access(workdir, AccessFlags::W_OK | AccessFlags::X_OK)
            .err()
            .map(|e| format!("the workdir is not writable: {}", e.desc())),
    }
}

/// The reasons this instance is not ready (none: ready).
async fn reasons(readiness: &Readiness) -> Vec<String> {
    let mut reasons = Vec::new();
    if crate::drain::global().draining() {
        reasons.push("shutting down".to_string());
    }
    let workdir = readiness.workdir.clone();
    let check = tokio::task::spawn_blocking(move || workdir_problem(&workdir));
    match tokio::time::timeout(CHECK_TIMEOUT, check).await {
        Ok(Ok(problem)) => reasons.extend(problem),
        Ok(Err(e)) => reasons.push(format!("the workdir check failed: {e}")),
        Err(_) => reasons.push(format!(
            "the workdir did not answer within {} s",
            CHECK_TIMEOUT.as_secs()
        )),
    }
    reasons
}

pub async fn ready(State(readiness): State<Arc<Readiness>>) -> Response {
    let sandbox = if readiness.confined {
        "confined"
    } else {
        "unconfined"
    };
    let reasons = reasons(&readiness).await;
    if reasons.is_empty() {
        return Json(serde_json::json!({"status": "ready", "sandbox": sandbox})).into_response();
    }
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(serde_json::json!({"status": "not ready", "reasons": reasons, "sandbox": sandbox})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_directory_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(workdir_problem(dir.path()), None);
    }

    #[test]
    fn a_missing_workdir_or_a_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        assert_eq!(
            workdir_problem(&gone).as_deref(),
            Some("the workdir does not exist")
        );
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(
            workdir_problem(&file).as_deref(),
            Some("the workdir is not a directory")
        );
    }
}
