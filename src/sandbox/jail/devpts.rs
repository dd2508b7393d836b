//! Each session's own pseudo-terminals (issue 25 §5, X8). The jail once shared the host's
//! `/dev/pts`, so a command of one HTTP session could write into another session's
//! terminal (or the user's). With namespaces, init mounts a devpts instance of its own
//! over `/dev/pts` (`newinstance`) and binds its `ptmx` over `/dev/ptmx`: the session's
//! commands see only the session's terminals, and the pseudo-terminals Boris's terminal
//! tools run programs on are opened here, by the jail, and their master handed to Boris.

use crate::sandbox::wire::Reply;
use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};
use std::ffi::CString;
use std::io::IoSlice;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Mounts the session's devpts instance (in init's mount namespace).
pub(super) fn mount_private() -> Result<(), String> {
    let c = |s: &str| CString::new(s).map_err(|e| e.to_string());
    let (devpts, pts, ptmx_in_pts, ptmx) = (
        c("devpts")?,
        c("/dev/pts")?,
        c("/dev/pts/ptmx")?,
        c("/dev/ptmx")?,
    );
    let options = c("newinstance,ptmxmode=0666,mode=0620")?;
    let fail = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    unsafe {
        if libc::mount(
            devpts.as_ptr(),
            pts.as_ptr(),
            devpts.as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            options.as_ptr().cast(),
        ) != 0
        {
            return Err(fail("mount devpts on /dev/pts"));
        }
        if libc::mount(
            ptmx_in_pts.as_ptr(),
            ptmx.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        ) != 0
        {
            return Err(fail("bind /dev/pts/ptmx over /dev/ptmx"));
        }
    }
    Ok(())
}

/// A new pseudo-terminal of the session's devpts: (master, slave).
pub(super) fn open_pair() -> Result<(OwnedFd, OwnedFd), String> {
    let fail = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    unsafe {
        let master = libc::open(
            c"/dev/ptmx".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if master < 0 {
            return Err(fail("open /dev/ptmx"));
        }
        let master = OwnedFd::from_raw_fd(master);
        let mut unlock: libc::c_int = 0;
        if libc::ioctl(master.as_raw_fd(), libc::TIOCSPTLCK, &mut unlock) != 0 {
            return Err(fail("unlock the terminal"));
        }
        // The slave without a path lookup: the one this master belongs to, whatever is
        // mounted where.
        let slave = libc::ioctl(
            master.as_raw_fd(),
            libc::TIOCGPTPEER,
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if slave < 0 {
            return Err(fail("open the terminal's slave"));
        }
        Ok((master, OwnedFd::from_raw_fd(slave)))
    }
}

/// Sends `reply` with `fds` attached.
pub(super) fn send_with(control: &OwnedFd, reply: &Reply, fds: &[RawFd]) -> Result<(), String> {
    let bytes = reply.encode();
    let iov = [IoSlice::new(&bytes)];
    let rights = [ControlMessage::ScmRights(fds)];
    loop {
        match sendmsg::<()>(
            control.as_raw_fd(),
            &iov,
            &rights,
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Ok(_) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Answers [`crate::sandbox::wire::Request::OpenTerminal`].
pub(super) fn answer(control: &OwnedFd, id: u64) {
    let sent = match open_pair() {
        Ok((master, slave)) => send_with(
            control,
            &Reply::Terminal { id },
            &[master.as_raw_fd(), slave.as_raw_fd()],
        ),
        Err(error) => Err(error),
    };
    if let Err(error) = sent {
        let _ = super::send(control, &Reply::SpawnFailed { id, error });
    }
}
