//! Where a generated bearer token is shown (issue 25 §5, X10). Boris's stderr is often a
//! file (`boris --generate-token 2>boris.log`), and a confined command may read any file
//! the sandbox does not hide: it read the token there and called the server's own port
//! with it. So the token goes on stderr only where no command can read it back (a
//! terminal, a pipe or a socket: docker's and systemd's logs); otherwise to the
//! controlling terminal, and where there is none to a file in Boris's private temporary
//! directory, which the sandbox hides from every command and which goes with the server.

use std::io::Write;
use std::path::{Path, PathBuf};

/// What Boris's stderr is, as far as a reader is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// A terminal, an anonymous pipe or a socket: what is written there cannot be read
    /// back by opening a path.
    Private,
    /// A regular file, a named FIFO, a device: anyone who may open it may read it.
    ByPath,
}

/// Where the token is shown instead of stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stderr,
    Terminal,
    File(PathBuf),
}

/// Pure: where the token goes, given what stderr is and whether a terminal opened.
pub fn destination(stderr: Stream, terminal: bool, private_dir: &Path) -> Destination {
    match (stderr, terminal) {
        (Stream::Private, _) => Destination::Stderr,
        (Stream::ByPath, true) => Destination::Terminal,
        (Stream::ByPath, false) => Destination::File(private_dir.join("bearer-token")),
    }
}

/// What descriptor 2 is.
pub fn stderr_stream() -> Stream {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata("/proc/self/fd/2") else {
        // No /proc: judge by fstat alone (a FIFO may be named).
        return fstat_stream();
    };
    let ty = meta.file_type();
    if ty.is_socket() {
        return Stream::Private;
    }
    if ty.is_fifo() {
        // An anonymous pipe reads as `pipe:[inode]`; a named FIFO as its path.
        let link = std::fs::read_link("/proc/self/fd/2").unwrap_or_default();
        return if link.to_string_lossy().starts_with("pipe:") {
            Stream::Private
        } else {
            Stream::ByPath
        };
    }
    if ty.is_char_device() && unsafe { libc::isatty(2) } == 1 {
        return Stream::Private;
    }
    Stream::ByPath
}

fn fstat_stream() -> Stream {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(2, &mut st) } != 0 {
        return Stream::ByPath;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFSOCK => Stream::Private,
        libc::S_IFCHR if unsafe { libc::isatty(2) } == 1 => Stream::Private,
        _ => Stream::ByPath,
    }
}

/// The start banner with its `bearer token: …` line kept off a stderr commands could
/// read: the token is written to the terminal or a private file, and the line says where.
pub fn divert(banner: String, token: Option<&str>, generated: bool, private_dir: &Path) -> String {
    let Some(token) = token.filter(|_| generated) else {
        return banner;
    };
    let line = format!("bearer token: {token}");
    if !banner.contains(&line) {
        return banner;
    }
    let stream = stderr_stream();
    let tty = (stream == Stream::ByPath)
        .then(|| {
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/tty")
                .ok()
        })
        .flatten();
    let shown = match destination(stream, tty.is_some(), private_dir) {
        Destination::Stderr => return banner,
        Destination::Terminal => match tty.map(|mut t| writeln!(t, "boris: {line}")) {
            Some(Ok(())) => {
                "bearer token: shown on the terminal (stderr is a file commands could read)"
                    .to_string()
            }
            _ => return divert_to_file(&banner, &line, private_dir, token),
        },
        Destination::File(_) => return divert_to_file(&banner, &line, private_dir, token),
    };
    banner.replace(&line, &shown)
}

fn divert_to_file(banner: &str, line: &str, private_dir: &Path, token: &str) -> String {
    use std::os::unix::fs::OpenOptionsExt;
    let path = private_dir.join("bearer-token");
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{token}"));
    let shown = match written {
        Ok(()) => format!(
            "bearer token: in {} (stderr is a file commands could read; the sandbox hides this one)",
            path.display()
        ),
        // Never the token itself where a command could read it.
        Err(e) => format!(
            "bearer token: not shown (stderr is a file commands could read, and {} could not be written: {e}); use --token or BORIS_TOKEN",
            path.display()
        ),
    };
    banner.replace(line, &shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_where_no_command_reads_it() {
        let dir = Path::new("/private");
        assert_eq!(
            destination(Stream::Private, false, dir),
            Destination::Stderr
        );
        assert_eq!(destination(Stream::Private, true, dir), Destination::Stderr);
        assert_eq!(
            destination(Stream::ByPath, true, dir),
            Destination::Terminal
        );
        assert_eq!(
            destination(Stream::ByPath, false, dir),
            Destination::File(PathBuf::from("/private/bearer-token"))
        );
    }

    #[test]
    fn a_banner_without_a_generated_token_is_unchanged() {
        let b = "boris: MCP at x\nbearer token: abc".to_string();
        assert_eq!(divert(b.clone(), Some("abc"), false, Path::new("/p")), b);
        assert_eq!(divert(b.clone(), None, true, Path::new("/p")), b);
    }
}
