//! What a case needs (`requires:`, issue 25 §1, issue 29 §1): programs, kernel
//! features, what the server was built with, the network. A need the machine or the
//! server lacks skips the case with a one-line reason — in `boris-spec run` and
//! `cargo test` alike — unless a manifest of what the machine is meant to have (CI's
//! `tests/ci-installs.txt`) lists it: then it fails the case.
//!
//! The server runs on this machine (the harness starts it), so the harness looks for
//! each need here: a program on the `PATH` the server gets (the case's own `PATH`, or
//! the harness's), the kernel the harness runs on, and the server's `--version`.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::model::Case;

/// One need of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// A program the case's commands (or the server) run, on the server's `PATH`
    /// (`nc`, `rsync`, `pyright-langserver`, …): any name that is not one below.
    Program(String),
    /// The kernel has Landlock.
    Landlock,
    /// Unprivileged user namespaces (with mount and PID namespaces inside) work.
    Userns,
    /// The server honours `BORIS_SANDBOX_PROBE` (built with the `probe-simulation`
    /// feature, as `cargo test` builds it; its `--version` says so).
    ProbeSimulation,
    /// The server was built without `probe-simulation` (a release or `cargo install`
    /// build): for the case that proves such a build ignores the variable.
    PlainBuild,
    /// The machine reaches the internet (a TCP connection to a public address).
    Network,
    /// The harness has an identity provider to start for the case
    /// (`--identity-provider`, `BORIS_SPEC_IDP`; see `spec::identity`).
    IdentityProvider,
}

/// The names that are not programs, with what each means (for docs and errors).
pub const FEATURES: &[(&str, &str)] = &[
    ("landlock", "the kernel has Landlock"),
    ("userns", "unprivileged user namespaces work"),
    (
        "probe-simulation",
        "the server honours BORIS_SANDBOX_PROBE (built with the cargo feature)",
    ),
    (
        "plain-build",
        "the server was built without probe-simulation",
    ),
    ("network", "the machine reaches the internet"),
    (
        "identity-provider",
        "the harness can start an identity provider (--identity-provider, BORIS_SPEC_IDP)",
    ),
];

impl Requirement {
    pub fn parse(name: &str) -> Result<Requirement, String> {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c));
        if !plain {
            return Err(format!(
                "`{name}` is neither a program name (letters, digits, `._+-`) nor one of: {}",
                FEATURES.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
            ));
        }
        Ok(match name {
            "landlock" => Requirement::Landlock,
            "userns" => Requirement::Userns,
            "probe-simulation" => Requirement::ProbeSimulation,
            "plain-build" => Requirement::PlainBuild,
            "network" => Requirement::Network,
            "identity-provider" => Requirement::IdentityProvider,
            program => Requirement::Program(program.to_string()),
        })
    }

    pub fn name(&self) -> &str {
        match self {
            Requirement::Program(p) => p,
            Requirement::Landlock => "landlock",
            Requirement::Userns => "userns",
            Requirement::ProbeSimulation => "probe-simulation",
            Requirement::PlainBuild => "plain-build",
            Requirement::Network => "network",
            Requirement::IdentityProvider => "identity-provider",
        }
    }
}

/// Where needs are looked for: the `PATH` the server gets and the server's command.
pub struct Where<'a> {
    /// The server's `PATH` (`None`: the harness's own).
    pub path: Option<&'a str>,
    /// The server's command line (as `RunOptions::server_cmd`).
    pub server_cmd: &'a str,
    /// The command that starts an identity provider (`RunOptions::identity_provider`).
    pub identity_provider: Option<&'a str>,
}

/// A need that is missing, and why, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub name: String,
    pub reason: String,
}

/// The case's needs that are missing, in the order the case lists them.
pub fn missing(case: &Case, at: &Where) -> Vec<Missing> {
    case.requires
        .iter()
        .filter_map(|name| {
            let r = Requirement::parse(name).ok()?;
            why_missing(&r, at).map(|reason| Missing {
                name: name.clone(),
                reason,
            })
        })
        .collect()
}

/// The skip line: `requires nc (not on the server's PATH)`, needs joined by `; `.
pub fn skip_reason(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(|m| format!("requires {} ({})", m.name, m.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Reads a manifest of what a machine is meant to have: one name a line, `#` comments.
pub fn parse_manifest(text: &str) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let name = line.split('#').next().unwrap_or("").trim();
        if name.is_empty() {
            continue;
        }
        Requirement::parse(name).map_err(|e| format!("line {}: {e}", i + 1))?;
        out.insert(name.to_string());
    }
    Ok(out)
}

fn why_missing(r: &Requirement, at: &Where) -> Option<String> {
    match r {
        Requirement::Program(p) => (!on_path(p, at.path)).then(|| {
            let hint = match p.as_str() {
                "pyright-langserver" | "typescript-language-server" => {
                    "; tests/lsp/install.sh installs it"
                }
                _ => "",
            };
            format!("not on the server's PATH{hint}")
        }),
        Requirement::Landlock => {
            (crate::sandbox::landlock_abi() == 0).then(|| "the kernel has no Landlock".into())
        }
        Requirement::Userns => (!userns_works()).then(|| {
            "unprivileged user namespaces do not work here (with mount and PID namespaces)".into()
        }),
        Requirement::ProbeSimulation => match server_version(at.server_cmd) {
            Some(v) if v.contains("probe-simulation") => None,
            Some(v) => Some(format!(
                "the server was built without the probe-simulation feature (its --version: {})",
                v.trim()
            )),
            None => Some("the server's --version says nothing".into()),
        },
        Requirement::PlainBuild => match server_version(at.server_cmd) {
            Some(v) if v.contains("probe-simulation") => Some(format!(
                "the server was built with probe-simulation (its --version: {})",
                v.trim()
            )),
            Some(_) => None,
            None => Some("the server's --version says nothing".into()),
        },
        Requirement::Network => (!network_reachable()).then(|| "no route to the internet".into()),
        Requirement::IdentityProvider => at.identity_provider.is_none().then(|| {
            format!(
                "no provider to start: give --identity-provider or {}",
                super::identity::IDP_VAR
            )
        }),
    }
}

/// Whether `program` is an executable file in one of `path`'s directories (the
/// harness's `PATH` when `None`).
pub fn on_path(program: &str, path: Option<&str>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = match path {
        Some(p) => p.to_string(),
        None => std::env::var("PATH").unwrap_or_default(),
    };
    std::env::split_paths(&path).any(|d| {
        std::fs::metadata(d.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

fn userns_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(crate::sandbox::namespaces_work)
}

fn network_reachable() -> bool {
    static REACHABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REACHABLE.get_or_init(|| {
        // A public resolver's address: no name lookup needed.
        let addr = std::net::SocketAddr::from(([1, 1, 1, 1], 443));
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(3)).is_ok()
    })
}

/// The first line `<server command> --version` prints (once per command; bounded by
/// 10 s, the process group killed after). `None` when it prints nothing.
pub fn server_version(server_cmd: &str) -> Option<String> {
    static SEEN: Mutex<Option<HashMap<String, Option<String>>>> = Mutex::new(None);
    if let Ok(mut seen) = SEEN.lock() {
        let seen = seen.get_or_insert_with(HashMap::new);
        if let Some(v) = seen.get(server_cmd) {
            return v.clone();
        }
        let v = ask_version(server_cmd);
        seen.insert(server_cmd.to_string(), v.clone());
        return v;
    }
    ask_version(server_cmd)
}

fn ask_version(server_cmd: &str) -> Option<String> {
    use std::os::unix::process::CommandExt;
    let (cmdline, _) = super::process::server_cmdline(server_cmd, "--version", &[]);
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(&cmdline)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = tx.send(out);
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let out = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    out.ok()?
        .lines()
        .next()
        .map(str::to_string)
        .filter(|l| !l.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_into_features_or_programs() {
        assert_eq!(Requirement::parse("landlock"), Ok(Requirement::Landlock));
        assert_eq!(
            Requirement::parse("probe-simulation"),
            Ok(Requirement::ProbeSimulation)
        );
        assert_eq!(
            Requirement::parse("pyright-langserver"),
            Ok(Requirement::Program("pyright-langserver".into()))
        );
        for bad in ["", "a b", "/usr/bin/nc", "nc;rm"] {
            assert!(Requirement::parse(bad).is_err(), "{bad}");
        }
        for (name, _) in FEATURES {
            assert_eq!(Requirement::parse(name).unwrap().name(), *name);
        }
    }

    #[test]
    fn a_missing_program_is_a_skip_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("present-tool");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("not-executable"), "").unwrap();
        let case = crate::spec::parse_case(
            "source: t\nrequires: [present-tool, not-executable, surely-absent-tool-4711, pyright-langserver]\nsteps:\n  - request: {method: ping}\n",
        )
        .unwrap();
        let path = dir.path().to_string_lossy().into_owned();
        let at = Where {
            path: Some(&path),
            server_cmd: "true",
            identity_provider: None,
        };
        let m = missing(&case, &at);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "not-executable",
                "surely-absent-tool-4711",
                "pyright-langserver"
            ]
        );
        assert_eq!(
            skip_reason(&m[1..]),
            "requires surely-absent-tool-4711 (not on the server's PATH); requires \
             pyright-langserver (not on the server's PATH; tests/lsp/install.sh installs it)"
        );
    }

    #[test]
    fn an_identity_provider_is_there_when_the_harness_has_one_to_start() {
        let case = crate::spec::parse_case(
            "source: t\nrequires: [identity-provider]\nsteps:\n  - request: {method: ping}\n",
        )
        .unwrap();
        let at = |idp| Where {
            path: None,
            server_cmd: "true",
            identity_provider: idp,
        };
        assert!(missing(&case, &at(Some("node idp.mjs"))).is_empty());
        let m = missing(&case, &at(None));
        assert_eq!(
            skip_reason(&m),
            "requires identity-provider (no provider to start: give --identity-provider or BORIS_SPEC_IDP)"
        );
    }

    #[test]
    fn the_server_version_tells_the_build() {
        let case = |r: &str| {
            crate::spec::parse_case(&format!(
                "source: t\nrequires: [{r}]\nsteps:\n  - request: {{method: ping}}\n"
            ))
            .unwrap()
        };
        // A "server" whose --version names the feature, and one whose does not.
        let with = "echo 'boris 0.1.0 (probe-simulation)'; exit 0; :";
        let plain = "echo 'boris 0.1.0'; exit 0; :";
        let at = |cmd| Where {
            path: None,
            server_cmd: cmd,
            identity_provider: None,
        };
        assert!(missing(&case("probe-simulation"), &at(with)).is_empty());
        assert!(missing(&case("plain-build"), &at(plain)).is_empty());
        let m = missing(&case("probe-simulation"), &at(plain));
        assert_eq!(
            m[0].reason,
            "the server was built without the probe-simulation feature (its --version: boris 0.1.0)"
        );
        assert_eq!(missing(&case("plain-build"), &at(with)).len(), 1);
    }

    #[test]
    fn the_manifest_is_one_name_a_line() {
        let m = parse_manifest("# CI installs\nnc\n\nrsync  # Debian\nlandlock\n").unwrap();
        assert_eq!(
            m.into_iter().collect::<Vec<_>>(),
            ["landlock", "nc", "rsync"]
        );
        assert!(parse_manifest("a b\n").unwrap_err().starts_with("line 1:"));
    }
}
