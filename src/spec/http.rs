//! A minimal HTTP/1.1 client for HTTP-transport cases: one request per connection
//! (`Connection: close`) over a raw `std::net::TcpStream`, `Content-Length`,
//! chunked and read-to-EOF bodies, every wait bounded by one deadline. Plus the pure
//! parts: response parsing, chunked decoding, and server-sent events.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Largest response the harness reads (headers and body).
pub const MAX_RESPONSE: usize = 64 << 20;

/// A request to send. `headers` are sent in order, as given.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A response: status, headers (names lowercased, in order) and the decoded body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// Every value of a header (name case-insensitive), joined with `, `.
    pub fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn content_type(&self) -> String {
        self.header("content-type")
            .unwrap_or_default()
            .to_ascii_lowercase()
    }

    pub fn is_sse(&self) -> bool {
        self.content_type().contains("text/event-stream")
    }

    pub fn is_json(&self) -> bool {
        self.content_type().contains("json")
    }

    /// The messages in the body: the `data` of every non-empty server-sent event (each
    /// parsed as JSON, else kept as a string), or a JSON body (an array gives its
    /// elements). Anything else has no messages.
    pub fn messages(&self) -> Vec<Value> {
        let text = self.body_text();
        if self.is_sse() {
            sse_events(&text)
                .into_iter()
                .filter(|e| !e.data.is_empty())
                .map(|e| serde_json::from_str(&e.data).unwrap_or(Value::String(e.data)))
                .collect()
        } else if self.is_json() {
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Array(a)) => a,
                Ok(v) => vec![v],
                Err(_) => Vec::new(),
            }
        } else {
            Vec::new()
        }
    }
}

/// Resolves `host:port` (`[v6]:port` too) for connecting: an unspecified bind address
/// (`0.0.0.0`, `[::]`) is reached through loopback.
pub fn connect_addr(addr: &str) -> Result<SocketAddr, String> {
    let mut sa = addr
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {addr}: {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve {addr}"))?;
    if sa.ip().is_unspecified() {
        sa.set_ip(match sa {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    Ok(sa)
}

/// Opens a connection to `addr` within `timeout`.
pub fn connect(addr: &str, timeout: Duration) -> Result<TcpStream, String> {
    let sa = connect_addr(addr)?;
    TcpStream::connect_timeout(&sa, timeout.max(Duration::from_millis(1)))
        .map_err(|e| format!("cannot connect to {addr}: {e}"))
}

/// The bytes of a request: request line, the headers as given, `Content-Length` (if
/// the caller gave none and there is a body or the method usually has one) and
/// `Connection: close`, then the body.
pub fn encode(req: &Request) -> Vec<u8> {
    let mut head = format!("{} {} HTTP/1.1\r\n", req.method, req.path);
    let has = |name: &str| {
        req.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    for (n, v) in &req.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if !has("content-length")
        && !has("transfer-encoding")
        && (!req.body.is_empty() || matches!(req.method.as_str(), "POST" | "PUT" | "PATCH"))
    {
        head.push_str(&format!("Content-Length: {}\r\n", req.body.len()));
    }
    if !has("connection") {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(&req.body);
    out
}

/// Sends one request and reads the whole response, all within `timeout`.
///
/// A write that fails (the server answered early, e.g. 413, and closed) does not end
/// the exchange: the response is still read.
pub fn send(addr: &str, req: &Request, timeout: Duration) -> Result<Response, String> {
    let deadline = Instant::now() + timeout;
    let mut stream = connect(addr, timeout)?;
    let left = |what: &str| -> Result<Duration, String> {
        let d = deadline.saturating_duration_since(Instant::now());
        if d.is_zero() {
            Err(format!("timed out after {}ms {what}", timeout.as_millis()))
        } else {
            Ok(d)
        }
    };
    let bytes = encode(req);
    let mut write_error = None;
    let mut written = 0;
    while written < bytes.len() {
        let d = left("sending the request")?;
        stream
            .set_write_timeout(Some(d))
            .map_err(|e| format!("socket: {e}"))?;
        let end = (written + (256 << 10)).min(bytes.len());
        match stream.write(&bytes[written..end]) {
            Ok(0) => {
                write_error = Some("connection closed while sending".to_string());
                break;
            }
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!(
                    "timed out after {}ms sending the request ({written} of {} bytes sent)",
                    timeout.as_millis(),
                    bytes.len()
                ));
            }
            Err(e) => {
                write_error = Some(format!(
                    "sending failed after {written} of {} bytes: {e}",
                    bytes.len()
                ));
                break;
            }
        }
    }
    let _ = stream.flush();

    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        if let Some(resp) = complete_response(&buf, &req.method, false)? {
            return Ok(resp);
        }
        let d = left("waiting for the response").map_err(|e| partial_note(e, &buf))?;
        stream
            .set_read_timeout(Some(d))
            .map_err(|e| format!("socket: {e}"))?;
        match stream.read(&mut chunk) {
            Ok(0) => {
                return match complete_response(&buf, &req.method, true)? {
                    Some(r) => Ok(r),
                    None if buf.is_empty() => Err(format!(
                        "the server closed the connection without a response{}",
                        write_error.map(|e| format!(" ({e})")).unwrap_or_default()
                    )),
                    None => Err(partial_note(
                        "the server closed the connection in the middle of the response".into(),
                        &buf,
                    )),
                };
            }
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > MAX_RESPONSE {
                    return Err(format!("response larger than {} MiB", MAX_RESPONSE >> 20));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(partial_note(
                    format!("no complete response within {}ms", timeout.as_millis()),
                    &buf,
                ));
            }
            Err(e) => {
                // A reset after a complete response is still a response.
                if let Some(r) = complete_response(&buf, &req.method, true)? {
                    return Ok(r);
                }
                return Err(partial_note(
                    format!(
                        "reading the response failed: {e}{}",
                        write_error
                            .as_ref()
                            .map(|w| format!(" ({w})"))
                            .unwrap_or_default()
                    ),
                    &buf,
                ));
            }
        }
    }
}

fn partial_note(msg: String, buf: &[u8]) -> String {
    if buf.is_empty() {
        msg
    } else {
        format!(
            "{msg}; received so far: {}",
            super::display::quote(&String::from_utf8_lossy(buf))
        )
    }
}

/// Parses `buf` as a response if it is complete. `eof`: the connection has closed,
/// so a body without a length ends here. `Ok(None)`: more bytes are needed.
pub fn complete_response(buf: &[u8], method: &str, eof: bool) -> Result<Option<Response>, String> {
    let Some(head_end) = find(buf, b"\r\n\r\n") else {
        if eof && !buf.is_empty() {
            return Err(partial_note(
                "the response ended inside its headers".into(),
                buf,
            ));
        }
        return Ok(None);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status: u16 = match (version.starts_with("HTTP/"), parts.next().map(str::parse)) {
        (true, Some(Ok(s))) => s,
        _ => {
            return Err(format!(
                "not an HTTP response: {}",
                super::display::quote(status_line)
            ));
        }
    };
    let mut headers = Vec::new();
    for line in lines {
        let Some((n, v)) = line.split_once(':') else {
            return Err(format!(
                "malformed response header line {}",
                super::display::quote(line)
            ));
        };
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let rest = &buf[head_end + 4..];
    let mut resp = Response {
        status,
        headers,
        body: Vec::new(),
    };
    // 1xx (e.g. 100 Continue) precedes the real response.
    if (100..200).contains(&status) && status != 101 {
        return complete_response(rest, method, eof);
    }
    if method == "HEAD" || status == 204 || status == 304 {
        return Ok(Some(resp));
    }
    let chunked = resp
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return match decode_chunked(rest)? {
            Some(body) => {
                resp.body = body;
                Ok(Some(resp))
            }
            None if eof => Err(partial_note(
                "the connection closed before the last chunk".into(),
                buf,
            )),
            None => Ok(None),
        };
    }
    if let Some(len) = resp.header("content-length") {
        let len: usize = len
            .trim()
            .parse()
            .map_err(|_| format!("bad Content-Length {}", super::display::quote(&len)))?;
        if rest.len() >= len {
            resp.body = rest[..len].to_vec();
            return Ok(Some(resp));
        }
        if eof {
            return Err(format!(
                "the connection closed after {} of {len} body bytes",
                rest.len()
            ));
        }
        return Ok(None);
    }
    if eof {
        resp.body = rest.to_vec();
        return Ok(Some(resp));
    }
    Ok(None)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes a chunked body. `Ok(None)`: incomplete (the last chunk or the trailer
/// section has not arrived yet).
pub fn decode_chunked(mut b: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = find(b, b"\r\n") else {
            return Ok(None);
        };
        let size_line = String::from_utf8_lossy(&b[..eol]);
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| format!("bad chunk size {}", super::display::quote(&size_line)))?;
        b = &b[eol + 2..];
        if size == 0 {
            // Trailer fields, then an empty line.
            loop {
                let Some(eol) = find(b, b"\r\n") else {
                    return Ok(None);
                };
                if eol == 0 {
                    return Ok(Some(out));
                }
                b = &b[eol + 2..];
            }
        }
        if b.len() < size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&b[..size]);
        if &b[size..size + 2] != b"\r\n" {
            return Err("a chunk is not followed by CRLF".into());
        }
        b = &b[size + 2..];
    }
}

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub id: Option<String>,
    /// The `data` lines joined with `\n`.
    pub data: String,
}

/// Splits an event stream into events (WHATWG rules: lines end in LF, CRLF or CR; a
/// blank line ends an event; `:` starts a comment; one space after the colon is
/// dropped). An event with no field at all (only comments) is skipped.
pub fn sse_events(text: &str) -> Vec<SseEvent> {
    let mut out = Vec::new();
    let mut cur = SseEvent::default();
    let mut data: Vec<&str> = Vec::new();
    let mut any = false;
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    for line in normalised.split('\n') {
        if line.is_empty() {
            if any {
                cur.data = data.join("\n");
                out.push(std::mem::take(&mut cur));
                data.clear();
                any = false;
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        any = true;
        match field {
            "data" => data.push(value),
            "event" => cur.event = Some(value.to_string()),
            "id" => cur.id = Some(value.to_string()),
            _ => {}
        }
    }
    // A stream cut off without the final blank line still yields its last event.
    if any {
        cur.data = data.join("\n");
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_length_response() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"status\":\"ok\"}";
        assert_eq!(complete_response(&raw[..40], "GET", false).unwrap(), None);
        let r = complete_response(raw, "GET", false).unwrap().unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("CONTENT-TYPE").as_deref(),
            Some("application/json")
        );
        assert_eq!(r.messages(), vec![json!({"status": "ok"})]);
    }

    #[test]
    fn chunked_response_and_sse() {
        let body =
            "data: \nid: 0\nretry: 3000\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let (a, b) = body.split_at(10);
        let raw = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        );
        let bytes = raw.as_bytes();
        assert_eq!(
            complete_response(&bytes[..bytes.len() - 2], "POST", false).unwrap(),
            None
        );
        assert!(complete_response(&bytes[..bytes.len() - 2], "POST", true).is_err());
        let r = complete_response(bytes, "POST", false).unwrap().unwrap();
        assert_eq!(r.body_text(), body);
        assert!(r.is_sse());
        assert_eq!(
            r.messages(),
            vec![json!({"jsonrpc": "2.0", "id": 1, "result": {}})]
        );
    }

    #[test]
    fn body_to_eof_and_no_body() {
        let raw = b"HTTP/1.1 403 Forbidden\r\n\r\nForbidden: Host";
        assert_eq!(complete_response(raw, "POST", false).unwrap(), None);
        let r = complete_response(raw, "POST", true).unwrap().unwrap();
        assert_eq!(r.body_text(), "Forbidden: Host");
        let raw = b"HTTP/1.1 204 No Content\r\nx: y\r\n\r\n";
        let r = complete_response(raw, "POST", false).unwrap().unwrap();
        assert_eq!(r.status, 204);
        assert!(r.body.is_empty());
        let raw =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(
            complete_response(raw, "POST", false)
                .unwrap()
                .unwrap()
                .status,
            202
        );
        assert!(complete_response(b"garbage\r\n\r\n", "GET", false).is_err());
    }

    #[test]
    fn chunked_decoding() {
        assert_eq!(
            decode_chunked(b"3;ext=1\r\nabc\r\n1\r\nd\r\n0\r\nTrailer: x\r\n\r\n").unwrap(),
            Some(b"abcd".to_vec())
        );
        assert_eq!(decode_chunked(b"3\r\nab").unwrap(), None);
        assert_eq!(decode_chunked(b"3\r\nabc\r\n0\r\n").unwrap(), None);
        assert!(decode_chunked(b"zz\r\n").is_err());
        assert!(decode_chunked(b"1\r\nabc").is_err());
    }

    #[test]
    fn sse_parsing() {
        let ev =
            sse_events(": comment\r\nevent: message\r\ndata: a\r\ndata:b\r\nid: 7\r\n\r\ndata: c");
        assert_eq!(
            ev,
            vec![
                SseEvent {
                    event: Some("message".into()),
                    id: Some("7".into()),
                    data: "a\nb".into()
                },
                SseEvent {
                    data: "c".into(),
                    ..Default::default()
                }
            ]
        );
        let r = Response {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: b"data: \nid: 0\n\ndata: not json\n\n".to_vec(),
        };
        assert_eq!(r.messages(), vec![json!("not json")]);
    }

    #[test]
    fn encode_adds_length_and_close() {
        let req = Request {
            method: "POST".into(),
            path: "/mcp".into(),
            headers: vec![("Host".into(), "h:1".into())],
            body: b"{}".to_vec(),
        };
        assert_eq!(
            String::from_utf8(encode(&req)).unwrap(),
            "POST /mcp HTTP/1.1\r\nHost: h:1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        );
        let get = Request {
            method: "GET".into(),
            path: "/health".into(),
            ..Default::default()
        };
        assert_eq!(
            String::from_utf8(encode(&get)).unwrap(),
            "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn unspecified_addresses_connect_through_loopback() {
        assert_eq!(
            connect_addr("0.0.0.0:80").unwrap(),
            "127.0.0.1:80".parse().unwrap()
        );
        assert_eq!(
            connect_addr("[::]:80").unwrap(),
            "[::1]:80".parse().unwrap()
        );
        assert_eq!(
            connect_addr("127.0.0.1:9").unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
    }
}
