//! The HTTP transport below the request router (issue 27): which connections are let
//! in (a cap in total and per client address, refused with a 503 rather than left in
//! the backlog), how long one may stay silent (no complete request head within
//! `--http-header-timeout`, whatever the protocol; no request in progress for
//! `--http-idle-timeout`), and how long a request body may take. hyper's own header
//! timeout starts only once it knows the protocol, and HTTP/2 has none: this watch
//! starts at accept.

use crate::config::HttpLimits;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use std::collections::HashMap;
use std::future::Future as _;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// At most one line per this period for a repeated warning (a flood must not fill the
/// log or the disk); the lines held back are counted in the next one.
const LOG_PERIOD: Duration = Duration::from_secs(10);

/// A warning that may be logged at most once per [`LOG_PERIOD`].
#[derive(Default)]
pub struct Throttle {
    state: Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    pub const fn new() -> Self {
        Self {
            state: Mutex::new((None, 0)),
        }
    }

    /// `Some(n)` when a line may be logged now, `n` being how many were held back since
    /// the last one; `None` when this one is held back.
    pub fn admit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match state.0 {
            Some(last) if now.duration_since(last) < LOG_PERIOD => {
                state.1 += 1;
                None
            }
            _ => {
                let held_back = state.1;
                *state = (Some(now), 0);
                Some(held_back)
            }
        }
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Total,
    PerAddress,
}

/// Open connections, in total and per client address.
pub struct ConnLimits {
    total: usize,
    per_address: usize,
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

impl ConnLimits {
    pub fn new(total: usize, per_address: usize) -> Arc<Self> {
        Arc::new(Self {
            total,
            per_address,
            open: Mutex::new((0, HashMap::new())),
        })
    }

    /// Counts a new connection from `ip` in, or says which cap it would break.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<ConnPermit, Refusal> {
        let ip = ip.to_canonical();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.0 >= self.total {
            return Err(Refusal::Total);
        }
        let from_ip = open.1.entry(ip).or_insert(0);
        if *from_ip >= self.per_address {
            return Err(Refusal::PerAddress);
        }
        *from_ip += 1;
        open.0 += 1;
        Ok(ConnPermit {
            limits: self.clone(),
            ip,
        })
    }

    pub fn open(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).0
    }
}

/// One admitted connection; dropping it counts the connection out.
pub struct ConnPermit {
    limits: Arc<ConnLimits>,
    ip: IpAddr,
}

impl Drop for ConnPermit {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(|e| e.into_inner());
        open.0 = open.0.saturating_sub(1);
        if let Some(n) = open.1.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.1.remove(&self.ip);
            }
        }
    }
}

/// The answer written, without reading anything, to a connection over a cap before it
/// is closed: a client sees why, and when to try again.
pub fn refusal_response(why: Refusal) -> Vec<u8> {
    let message = match why {
        Refusal::Total => "too many open connections (--max-connections)",
        Refusal::PerAddress => {
            "too many open connections from this address (--max-connections-per-ip)"
        }
    };
    let body = serde_json::json!({"error": "overloaded", "message": message}).to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The soft limit on open file descriptors (`u64::MAX` when unlimited or unknown).
pub fn descriptor_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if rc != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return u64::MAX;
    }
    lim.rlim_cur
}

#[derive(Debug, Clone, Copy)]
struct Activity {
    in_flight: usize,
    served_one: bool,
    idle_since: Instant,
}

/// Whether a connection is doing anything: requests in progress (until their response
/// body is dropped), whether it has sent a request yet, and since when it has been idle.
#[derive(Clone)]
pub struct ConnWatch {
    tx: Arc<watch::Sender<Activity>>,
}

impl Default for ConnWatch {
    fn default() -> Self {
        let (tx, _) = watch::channel(Activity {
            in_flight: 0,
            served_one: false,
            idle_since: Instant::now(),
        });
        Self { tx: Arc::new(tx) }
    }
}

impl ConnWatch {
    /// A request head has arrived: the connection is busy until the guard is dropped.
    pub fn begin(&self) -> InFlight {
        self.tx.send_modify(|a| {
            a.in_flight += 1;
            a.served_one = true;
        });
        InFlight {
            tx: self.tx.clone(),
        }
    }

    /// Resolves once the connection has been idle too long: `first` from accept while
    /// no request head has come, `idle` after the last request ended.
    pub async fn expired(&self, first: Duration, idle: Duration) {
        let mut rx = self.tx.subscribe();
        loop {
            let a = *rx.borrow_and_update();
            if a.in_flight > 0 {
                if rx.changed().await.is_err() {
                    return std::future::pending().await;
                }
                continue;
            }
            let deadline = a.idle_since + if a.served_one { idle } else { first };
            tokio::select! {
                changed = rx.changed() => if changed.is_err() {
                    return std::future::pending().await;
                },
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    }
}

/// A request in progress on a watched connection.
pub struct InFlight {
    tx: Arc<watch::Sender<Activity>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.tx.send_modify(|a| {
            a.in_flight = a.in_flight.saturating_sub(1);
            if a.in_flight == 0 {
                a.idle_since = Instant::now();
            }
        });
    }
}

/// A body that holds something until it is sent or dropped: a response keeps its
/// request counted as in progress (an event stream is activity, not idleness); a
/// buffered request body keeps its bytes counted against the body budget.
pub struct HoldingBody<B> {
    inner: B,
    _held: Box<dyn Send + Sync>,
}

impl<B> HoldingBody<B> {
    pub fn new(inner: B, held: Box<dyn Send + Sync>) -> Self {
        Self { inner, _held: held }
    }
}

impl<B: HttpBody + Unpin> HttpBody for HoldingBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that fails once `--http-body-timeout` has passed since its head and
/// it has not ended: a body that trickles or never ends holds no memory for long.
pub struct DeadlineBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl DeadlineBody {
    pub fn new(inner: Incoming, timeout: Duration) -> Self {
        Self {
            inner,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }
}

#[derive(Debug)]
pub struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive in time (--http-body-timeout)")
    }
}

impl std::error::Error for BodyTimedOut {}

impl HttpBody for DeadlineBody {
    type Data = hyper::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The largest HTTP request body accepted (issue 27): a `create_file` of a
/// `--max-file-size` text file as JSON encoders write it — at most three bytes per byte
/// (Python's default `ensure_ascii` writes `é` as `\u00e9`, an emoji as two `\uXXXX`),
/// plus room for the envelope; never below 4 MiB. Only content full of control bytes
/// (six bytes each) can need more; stdio, whose client is the parent process, keeps
/// [`super::framing::message_cap`].
pub fn body_cap(max_file_size: u64) -> usize {
    let cap = max_file_size
        .saturating_mul(3)
        .saturating_add(1 << 20)
        .max(4 << 20);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// The timeouts a connection is held to.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub header: Duration,
    pub idle: Duration,
    pub body: Duration,
    pub http2_keepalive: Duration,
}

impl From<&HttpLimits> for Timeouts {
    fn from(l: &HttpLimits) -> Self {
        Self {
            header: l.http_header_timeout,
            idle: l.http_idle_timeout,
            body: l.http_body_timeout,
            http2_keepalive: l.http2_keepalive,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_in_and_out() {
        let limits = ConnLimits::new(3, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let p1 = limits.admit(a).unwrap();
        let _p2 = limits.admit(a).unwrap();
        assert_eq!(limits.admit(a).err(), Some(Refusal::PerAddress));
        // The same address written as IPv4-mapped IPv6 is the same client.
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(limits.admit(mapped).err(), Some(Refusal::PerAddress));
        let _p3 = limits.admit(b).unwrap();
        assert_eq!(limits.admit(b).err(), Some(Refusal::Total));
        drop(p1);
        assert_eq!(limits.open(), 2);
        assert!(limits.admit(a).is_ok());
    }

    #[test]
    fn the_refusal_is_a_complete_response() {
        let text = String::from_utf8(refusal_response(Refusal::PerAddress)).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 503 "));
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        assert!(body.contains("--max-connections-per-ip"));
    }

    #[test]
    fn the_throttle_holds_back_repeats() {
        let t = Throttle::default();
        assert_eq!(t.admit(), Some(0));
        assert_eq!(t.admit(), None);
        assert_eq!(t.admit(), None);
    }

    #[tokio::test]
    async fn a_silent_connection_expires_and_a_busy_one_does_not() {
        let first = Duration::from_millis(50);
        let idle = Duration::from_millis(100);
        let w = ConnWatch::default();
        tokio::time::timeout(Duration::from_secs(30), w.expired(first, idle))
            .await
            .expect("a silent connection expires");

        let w = ConnWatch::default();
        let guard = w.begin();
        let waiter = tokio::spawn({
            let w = w.clone();
            async move { w.expired(first, idle).await }
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !waiter.is_finished(),
            "a request in progress is not idleness"
        );
        drop(guard);
        tokio::time::timeout(Duration::from_secs(30), waiter)
            .await
            .expect("idle after its request")
            .unwrap();
    }
}
