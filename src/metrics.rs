//! Prometheus metrics (issue 31 §3), written by hand in the text exposition format
//! (0.0.4): calls by tool and outcome, a latency histogram per tool, bytes of output by
//! tool, sandbox refusals, live sessions.
//! Fed by [`crate::call_log`]; served at `GET /metrics` behind the token.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds: a view takes milliseconds, a build
/// minutes.
const BOUNDS: [f64; 14] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0, 120.0, 600.0,
];

#[derive(Default)]
struct Histogram {
    /// Per bucket (not cumulative), then the count past the last bound.
    buckets: [u64; BOUNDS.len() + 1],
    sum: f64,
}

#[derive(Default)]
pub struct Metrics {
    /// Calls by (tool, outcome).
    calls: Mutex<BTreeMap<(String, String), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
    /// Bytes of result text by tool: what the calls sent back to the model.
    output_bytes: Mutex<BTreeMap<String, u64>>,
    /// Command results that ended with the sandbox's refusal line.
    sandbox_refusals: AtomicU64,
    /// What runs now, by [`Gauge`]: moved by [`Live`] guards, across every session.
    live: [AtomicI64; 3],
}

/// Things that run for a while, counted while they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gauge {
    /// Background commands (tasks of every profile).
    Tasks,
    /// Terminal sessions.
    Terminals,
    /// Language servers started (of every session).
    LanguageServers,
}

impl Gauge {
    const ALL: [Gauge; 3] = [Gauge::Tasks, Gauge::Terminals, Gauge::LanguageServers];

    fn name(self) -> (&'static str, &'static str) {
        match self {
            Gauge::Tasks => ("boris_tasks_running", "Background commands running."),
            Gauge::Terminals => ("boris_terminals_running", "Terminal sessions running."),
            Gauge::LanguageServers => (
                "boris_language_servers_running",
                "Language servers started and not yet stopped.",
            ),
        }
    }
}

/// Counts one running thing in the process's metrics from its making to its drop: held by
/// what ends when the thing ends, so no path can forget to count it down.
#[derive(Debug)]
pub struct Live(Gauge);

impl Live {
    pub fn new(gauge: Gauge) -> Live {
        global().live[gauge as usize].fetch_add(1, Ordering::Relaxed);
        Live(gauge)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        global().live[self.0 as usize].fetch_sub(1, Ordering::Relaxed);
    }
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::default)
}

/// A label value as the text format quotes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    /// One call ended. `tool` must be a registered tool's name (client text would let a
    /// client grow the label set without bound).
    pub fn record(&self, tool: &str, outcome: &str, took: Duration) {
        if let Ok(mut calls) = self.calls.lock() {
            *calls
                .entry((tool.to_string(), outcome.to_string()))
                .or_default() += 1;
        }
        if let Ok(mut latency) = self.latency.lock() {
            let secs = took.as_secs_f64();
            let h = latency.entry(tool.to_string()).or_default();
            let at = BOUNDS
                .iter()
                .position(|b| secs <= *b)
                .unwrap_or(BOUNDS.len());
            h.buckets[at] += 1;
            h.sum += secs;
        }
    }

    /// A call's result carried `bytes` of text.
    pub fn record_output(&self, tool: &str, bytes: u64) {
        if let Ok(mut output) = self.output_bytes.lock() {
            *output.entry(tool.to_string()).or_default() += bytes;
        }
    }

    /// A command's result ended with the sandbox's refusal line (issue 18 §2).
    pub fn record_sandbox_refusal(&self) {
        self.sandbox_refusals.fetch_add(1, Ordering::Relaxed);
    }

    /// The exposition text.
    pub fn render(&self, live_sessions: usize) -> String {
        let mut out = String::new();
        out.push_str("# HELP boris_tool_calls_total Tool calls ended, by tool and outcome.\n");
        out.push_str("# TYPE boris_tool_calls_total counter\n");
        if let Ok(calls) = self.calls.lock() {
            for ((tool, outcome), n) in calls.iter() {
                let _ = writeln!(
                    out,
                    "boris_tool_calls_total{{tool=\"{}\",outcome=\"{}\"}} {n}",
                    escape(tool),
                    escape(outcome)
                );
            }
        }
        out.push_str("# HELP boris_tool_call_duration_seconds How long tool calls took.\n");
        out.push_str("# TYPE boris_tool_call_duration_seconds histogram\n");
        if let Ok(latency) = self.latency.lock() {
            for (tool, h) in latency.iter() {
                let tool = escape(tool);
                let mut cumulative = 0;
                for (bound, n) in BOUNDS.iter().zip(h.buckets) {
                    cumulative += n;
                    let _ = writeln!(
                        out,
                        "boris_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{bound}\"}} {cumulative}"
                    );
                }
                let count = cumulative + h.buckets[BOUNDS.len()];
                let _ = writeln!(
                    out,
                    "boris_tool_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}} {count}"
                );
                let _ = writeln!(
                    out,
                    "boris_tool_call_duration_seconds_sum{{tool=\"{tool}\"}} {}",
                    h.sum
                );
                let _ = writeln!(
                    out,
                    "boris_tool_call_duration_seconds_count{{tool=\"{tool}\"}} {count}"
                );
            }
        }
        out.push_str(
            "# HELP boris_tool_output_bytes_total Bytes of result text the calls returned, by tool.\n",
        );
        out.push_str("# TYPE boris_tool_output_bytes_total counter\n");
        if let Ok(output) = self.output_bytes.lock() {
            for (tool, bytes) in output.iter() {
                let _ = writeln!(
                    out,
                    "boris_tool_output_bytes_total{{tool=\"{}\"}} {bytes}",
                    escape(tool)
                );
            }
        }
        out.push_str(
            "# HELP boris_sandbox_refusals_total Command results the sandbox's refusal line ended.\n",
        );
        out.push_str("# TYPE boris_sandbox_refusals_total counter\n");
        let _ = writeln!(
            out,
            "boris_sandbox_refusals_total {}",
            self.sandbox_refusals.load(Ordering::Relaxed)
        );
        for gauge in Gauge::ALL {
            let (name, help) = gauge.name();
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            let _ = writeln!(
                out,
                "{name} {}",
                self.live[gauge as usize].load(Ordering::Relaxed).max(0)
            );
        }
        out.push_str("# HELP boris_sessions Open MCP sessions over HTTP.\n");
        out.push_str("# TYPE boris_sessions gauge\n");
        let _ = writeln!(out, "boris_sessions {live_sessions}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_buckets() {
        let m = Metrics::default();
        m.record("view", "ok", Duration::from_millis(3));
        m.record("view", "ok", Duration::from_secs(700));
        m.record("bash", "error", Duration::from_millis(20));
        m.record_output("view", 4096);
        m.record_output("view", 10);
        m.record_sandbox_refusal();
        let text = m.render(2);
        assert!(text.contains("boris_tool_output_bytes_total{tool=\"view\"} 4106\n"));
        assert!(text.contains("boris_sandbox_refusals_total 1\n"));
        assert!(text.contains("boris_tool_calls_total{tool=\"view\",outcome=\"ok\"} 2\n"));
        assert!(text.contains("boris_tool_calls_total{tool=\"bash\",outcome=\"error\"} 1\n"));
        assert!(
            text.contains(
                "boris_tool_call_duration_seconds_bucket{tool=\"view\",le=\"0.005\"} 1\n"
            )
        );
        assert!(
            text.contains("boris_tool_call_duration_seconds_bucket{tool=\"view\",le=\"600\"} 1\n")
        );
        assert!(
            text.contains("boris_tool_call_duration_seconds_bucket{tool=\"view\",le=\"+Inf\"} 2\n")
        );
        assert!(text.contains("boris_tool_call_duration_seconds_count{tool=\"view\"} 2\n"));
        assert!(text.contains("boris_sessions 2\n"));
        assert!(text.contains("# TYPE boris_terminals_running gauge\n"));
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
