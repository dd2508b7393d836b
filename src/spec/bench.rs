//! `boris-spec bench`: the latency of one tool call against a stdio MCP server.
//!
//! The server is started exactly as the runner starts it (`Server::spawn` on
//! [`server_cmdline`]), in `--cwd` or a fresh temp dir. After the `initialize`
//! handshake and the optional setup calls (each must succeed), `warmup` calls and then
//! `n` measured calls of the tool go out with up to `concurrency` requests in flight,
//! pipelined over the one stdio connection and matched by id. A call's latency runs
//! from just before its request is written to when its response is taken off the
//! reader's channel. Every wait is bounded by the per-call timeout; a timeout, a closed
//! stdout or a non-JSON line stops the run (an error), while JSON-RPC errors and
//! `isError` results are counted. The server's peak RSS is its `VmHWM` from
//! `/proc/<pid>/status`, read before stdin is closed (Linux only).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::display::{quote, show, stderr_tail, truncate};
use super::process::{Incoming, Server, server_cmdline};
use super::protocol::default_initialize_params;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Shell command line that starts the server on stdio (as `run`'s `--server`,
    /// already resolved with [`super::resolve_server_command`]).
    pub server_cmd: String,
    /// The server's working directory; `None`: a fresh temp dir, removed afterwards.
    pub cwd: Option<PathBuf>,
    /// The tool measured and its arguments (a JSON object).
    pub tool: String,
    pub args: Value,
    /// Calls made once, in order, after the handshake (e.g. `view` before
    /// `str_replace`); each must succeed.
    pub init_calls: Vec<(String, Value)>,
    /// Measured calls.
    pub calls: usize,
    /// Requests in flight at once (at least 1).
    pub concurrency: usize,
    /// Calls made (with the same concurrency) before measuring, not counted.
    pub warmup: usize,
    /// How long any one call, and any other wait, may take.
    pub timeout: Duration,
}

/// Latency percentiles (nearest rank) of the measured calls.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LatencyStats {
    pub p50: Duration,
    pub p90: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub mean: Duration,
}

/// The result of a bench run.
#[derive(Debug, Clone)]
pub struct BenchReport {
    pub tool: String,
    pub args: Value,
    pub calls: usize,
    pub concurrency: usize,
    pub warmup: usize,
    pub latency: LatencyStats,
    /// Wall time of the measured calls (first request written to last response).
    pub elapsed: Duration,
    pub calls_per_sec: f64,
    /// Responses carrying a JSON-RPC `error`.
    pub jsonrpc_errors: usize,
    /// Results with `isError: true`.
    pub tool_errors: usize,
    /// The first error of either kind, for the report.
    pub first_error: Option<String>,
    /// The largest `VmHWM` among the server's processes, in kB (None off Linux).
    pub peak_rss_kb: Option<u64>,
}

/// The `p`th percentile (0–100) of sorted samples, nearest-rank: the smallest sample
/// with at least `p`% of the samples at or below it. Zero for no samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let n = sorted.len();
    let rank = ((p.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// p50/p90/p99/max/mean of unsorted samples.
pub fn latency_stats(samples: &[Duration]) -> LatencyStats {
    if samples.is_empty() {
        return LatencyStats::default();
    }
    let mut s = samples.to_vec();
    s.sort_unstable();
    let total: Duration = s.iter().sum();
    LatencyStats {
        p50: percentile(&s, 50.0),
        p90: percentile(&s, 90.0),
        p99: percentile(&s, 99.0),
        max: s[s.len() - 1],
        mean: total / s.len() as u32,
    }
}

/// Calls per second over `elapsed` (0 if no time passed).
pub fn rate(calls: usize, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { calls as f64 / secs } else { 0.0 }
}

/// `VmHWM` (peak resident set size) in kB from the text of `/proc/<pid>/status`.
pub fn parse_vm_hwm_kb(status: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let rest = l.strip_prefix("VmHWM:")?;
        let mut words = rest.split_whitespace();
        let n = words.next()?.parse::<u64>().ok()?;
        match words.next() {
            Some("kB") | None => Some(n),
            Some(_) => None,
        }
    })
}

/// Milliseconds with three decimals, as a number.
fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

impl BenchReport {
    /// The report as JSON (latencies in milliseconds; `peak_rss_kb` null off Linux).
    pub fn to_json(&self) -> Value {
        json!({
            "tool": self.tool,
            "args": self.args,
            "calls": self.calls,
            "concurrency": self.concurrency,
            "warmup": self.warmup,
            "latency_ms": {
                "p50": ms(self.latency.p50),
                "p90": ms(self.latency.p90),
                "p99": ms(self.latency.p99),
                "max": ms(self.latency.max),
                "mean": ms(self.latency.mean),
            },
            "elapsed_s": (self.elapsed.as_secs_f64() * 1e3).round() / 1e3,
            "calls_per_sec": (self.calls_per_sec * 10.0).round() / 10.0,
            "errors": {"jsonrpc": self.jsonrpc_errors, "is_error": self.tool_errors},
            "first_error": self.first_error,
            "peak_rss_kb": self.peak_rss_kb,
        })
    }

    /// The report as a few lines of text.
    pub fn render_text(&self) -> String {
        let l = &self.latency;
        let mut out = format!(
            "bench: {} {} x {} calls, concurrency {}, warmup {}\n",
            self.tool, self.args, self.calls, self.concurrency, self.warmup
        );
        out.push_str(&format!(
            "latency (ms): p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}  mean {:.3}\n",
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.max),
            ms(l.mean)
        ));
        out.push_str(&format!(
            "throughput: {:.1} calls/s ({} calls in {:.3} s)\n",
            self.calls_per_sec,
            self.calls,
            self.elapsed.as_secs_f64()
        ));
        out.push_str(&format!(
            "errors: {} JSON-RPC errors, {} isError results\n",
            self.jsonrpc_errors, self.tool_errors
        ));
        if let Some(e) = &self.first_error {
            out.push_str(&format!("first error: {e}\n"));
        }
        match self.peak_rss_kb {
            Some(kb) => out.push_str(&format!(
                "server peak RSS (VmHWM): {kb} kB ({:.1} MiB)\n",
                kb as f64 / 1024.0
            )),
            None => out.push_str("server peak RSS: unavailable (needs Linux /proc)\n"),
        }
        out
    }
}

/// Runs the benchmark. An error means the run could not be completed (the server did
/// not start, the handshake or a setup call failed, a call timed out, the server
/// closed stdout or wrote a non-JSON line); it ends with the tail of the server's
/// stderr.
pub fn run(opts: &BenchOptions) -> Result<BenchReport, String> {
    let tmp;
    let workdir = match &opts.cwd {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("boris-bench-")
                .tempdir()
                .map_err(|e| format!("cannot create a temp dir: {e}"))?;
            tmp.path().to_path_buf()
        }
    };
    let mut conn = Conn::start(&opts.server_cmd, &workdir, opts.timeout)?;
    match conn.bench(opts) {
        Ok(report) => {
            conn.server.close_stdin();
            conn.server.wait_exit(Duration::from_secs(5));
            Ok(report)
        }
        Err(e) => {
            conn.server.kill();
            Err(format!(
                "{e}\n{}",
                stderr_tail(&conn.server.stderr_text(), 10)
            ))
        }
    }
    // Dropping the server kills its process group.
}

/// The counts of one batch of calls.
struct Batch {
    latencies: Vec<Duration>,
    elapsed: Duration,
    jsonrpc_errors: usize,
    tool_errors: usize,
    first_error: Option<String>,
}

/// One stdio connection to a server, one request at a time or pipelined (also used by
/// `boris-spec smoke` and `lint`).
pub(crate) struct Conn {
    pub(crate) server: Server,
    next_id: i64,
    timeout: Duration,
}

/// What answers a request: only a response with its id, or also an error with a null id
/// (JSON-RPC's answer to a request whose id could not be read: only when it was the one
/// call in flight, `call_tool_alone`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answered {
    ById,
    ByIdOrNullIdError,
}

impl Conn {
    /// Starts `server_cmd` (as the runner does) in `workdir`.
    pub(crate) fn start(
        server_cmd: &str,
        workdir: &std::path::Path,
        timeout: Duration,
    ) -> Result<Conn, String> {
        Conn::start_with(server_cmd, workdir, &BTreeMap::new(), timeout)
    }

    /// Starts `server_cmd` in `workdir` with `env` added to its environment.
    pub(crate) fn start_with(
        server_cmd: &str,
        workdir: &std::path::Path,
        env: &BTreeMap<String, String>,
        timeout: Duration,
    ) -> Result<Conn, String> {
        let (cmdline, direct) = server_cmdline(server_cmd, "", &[]);
        let server = Server::spawn(&cmdline, workdir, env, direct)?;
        Ok(Conn {
            server,
            next_id: 0,
            timeout,
        })
    }

    /// One `tools/call` with nothing else in flight: answered by the response with its
    /// id, or by an error with a null id — JSON-RPC's answer to a message the server
    /// could not read (nested past its parser's limit, say), which can then only be
    /// about this call.
    pub(crate) fn call_tool_alone(&mut self, tool: &str, args: &Value) -> Result<Value, String> {
        let msg = self.call_msg(tool, args);
        self.answer_to(&msg, Answered::ByIdOrNullIdError)
    }

    /// `initialize` and `notifications/initialized`; returns the initialize result.
    pub(crate) fn initialize(&mut self) -> Result<Value, String> {
        let init = json!({"jsonrpc": "2.0", "id": self.alloc_id(), "method": "initialize",
                          "params": default_initialize_params()});
        let r = self
            .request(&init)
            .map_err(|e| format!("initialize: {e}"))?;
        if let Some(err) = r.get("error") {
            return Err(format!(
                "initialize returned a JSON-RPC error: {}",
                show(err)
            ));
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(r.get("result").cloned().unwrap_or(Value::Null))
    }

    /// One request by method, answered (result or JSON-RPC error).
    pub(crate) fn call_method(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, String> {
        let mut msg = json!({"jsonrpc": "2.0", "id": self.alloc_id(), "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.request(&msg)
    }

    fn bench(&mut self, opts: &BenchOptions) -> Result<BenchReport, String> {
        self.initialize()?;

        for (tool, args) in &opts.init_calls {
            let msg = self.call_msg(tool, args);
            let r = self
                .request(&msg)
                .map_err(|e| format!("setup call {tool}: {e}"))?;
            if let Some(e) = call_error(&r) {
                return Err(format!("setup call {tool} failed: {e}"));
            }
        }

        let concurrency = opts.concurrency.max(1);
        if opts.warmup > 0 {
            self.batch(&opts.tool, &opts.args, opts.warmup, concurrency)
                .map_err(|e| format!("warmup: {e}"))?;
        }
        let b = self.batch(&opts.tool, &opts.args, opts.calls, concurrency)?;
        let peak_rss_kb = self
            .server
            .server_pids()
            .iter()
            .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
            .filter_map(|s| parse_vm_hwm_kb(&s))
            .max();
        Ok(BenchReport {
            tool: opts.tool.clone(),
            args: opts.args.clone(),
            calls: opts.calls,
            concurrency,
            warmup: opts.warmup,
            latency: latency_stats(&b.latencies),
            elapsed: b.elapsed,
            calls_per_sec: rate(b.latencies.len(), b.elapsed),
            jsonrpc_errors: b.jsonrpc_errors,
            tool_errors: b.tool_errors,
            first_error: b.first_error,
            peak_rss_kb,
        })
    }

    fn alloc_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    fn call_msg(&mut self, tool: &str, args: &Value) -> Value {
        json!({"jsonrpc": "2.0", "id": self.alloc_id(), "method": "tools/call",
               "params": {"name": tool, "arguments": args}})
    }

    fn send(&mut self, msg: &Value) -> Result<(), String> {
        self.server
            .write(format!("{msg}\n").into_bytes(), self.timeout)
    }

    /// Sends one request and waits for its response.
    fn request(&mut self, msg: &Value) -> Result<Value, String> {
        self.answer_to(msg, Answered::ById)
    }

    /// Sends `msg` and waits for what answers it (see [`Answered`]).
    fn answer_to(&mut self, msg: &Value, answered: Answered) -> Result<Value, String> {
        let key = msg.get("id").map(Value::to_string).unwrap_or_default();
        self.send(msg)?;
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some((id, v, _)) = self.next_response(deadline, &key)?
                && (id == key
                    || (answered == Answered::ByIdOrNullIdError
                        && id == "null"
                        && v.get("error").is_some()))
            {
                return Ok(v);
            }
        }
    }

    /// `n` calls with up to `concurrency` in flight.
    fn batch(
        &mut self,
        tool: &str,
        args: &Value,
        n: usize,
        concurrency: usize,
    ) -> Result<Batch, String> {
        let mut b = Batch {
            latencies: Vec::with_capacity(n),
            elapsed: Duration::ZERO,
            jsonrpc_errors: 0,
            tool_errors: 0,
            first_error: None,
        };
        let mut in_flight: HashMap<String, Instant> = HashMap::new();
        let mut sent = 0;
        let start = Instant::now();
        while b.latencies.len() < n {
            while sent < n && in_flight.len() < concurrency {
                let msg = self.call_msg(tool, args);
                let key = msg.get("id").map(Value::to_string).unwrap_or_default();
                in_flight.insert(key, Instant::now());
                self.send(&msg)?;
                sent += 1;
            }
            let Some((oldest_key, oldest)) = in_flight
                .iter()
                .min_by_key(|(_, t)| **t)
                .map(|(k, t)| (k.clone(), *t))
            else {
                break;
            };
            let Some((id, v, read_at)) = self.next_response(oldest + self.timeout, &oldest_key)?
            else {
                continue;
            };
            let Some(sent_at) = in_flight.remove(&id) else {
                continue; // not ours (a late or unknown id): ignore
            };
            b.latencies.push(read_at.saturating_duration_since(sent_at));
            if let Some(e) = call_error(&v) {
                if v.get("error").is_some() {
                    b.jsonrpc_errors += 1;
                } else {
                    b.tool_errors += 1;
                }
                b.first_error.get_or_insert(e);
            }
        }
        b.elapsed = start.elapsed();
        Ok(b)
    }

    /// Waits until `deadline` for the next message and handles it: a response is
    /// returned with its id (as JSON text) and the moment its line was read; a server
    /// request is answered and a notification dropped (both `None`). `waiting_for` names
    /// the id in a timeout error.
    fn next_response(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
    ) -> Result<Option<(String, Value, Instant)>, String> {
        if self.server.stdout_closed {
            return Err(format!(
                "the server closed its stdout before answering id {waiting_for}{}",
                self.server.exit_note()
            ));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let (inc, read_at) = match self.server.out.recv_timeout(left) {
            Ok(arrived) => arrived,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "no response to id {waiting_for} within {}ms",
                    self.timeout.as_millis()
                ));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => (Incoming::Eof, Instant::now()),
        };
        match inc {
            Incoming::Json(v) => {
                let id = v.get("id").cloned();
                match (v.get("method").is_some(), id) {
                    (true, Some(id)) => {
                        let reply = if v.get("method").and_then(Value::as_str) == Some("ping") {
                            json!({"jsonrpc": "2.0", "id": id, "result": {}})
                        } else {
                            json!({"jsonrpc": "2.0", "id": id, "error": {
                                "code": -32601, "message": "boris-spec does not handle this request"}})
                        };
                        self.send(&reply)?;
                        Ok(None)
                    }
                    (true, None) => Ok(None),
                    (false, Some(id)) => Ok(Some((id.to_string(), v, read_at))),
                    (false, None) => Err(format!(
                        "server sent a message without an id or method: {}",
                        show(&v)
                    )),
                }
            }
            Incoming::Garbage(line) => Err(format!(
                "server wrote a non-JSON line on stdout: {}",
                quote(&line)
            )),
            Incoming::Eof => {
                self.server.stdout_closed = true;
                Err(format!(
                    "the server closed its stdout before answering id {waiting_for}{}",
                    self.server.exit_note()
                ))
            }
            Incoming::ReadError(e) => {
                self.server.stdout_closed = true;
                Err(format!("reading the server's stdout failed: {e}"))
            }
        }
    }
}

/// Why a `tools/call` response is an error (JSON-RPC `error` or `isError: true`).
fn call_error(v: &Value) -> Option<String> {
    if let Some(e) = v.get("error") {
        return Some(format!("JSON-RPC error {}", truncate(&show(e), 300)));
    }
    let r = v.get("result")?;
    if r.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = r
            .get("content")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find_map(|b| b.get("text").and_then(Value::as_str)))
            .unwrap_or("");
        return Some(format!("isError: {}", truncate(text, 300)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms_(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let s: Vec<Duration> = (1..=100).map(ms_).collect();
        assert_eq!(percentile(&s, 50.0), ms_(50));
        assert_eq!(percentile(&s, 90.0), ms_(90));
        assert_eq!(percentile(&s, 99.0), ms_(99));
        assert_eq!(percentile(&s, 100.0), ms_(100));
        assert_eq!(percentile(&s, 0.0), ms_(1));
        let one = [ms_(7)];
        for p in [0.0, 50.0, 99.0, 100.0] {
            assert_eq!(percentile(&one, p), ms_(7));
        }
        // 3 samples: p50 is the 2nd, p90 and p99 the 3rd.
        let three = [ms_(1), ms_(2), ms_(3)];
        assert_eq!(percentile(&three, 50.0), ms_(2));
        assert_eq!(percentile(&three, 90.0), ms_(3));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }

    #[test]
    fn stats_sort_their_input() {
        let s = [ms_(4), ms_(1), ms_(10), ms_(2), ms_(3)];
        let st = latency_stats(&s);
        assert_eq!(st.p50, ms_(3));
        assert_eq!(st.p90, ms_(10));
        assert_eq!(st.max, ms_(10));
        assert_eq!(st.mean, ms_(4));
        assert_eq!(latency_stats(&[]), LatencyStats::default());
        assert_eq!(rate(500, Duration::from_millis(250)), 2000.0);
        assert_eq!(rate(5, Duration::ZERO), 0.0);
    }

    #[test]
    fn vm_hwm_from_proc_status() {
        let status = "Name:\tboris\nVmPeak:\t  123456 kB\nVmHWM:\t    9876 kB\nVmRSS:\t 9000 kB\n";
        assert_eq!(parse_vm_hwm_kb(status), Some(9876));
        assert_eq!(parse_vm_hwm_kb("Name:\tx\n"), None);
        assert_eq!(parse_vm_hwm_kb("VmHWM:\tlots kB\n"), None);
        // This process has a status file on Linux.
        if cfg!(target_os = "linux") {
            let own = std::fs::read_to_string("/proc/self/status").unwrap();
            assert!(parse_vm_hwm_kb(&own).is_some_and(|kb| kb > 0));
        }
    }

    #[test]
    fn call_errors_are_classified() {
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad"}});
        assert!(call_error(&rpc).unwrap().starts_with("JSON-RPC error"));
        let tool = json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
            "content": [{"type": "text", "text": "[NOT_FOUND] no such file"}]}});
        assert_eq!(
            call_error(&tool).unwrap(),
            "isError: [NOT_FOUND] no such file"
        );
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        assert_eq!(call_error(&ok), None);
    }
}
