//! Pure: the messages between Boris and a session's jail (`sandbox::jail`), and their
//! bytes. One message is one `SOCK_SEQPACKET` packet; byte strings are length-prefixed,
//! so paths, arguments and environment entries need not be UTF-8.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// What a jail enforces, sent once when it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Setup {
    /// The Landlock ABI to use (0: none).
    pub landlock_abi: u32,
    /// A user, mount and PID namespace of its own (plus a network one when the network
    /// is off).
    pub namespaces: bool,
    /// TCP connect and bind allowed.
    pub network: bool,
    /// Readable trees; empty: everything but `hidden`.
    pub read: Vec<PathBuf>,
    /// Paths no command may read, list or write (Boris's own files, other sessions').
    pub hidden: Vec<PathBuf>,
    /// Writable trees (the allowed directories, `--sandbox-write`).
    pub write: Vec<PathBuf>,
    /// The session's directory: its command output files (readable by its commands) and
    /// `tmp/`, its private temporary directory (`TMPDIR`; `/tmp` too, in namespaces).
    pub session: PathBuf,
    /// `--deny-dir` patterns, looked for under `write` before every command.
    pub deny_patterns: Vec<String>,
    /// Git metadata (config, hooks) under `write` is read-only.
    pub protect_git: bool,
}

/// Boris → jail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Setup(Setup),
    /// Start `argv` in `cwd` with exactly `env`, in a process group of its own. Carries
    /// three descriptors (stdin, stdout, stderr).
    Spawn {
        id: u64,
        argv: Vec<OsString>,
        cwd: PathBuf,
        env: Vec<OsString>,
        /// A session of its own with stdin as its controlling terminal.
        terminal: bool,
    },
    /// Open a pseudo-terminal in the session's own devpts (issue 25 §5, X8); answered
    /// with [`Reply::Terminal`] carrying the master and the slave, or `SpawnFailed`.
    OpenTerminal {
        id: u64,
    },
}

/// Jail → Boris.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Set up; `notes` says what did not hold (empty: everything).
    Ready {
        notes: Vec<String>,
    },
    SetupFailed {
        error: String,
    },
    /// Sent by the new process itself, so the packet's credentials carry its pid as
    /// Boris sees it.
    Started {
        id: u64,
    },
    SpawnFailed {
        id: u64,
        error: String,
    },
    /// The exit code, or 128 + the signal.
    Exited {
        id: u64,
        code: i32,
    },
    /// The pseudo-terminal asked for; carries two descriptors (master, slave).
    Terminal {
        id: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub &'static str);

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed jail message: {}", self.0)
    }
}

struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn list<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.u32(items.len() as u32);
        for item in items {
            each(self, item);
        }
    }
}

struct In<'a>(&'a [u8]);

impl<'a> In<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.0.len() < n {
            return Err(WireError("truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn bool(&mut self) -> Result<bool, WireError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(WireError("bad boolean")),
        }
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> Result<&'a [u8], WireError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn os(&mut self) -> Result<OsString, WireError> {
        Ok(OsString::from_vec(self.bytes()?.to_vec()))
    }
    fn path(&mut self) -> Result<PathBuf, WireError> {
        Ok(PathBuf::from(self.os()?))
    }
    fn string(&mut self) -> Result<String, WireError> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| WireError("text not UTF-8"))
    }
    fn list<T>(
        &mut self,
        mut each: impl FnMut(&mut Self) -> Result<T, WireError>,
    ) -> Result<Vec<T>, WireError> {
        let n = self.u32()? as usize;
        // Every item takes at least one byte: a count past the bytes left is a lie.
        if n > self.0.len() {
            return Err(WireError("list longer than the message"));
        }
        (0..n).map(|_| each(self)).collect()
    }
    fn end(&self) -> Result<(), WireError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(WireError("trailing bytes"))
        }
    }
}

fn put_path(o: &mut Out, p: &std::path::Path) {
    o.bytes(p.as_os_str().as_bytes());
}

impl Setup {
    /// The session's TMPDIR on the host.
    pub fn tmp(&self) -> PathBuf {
        self.session.join("tmp")
    }
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out(Vec::new());
        match self {
            Request::Setup(s) => {
                o.u8(1);
                o.u32(s.landlock_abi);
                o.u8(s.namespaces.into());
                o.u8(s.network.into());
                o.list(&s.read, |o, p| put_path(o, p));
                o.list(&s.hidden, |o, p| put_path(o, p));
                o.list(&s.write, |o, p| put_path(o, p));
                put_path(&mut o, &s.session);
                o.list(&s.deny_patterns, |o, p| o.bytes(p.as_bytes()));
                o.u8(s.protect_git.into());
            }
            Request::Spawn {
                id,
                argv,
                cwd,
                env,
                terminal,
            } => {
                o.u8(2);
                o.u64(*id);
                o.list(argv, |o, a| o.bytes(a.as_bytes()));
                put_path(&mut o, cwd);
                o.list(env, |o, e| o.bytes(e.as_bytes()));
                o.u8((*terminal).into());
            }
            Request::OpenTerminal { id } => {
                o.u8(3);
                o.u64(*id);
            }
        }
        o.0
    }

    pub fn decode(bytes: &[u8]) -> Result<Request, WireError> {
        let mut i = In(bytes);
        let r = match i.u8()? {
            1 => Request::Setup(Setup {
                landlock_abi: i.u32()?,
                namespaces: i.bool()?,
                network: i.bool()?,
                read: i.list(In::path)?,
                hidden: i.list(In::path)?,
                write: i.list(In::path)?,
                session: i.path()?,
                deny_patterns: i.list(In::string)?,
                protect_git: i.bool()?,
            }),
            2 => Request::Spawn {
                id: i.u64()?,
                argv: i.list(In::os)?,
                cwd: i.path()?,
                env: i.list(In::os)?,
                terminal: i.bool()?,
            },
            3 => Request::OpenTerminal { id: i.u64()? },
            _ => return Err(WireError("unknown request")),
        };
        i.end()?;
        Ok(r)
    }
}

impl Reply {
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out(Vec::new());
        match self {
            Reply::Ready { notes } => {
                o.u8(1);
                o.list(notes, |o, n| o.bytes(n.as_bytes()));
            }
            Reply::SetupFailed { error } => {
                o.u8(2);
                o.bytes(error.as_bytes());
            }
            Reply::Started { id } => {
                o.u8(3);
                o.u64(*id);
            }
            Reply::SpawnFailed { id, error } => {
                o.u8(4);
                o.u64(*id);
                o.bytes(error.as_bytes());
            }
            Reply::Exited { id, code } => {
                o.u8(5);
                o.u64(*id);
                o.u32(*code as u32);
            }
            Reply::Terminal { id } => {
                o.u8(6);
                o.u64(*id);
            }
        }
        o.0
    }

    pub fn decode(bytes: &[u8]) -> Result<Reply, WireError> {
        let mut i = In(bytes);
        let r = match i.u8()? {
            1 => Reply::Ready {
                notes: i.list(In::string)?,
            },
            2 => Reply::SetupFailed { error: i.string()? },
            3 => Reply::Started { id: i.u64()? },
            4 => Reply::SpawnFailed {
                id: i.u64()?,
                error: i.string()?,
            },
            5 => Reply::Exited {
                id: i.u64()?,
                code: i.u32()? as i32,
            },
            6 => Reply::Terminal { id: i.u64()? },
            _ => return Err(WireError("unknown reply")),
        };
        i.end()?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn os() -> impl Strategy<Value = OsString> {
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(OsString::from_vec)
    }

    fn request() -> impl Strategy<Value = Request> {
        let paths = || proptest::collection::vec(os().prop_map(PathBuf::from), 0..3);
        prop_oneof![
            (
                (any::<u32>(), any::<bool>(), any::<bool>(), any::<bool>()),
                (paths(), paths(), paths()),
                os(),
                proptest::collection::vec(".{0,8}", 0..3)
            )
                .prop_map(|((abi, ns, net, git), (read, hidden, write), tmp, deny)| {
                    Request::Setup(Setup {
                        landlock_abi: abi,
                        namespaces: ns,
                        network: net,
                        read,
                        hidden,
                        write,
                        session: PathBuf::from(tmp),
                        deny_patterns: deny,
                        protect_git: git,
                    })
                }),
            (
                any::<u64>(),
                proptest::collection::vec(os(), 0..4),
                os(),
                proptest::collection::vec(os(), 0..4),
                any::<bool>()
            )
                .prop_map(|(id, argv, cwd, env, terminal)| Request::Spawn {
                    id,
                    argv,
                    cwd: PathBuf::from(cwd),
                    env,
                    terminal
                }),
            any::<u64>().prop_map(|id| Request::OpenTerminal { id }),
        ]
    }

    fn reply() -> impl Strategy<Value = Reply> {
        prop_oneof![
            proptest::collection::vec(".{0,8}", 0..3).prop_map(|notes| Reply::Ready { notes }),
            ".{0,8}".prop_map(|error| Reply::SetupFailed { error }),
            any::<u64>().prop_map(|id| Reply::Started { id }),
            (any::<u64>(), ".{0,8}").prop_map(|(id, error)| Reply::SpawnFailed { id, error }),
            (any::<u64>(), any::<i32>()).prop_map(|(id, code)| Reply::Exited { id, code }),
            any::<u64>().prop_map(|id| Reply::Terminal { id }),
        ]
    }

    proptest! {
        #[test]
        fn requests_round_trip(r in request()) {
            prop_assert_eq!(Request::decode(&r.encode()), Ok(r));
        }

        #[test]
        fn replies_round_trip(r in reply()) {
            prop_assert_eq!(Reply::decode(&r.encode()), Ok(r));
        }

        /// Any bytes: an error or a message, never a panic; a truncated message is an
        /// error.
        #[test]
        fn any_bytes_decode_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..64), r in request()) {
            let _ = Request::decode(&bytes);
            let _ = Reply::decode(&bytes);
            let whole = r.encode();
            prop_assert!(Request::decode(&whole[..whole.len() - 1]).is_err());
        }
    }
}
