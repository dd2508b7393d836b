//! Escape cases (issue 25 §1): the attack marker that proves an attack step ran, and
//! the positive control, the same case run where nothing confines the server, which
//! must escape. Pure: the rules on a loaded case and the control case built from it.

use super::*;

/// Whether a step sends something to the server (a marker in any other step, a
/// fixture's text say, is no request).
fn sends_request(action: &Action) -> bool {
    matches!(
        action,
        Action::Do { .. }
            | Action::Call { .. }
            | Action::Request { .. }
            | Action::Send { .. }
            | Action::SendJson { .. }
            | Action::Http(_)
            | Action::HttpCall(_)
            | Action::HttpRequest(_)
    )
}

/// How often `marker` occurs in what the step sends (0 for a step that sends nothing).
pub fn marker_in_request(action: &Action, marker: &str) -> usize {
    if !sends_request(action) {
        return 0;
    }
    // The marker is plain ASCII (checked at load), so Debug shows it as written.
    format!("{action:?}").matches(marker).count()
}

/// Whether the marker stands on a line of its own in `answer` (surrounding blanks
/// aside), as `echo MARKER` prints it; for an answer that is JSON text, lines are also
/// cut at `"` and escaped newlines. A server that quotes a refused command back
/// (`refused: cd /x && echo MARKER; …`) shows the marker inside a line, which does not
/// count.
pub fn marker_on_own_line(answer: &str, marker: &str) -> bool {
    answer
        .split('\n')
        .flat_map(|line| line.split("\\n"))
        .flat_map(|line| line.split('"'))
        .any(|piece| piece.trim() == marker)
}

/// The failure of an attack step whose answer (`answer`: the result's text, or the
/// response as JSON) does not show the marker on a line of its own: the attack never
/// ran (the server refused the command, or a preamble such as `cd {workdir}`).
pub fn marker_failure(marker: &str, answer: Option<&str>) -> Option<String> {
    let shown = answer.is_some_and(|a| marker_on_own_line(a, marker));
    (!shown).then(|| {
        format!(
            "the attack did not run: its answer does not show the attack marker `{marker}` \
             on a line of its own (the command, or its preamble, was refused or failed \
             first), so the case proves nothing"
        )
    })
}

impl Case {
    /// Whether the case looks at the server's processes from outside (`{server_pid}`,
    /// `assert_process`, `assert_no_process`, `expect_alive: stopped`): only a harness
    /// on the server's machine can.
    pub fn looks_at_processes(&self) -> bool {
        let steps = self
            .steps
            .iter()
            .chain(self.control.iter().flat_map(|c| c.steps.iter()));
        steps.into_iter().any(|s| {
            matches!(
                s.action,
                Action::AssertProcess(_) | Action::AssertNoProcess(_) | Action::ExpectStopped
            ) || format!("{s:?}").contains(SERVER_PID)
        })
    }

    /// The indexes of the attack steps: those whose request holds the marker.
    pub fn attack_steps(&self) -> Vec<usize> {
        let Some(marker) = &self.attack_marker else {
            return Vec::new();
        };
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| marker_in_request(&s.action, marker) > 0)
            .map(|(i, _)| i)
            .collect()
    }

    /// `attack_marker` and `control` make sense (part of loading a case).
    pub(super) fn validate_escape(&self) -> Result<(), String> {
        if let Some(m) = &self.attack_marker {
            let plain = m
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c));
            if m.len() < 6 || !plain {
                return Err(format!(
                    "invalid case: `attack_marker` `{m}` must be at least 6 characters of \
                     letters, digits, `_-.:` (e.g. ATTACK_RAN)"
                ));
            }
            if self.attack_steps().is_empty() {
                return Err(format!(
                    "invalid case: no step sends the attack marker `{m}`: the attack step's \
                     command writes it first (`echo {m}; …`)"
                ));
            }
        }
        let Some(control) = &self.control else {
            return Ok(());
        };
        if self.attack_marker.is_none() {
            return Err(
                "invalid case: a `control` needs an `attack_marker` (it ends after the attack step)"
                    .into(),
            );
        }
        if control.expect.is_none() && control.steps.is_empty() {
            return Err(
                "invalid case: `control` says what escaping looks like: give `expect` (the attack \
                 step's answer) or `steps` (e.g. check_files)"
                    .into(),
            );
        }
        if let Some(e) = &control.expect {
            e.validate()
                .map_err(|e| format!("invalid case: control: {e}"))?;
        }
        for (i, s) in control.steps.iter().enumerate() {
            let kind = s.action.kind();
            if !kind.runs_over(self.transport) {
                return Err(format!(
                    "invalid case: control step {} (`{kind}`) is not available in this case's transport",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    /// The positive control of an escape case: the server gets `control_args` (Boris:
    /// `--sandbox=off`); the steps up to the last attack step run, with the attack
    /// steps' expectations replaced (the last by `control.expect`, the others by their
    /// `save` alone) and the `check_files` among them dropped (they assert confinement);
    /// then `control.steps`. Any exit counts, stderr is not checked, and teardown
    /// faults are set aside. `None` for a case without a control.
    pub fn as_control(&self, control_args: &[String]) -> Option<Case> {
        let control = self.control.as_ref()?;
        let attacks = self.attack_steps();
        let last = *attacks.last()?;
        let mut c = self.clone();
        c.args.extend(control_args.iter().cloned());
        c.golden = false;
        c.any_exit = true;
        c.exit_code = None;
        c.strict_teardown = false;
        c.stderr_contains = Strings::default();
        c.stderr_not_contains = Strings::default();
        let mut steps = Vec::new();
        for (i, s) in self.steps.iter().enumerate().take(last + 1) {
            let mut s = s.clone();
            if attacks.contains(&i) {
                s.profiles.clear();
                s.until_ms = None;
                s.expect = if i == last {
                    control.expect.clone()
                } else {
                    s.expect.take().map(|e| Expect {
                        save: e.save,
                        ..Expect::default()
                    })
                };
            } else if s.action.kind() == StepKind::CheckFiles {
                continue;
            }
            steps.push(s);
        }
        steps.extend(control.steps.iter().cloned());
        c.steps = steps;
        c.control = None;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ESCAPE: &str = r#"
source: t
tags: [sandbox, escape]
attack_marker: ATTACK_RAN
steps:
  - call: bash
    args: {command: "git init -q"}
  - call: bash
    args: {command: "echo ATTACK_RAN; cat .env"}
    expect: {not_contains: [hunter2], save: {out: "text:(.*)"}}
  - check_files:
      - {path: .env, text: "x"}
  - call: bash
    args: {command: "echo ATTACK_RAN; echo later"}
    expect: {contains: later}
  - expect_alive: true
control:
  expect: {contains: [hunter2]}
  steps:
    - check_files:
        - {path: out.txt, exists: true}
      until_ms: 2000
"#;

    #[test]
    fn the_marker_counts_on_a_line_of_its_own_only() {
        let m = "ATTACK_RAN";
        assert!(marker_on_own_line(
            "exit_code: 0\nstdout:\nATTACK_RAN\nx",
            m
        ));
        assert!(marker_on_own_line("  ATTACK_RAN  ", m));
        // JSON text: a string value, or escaped newlines around it.
        assert!(marker_on_own_line(r#"{"stdout":"ATTACK_RAN\nx"}"#, m));
        assert!(marker_on_own_line(r#"{"stdout":"a\nATTACK_RAN\n"}"#, m));
        // A refused command quoted back does not count, nor a longer word.
        assert!(!marker_on_own_line(
            "refused: cd /x && echo ATTACK_RAN; cat .env",
            m
        ));
        assert!(!marker_on_own_line(r#"{"error":"echo ATTACK_RAN"}"#, m));
        assert!(!marker_on_own_line("ATTACK_RAN_NOT", m));
        assert!(marker_failure(m, Some("ATTACK_RAN\n")).is_none());
        let f = marker_failure(m, None).unwrap();
        assert!(f.starts_with("the attack did not run"), "{f}");
    }

    #[test]
    fn attack_steps_are_those_that_send_the_marker() {
        let c = crate::spec::parse_case(ESCAPE).unwrap();
        assert_eq!(c.attack_steps(), [1, 3]);
        assert_eq!(marker_in_request(&c.steps[1].action, "ATTACK_RAN"), 1);
        assert_eq!(marker_in_request(&c.steps[2].action, "ATTACK_RAN"), 0);
    }

    #[test]
    fn the_control_ends_after_the_last_attack_with_the_control_checks() {
        let c = crate::spec::parse_case(ESCAPE).unwrap();
        let k = c.as_control(&["--sandbox=off".into()]).unwrap();
        assert_eq!(k.args, ["--sandbox=off"]);
        assert!(k.any_exit && !k.golden && k.control.is_none());
        let kinds: Vec<String> = k.steps.iter().map(|s| s.action.label()).collect();
        // The check_files between the attacks is dropped (it asserts confinement), the
        // expect_alive after the last one is never reached; the control's steps follow.
        assert_eq!(
            kinds,
            ["call bash", "call bash", "call bash", "check_files"]
        );
        // An earlier attack keeps only its `save`; the last gets the control's `expect`.
        let first = k.steps[1].expect.as_ref().unwrap();
        assert!(first.not_contains.is_empty() && first.save.contains_key("out"));
        assert_eq!(k.steps[2].expect, c.control.as_ref().unwrap().expect);
        assert_eq!(k.steps[3].until_ms, Some(2000));
        assert!(
            crate::spec::parse_case(MINIMAL_NO_CONTROL)
                .unwrap()
                .as_control(&[])
                .is_none()
        );
    }

    const MINIMAL_NO_CONTROL: &str = "source: t\nsteps:\n  - request: {method: ping}\n";

    #[test]
    fn an_http_case_is_tagged_http() {
        let c = crate::spec::parse_case(
            "source: t\ntransport: http\ntags: [sandbox]\nsteps:\n  - http_initialize: {}\n",
        )
        .unwrap();
        assert_eq!(c.tags, ["sandbox", "http"]);
    }

    #[test]
    fn escape_keys_are_checked_at_load() {
        let bad = |yaml: &str| crate::spec::parse_case(yaml).unwrap_err();
        let e = bad(
            "source: t\nattack_marker: ATTACK_RAN\nsteps:\n  - call: bash\n    args: {command: \"echo hi\"}\n",
        );
        assert!(e.contains("no step sends the attack marker"), "{e}");
        let e = bad(
            "source: t\nattack_marker: \"A R\"\nsteps:\n  - call: bash\n    args: {command: \"echo A R\"}\n",
        );
        assert!(e.contains("at least 6 characters"), "{e}");
        let e = bad(
            "source: t\ncontrol: {expect: {contains: x}}\nsteps:\n  - request: {method: ping}\n",
        );
        assert!(e.contains("needs an `attack_marker`"), "{e}");
        let e = bad(
            "source: t\nattack_marker: ATTACK_RAN\ncontrol: {}\nsteps:\n  - call: bash\n    args: {command: \"echo ATTACK_RAN\"}\n",
        );
        assert!(e.contains("says what escaping looks like"), "{e}");
        let e = bad("source: t\nrequires: [\"nc; rm\"]\nsteps:\n  - request: {method: ping}\n");
        assert!(e.contains("requires:"), "{e}");
        let e = bad("source: t\nsteps:\n  - expect_alive: maybe\n");
        assert!(e.contains("true, false or stopped"), "{e}");
    }
}
