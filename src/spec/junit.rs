//! JUnit XML for CI. Pure: renders a list of case results into a string.

use std::fmt::Write as _;
use std::time::Duration;

/// One `<testcase>`.
#[derive(Debug, Clone)]
pub struct JunitCase {
    /// The case path, e.g. `spec/view/missing.yaml`.
    pub name: String,
    /// Grouping, e.g. `spec.view`.
    pub classname: String,
    pub time: Duration,
    pub result: JunitResult,
    /// Captured server stderr (emitted as `<system-err>` for failures).
    pub stderr: String,
}

#[derive(Debug, Clone)]
pub enum JunitResult {
    Passed,
    /// `message`: the first failure; `details`: every failure, one per line.
    Failed {
        message: String,
        details: String,
    },
    /// `message`: why, in one line (empty: no reason given).
    Skipped {
        message: String,
    },
}

/// Escapes text for XML attributes and character data, dropping characters XML 1.0
/// cannot represent (control bytes other than tab, newline and carriage return).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Renders one `<testsuite>` (inside `<testsuites>`).
pub fn render(suite: &str, cases: &[JunitCase]) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.result, JunitResult::Failed { .. }))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| matches!(c.result, JunitResult::Skipped { .. }))
        .count();
    let total: Duration = cases.iter().map(|c| c.time).sum();
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" errors=\"0\" time=\"{:.3}\">",
        escape(suite),
        cases.len(),
        total.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" errors=\"0\" time=\"{:.3}\">",
        escape(suite),
        cases.len(),
        total.as_secs_f64()
    );
    for c in cases {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
            escape(&c.name),
            escape(&c.classname),
            c.time.as_secs_f64()
        );
        match &c.result {
            JunitResult::Passed => out.push_str("/>\n"),
            JunitResult::Skipped { message } if message.is_empty() => {
                out.push_str(">\n      <skipped/>\n    </testcase>\n")
            }
            JunitResult::Skipped { message } => {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    escape(message)
                );
            }
            JunitResult::Failed { message, details } => {
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\" type=\"failure\">{}</failure>",
                    escape(message),
                    escape(details)
                );
                if !c.stderr.is_empty() {
                    let _ = writeln!(out, "      <system-err>{}</system-err>", escape(&c.stderr));
                }
                out.push_str("    </testcase>\n");
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_bytes() {
        assert_eq!(
            escape(r#"a<b>&"c"'d'"#),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"
        );
        assert_eq!(escape("x\ty\nz\r"), "x\ty\nz\r");
        assert_eq!(escape("bell\u{7}esc\u{1b}[0m"), "bell\\u{7}esc\\u{1b}[0m");
        assert_eq!(escape("ünï ✓"), "ünï ✓");
    }

    #[test]
    fn renders_pass_fail_skip() {
        let cases = vec![
            JunitCase {
                name: "spec/view/a.yaml".into(),
                classname: "spec.view".into(),
                time: Duration::from_millis(1500),
                result: JunitResult::Passed,
                stderr: String::new(),
            },
            JunitCase {
                name: "spec/view/b.yaml".into(),
                classname: "spec.view".into(),
                time: Duration::from_millis(20),
                result: JunitResult::Failed {
                    message: "step 1 (call view): expected \"<x>\"".into(),
                    details: "a & b".into(),
                },
                stderr: "oops <stderr>".into(),
            },
            JunitCase {
                name: "spec/bash/c.yaml".into(),
                classname: "spec.bash".into(),
                time: Duration::ZERO,
                result: JunitResult::Skipped {
                    message: String::new(),
                },
                stderr: String::new(),
            },
            JunitCase {
                name: "spec/sandbox/d.yaml".into(),
                classname: "spec.sandbox".into(),
                time: Duration::ZERO,
                result: JunitResult::Skipped {
                    message: "requires nc (not on the server's PATH)".into(),
                },
                stderr: String::new(),
            },
        ];
        let xml = render("boris-spec", &cases);
        assert!(xml.starts_with("<?xml version=\"1.0\""));
        assert!(xml.contains(
            "<testsuite name=\"boris-spec\" tests=\"4\" failures=\"1\" skipped=\"2\" errors=\"0\" time=\"1.520\">"
        ));
        assert!(xml.contains(
            "<testcase name=\"spec/view/a.yaml\" classname=\"spec.view\" time=\"1.500\"/>"
        ));
        assert!(xml.contains(
            "<failure message=\"step 1 (call view): expected &quot;&lt;x&gt;&quot;\" type=\"failure\">a &amp; b</failure>"
        ));
        assert!(xml.contains("<system-err>oops &lt;stderr&gt;</system-err>"));
        assert!(xml.contains("<skipped/>"));
        assert!(xml.contains("<skipped message=\"requires nc (not on the server&apos;s PATH)\"/>"));
        assert!(xml.trim_end().ends_with("</testsuites>"));
        assert_eq!(xml.matches("<testcase ").count(), 4);
        assert_eq!(xml.matches("</testcase>").count(), 3);
    }
}
