//! The control socket's packets: one message each, with descriptors (`SCM_RIGHTS`) and
//! the sender's credentials; both sides of the socket use these.

use super::MAX_MESSAGE;
use crate::sandbox::wire::{Reply, Request};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Sends one message (no descriptors).
pub fn send(fd: &OwnedFd, reply: &Reply) -> std::io::Result<()> {
    let bytes = reply.encode();
    let n = unsafe {
        libc::send(
            fd.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// One packet off a jail's control socket.
pub(crate) struct Packet {
    /// How many bytes of the buffer it filled (0: end of file).
    pub len: usize,
    /// The descriptors it carried (`SCM_RIGHTS`).
    pub fds: Vec<OwnedFd>,
    /// Its sender's pid as the receiver sees it, where the socket passes credentials.
    pub pid: Option<i32>,
}

/// Receives one packet into `buf` (both sides of the socket use it).
pub(crate) fn recv_packet(fd: &OwnedFd, buf: &mut [u8]) -> std::io::Result<Packet> {
    let mut cmsg = nix::cmsg_space!([RawFd; 3], libc::ucred);
    loop {
        let mut iov = [IoSliceMut::new(buf)];
        match recvmsg::<()>(
            fd.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => {
                let mut packet = Packet {
                    len: msg.bytes,
                    fds: Vec::new(),
                    pid: None,
                };
                if let Ok(cmsgs) = msg.cmsgs() {
                    for c in cmsgs {
                        match c {
                            // SAFETY: the kernel just installed these descriptors for us.
                            ControlMessageOwned::ScmRights(raw) => packet.fds.extend(
                                raw.into_iter().map(|r| unsafe { OwnedFd::from_raw_fd(r) }),
                            ),
                            ControlMessageOwned::ScmCredentials(creds) => {
                                packet.pid = Some(creds.pid())
                            }
                            _ => {}
                        }
                    }
                }
                return Ok(packet);
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receives one request and the descriptors it carries; `None` at end of file.
pub(super) fn receive(fd: &OwnedFd) -> std::io::Result<(Option<Request>, Vec<OwnedFd>)> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let packet = recv_packet(fd, &mut buf)?;
    if packet.len == 0 {
        return Ok((None, packet.fds));
    }
    let request = Request::decode(&buf[..packet.len])
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
    Ok((Some(request), packet.fds))
}
