//! Without namespaces, the jail's commands share one Landlock domain with the process
//! that forks them (a domain is only ever entered by a process itself, so whoever forks
//! them sits in it), and may signal it: `kill -STOP $PPID` stopped it, and every later
//! call of the session hung (issue 25 §5, S1). So the jail splits in two: a *supervisor*
//! that stays outside the domain, which commands cannot signal (Landlock's signal
//! scoping), and below it the *spawner* that enters the domain and serves Boris. The
//! supervisor continues the spawner whenever it is stopped, and exits when it dies, so
//! that Boris sees the control socket close and starts the session a new jail.

use std::os::fd::RawFd;

/// Forks the spawner and returns in it; the supervisor never returns. `control` is the
/// control socket, which the supervisor closes (Boris must see EOF once the spawner dies).
pub(super) fn fork_spawner(control: RawFd) -> Result<(), String> {
    let supervisor = unsafe { libc::getpid() };
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            // The spawner dies with its supervisor (Boris kills that one).
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            if unsafe { libc::getppid() } != supervisor {
                // The supervisor died before the line above.
                unsafe { libc::_exit(1) }
            }
            Ok(())
        }
        spawner => {
            unsafe { libc::close(control) };
            supervise(spawner)
        }
    }
}

fn supervise(spawner: libc::pid_t) -> ! {
    loop {
        let mut status = 0;
        let pid = unsafe { libc::waitpid(spawner, &mut status, libc::WUNTRACED) };
        if pid == -1 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            std::process::exit(0);
        }
        if libc::WIFSTOPPED(status) {
            unsafe { libc::kill(spawner, libc::SIGCONT) };
            continue;
        }
        // Exited or killed: its commands are orphans Boris sweeps by their tag.
        std::process::exit(0);
    }
}
