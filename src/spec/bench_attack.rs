//! The attacks `boris-spec bench --transport http --attack …` runs while its clients
//! call (issue 27): connections held open (silent, the HTTP/2 preface, a body one byte
//! short), topped up as the server closes them, or sessions created without end.
//! Counters: connections made (or sessions created), and those the server refused
//! (a 503).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::json;

use super::bench_http::{Attack, HttpBenchOptions, connect_from};
use super::http::{Request, connect_addr, send};
use super::protocol::default_initialize_params;

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Threads that session-flood at once.
const SESSION_FLOODERS: usize = 4;

type Counters = Arc<(AtomicU64, AtomicU64)>;

pub(crate) fn start(
    opts: &HttpBenchOptions,
    stop: &Arc<AtomicBool>,
    counters: &Counters,
) -> Vec<JoinHandle<()>> {
    match opts.attack {
        Attack::None => Vec::new(),
        Attack::Sessions => (0..SESSION_FLOODERS)
            .map(|_| {
                let (opts, stop, counters) = (opts.clone(), stop.clone(), counters.clone());
                std::thread::spawn(move || flood_sessions(&opts, &stop, &counters))
            })
            .collect(),
        Attack::Silent | Attack::H2Preface | Attack::SlowBodies => {
            let (opts, stop, counters) = (opts.clone(), stop.clone(), counters.clone());
            vec![std::thread::spawn(move || hold(&opts, &stop, &counters))]
        }
    }
}

fn flood_sessions(opts: &HttpBenchOptions, stop: &AtomicBool, counters: &Counters) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": default_initialize_params()})
    .to_string()
    .into_bytes();
    let req = Request {
        method: "POST".into(),
        path: "/mcp".into(),
        headers: vec![
            ("Host".into(), opts.addr.clone()),
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ],
        body,
    };
    while !stop.load(Ordering::Relaxed) {
        match send(&opts.addr, &req, opts.timeout) {
            Ok(r) if r.status == 200 => {
                counters.0.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {
                counters.1.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// What an attacking connection sends first.
fn opening(opts: &HttpBenchOptions) -> Vec<u8> {
    match opts.attack {
        Attack::H2Preface => H2_PREFACE.to_vec(),
        Attack::SlowBodies => {
            let mut out = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
                opts.addr,
                opts.attack_body_bytes + 1
            )
            .into_bytes();
            out.resize(out.len() + opts.attack_body_bytes, b' ');
            out
        }
        _ => Vec::new(),
    }
}

/// Keeps `attack_count` connections open, replacing each the server closes.
fn hold(opts: &HttpBenchOptions, stop: &AtomicBool, counters: &Counters) {
    let Ok(to) = connect_addr(&opts.addr) else {
        return;
    };
    let first = opening(opts);
    let mut conns: Vec<Option<TcpStream>> = (0..opts.attack_count).map(|_| None).collect();
    let mut buf = [0u8; 512];
    while !stop.load(Ordering::Relaxed) {
        for slot in conns.iter_mut() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            if let Some(s) = slot {
                match s.read(&mut buf) {
                    Ok(0) => *slot = None,
                    Ok(n) => {
                        if buf[..n].starts_with(b"HTTP/1.1 503") {
                            counters.1.fetch_add(1, Ordering::Relaxed);
                        }
                        *slot = None;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(_) => *slot = None,
                }
                continue;
            }
            let Ok(mut s) = connect_from(opts.attack_from, to) else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            counters.0.fetch_add(1, Ordering::Relaxed);
            let _ = s.set_write_timeout(Some(opts.timeout));
            if s.write_all(&first).is_err() {
                continue;
            }
            if s.set_nonblocking(true).is_ok() {
                *slot = Some(s);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
