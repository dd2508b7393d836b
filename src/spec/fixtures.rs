//! Fixtures and file checks: creating a case's files in its workdir (text, bytes,
//! modes, mtimes, symlinks, FIFOs) and checking what is on disk afterwards.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::display::quote;
use super::model::{FileCheck, FileContent, FileSpec, decode_base64, parse_mode};

// ---------------------------------------------------------------------------------
// Files

/// Resolves a case path inside the workdir; absolute paths must lie under it.
pub(crate) fn resolve(workdir: &Path, p: &str) -> Result<PathBuf, String> {
    let path = Path::new(p);
    if path.is_absolute() {
        if path.starts_with(workdir) {
            Ok(path.to_path_buf())
        } else {
            Err(format!("path `{p}` is outside the workdir"))
        }
    } else {
        Ok(workdir.join(path))
    }
}

/// Creates fixtures; modes and mtimes are applied in a second pass, once every entry
/// exists (so a read-only directory can still be filled and a directory's mtime is
/// not disturbed by creating its children). A newly created entry without `mode` gets
/// 0644 (files, FIFOs) or 0755 (directories) whatever the umask; an existing file
/// written through keeps its mode.
pub fn create_files(workdir: &Path, files: &[FileSpec]) -> Result<(), String> {
    let mut created = Vec::with_capacity(files.len());
    for f in files {
        created.push(create_one(workdir, f).map_err(|e| format!("`{}`: {e}", f.path))?);
    }
    for (f, created) in files.iter().zip(created) {
        let path = resolve(workdir, &f.path)?;
        let default_mode = match f.content {
            _ if !created => None,
            FileContent::Dir => Some(0o755),
            FileContent::Symlink(_) => None,
            _ => Some(0o644),
        };
        if let Some(m) = f.mode.or(default_mode) {
            fs::set_permissions(&path, fs::Permissions::from_mode(m))
                .map_err(|e| format!("`{}`: cannot set mode {m:o}: {e}", f.path))?;
        }
        if let Some(t) = f.mtime {
            use nix::sys::stat::{UtimensatFlags, utimensat};
            use nix::sys::time::{TimeSpec, TimeValLike};
            let ts = TimeSpec::seconds(t);
            utimensat(
                nix::fcntl::AT_FDCWD,
                &path,
                &ts,
                &ts,
                UtimensatFlags::NoFollowSymlink,
            )
            .map_err(|e| format!("`{}`: cannot set mtime: {e}", f.path))?;
        }
    }
    Ok(())
}

/// Creates one entry; returns whether it is new (did not exist before).
pub(crate) fn create_one(workdir: &Path, f: &FileSpec) -> Result<bool, String> {
    let path = resolve(workdir, &f.path)?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("cannot create parent dirs: {e}"))?;
    }
    let existing = fs::symlink_metadata(&path).ok();
    let is_dir = existing.as_ref().is_some_and(|m| m.is_dir());
    let remove_existing = || -> Result<(), String> {
        if existing.is_some() && !is_dir {
            fs::remove_file(&path).map_err(|e| format!("cannot replace: {e}"))?;
        }
        Ok(())
    };
    match &f.content {
        FileContent::Text(_) | FileContent::Bytes(_) | FileContent::Repeat { .. } => {
            if is_dir {
                return Err("is a directory".into());
            }
            // A regular file or a symlink is written through; anything else is replaced.
            if let Some(m) = &existing
                && !m.is_file()
                && !m.file_type().is_symlink()
            {
                remove_existing()?;
            }
            let file = fs::File::create(&path).map_err(|e| format!("cannot write: {e}"))?;
            let mut w = std::io::BufWriter::new(file);
            let r = match &f.content {
                FileContent::Text(t) => w.write_all(t.as_bytes()),
                FileContent::Bytes(b) => w.write_all(b),
                FileContent::Repeat { text, count } => {
                    (0..*count).try_for_each(|_| w.write_all(text.as_bytes()))
                }
                _ => Ok(()),
            };
            r.and_then(|()| w.flush())
                .map_err(|e| format!("cannot write: {e}"))?;
        }
        FileContent::Symlink(target) => {
            if is_dir {
                // A `write` step swapping a directory for a link (`rm -r d && ln -s …`).
                fs::remove_dir_all(&path).map_err(|e| format!("cannot replace: {e}"))?;
            }
            remove_existing()?;
            std::os::unix::fs::symlink(target, &path)
                .map_err(|e| format!("cannot create symlink: {e}"))?;
        }
        FileContent::Dir => {
            if !is_dir {
                remove_existing()?;
            }
            fs::create_dir_all(&path).map_err(|e| format!("cannot create dir: {e}"))?;
        }
        FileContent::Fifo => {
            if is_dir {
                return Err("is a directory".into());
            }
            remove_existing()?;
            nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644))
                .map_err(|e| format!("cannot create fifo: {e}"))?;
        }
    }
    Ok(existing.is_none())
}

pub(crate) fn kind_of(m: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "directory"
    } else if t.is_file() {
        "regular file"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// One `check_files` entry; returns its failures.
pub(crate) fn check_file(workdir: &Path, c: &FileCheck) -> Vec<String> {
    let mut fails = Vec::new();
    let p = &c.path;
    let path = match resolve(workdir, p) {
        Ok(x) => x,
        Err(e) => return vec![e],
    };
    let lmeta = fs::symlink_metadata(&path);
    if c.exists == Some(false) {
        if let Ok(m) = lmeta {
            fails.push(format!(
                "{p}: expected not to exist, but it is a {}",
                kind_of(&m)
            ));
        }
        return fails;
    }
    let lmeta = match lmeta {
        Ok(m) => m,
        Err(_) => return vec![format!("{p}: does not exist")],
    };
    if let Some(target) = &c.symlink {
        if !lmeta.file_type().is_symlink() {
            fails.push(format!(
                "{p}: expected a symlink to {}, but it is a {}",
                quote(target),
                kind_of(&lmeta)
            ));
        } else {
            match fs::read_link(&path) {
                Ok(t) if t == Path::new(target) => {}
                Ok(t) => fails.push(format!(
                    "{p}: expected a symlink to {}, but it points to {}",
                    quote(target),
                    quote(&t.to_string_lossy())
                )),
                Err(e) => fails.push(format!("{p}: cannot read link: {e}")),
            }
        }
    }
    let needs_target = c.dir.is_some()
        || c.mode.is_some()
        || c.text.is_some()
        || c.base64.is_some()
        || !c.contains.is_empty()
        || !c.not_contains.is_empty();
    if !needs_target {
        return fails;
    }
    let meta = match fs::metadata(&path) {
        Ok(m) => m,
        Err(e) => {
            fails.push(format!("{p}: cannot follow: {e}"));
            return fails;
        }
    };
    if let Some(want_dir) = c.dir
        && meta.is_dir() != want_dir
    {
        fails.push(format!(
            "{p}: expected {}a directory, but it is a {}",
            if want_dir { "" } else { "not " },
            kind_of(&meta)
        ));
    }
    if let Some(m) = &c.mode {
        match parse_mode(m) {
            Err(e) => fails.push(format!("{p}: {e}")),
            Ok(want) => {
                let got = meta.permissions().mode() & 0o7777;
                if got != want {
                    fails.push(format!("{p}: expected mode {want:04o}, got {got:04o}"));
                }
            }
        }
    }
    let wants_content = c.text.is_some()
        || c.base64.is_some()
        || !c.contains.is_empty()
        || !c.not_contains.is_empty();
    if wants_content {
        if !meta.is_file() {
            fails.push(format!(
                "{p}: expected a regular file to read, but it is a {}",
                kind_of(&meta)
            ));
            return fails;
        }
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                fails.push(format!("{p}: cannot read: {e}"));
                return fails;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        if let Some(want) = &c.text
            && want.as_bytes() != bytes.as_slice()
        {
            fails.push(format!(
                "{p}: expected content {}, got {}",
                quote(want),
                quote(&text)
            ));
        }
        if let Some(b) = &c.base64 {
            match decode_base64(b) {
                Err(e) => fails.push(format!("{p}: {e}")),
                Ok(want) if want != bytes => fails.push(format!(
                    "{p}: expected {} bytes (base64), got {} bytes: {}",
                    want.len(),
                    bytes.len(),
                    quote(&text)
                )),
                Ok(_) => {}
            }
        }
        for s in c.contains.iter() {
            if !text.contains(s.as_str()) {
                fails.push(format!(
                    "{p}: expected content to contain {}, got {}",
                    quote(s),
                    quote(&text)
                ));
            }
        }
        for s in c.not_contains.iter() {
            if text.contains(s.as_str()) {
                fails.push(format!(
                    "{p}: expected content not to contain {}, got {}",
                    quote(s),
                    quote(&text)
                ));
            }
        }
    }
    fails
}

/// Makes every directory under `root` writable and searchable so the temp dir can be
/// removed even after a case made parts of it read-only. Does not follow symlinks.
pub(crate) fn make_removable(root: &Path) {
    let Ok(meta) = fs::symlink_metadata(root) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = fs::set_permissions(root, fs::Permissions::from_mode(0o700));
    if let Ok(entries) = fs::read_dir(root) {
        for e in entries.flatten() {
            make_removable(&e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::model::Action;
    use std::time::Duration;

    #[test]
    fn fixtures_and_checks_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().canonicalize().unwrap();
        let case = crate::spec::model::parse_case(
            r#"
source: x
files:
  - {path: a/b.txt, text: "hello\n", mode: "0600", mtime: 1000000000}
  - {path: bin, base64: "AAEC"}
  - {path: big, repeat: {text: "ab", count: 3}}
  - {path: link, symlink: "a/b.txt"}
  - {path: dangling, symlink: "nowhere"}
  - {path: d, dir: true, mode: "0755"}
  - {path: p, fifo: true}
steps:
  - check_files:
      - {path: a/b.txt, text: "hello\n", mode: "0600", contains: ell, not_contains: xyz}
      - {path: bin, base64: "AAEC"}
      - {path: big, text: "ababab"}
      - {path: link, symlink: "a/b.txt", text: "hello\n"}
      - {path: dangling, symlink: "nowhere"}
      - {path: d, dir: true, mode: "0755"}
      - {path: nope, exists: false}
      - {path: p}
"#,
        )
        .unwrap();
        create_files(&wd, &case.files).unwrap();
        let mtime = fs::metadata(wd.join("a/b.txt"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(
            mtime,
            std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000)
        );
        let Action::CheckFiles(checks) = &case.steps[0].action else {
            panic!()
        };
        for c in checks {
            assert_eq!(check_file(&wd, c), Vec::<String>::new(), "{c:?}");
        }
        // And the failing direction.
        let bad = crate::spec::model::parse_case(
            r#"
source: x
steps:
  - check_files:
      - {path: a/b.txt, text: "bye\n", mode: "0644", contains: zzz, not_contains: ell}
      - {path: link, symlink: "other"}
      - {path: a/b.txt, exists: false}
      - {path: missing}
      - {path: p, text: ""}
      - {path: d, dir: false}
"#,
        )
        .unwrap();
        let Action::CheckFiles(checks) = &bad.steps[0].action else {
            panic!()
        };
        let f: Vec<Vec<String>> = checks.iter().map(|c| check_file(&wd, c)).collect();
        assert_eq!(f[0].len(), 4, "{:?}", f[0]);
        assert!(
            f[0][0].contains("expected mode 0644, got 0600"),
            "{:?}",
            f[0]
        );
        assert!(f[1][0].contains("points to \"a/b.txt\""), "{:?}", f[1]);
        assert!(f[2][0].contains("regular file"), "{:?}", f[2]);
        assert_eq!(f[3], vec!["missing: does not exist".to_string()]);
        assert!(f[4][0].contains("fifo"), "{:?}", f[4]);
        assert!(f[5][0].contains("expected not a directory"), "{:?}", f[5]);
    }

    #[test]
    fn fixtures_outside_workdir_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let wd = dir.path().canonicalize().unwrap();
        let case = crate::spec::model::parse_case(
            "source: x\nfiles: [{path: /etc/x, text: y}]\nsteps: [{sleep_ms: 1}]\n",
        )
        .unwrap();
        let e = create_files(&wd, &case.files).unwrap_err();
        assert!(e.contains("outside the workdir"), "{e}");
    }

    #[test]
    fn make_removable_fixes_readonly_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("ro/inner");
        fs::create_dir_all(&sub).unwrap();
        fs::write(sub.join("f"), "x").unwrap();
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o500)).unwrap();
        fs::set_permissions(dir.path().join("ro"), fs::Permissions::from_mode(0o000)).unwrap();
        make_removable(dir.path());
        fs::remove_dir_all(dir.path().join("ro")).unwrap();
    }
}
