//! The sandbox around every command (issue 18): what this machine's kernel can enforce
//! ([`Support`], probed once at start), what the configuration asks ([`Policy`]), what
//! holds ([`Sandbox::status`]), and the per-session jail that starts commands
//! ([`client::Jail`], [`jail`]).

pub mod client;
pub mod exit;
pub mod gitconfig;
pub mod hint;
pub mod jail;
pub mod paths;
pub mod wire;

use std::path::PathBuf;

/// The first argument that makes `boris` a session's jail.
pub const JAIL_ARG: &str = "__jail";

/// `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// On wherever the kernel can (one warning line where it cannot).
    Auto,
    /// On; Boris refuses to start if the kernel cannot enforce what it promises.
    On,
    /// Commands run unconfined.
    Off,
}

/// What the kernel offers, probed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Support {
    /// 0: no Landlock.
    pub landlock_abi: u32,
    /// Unprivileged user, mount and PID namespaces can be made.
    pub namespaces: bool,
    /// Boris can re-execute itself as a jail ([`jail_program`]).
    pub reexec: bool,
}

/// The binary a jail runs: Boris's own, as `/proc/self/exe` (which still works if the
/// file was replaced since), else the absolute path Boris was started as (an empty
/// root with no /proc); `None` if neither is there.
pub fn jail_program() -> Option<PathBuf> {
    static PROGRAM: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let proc_exe = PathBuf::from("/proc/self/exe");
            if proc_exe.exists() {
                return Some(proc_exe);
            }
            std::env::args_os()
                .next()
                .map(PathBuf::from)
                .filter(|p| p.is_absolute() && p.is_file())
        })
        .clone()
}

/// The Landlock ABI of the running kernel (0 when it has none or it is disabled).
pub fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

/// Whether a child can make a user namespace and, inside it, mount and PID namespaces,
/// and mount there.
/// The child only makes system calls (everything it writes is prepared before the fork),
/// so this is safe in a process with threads.
pub fn namespaces_work() -> bool {
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let uid_map = format!("{uid} {uid} 1");
    let gid_map = format!("{gid} {gid} 1");
    let write = |path: &std::ffi::CStr, text: &str| unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = libc::write(fd, text.as_ptr().cast(), text.len());
        libc::close(fd);
        n == text.len() as isize
    };
    match unsafe { libc::fork() } {
        -1 => false,
        0 => {
            let ok = unsafe { libc::unshare(libc::CLONE_NEWUSER) } == 0
                && write(c"/proc/self/setgroups", "deny")
                && write(c"/proc/self/uid_map", &uid_map)
                && write(c"/proc/self/gid_map", &gid_map)
                && unsafe { libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID) } == 0
                // Inside another sandbox (Landlock forbids mounts) the jail could not set
                // up its mounts: that is "no namespaces" too.
                && unsafe {
                    libc::mount(
                        std::ptr::null(),
                        c"/".as_ptr(),
                        std::ptr::null(),
                        libc::MS_REC | libc::MS_PRIVATE,
                        std::ptr::null(),
                    )
                } == 0;
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        child => {
            let mut status = 0;
            while unsafe { libc::waitpid(child, &mut status, 0) } == -1
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    }
}

impl Support {
    /// Probes the kernel. `BORIS_SANDBOX_PROBE=landlock-only|none` pretends less is
    /// there, so the degraded paths can be tested on a machine that has it all — in a
    /// build with the `probe-simulation` feature only (the tests'; issue 25 S2).
    pub fn probe() -> Support {
        static PROBED: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
        *PROBED.get_or_init(Support::probe_now)
    }

    fn probe_now() -> Support {
        let pretend = if cfg!(feature = "probe-simulation") {
            std::env::var("BORIS_SANDBOX_PROBE").unwrap_or_default()
        } else {
            String::new()
        };
        let landlock_abi = if pretend == "none" { 0 } else { landlock_abi() };
        let namespaces = pretend.is_empty() && namespaces_work();
        Support {
            landlock_abi,
            namespaces,
            reexec: jail_program().is_some(),
        }
    }
}

/// What the configuration asks of the sandbox.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The allowed directories plus `--sandbox-write`.
    pub write: Vec<PathBuf>,
    /// `--sandbox-read` (empty: everything).
    pub read: Vec<PathBuf>,
    pub deny_patterns: Vec<String>,
    pub network: bool,
    pub protect_git: bool,
}

/// The rules, one per line of the status, and whether each holds here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub name: &'static str,
    pub holds: bool,
    /// Why not, when it does not.
    pub why: String,
}

/// The sandbox the server runs with.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub support: Support,
    pub policy: Policy,
}

/// Landlock ABI 2 is the least Boris uses: ABI 1 refuses every rename or link across
/// directories, which breaks ordinary programs.
pub const MIN_LANDLOCK_ABI: u32 = 2;

impl Sandbox {
    /// The sandbox for `mode`, or why `on` cannot start. `Ok(None)`: commands run
    /// unconfined (`off`, or `auto` where the kernel cannot), with the warning to log.
    pub fn new(
        mode: Mode,
        support: Support,
        policy: Policy,
    ) -> Result<(Option<Sandbox>, Option<String>), String> {
        if mode == Mode::Off {
            return Ok((None, None));
        }
        let sandbox = Sandbox { support, policy };
        if support.landlock_abi < MIN_LANDLOCK_ABI || !support.reexec {
            let why = if !support.reexec {
                "Boris cannot run itself as the jail (no /proc/self/exe, and not started by an \
                 absolute path)"
                    .to_string()
            } else if support.landlock_abi == 0 {
                "the kernel has no Landlock (Linux 5.19+ with landlock in the LSM list)".to_string()
            } else {
                format!(
                    "the kernel's Landlock ABI {} is older than {MIN_LANDLOCK_ABI} (Linux 5.19)",
                    support.landlock_abi
                )
            };
            return match mode {
                Mode::On => Err(format!("--sandbox on: {why}")),
                _ => Ok((
                    None,
                    Some(format!("sandbox off: {why}; commands run unconfined")),
                )),
            };
        }
        let missing: Vec<Rule> = sandbox.rules().into_iter().filter(|r| !r.holds).collect();
        if mode == Mode::On && !missing.is_empty() {
            let list = missing
                .iter()
                .map(|r| format!("{} ({})", r.name, r.why))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(format!("--sandbox on cannot enforce: {list}"));
        }
        let warning = (!missing.is_empty()).then(|| sandbox.status());
        Ok((Some(sandbox), warning))
    }

    /// Each rule and whether it holds on this kernel.
    pub fn rules(&self) -> Vec<Rule> {
        let abi = self.support.landlock_abi;
        let ns = self.support.namespaces;
        let no_ns = "no user namespaces".to_string();
        let mut rules = vec![Rule {
            name: "writes confined",
            holds: abi >= MIN_LANDLOCK_ABI,
            why: String::new(),
        }];
        if !self.policy.deny_patterns.is_empty() {
            rules.push(Rule {
                name: "deny list",
                holds: ns,
                why: no_ns.clone(),
            });
        }
        // Without namespaces Boris's files (other sessions', a generated token) are hidden
        // by leaving them out of the read rules, which a write rule above them undoes:
        // Landlock's rules add up (`--allow-dir /tmp`).
        let tmp = std::env::temp_dir();
        let tmp_writable = self.policy.write.iter().any(|w| tmp.starts_with(w));
        rules.push(Rule {
            name: "server out of reach",
            holds: ns || (abi >= 6 && !tmp_writable),
            why: if abi >= 6 {
                format!(
                    "the temporary directory {} is inside a writable directory and there are \
                     no user namespaces: other sessions' files are readable; set TMPDIR elsewhere",
                    tmp.display()
                )
            } else {
                format!("Landlock ABI {abi} has no signal scoping and there are no user namespaces")
            },
        });
        if !self.policy.network {
            rules.push(Rule {
                name: "network off",
                holds: ns || abi >= 4,
                why: format!(
                    "Landlock ABI {abi} has no TCP rules and there are no user namespaces"
                ),
            });
        }
        if self.policy.protect_git {
            rules.push(Rule {
                name: "git config protected",
                holds: ns,
                why: no_ns.clone(),
            });
        }
        rules.push(Rule {
            // Before ABI 9 nothing refuses a connect by path: init covers the sockets it
            // finds at the session's start; one made later, or deeper than it looks, is
            // reachable (issue 25 §5, S3).
            name: if abi >= 9 {
                "outside Unix sockets closed"
            } else {
                "outside Unix sockets closed (those present at the session's start)"
            },
            holds: ns,
            why: no_ns,
        });
        rules.push(Rule {
            name: "terminals apart",
            holds: ns,
            why: "no user namespaces: the terminals are the host's, and a command can reach \
                  another session's and the user's"
                .to_string(),
        });
        rules
    }

    /// One line: what is enforced on this machine.
    pub fn status(&self) -> String {
        let rules = self.rules();
        let held: Vec<&str> = rules.iter().filter(|r| r.holds).map(|r| r.name).collect();
        let not: Vec<String> = rules
            .iter()
            .filter(|r| !r.holds)
            .map(|r| format!("{} ({})", r.name, r.why))
            .collect();
        let how = if self.support.namespaces {
            format!("Landlock ABI {}, namespaces", self.support.landlock_abi)
        } else {
            format!("Landlock ABI {}, no namespaces", self.support.landlock_abi)
        };
        // With the network off, its rule says so, held or not.
        let network = if self.policy.network {
            "; network on"
        } else {
            ""
        };
        let mut line = format!("sandbox on ({how}): {}{network}", held.join(", "));
        if !not.is_empty() {
            line.push_str(&format!("; not held: {}", not.join(", ")));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(deny: bool, network: bool) -> Policy {
        Policy {
            write: vec![PathBuf::from("/w")],
            read: Vec::new(),
            deny_patterns: if deny {
                vec![".env".into()]
            } else {
                Vec::new()
            },
            network,
            protect_git: true,
        }
    }

    fn support(abi: u32, namespaces: bool) -> Support {
        Support {
            landlock_abi: abi,
            namespaces,
            reexec: true,
        }
    }

    #[test]
    fn a_writable_temporary_directory_puts_the_server_in_reach_without_namespaces() {
        let mut open = policy(false, true);
        open.write.push(std::env::temp_dir());
        let held = |sb: Sandbox| {
            sb.rules()
                .into_iter()
                .find(|r| r.name == "server out of reach")
                .map(|r| r.holds)
        };
        let landlock = Sandbox {
            support: support(7, false),
            policy: open.clone(),
        };
        assert_eq!(held(landlock), Some(false));
        let namespaces = Sandbox {
            support: support(7, true),
            policy: open,
        };
        assert_eq!(held(namespaces), Some(true));
        let apart = Sandbox {
            support: support(7, false),
            policy: policy(false, true),
        };
        assert_eq!(held(apart), Some(true));
    }

    #[test]
    fn what_each_kernel_holds() {
        // Everything: quiet.
        let (sb, warning) = Sandbox::new(Mode::Auto, support(7, true), policy(true, true)).unwrap();
        assert!(warning.is_none());
        assert_eq!(
            sb.unwrap().status(),
            "sandbox on (Landlock ABI 7, namespaces): writes confined, deny list, server out of \
             reach, git config protected, outside Unix sockets closed (those present at the \
             session's start), terminals apart; network on"
        );
        // No namespaces (Ubuntu 24.04): auto warns and says exactly what does not hold.
        let (sb, warning) =
            Sandbox::new(Mode::Auto, support(6, false), policy(true, false)).unwrap();
        assert!(sb.is_some());
        assert_eq!(
            warning.as_deref(),
            Some(
                "sandbox on (Landlock ABI 6, no namespaces): writes confined, server out of \
                 reach, network off; not held: deny list (no user namespaces), git config \
                 protected (no user namespaces), outside Unix sockets closed (those present \
                 at the session's start) (no user namespaces), terminals apart (no user namespaces: the \
                 terminals are the host's, and a command can reach another session's and the \
                 user's)"
            )
        );
        // An older kernel: no signal scoping, no TCP rules.
        let (_, warning) =
            Sandbox::new(Mode::Auto, support(3, false), policy(false, false)).unwrap();
        let w = warning.unwrap();
        assert!(
            w.contains("not held: server out of reach (Landlock ABI 3 has no signal scoping"),
            "{w}"
        );
        assert!(
            w.contains("network off (Landlock ABI 3 has no TCP rules"),
            "{w}"
        );
        // `on` refuses what it cannot enforce; `off` asks nothing.
        let e = Sandbox::new(Mode::On, support(7, false), policy(false, true)).unwrap_err();
        assert!(
            e.starts_with(
                "--sandbox on cannot enforce: git config protected (no user namespaces); \
                 outside Unix sockets closed (those present at the session's start) (no user \
                 namespaces); terminals apart (no user namespaces"
            ),
            "{e}"
        );
        let e = Sandbox::new(Mode::On, support(0, true), policy(false, true)).unwrap_err();
        assert!(e.contains("no Landlock"), "{e}");
        let e = Sandbox::new(Mode::On, support(1, true), policy(false, true)).unwrap_err();
        assert!(e.contains("ABI 1 is older than 2"), "{e}");
        let (sb, warning) =
            Sandbox::new(Mode::Auto, support(0, true), policy(false, true)).unwrap();
        assert!(sb.is_none());
        assert!(warning.unwrap().contains("commands run unconfined"));
        let no_exe = Support {
            reexec: false,
            ..support(7, true)
        };
        assert!(
            Sandbox::new(Mode::On, no_exe, policy(false, true))
                .unwrap_err()
                .contains("no /proc/self/exe")
        );
        assert!(matches!(
            Sandbox::new(Mode::Off, support(7, true), policy(true, true)),
            Ok((None, None))
        ));
    }
}
