//! stdin and stdout for the stdio transport, read and written on the runtime's own
//! reactor when they are pipes or sockets (as every MCP client spawns its server).
//!
//! Why not `tokio::io::stdin()/stdout()`: those do every read and every write on the
//! blocking thread pool, so each request costs a hand-off to a pool thread and back, and
//! each response another — tens of microseconds per call on a small machine, more than a
//! small `view` takes. Here the descriptors are switched to non-blocking mode and polled
//! through epoll like a socket: a request is read, handled and answered by the runtime
//! thread that was woken for it. A full stdout pipe (a client that is slow to read, or one
//! that pipelines many requests before reading any answer) makes the write wait on the
//! reactor, never block the thread, so stdin keeps being read and nothing deadlocks.
//!
//! Anything else (a terminal, a regular file, `/dev/null`) falls back to tokio's own
//! stdin/stdout. The original file status flags are put back when the session ends, so a
//! wrapper process sharing the descriptors gets them as it left them (libuv does the
//! same for node servers).

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::stat::{SFlag, fstat};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::pin::Pin;
use tokio::io::{AsyncRead, AsyncWrite};

pub type Reader = Pin<Box<dyn AsyncRead + Send>>;
pub type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// stdin and stdout as async streams, plus what restores their flags when dropped.
pub struct StdioFds {
    pub reader: Reader,
    pub writer: Writer,
    pub restore: RestoreFlags,
}

/// Must run inside the runtime (the descriptors are registered with its reactor).
pub fn open() -> StdioFds {
    let mut restore = RestoreFlags(Vec::new());
    let reader = match on_reactor(Direction::Read, &mut restore) {
        Some(Polled::Pipe(p)) => p.reader,
        Some(Polled::Socket(s)) => Box::pin(s) as Reader,
        None => Box::pin(tokio::io::stdin()),
    };
    let writer = match on_reactor(Direction::Write, &mut restore) {
        Some(Polled::Pipe(p)) => p.writer,
        Some(Polled::Socket(s)) => Box::pin(s) as Writer,
        None => Box::pin(tokio::io::stdout()),
    };
    StdioFds {
        reader,
        writer,
        restore,
    }
}

/// Puts back the file status flags that [`open`] changed.
pub struct RestoreFlags(Vec<(Direction, OFlag)>);

impl Drop for RestoreFlags {
    fn drop(&mut self) {
        for (direction, flags) in self.0.drain(..) {
            direction.with_fd(|fd| fcntl(fd, FcntlArg::F_SETFL(flags)).ok());
        }
    }
}

/// stdin (read) or stdout (write).
#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Read,
    Write,
}

impl Direction {
    fn with_fd<T>(self, f: impl FnOnce(BorrowedFd<'_>) -> T) -> T {
        match self {
            Direction::Read => f(io::stdin().as_fd()),
            Direction::Write => f(io::stdout().as_fd()),
        }
    }
}

struct PipeEnd {
    reader: Reader,
    writer: Writer,
}

enum Polled {
    Pipe(PipeEnd),
    Socket(tokio::net::UnixStream),
}

/// `fd` (a duplicate of it, so the standard descriptor itself is never closed early)
/// registered with the reactor in non-blocking mode, or `None` when it is not a pipe or
/// a Unix socket: the caller then uses tokio's blocking-pool stdio.
fn on_reactor(direction: Direction, restore: &mut RestoreFlags) -> Option<Polled> {
    let (kind, flags, owned) = direction.with_fd(|fd| {
        let kind = SFlag::from_bits_truncate(fstat(fd).ok()?.st_mode) & SFlag::S_IFMT;
        let flags = OFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFL).ok()?);
        Some((kind, flags, fd.try_clone_to_owned().ok()?))
    })?;
    if kind != SFlag::S_IFIFO && kind != SFlag::S_IFSOCK {
        return None;
    }
    let polled = if kind == SFlag::S_IFIFO {
        use tokio::net::unix::pipe;
        // Both set O_NONBLOCK themselves after checking the access mode.
        match direction {
            Direction::Read => pipe::Receiver::from_owned_fd(owned).map(|r| PipeEnd {
                reader: Box::pin(r),
                writer: Box::pin(tokio::io::sink()),
            }),
            Direction::Write => pipe::Sender::from_owned_fd(owned).map(|w| PipeEnd {
                reader: Box::pin(tokio::io::empty()),
                writer: Box::pin(w),
            }),
        }
        .map(Polled::Pipe)
    } else {
        let std_stream = std::os::unix::net::UnixStream::from(owned);
        std_stream
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(std_stream))
            .map(Polled::Socket)
    };
    match polled {
        Ok(p) => {
            if !flags.contains(OFlag::O_NONBLOCK) {
                restore.0.push((direction, flags));
            }
            Some(p)
        }
        Err(e) => {
            // The flags may have been changed before the failure: put them back now.
            direction.with_fd(|fd| fcntl(fd, FcntlArg::F_SETFL(flags)).ok());
            tracing::debug!(error = %e, "stdio descriptor not pollable; using tokio stdio");
            None
        }
    }
}
