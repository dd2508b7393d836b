//! `boris-spec bench --transport http`: a tool call's latency over streamable HTTP for
//! N concurrent clients, optionally while an attack runs, and the server's memory
//! before, during and after (issue 27 §4).
//!
//! Each client is a thread with its own session, opened before any attack starts
//! (session era: `initialize`, then `Mcp-Session-Id` on every call) or none (stateless 2026-07-28 requests, `_meta` and
//! the `Mcp-Method`/`Mcp-Name` headers); it takes calls off a shared count, waits the
//! think time between them, and sends each on a fresh connection (`Connection: close`,
//! [`super::http::send`]). A call's latency runs from connect to the last byte of its
//! response; a call that fails (no answer in time, a status other than 200, no result)
//! is counted, not timed, and the run goes on — under attack that count is the finding.
//! Attacks come from another loopback address (`--attack-from`), so per-address caps
//! apply to them and not to the clients; they keep their `--attack-count` connections
//! (or session creators) up, reconnecting when the server closes one, until the
//! measured calls are done. Memory is the server's `VmRSS`: after one warm session
//! (before), the highest sample during the calls (during), and `--after-wait` seconds
//! after the attack stopped (after; wait past `--session-idle-timeout` to see sessions
//! reaped).

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::bench::{LatencyStats, latency_stats};
use super::http::{Request, Response, send};
use super::protocol::{STATELESS_ERA, default_initialize_params, stateless_meta};

/// Which protocol era the clients speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Era {
    /// `initialize` and a session per client.
    Session,
    /// Stateless 2026-07-28 requests.
    Stateless,
}

/// What runs against the server while the clients call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Attack {
    None,
    /// Connections that send nothing.
    Silent,
    /// Connections that send the HTTP/2 preface and nothing more.
    H2Preface,
    /// `initialize` after `initialize`, never ending a session.
    Sessions,
    /// POSTs whose body stops one byte short.
    SlowBodies,
}

#[derive(Debug, Clone)]
pub struct HttpBenchOptions {
    /// `host:port` of the server.
    pub addr: String,
    /// The server's process ids, for its memory (empty: not measured).
    pub pids: Vec<i32>,
    pub tool: String,
    pub args: Value,
    pub init_calls: Vec<(String, Value)>,
    pub era: Era,
    /// Measured calls, over all clients.
    pub calls: usize,
    /// Concurrent clients.
    pub clients: usize,
    pub warmup: usize,
    /// Pause of a client between two calls.
    pub think: Duration,
    pub timeout: Duration,
    pub attack: Attack,
    pub attack_count: usize,
    pub attack_from: Ipv4Addr,
    /// Bytes of a slow body (one more is announced and never sent).
    pub attack_body_bytes: usize,
    /// How long after the attack stops the "after" memory is read.
    pub after_wait: Duration,
    /// Sent as `Authorization: Bearer …` with every client request (not the attack's).
    pub bearer: Option<String>,
}

#[derive(Debug, Clone)]
pub struct HttpBenchReport {
    pub latency: LatencyStats,
    pub ok_calls: usize,
    pub failed_calls: usize,
    pub first_failure: Option<String>,
    pub elapsed: Duration,
    pub attack_connections: u64,
    pub attack_refused: u64,
    pub rss_before_kb: Option<u64>,
    pub rss_during_kb: Option<u64>,
    pub rss_end_of_attack_kb: Option<u64>,
    pub rss_after_kb: Option<u64>,
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn mib(kb: Option<u64>) -> Value {
    kb.map_or(Value::Null, |kb| {
        json!((kb as f64 / 1024.0 * 10.0).round() / 10.0)
    })
}

impl HttpBenchReport {
    pub fn to_json(&self, opts: &HttpBenchOptions) -> Value {
        json!({
            "transport": "http",
            "era": format!("{:?}", opts.era).to_lowercase(),
            "tool": opts.tool, "args": opts.args,
            "clients": opts.clients, "calls": opts.calls, "think_ms": ms(opts.think),
            "attack": format!("{:?}", opts.attack), "attack_count": opts.attack_count,
            "latency_ms": {"p50": ms(self.latency.p50), "p90": ms(self.latency.p90),
                           "p99": ms(self.latency.p99), "max": ms(self.latency.max)},
            "ok_calls": self.ok_calls, "failed_calls": self.failed_calls,
            "first_failure": self.first_failure,
            "elapsed_s": (self.elapsed.as_secs_f64() * 1e3).round() / 1e3,
            "attack_connections": self.attack_connections,
            "attack_refused": self.attack_refused,
            "rss_mib": {"before": mib(self.rss_before_kb), "during": mib(self.rss_during_kb),
                        "end_of_attack": mib(self.rss_end_of_attack_kb),
                        "after": mib(self.rss_after_kb)},
        })
    }

    pub fn render_text(&self, opts: &HttpBenchOptions) -> String {
        let l = &self.latency;
        let show =
            |kb: Option<u64>| kb.map_or("?".to_string(), |kb| format!("{:.1}", kb as f64 / 1024.0));
        let mut out = format!(
            "bench (http, {:?} era): {} {} x {} calls, {} clients, think {} ms, attack {:?} x {}\n",
            opts.era,
            opts.tool,
            opts.args,
            opts.calls,
            opts.clients,
            ms(opts.think),
            opts.attack,
            opts.attack_count
        );
        out.push_str(&format!(
            "latency (ms): p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}\n",
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.max)
        ));
        out.push_str(&format!(
            "calls: {} answered, {} failed in {:.3} s\n",
            self.ok_calls,
            self.failed_calls,
            self.elapsed.as_secs_f64()
        ));
        if let Some(f) = &self.first_failure {
            out.push_str(&format!("first failure: {f}\n"));
        }
        out.push_str(&format!(
            "attack: {} connections made, {} refused by the server\n",
            self.attack_connections, self.attack_refused
        ));
        out.push_str(&format!(
            "server RSS (MiB): before {}  during {}  end of attack {}  after {}\n",
            show(self.rss_before_kb),
            show(self.rss_during_kb),
            show(self.rss_end_of_attack_kb),
            show(self.rss_after_kb)
        ));
        out
    }
}

/// `VmRSS` in kB summed over `pids` (None if none could be read).
pub fn rss_kb(pids: &[i32]) -> Option<u64> {
    let values: Vec<u64> = pids
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
        .filter_map(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
        })
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// One client: its session (if any) and request ids.
struct Client<'a> {
    opts: &'a HttpBenchOptions,
    session: Option<String>,
    next_id: i64,
}

impl<'a> Client<'a> {
    fn post(&mut self, body: &Value, method: &str, name: Option<&str>) -> Result<Response, String> {
        let mut headers = vec![
            ("Host".to_string(), self.opts.addr.clone()),
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        if let Some(token) = &self.opts.bearer {
            headers.push(("Authorization".into(), format!("Bearer {token}")));
        }
        match (&self.session, self.opts.era) {
            (Some(s), _) => {
                headers.push(("Mcp-Session-Id".into(), s.clone()));
                headers.push(("MCP-Protocol-Version".into(), "2025-11-25".into()));
            }
            (None, Era::Stateless) => {
                headers.push(("MCP-Protocol-Version".into(), STATELESS_ERA.into()));
                headers.push(("Mcp-Method".into(), method.into()));
                if let Some(n) = name {
                    headers.push(("Mcp-Name".into(), n.into()));
                }
            }
            (None, Era::Session) => {}
        }
        let req = Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers,
            body: body.to_string().into_bytes(),
        };
        send(&self.opts.addr, &req, self.opts.timeout)
    }

    fn start(opts: &'a HttpBenchOptions) -> Result<Self, String> {
        let mut c = Client {
            opts,
            session: None,
            next_id: 0,
        };
        if opts.era == Era::Session {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": default_initialize_params()});
            let r = c.post(&init, "initialize", None)?;
            let session = r
                .header("mcp-session-id")
                .ok_or_else(|| format!("initialize: {} {}", r.status, r.body_text()))?;
            c.session = Some(session);
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            c.post(&note, "notifications/initialized", None)?;
        }
        for (tool, args) in &opts.init_calls {
            c.call(tool, args)
                .map_err(|e| format!("setup call {tool}: {e}"))?;
        }
        Ok(c)
    }

    /// One `tools/call`: Ok if it got a result that is not an error.
    fn call(&mut self, tool: &str, args: &Value) -> Result<(), String> {
        self.next_id += 1;
        let mut params = json!({"name": tool, "arguments": args});
        if self.opts.era == Era::Stateless {
            params["_meta"] = Value::Object(stateless_meta(None));
        }
        let msg =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params});
        let r = self.post(&msg, "tools/call", Some(tool))?;
        if r.status != 200 {
            return Err(format!("HTTP {}: {}", r.status, r.body_text()));
        }
        let reply = r
            .messages()
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(self.next_id)))
            .ok_or_else(|| "no response in the body".to_string())?;
        match (reply.get("error"), reply.pointer("/result/isError")) {
            (Some(e), _) => Err(format!("JSON-RPC error {e}")),
            (None, Some(Value::Bool(true))) => Err(format!("isError: {reply}")),
            _ => Ok(()),
        }
    }
}

#[derive(Default)]
struct Tally {
    samples: Vec<Duration>,
    failed: usize,
    first_failure: Option<String>,
}

/// Runs the clients (and the attack) against a listening server.
pub fn run(opts: &HttpBenchOptions) -> Result<HttpBenchReport, String> {
    // One warm session, then the baseline.
    Client::start(opts)?
        .call(&opts.tool, &opts.args)
        .map_err(|e| format!("warm-up call: {e}"))?;
    std::thread::sleep(Duration::from_secs(1));
    let rss_before_kb = rss_kb(&opts.pids);

    // The clients were there before the attack (their sessions too).
    let mut clients = Vec::new();
    for _ in 0..opts.clients.max(1) {
        clients.push(Client::start(opts).map_err(|e| format!("client start: {e}"))?);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let counters = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let attackers = super::bench_attack::start(opts, &stop, &counters);
    if opts.attack != Attack::None {
        std::thread::sleep(Duration::from_secs(2));
    }

    let peak = Arc::new(AtomicU64::new(0));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak, sampling, pids) = (peak.clone(), sampling.clone(), opts.pids.clone());
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                if let Some(kb) = rss_kb(&pids) {
                    peak.fetch_max(kb, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    let tickets = AtomicUsize::new(0);
    let total = opts.warmup + opts.calls;
    let tally = Mutex::new(Tally::default());
    let started = Instant::now();
    let n_clients = clients.len().max(1) as u32;
    std::thread::scope(|scope| {
        for (i, mut client) in clients.into_iter().enumerate() {
            let (tickets, tally) = (&tickets, &tally);
            scope.spawn(move || {
                // Paced clients start spread over one think time and draw each pause
                // from [0.5, 1.5) x --think-ms (seeded by the client's number, so runs
                // repeat): clients in lockstep would send every call in bursts of
                // --clients at once, and the tail would measure the burst, not the load.
                let mut pause = Pacing::new(opts.think, i as u64);
                if !opts.think.is_zero() {
                    std::thread::sleep(opts.think * i as u32 / n_clients);
                }
                loop {
                    let ticket = tickets.fetch_add(1, Ordering::Relaxed);
                    if ticket >= total {
                        break;
                    }
                    let t0 = Instant::now();
                    let outcome = client.call(&opts.tool, &opts.args);
                    let took = t0.elapsed();
                    if ticket >= opts.warmup {
                        let mut t = tally.lock().unwrap_or_else(|e| e.into_inner());
                        match outcome {
                            Ok(()) => t.samples.push(took),
                            Err(e) => {
                                t.failed += 1;
                                t.first_failure.get_or_insert(e);
                            }
                        }
                    }
                    if let Some(d) = pause.next() {
                        std::thread::sleep(d);
                    }
                }
            });
        }
    });
    let elapsed = started.elapsed();
    sampling.store(false, Ordering::Relaxed);
    let _ = sampler.join();
    let rss_end_of_attack_kb = rss_kb(&opts.pids);
    stop.store(true, Ordering::Relaxed);
    for a in attackers {
        let _ = a.join();
    }
    std::thread::sleep(opts.after_wait);
    let rss_after_kb = rss_kb(&opts.pids);
    let tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let during = peak.load(Ordering::Relaxed);
    Ok(HttpBenchReport {
        latency: latency_stats(&tally.samples),
        ok_calls: tally.samples.len(),
        failed_calls: tally.failed,
        first_failure: tally.first_failure,
        elapsed,
        attack_connections: counters.0.load(Ordering::Relaxed),
        attack_refused: counters.1.load(Ordering::Relaxed),
        rss_before_kb,
        rss_during_kb: (during > 0).then_some(during),
        rss_end_of_attack_kb,
        rss_after_kb,
    })
}

/// Starts `server_cmd` (resolved as `run` resolves it) in `cwd` or a fresh temp dir,
/// finds the address it logs (`bound=ADDR`), and runs the bench against it; the server
/// is killed afterwards.
pub fn run_spawned(
    server_cmd: &str,
    cwd: Option<&std::path::Path>,
    opts: &mut HttpBenchOptions,
) -> Result<HttpBenchReport, String> {
    let tmp;
    let workdir = match cwd {
        Some(d) => d.to_path_buf(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("boris-bench-")
                .tempdir()
                .map_err(|e| format!("cannot create a temp dir: {e}"))?;
            tmp.path().to_path_buf()
        }
    };
    // The 4 KB file a legitimate client views (`--call view '{"path":"four.txt"}'`).
    let four = workdir.join("four.txt");
    if !four.exists() {
        let _ = std::fs::write(&four, "x".repeat(4095) + "\n");
    }
    let (cmdline, direct) = super::process::server_cmdline(server_cmd, "", &[]);
    let mut server = super::process::Server::spawn(
        &cmdline,
        &workdir,
        &std::collections::BTreeMap::new(),
        direct,
    )?;
    let deadline = Instant::now() + opts.timeout;
    let addr = loop {
        let text = server.stderr_text();
        if let Some(at) = text.find("bound=") {
            let addr = text[at + 6..].split_whitespace().next().unwrap_or("");
            break addr.to_string();
        }
        if Instant::now() > deadline || server.poll_exit().is_some() {
            server.kill();
            return Err(format!(
                "the server did not log `bound=ADDR`:\n{}",
                super::display::stderr_tail(&server.stderr_text(), 10)
            ));
        }
    };
    opts.addr = addr;
    opts.pids = server.server_pids().iter().map(|p| p.as_raw()).collect();
    let report = run(opts);
    server.kill();
    report.map_err(|e| {
        format!(
            "{e}\n{}",
            super::display::stderr_tail(&server.stderr_text(), 10)
        )
    })
}

/// A TCP connection to `to` from the loopback address `from`.
pub(crate) fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use std::os::fd::FromRawFd as _;
    let SocketAddr::V4(to) = to else {
        return Err(std::io::Error::other("attacks reach IPv4 servers only"));
    };
    let sockaddr = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: socket calls on a descriptor owned here (by the TcpStream from the
    // start, so it is closed on every error path); the addresses are valid
    // sockaddr_in values of the length given.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let stream = TcpStream::from_raw_fd(fd);
        let local = sockaddr(from, 0);
        if libc::bind(fd, (&raw const local).cast(), len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let remote = sockaddr(*to.ip(), to.port());
        if libc::connect(fd, (&raw const remote).cast(), len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stream)
    }
}

/// A paced client's pauses between calls: none without a think time, else uniform in
/// [0.5, 1.5) x think (mean: think), from a generator seeded by the client's number.
struct Pacing {
    think: Duration,
    rng: crate::spec::hostile::generate::Rng,
}

impl Pacing {
    fn new(think: Duration, seed: u64) -> Self {
        Self {
            think,
            rng: crate::spec::hostile::generate::rng(seed),
        }
    }

    fn next(&mut self) -> Option<Duration> {
        use rand::RngExt;
        if self.think.is_zero() {
            return None;
        }
        Some(self.think.mul_f64(self.rng.random_range(0.5..1.5)))
    }
}

#[cfg(test)]
mod tests {
    use super::Pacing;
    use std::time::Duration;

    #[test]
    fn pauses_spread_around_the_think_time_and_repeat_by_seed() {
        assert_eq!(Pacing::new(Duration::ZERO, 1).next(), None);
        let think = Duration::from_millis(100);
        let draw = |seed| {
            let mut p = Pacing::new(think, seed);
            (0..2000).map(|_| p.next().unwrap()).collect::<Vec<_>>()
        };
        let pauses = draw(7);
        assert!(pauses.iter().all(|d| *d >= think / 2 && *d < think * 3 / 2));
        let mean = pauses.iter().sum::<Duration>() / pauses.len() as u32;
        assert!(
            mean > think * 95 / 100 && mean < think * 105 / 100,
            "{mean:?}"
        );
        // Spread, not one value; the same seed gives the same pauses, another seed others.
        assert!(
            pauses.iter().any(|d| *d < think * 3 / 4) && pauses.iter().any(|d| *d > think * 5 / 4)
        );
        assert_eq!(pauses, draw(7));
        assert_ne!(pauses, draw(8));
    }
}
