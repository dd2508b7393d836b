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
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
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
    use tokio::net::unix::pipe;
    let mut restore = RestoreFlags(Vec::new());
    // tokio's pipe ends set O_NONBLOCK themselves, after checking the access mode.
    let reader = on_reactor(Direction::Read, &mut restore, |fd, kind| match kind {
        Kind::Pipe => Ok(Box::pin(pipe::Receiver::from_owned_fd(fd)?) as Reader),
        Kind::Socket => Ok(Box::pin(unix_stream(fd)?) as Reader),
    })
    .unwrap_or_else(|| Box::pin(tokio::io::stdin()));
    let writer = on_reactor(Direction::Write, &mut restore, |fd, kind| match kind {
        Kind::Pipe => Ok(Box::pin(pipe::Sender::from_owned_fd(fd)?) as Writer),
        Kind::Socket => Ok(Box::pin(unix_stream(fd)?) as Writer),
    })
    .unwrap_or_else(|| Box::pin(tokio::io::stdout()));
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

/// What a standard descriptor is, when it can be polled.
enum Kind {
    Pipe,
    Socket,
}

fn unix_stream(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// `register` applied to a duplicate of the descriptor (so the standard one itself is
/// never closed early) when it is a pipe or a Unix socket; `None` otherwise, or when
/// registering fails, and the caller then uses tokio's blocking-pool stdio. The flags
/// are recorded for [`RestoreFlags`] when registering made the descriptor non-blocking.
fn on_reactor<T>(
    direction: Direction,
    restore: &mut RestoreFlags,
    register: impl FnOnce(OwnedFd, Kind) -> io::Result<T>,
) -> Option<T> {
    let (kind, flags, owned) = direction.with_fd(|fd| {
        let kind = SFlag::from_bits_truncate(fstat(fd).ok()?.st_mode) & SFlag::S_IFMT;
        let flags = OFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFL).ok()?);
        Some((kind, flags, fd.try_clone_to_owned().ok()?))
    })?;
    let kind = match kind {
        SFlag::S_IFIFO => Kind::Pipe,
        SFlag::S_IFSOCK => Kind::Socket,
        _ => return None,
    };
    match register(owned, kind) {
        Ok(registered) => {
            if !flags.contains(OFlag::O_NONBLOCK) {
                restore.0.push((direction, flags));
            }
            Some(registered)
        }
        Err(e) => {
            // The flags may have been changed before the failure: put them back now.
            direction.with_fd(|fd| fcntl(fd, FcntlArg::F_SETFL(flags)).ok());
            tracing::debug!(error = %e, "stdio descriptor not pollable; using tokio stdio");
            None
        }
    }
}
