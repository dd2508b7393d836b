//! Pure: what a run means for one server — expected failures (a baseline), the score per
//! capability, the run's findings (teardown faults the adapter set aside), and the
//! markdown and JSON reports (issue 13).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::display::first_line;
use super::findings::{Finding, findings};
use super::runner::CaseOutcome;
use super::vocabulary::Capability;

/// Expected failures, as the official conformance suite has them: case path (as
/// reported, e.g. `spec/str_replace/crlf-fallback.yaml`) → one line saying why. A
/// finding of the run is listed under its key (`teardown/outlives-stdin-eof`).
pub type Baseline = BTreeMap<String, String>;

pub fn parse_baseline(text: &str) -> Result<Baseline, String> {
    if text.trim().is_empty() {
        return Ok(Baseline::new());
    }
    yaml_serde::from_str::<Option<Baseline>>(text)
        .map(Option::unwrap_or_default)
        .map_err(|e| e.to_string())
}

/// A baseline in the committed form: sorted, one `path: reason` line each.
pub fn render_baseline(b: &Baseline) -> String {
    let mut out = String::new();
    for (path, reason) in b {
        out.push_str(&format!(
            "{}: {}\n",
            path,
            serde_json::to_string(reason).unwrap_or_default()
        ));
    }
    out
}

/// How one case came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed(String),
    /// Failed, and the baseline says so.
    Expected(String),
    Unsupported(String),
    /// Not run: a tag filter, or a need the machine lacks (the one-line reason).
    Skipped(String),
}

impl Status {
    pub fn of(o: &CaseOutcome, baseline: &Baseline) -> Status {
        let key = o.path.to_string_lossy();
        if let Some(reason) = &o.unsupported {
            Status::Unsupported(reason.clone())
        } else if o.skipped {
            Status::Skipped(o.skip_reason.clone().unwrap_or_default())
        } else if o.passed {
            Status::Passed
        } else if let Some(why) = baseline.get(key.as_ref()) {
            Status::Expected(why.clone())
        } else {
            Status::Failed(first_line(
                o.failures.first().map(String::as_str).unwrap_or(""),
            ))
        }
    }

    fn word(&self) -> &'static str {
        match self {
            Status::Passed => "pass",
            Status::Failed(_) => "fail",
            Status::Expected(_) => "fail (expected)",
            Status::Unsupported(_) => "not supported",
            Status::Skipped(_) => "skipped",
        }
    }
}

/// Baseline entries whose case did not fail (passed, or did not run), or whose finding
/// the run did not make: the baseline is stale and must be updated.
pub fn stale_entries(outcomes: &[CaseOutcome], baseline: &Baseline) -> Vec<String> {
    let found = run_findings(outcomes);
    baseline
        .keys()
        .filter(|key| {
            !outcomes
                .iter()
                .any(|o| o.path.to_string_lossy() == key.as_str() && !o.passed)
                && !found.iter().any(|f| f.key == key.as_str())
        })
        .cloned()
        .collect()
}

/// The run's findings: the teardown faults its cases set aside, one per kind.
pub fn run_findings(outcomes: &[CaseOutcome]) -> Vec<Finding> {
    findings(
        outcomes
            .iter()
            .map(|o| (o.path.as_path(), o.teardown.as_slice())),
    )
}

/// How many cases ran (passed or failed; not skipped, not unsupported).
pub fn cases_run(outcomes: &[CaseOutcome]) -> usize {
    outcomes.iter().filter(|o| !o.skipped).count()
}

/// A finding as `boris-spec run` prints it: `XFINDING key: why (N of M cases)` when the
/// baseline expects it, else `FINDING key: what happened, where`.
pub fn finding_line(f: &Finding, ran: usize, baseline: &Baseline) -> String {
    match baseline.get(f.key) {
        Some(why) => format!(
            "XFINDING {}: {why} ({} of {ran} cases)",
            f.key,
            f.cases.len()
        ),
        None => format!("FINDING {}: {}", f.key, f.describe(ran)),
    }
}

/// The row name for cases whose steps use no capability (protocol, Boris's own tools).
pub const NO_CAPABILITY: &str = "(other: protocol and Boris's own tools)";

/// Per capability: (pass, fail, not supported). A case counts once for each capability
/// it uses; expected failures count as failures; skipped cases do not count.
pub fn capability_scores(
    outcomes: &[CaseOutcome],
    baseline: &Baseline,
) -> Vec<(String, [usize; 3])> {
    let mut rows: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    for cap in Capability::all() {
        rows.insert(cap.name().to_string(), [0; 3]);
    }
    for o in outcomes {
        let col = match Status::of(o, baseline) {
            Status::Passed => 0,
            Status::Failed(_) | Status::Expected(_) => 1,
            Status::Unsupported(_) => 2,
            Status::Skipped(_) => continue,
        };
        if o.capabilities.is_empty() {
            rows.entry(NO_CAPABILITY.to_string()).or_insert([0; 3])[col] += 1;
        }
        for cap in &o.capabilities {
            rows.entry(cap.name().to_string()).or_insert([0; 3])[col] += 1;
        }
    }
    // Capabilities in their documented order, the rest last.
    let mut out: Vec<(String, [usize; 3])> = Capability::all()
        .filter_map(|c| rows.remove(c.name()).map(|r| (c.name().to_string(), r)))
        .collect();
    out.extend(rows);
    out
}

/// The score table as text for the terminal.
pub fn render_scores(scores: &[(String, [usize; 3])]) -> String {
    let width = scores
        .iter()
        .map(|(c, _)| c.len())
        .max()
        .unwrap_or(10)
        .max(10);
    let mut out = format!(
        "{:width$}  {:>5}  {:>5}  {:>13}\n",
        "capability", "pass", "fail", "not supported"
    );
    for (cap, [p, f, u]) in scores {
        out.push_str(&format!("{cap:width$}  {p:>5}  {f:>5}  {u:>13}\n"));
    }
    out
}

/// A markdown report of one run: the scores, then every case that did not pass.
pub fn render_markdown(adapter: &str, outcomes: &[CaseOutcome], baseline: &Baseline) -> String {
    let mut out = format!("# boris-spec: {adapter}\n\n");
    let count = |f: &dyn Fn(&Status) -> bool| {
        outcomes
            .iter()
            .filter(|o| f(&Status::of(o, baseline)))
            .count()
    };
    out.push_str(&format!(
        "{} passed, {} failed ({} expected by the baseline), {} not supported, {} skipped.\n\n",
        count(&|s| *s == Status::Passed),
        count(&|s| matches!(s, Status::Failed(_) | Status::Expected(_))),
        count(&|s| matches!(s, Status::Expected(_))),
        count(&|s| matches!(s, Status::Unsupported(_))),
        count(&|s| matches!(s, Status::Skipped(_))),
    ));
    out.push_str("| capability | pass | fail | not supported |\n|---|---:|---:|---:|\n");
    for (cap, [p, f, u]) in capability_scores(outcomes, baseline) {
        out.push_str(&format!("| {cap} | {p} | {f} | {u} |\n"));
    }
    let found = run_findings(outcomes);
    if !found.is_empty() {
        out.push_str("\nFindings of the run (teardown faults, not counted as failures):\n\n");
        for f in &found {
            out.push_str(&format!(
                "- {}\n",
                finding_line(f, cases_run(outcomes), baseline)
            ));
        }
    }
    out.push_str("\n| case | result | why |\n|---|---|---|\n");
    for o in outcomes {
        let status = Status::of(o, baseline);
        let why = match &status {
            Status::Failed(w) | Status::Expected(w) | Status::Unsupported(w) => w.clone(),
            // A missing need is worth a row (a tag filter is the reader's own choice).
            Status::Skipped(w) if w.starts_with("requires ") => w.clone(),
            Status::Passed | Status::Skipped(_) => continue,
        };
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            o.path.display(),
            status.word(),
            why.replace('|', "\\|")
        ));
    }
    out
}

/// Every case's result as JSON (for tools that build on a run, such as the matrix).
pub fn to_json(adapter: &str, outcomes: &[CaseOutcome], baseline: &Baseline) -> Value {
    let cases: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let status = Status::of(o, baseline);
            let why = match &status {
                Status::Failed(w)
                | Status::Expected(w)
                | Status::Unsupported(w)
                | Status::Skipped(w) => w.clone(),
                Status::Passed => String::new(),
            };
            json!({
                "path": o.path.to_string_lossy(),
                "status": status.word(),
                "why": why,
                "capabilities": o.capabilities,
                "tags_skipped": o.skipped && o.unsupported.is_none(),
                "teardown": o.teardown.iter().map(|f| f.message()).collect::<Vec<_>>(),
            })
        })
        .collect();
    // The capabilities in their documented order, for tools that lay out a table.
    let capabilities: Vec<&str> = Capability::all().map(Capability::name).collect();
    let findings: Vec<Value> = run_findings(outcomes)
        .iter()
        .map(|f| {
            let expected = baseline.get(f.key);
            json!({
                "key": f.key,
                "status": if expected.is_some() { "expected" } else { "finding" },
                "why": expected.cloned().unwrap_or_else(|| f.first.clone()),
                "first": f.first,
                "cases": f.cases.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "adapter": adapter,
        "capabilities": capabilities,
        "cases": cases,
        "findings": findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn outcome(path: &str, passed: bool, caps: &[&str]) -> CaseOutcome {
        let mut o = CaseOutcome::error(&PathBuf::from(path), "boom\nmore".into());
        o.passed = passed;
        o.capabilities = caps.iter().map(|c| Capability::parse(c).unwrap()).collect();
        o
    }

    #[test]
    fn baselines_scores_and_stale_entries() {
        let mut unsupported = outcome("spec/c.yaml", true, &["run"]);
        unsupported.skipped = true;
        unsupported.unsupported = Some("no shell".into());
        let outcomes = vec![
            outcome("spec/a.yaml", true, &["replace", "read_file"]),
            outcome("spec/b.yaml", false, &["replace"]),
            unsupported,
            outcome("spec/d.yaml", false, &[]),
        ];
        let baseline =
            parse_baseline("spec/b.yaml: \"CRLF lost on edit\"\nspec/z.yaml: gone\n").unwrap();
        assert_eq!(
            Status::of(&outcomes[1], &baseline),
            Status::Expected("CRLF lost on edit".into())
        );
        assert_eq!(
            Status::of(&outcomes[3], &baseline),
            Status::Failed("boom".into())
        );
        assert_eq!(
            stale_entries(&outcomes, &baseline),
            vec!["spec/z.yaml".to_string()]
        );
        let scores: BTreeMap<String, [usize; 3]> = capability_scores(&outcomes, &baseline)
            .into_iter()
            .collect();
        assert_eq!(scores["replace"], [1, 1, 0]);
        assert_eq!(scores["run"], [0, 0, 1]);
        assert_eq!(scores[NO_CAPABILITY], [0, 1, 0]);
        let md = render_markdown("x", &outcomes, &baseline);
        assert!(
            md.contains("| `spec/b.yaml` | fail (expected) | CRLF lost on edit |"),
            "{md}"
        );
        assert_eq!(
            parse_baseline(&render_baseline(&baseline)).unwrap(),
            baseline
        );
    }

    #[test]
    fn teardown_faults_are_one_finding_that_a_baseline_can_expect() {
        use crate::spec::findings::TeardownFault;
        let eof = TeardownFault::DoesNotExit {
            how: "stdin EOF",
            waited_ms: 5000,
        };
        let mut a = outcome("spec/a.yaml", true, &["run"]);
        a.teardown = vec![eof.clone()];
        let mut b = outcome("spec/b.yaml", false, &["run"]);
        b.teardown = vec![eof];
        let outcomes = vec![a, b, outcome("spec/c.yaml", true, &[])];
        let found = run_findings(&outcomes);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].cases.len(), 2);
        // A case passes on its subject whatever its teardown did.
        assert_eq!(Status::of(&outcomes[0], &Baseline::new()), Status::Passed);
        let none = Baseline::new();
        assert!(
            finding_line(&found[0], cases_run(&outcomes), &none).starts_with(
                "FINDING teardown/outlives-stdin-eof: server did not exit within 5000ms after \
                 stdin EOF (killed) — in 2 of 3 cases run (first spec/a.yaml)"
            )
        );
        let expected = parse_baseline(
            "teardown/outlives-stdin-eof: \"a timer keeps it alive\"\nteardown/leaves-processes: x\n",
        )
        .unwrap();
        assert_eq!(
            finding_line(&found[0], 3, &expected),
            "XFINDING teardown/outlives-stdin-eof: a timer keeps it alive (2 of 3 cases)"
        );
        // A finding the run did not make is stale, like a case that did not fail.
        assert_eq!(
            stale_entries(&outcomes, &expected),
            vec!["teardown/leaves-processes".to_string()]
        );
        let json = to_json("x", &outcomes, &expected);
        assert_eq!(json["findings"][0]["status"], "expected");
        assert_eq!(json["findings"][0]["cases"][1], "spec/b.yaml");
        assert!(render_markdown("x", &outcomes, &expected).contains("XFINDING teardown/"));
    }
}
