//! How each command confines itself before `exec`: the Landlock ruleset built from the
//! setup, restricting to it, and dropping every capability.

use super::mounts::Shm;
use crate::sandbox::wire::Setup;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use std::path::Path;

pub(super) fn build_ruleset(
    setup: &Setup,
    shm: Shm,
    notes: &mut Vec<String>,
) -> Result<RulesetCreated, String> {
    let abi = ABI::from(setup.landlock_abi as i32);
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let err = |e: &dyn std::fmt::Display| format!("landlock: {e}");
    let mut ruleset = Ruleset::default()
        // Each right this ABI lacks would only be a smaller promise; `status` says which.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(|e| err(&e))?;
    let network_rules = !setup.network && abi >= ABI::V4;
    if network_rules {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err(&e))?;
    }
    if abi >= ABI::V6 {
        // Without a PID namespace, signal scoping is what keeps the server and other
        // sessions out of reach; with the network off, the network namespace already
        // isolates abstract sockets (and a command's own processes may use them).
        let scopes = match (setup.namespaces, setup.network) {
            (false, _) => Scope::Signal | Scope::AbstractUnixSocket,
            (true, true) => Scope::AbstractUnixSocket.into(),
            (true, false) => BitFlags::EMPTY,
        };
        if !scopes.is_empty() {
            ruleset = ruleset.scope(scopes).map_err(|e| err(&e))?;
        }
    }
    let mut created = ruleset.create().map_err(|e| err(&e))?;
    let mut add = |path: &Path, access| -> Result<(), String> {
        match PathFd::new(path) {
            Ok(fd) => {
                created
                    .as_mut()
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|e| err(&e))?;
                Ok(())
            }
            // A path that does not exist grants nothing.
            Err(_) => Ok(()),
        }
    };
    for path in crate::sandbox::paths::read_rules(&setup.read, &setup.hidden, setup.namespaces) {
        add(&path, read)?;
    }
    for path in &setup.write {
        add(path, all)?;
    }
    add(&setup.tmp(), all)?;
    // Its own output files (read-only: Boris writes them).
    add(&setup.session, read)?;
    let device = AccessFs::from_file(abi) & !AccessFs::Execute;
    for dev in crate::sandbox::paths::DEVICES {
        add(Path::new(dev), device)?;
    }
    add(Path::new("/dev/pts"), device | AccessFs::ReadDir)?;
    if shm == Shm::Private {
        add(Path::new("/dev/shm"), all)?;
    }
    if !setup.network && abi < ABI::V4 && !setup.namespaces {
        notes.push(format!(
            "network not blocked (Landlock ABI {} has no TCP rules)",
            setup.landlock_abi
        ));
    }
    Ok(created)
}

pub(super) fn restrict(ruleset: &RulesetCreated) -> Result<(), String> {
    let status = ruleset
        .try_clone()
        .map_err(|e| format!("landlock: {e}"))?
        .restrict_self()
        .map_err(|e| format!("landlock: {e}"))?;
    if status.ruleset == landlock::RulesetStatus::NotEnforced {
        return Err("landlock: not enforced".into());
    }
    Ok(())
}

/// placeholder, no `CAP_SYS_ADMIN` for a mount, no raw sockets past a network rule.
pub(super) fn drop_capabilities() {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        // Needs CAP_SETPCAP; without it there is nothing to drop but what exec drops.
        libc::prctl(
            libc::PR_SET_SECUREBITS,
            SECBIT_NOROOT
                | SECBIT_NOROOT_LOCKED
                | SECBIT_NO_SETUID_FIXUP
                | SECBIT_NO_SETUID_FIXUP_LOCKED
                | SECBIT_KEEP_CAPS_LOCKED
                | SECBIT_NO_CAP_AMBIENT_RAISE
                | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
            0,
            0,
            0,
        );
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let mut header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &mut header, data.as_ptr());
    }
}
