//! Escape cases (issue 25 §1): the attack marker that proves an attack step ran, and
//! the positive control, the same case run where nothing confines the server, which
//! must escape. Pure: the rules on a loaded case and the control case built from it.

use super::*;
use crate::spec::vocabulary::Capability;

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

    /// The indexes of the steps whose answer must show the marker: each attack step's
    /// own; for one sent with `wait: false` (a command that runs while the next steps
    /// change the workdir), the `await` of its id; for one that starts a background
    /// task, the `task_output` after it. `Err` names an attack step whose answer no
    /// later step gets.
    pub fn marker_answer_steps(&self) -> Result<Vec<usize>, String> {
        let mut answers = Vec::new();
        for i in self.attack_steps() {
            let later = |answers: &dyn Fn(&Action) -> bool| {
                (i + 1..self.steps.len()).find(|&j| answers(&self.steps[j].action))
            };
            let answer = match answered_later(&self.steps[i].action) {
                None => Some(i),
                Some(Later::Await(id)) => {
                    later(&|a| matches!(a, Action::Await { id: awaited } if awaited == id))
                }
                Some(Later::TaskOutput) => later(
                    &|a| matches!(a, Action::Do { capability, .. } if *capability == Capability::TaskOutput),
                ),
            };
            let Some(j) = answer else {
                return Err(format!(
                    "invalid case: attack step {} answers later (sent with `wait: false`, or \
                     a background task): give it an `id` and a later `await` of it, or a \
                     later `task_output` step, whose answer shows the marker",
                    i + 1
                ));
            };
            answers.push(j);
        }
        Ok(answers)
    }

    /// `attack_marker`, `control` and `no_control` make sense (part of loading a case).
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
            self.marker_answer_steps()?;
        }
        if let Some(why) = &self.no_control {
            if self.control.is_some() {
                return Err(
                    "invalid case: `no_control` says why a case has no `control`: \
                     give one or the other"
                        .into(),
                );
            }
            if why.trim().len() < 20 {
                return Err(format!(
                    "invalid case: `no_control` says why no unconfined run could show the \
                     attack succeed, in a sentence (got {why:?})"
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
        for r in control.requires.iter() {
            crate::spec::requires::Requirement::parse(r)
                .map_err(|e| format!("invalid case: control: requires: {e}"))?;
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
    /// `--sandbox=off`) and the control's `env`, the case needs the control's `requires`
    /// too; the steps up to the last marker answer (see
    /// [`Case::marker_answer_steps`]) run, with the answers' expectations replaced (the
    /// last by `control.expect`, the others by their `save` alone) and the `check_files`
    /// among them dropped (they assert confinement); then `control.steps`. Any exit
    /// counts, stderr is not checked, and teardown faults are set aside. `None` for a
    /// case without a control.
    pub fn as_control(&self, control_args: &[String]) -> Option<Case> {
        let control = self.control.as_ref()?;
        let answers = self.marker_answer_steps().ok()?;
        let last = *answers.last()?;
        let mut c = self.clone();
        c.args.extend(control_args.iter().cloned());
        c.env.extend(control.env.clone());
        c.requires.0.extend(control.requires.iter().cloned());
        c.golden = false;
        c.any_exit = true;
        c.exit_code = None;
        c.strict_teardown = false;
        c.stderr_contains = Strings::default();
        c.stderr_not_contains = Strings::default();
        let mut steps = Vec::new();
        for (i, s) in self.steps.iter().enumerate().take(last + 1) {
            let mut s = s.clone();
            if answers.contains(&i) {
                // `until_ms` stays: a step that waits for the attack to start (a
                // swap loop running) waits as long in the control.
                s.profiles.clear();
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

/// Where an attack step's answer comes, when not in its own response.
enum Later<'a> {
    /// Sent with `wait: false`: at the `await` of this id.
    Await(&'a serde_json::Value),
    /// A background task started: in the task's output.
    TaskOutput,
}

fn answered_later(action: &Action) -> Option<Later<'_>> {
    const NO_ID: &serde_json::Value = &serde_json::Value::Null;
    match action {
        Action::Do {
            capability: Capability::RunBackground,
            ..
        } => Some(Later::TaskOutput),
        Action::Do {
            id, wait: false, ..
        }
        | Action::Call {
            id, wait: false, ..
        }
        | Action::Request {
            id, wait: false, ..
        } => Some(Later::Await(id.as_ref().unwrap_or(NO_ID))),
        _ => None,
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

    #[test]
    fn a_deferred_attack_shows_its_marker_where_its_answer_comes() {
        // A command sent without waiting: its answer is the `await` of its id.
        let c = crate::spec::parse_case(
            "source: t\nattack_marker: ATTACK_RAN\nsteps:\n  - do: run\n    with: {command: \"echo ATTACK_RAN\"}\n    id: a\n    wait: false\n  - write:\n      - {path: x, text: y}\n  - await: a\n    expect: {contains: ATTACK_RAN}\ncontrol:\n  expect: {contains: x}\n",
        )
        .unwrap();
        assert_eq!(c.attack_steps(), [0]);
        assert_eq!(c.marker_answer_steps().unwrap(), [2]);
        // The control runs up to the await, whose expectation it replaces.
        let k = c.as_control(&[]).unwrap();
        assert_eq!(k.steps.len(), 3);
        assert_eq!(k.steps[2].expect, c.control.as_ref().unwrap().expect);
        // A background task: its output, the task_output after it.
        let c = crate::spec::parse_case(
            "source: t\nattack_marker: ATTACK_RAN\nsteps:\n  - do: run_background\n    with: {command: \"echo ATTACK_RAN\"}\n  - sleep_ms: 10\n  - do: task_output\n    with: {task: 1}\n",
        )
        .unwrap();
        assert_eq!(c.marker_answer_steps().unwrap(), [2]);
        // Sent without waiting and never awaited: refused at load.
        let e = crate::spec::parse_case(
            "source: t\nattack_marker: ATTACK_RAN\nsteps:\n  - do: run\n    with: {command: \"echo ATTACK_RAN\"}\n    id: a\n    wait: false\n",
        )
        .unwrap_err();
        assert!(e.contains("later `await`"), "{e}");
    }

    #[test]
    fn a_control_may_turn_the_file_tools_checks_off_and_no_control_says_why() {
        let yaml = "source: t\nattack_marker: ATTACK_RAN\nsteps:\n  - do: run\n    with: {command: \"echo ATTACK_RAN\"}\ncontrol:\n  env: {BORIS_TEST_UNCHECKED_FILE_TOOLS: \"1\"}\n  requires: [probe-simulation]\n  steps:\n    - do: read_file\n      with: {path: a}\n      expect: {contains: x}\n";
        let c = crate::spec::parse_case(yaml).unwrap();
        let k = c.as_control(&["--sandbox=off".into()]).unwrap();
        assert_eq!(k.env["BORIS_TEST_UNCHECKED_FILE_TOOLS"], "1");
        assert_eq!(k.requires.0, ["probe-simulation"]);
        assert!(c.requires.is_empty(), "the case itself needs nothing more");
        let bad = |yaml: &str| crate::spec::parse_case(yaml).unwrap_err();
        let e = bad(&yaml.replace(
            "control:",
            "no_control: because it cannot ever be shown\ncontrol:",
        ));
        assert!(e.contains("one or the other"), "{e}");
        let e = bad("source: t\nno_control: no\nsteps:\n  - request: {method: ping}\n");
        assert!(e.contains("in a sentence"), "{e}");
        let e = bad(&yaml.replace("[probe-simulation]", "[\"nc; rm\"]"));
        assert!(e.contains("control: requires"), "{e}");
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
