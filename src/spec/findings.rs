//! Faults of how a server ends, and the run's findings they make (issue 21 §4). At the
//! end of every case the harness asks the server to end (stdin EOF; SIGTERM over HTTP)
//! and looks for processes it left behind. A server held to Boris's teardown (its
//! adapter says `teardown: strict`), or a case about teardown (tagged `shutdown`),
//! fails the case on such a fault. Any other server's faults are set aside: each case
//! is judged on its subject, and the run reports each kind of fault once, with the
//! cases it was seen in. Pure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What went wrong at the end of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeardownFault {
    /// The server was still running `waited_ms` after the harness asked it to end
    /// (`how`: `stdin EOF`, `SIGTERM`), and was killed.
    DoesNotExit { how: &'static str, waited_ms: u128 },
    /// Processes the server started were alive a second after it exited (killed):
    /// `pid command line` each.
    LeavesProcesses(Vec<String>),
}

impl TeardownFault {
    /// The finding it belongs to, as a baseline names it (`teardown/…`).
    pub fn key(&self) -> &'static str {
        match self {
            TeardownFault::DoesNotExit {
                how: "stdin EOF", ..
            } => "teardown/outlives-stdin-eof",
            TeardownFault::DoesNotExit { .. } => "teardown/outlives-sigterm",
            TeardownFault::LeavesProcesses(_) => "teardown/leaves-processes",
        }
    }

    /// The failure it is in a case that does not set it aside.
    pub fn message(&self) -> String {
        match self {
            TeardownFault::DoesNotExit { how, waited_ms } => {
                format!("server did not exit within {waited_ms}ms after {how} (killed)")
            }
            TeardownFault::LeavesProcesses(list) => format!(
                "processes started by the server outlived it: {}",
                list.join("; ")
            ),
        }
    }
}

/// One kind of teardown fault, over a whole run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `teardown/outlives-stdin-eof`, … (what a baseline lists).
    pub key: &'static str,
    /// The fault as the first case saw it.
    pub first: String,
    /// The cases it was seen in, in run order.
    pub cases: Vec<PathBuf>,
}

/// The findings of a run: its cases' set-aside faults, one finding per kind, in key
/// order.
pub fn findings<'a>(
    cases: impl IntoIterator<Item = (&'a Path, &'a [TeardownFault])>,
) -> Vec<Finding> {
    let mut by_key: BTreeMap<&'static str, Finding> = BTreeMap::new();
    for (path, faults) in cases {
        for f in faults {
            let finding = by_key.entry(f.key()).or_insert_with(|| Finding {
                key: f.key(),
                first: f.message(),
                cases: Vec::new(),
            });
            if finding.cases.last().map(PathBuf::as_path) != Some(path) {
                finding.cases.push(path.to_path_buf());
            }
        }
    }
    by_key.into_values().collect()
}

impl Finding {
    /// One line: what happened, in how many of `ran` cases, and where first.
    pub fn describe(&self, ran: usize) -> String {
        format!(
            "{} — in {} of {ran} cases run (first {}); those cases are judged on their subject",
            self.first,
            self.cases.len(),
            self.cases
                .first()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_group_into_one_finding_per_kind() {
        let eof = TeardownFault::DoesNotExit {
            how: "stdin EOF",
            waited_ms: 5000,
        };
        let left = TeardownFault::LeavesProcesses(vec!["42 sleep 30".into()]);
        let (a, b, c) = (
            Path::new("spec/a.yaml"),
            Path::new("spec/b.yaml"),
            Path::new("spec/c.yaml"),
        );
        let both = [eof.clone(), left.clone()];
        let one = [eof.clone()];
        let found = findings([(a, &both[..]), (b, &[][..]), (c, &one[..])]);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].key, "teardown/leaves-processes");
        assert_eq!(found[0].cases, vec![a.to_path_buf()]);
        assert_eq!(found[1].key, "teardown/outlives-stdin-eof");
        assert_eq!(found[1].cases, vec![a.to_path_buf(), c.to_path_buf()]);
        assert_eq!(
            found[1].first,
            "server did not exit within 5000ms after stdin EOF (killed)"
        );
        assert!(
            found[1]
                .describe(7)
                .contains("in 2 of 7 cases run (first spec/a.yaml)")
        );
        assert_eq!(
            TeardownFault::DoesNotExit {
                how: "SIGTERM",
                waited_ms: 1
            }
            .key(),
            "teardown/outlives-sigterm"
        );
        assert_eq!(
            left.message(),
            "processes started by the server outlived it: 42 sleep 30"
        );
    }
}
