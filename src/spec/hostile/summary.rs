//! A hostile-input run as JSON (`boris-spec hostile --json`): what the stored results of
//! `tests/compat/hostile.sh` keep per server, and what `tests/compat/hostile.py` tabulates.

use serde_json::{Value, json};

use super::{Broken, Options, Report};

/// The shrunk arguments are cut to this many characters in the JSON (the seed and the
/// call number draw them whole again).
const SHRUNK_CHARS: usize = 300;

/// The run's counts and failures: `answered` are the calls that got a response in time
/// with the server still running; `well_formed` those of them whose response was one.
pub fn to_json(report: &Report, opts: &Options) -> Value {
    let broke = |b: Broken| report.failures.iter().filter(|f| f.broken == b).count();
    let answered = report.calls.saturating_sub(broke(Broken::Answers));
    let well_formed = answered.saturating_sub(broke(Broken::WellFormed));
    let failures: Vec<Value> = report
        .failures
        .iter()
        .map(|f| {
            json!({
                "call": f.call,
                "tool": f.tool,
                "attack": f.attack.to_string(),
                "broken": f.broken.as_str(),
                "detail": f.detail,
                "shrunk": cut(&serde_json::to_string(&f.shrunk).unwrap_or_default()),
            })
        })
        .collect();
    let not_called: Vec<Value> = report
        .not_called
        .iter()
        .map(|(name, why)| json!({"tool": name, "why": why}))
        .collect();
    json!({
        "seed": opts.seed,
        "cases": opts.cases,
        "calls": report.calls,
        "answered": answered,
        "well_formed": well_formed,
        "tools": report.tools,
        "not_called": not_called,
        "failures": failures,
    })
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(SHRUNK_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &s[..at], s.len()),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::hostile::Failure;
    use crate::spec::hostile::generate::Attack;
    use std::time::Duration;

    fn failure(broken: Broken, shrunk: Value) -> Failure {
        Failure {
            call: 1,
            tool: "t".into(),
            attack: Attack::Unknown,
            broken,
            detail: "d".into(),
            drawn: shrunk.clone(),
            shrunk,
        }
    }

    #[test]
    fn counts_answered_and_well_formed_from_what_broke() {
        let opts = Options {
            server: String::new(),
            seed: 5,
            cases: 10,
            timeout: Duration::from_secs(1),
            only: vec![],
            skip: vec![],
        };
        let report = Report {
            calls: 10,
            failures: vec![
                failure(Broken::Answers, json!({})),
                failure(Broken::WellFormed, json!({})),
                failure(Broken::StaysInside, json!({"p": "x".repeat(5000)})),
            ],
            ..Report::default()
        };
        let j = to_json(&report, &opts);
        assert_eq!(
            (j["calls"].as_u64(), j["answered"].as_u64()),
            (Some(10), Some(9))
        );
        assert_eq!(j["well_formed"].as_u64(), Some(8));
        assert_eq!(j["failures"][0]["broken"], "answers");
        let shrunk = j["failures"][2]["shrunk"].as_str().unwrap_or_default();
        assert!(shrunk.len() < 400 && shrunk.ends_with("bytes)"), "{shrunk}");
    }
}
