//! Filesystem helpers shared by the file tools: the atomic write every edit goes through
//! (DESIGN §7), and the checks that keep a tool from reading a FIFO or a device.

use crate::error::{ErrorCode, ToolError, ToolResult};
use std::fs::{self, File, Metadata};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

/// Mode of files that `create_file` makes (seed 001: "create_file always sets 0644").
pub const NEW_FILE_MODE: u32 = 0o644;

/// Prefix of the temporary files an atomic write leaves behind only if the process is
/// killed between creating and renaming one.
pub const TEMP_PREFIX: &str = ".boris-tmp-";

/// What kind of thing sits at a path, for tools that must refuse special files without
/// opening them (opening a FIFO blocks until a writer appears).
pub fn describe_special(meta: &Metadata) -> Option<&'static str> {
    let ft = meta.file_type();
    if ft.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_block_device() {
        Some("a block device")
    } else if ft.is_char_device() {
        Some("a character device")
    } else {
        None
    }
}

/// Metadata of an existing regular file, or the error a tool reports.
pub fn regular_file_meta(real: &Path, shown: &Path) -> ToolResult<Metadata> {
    let meta = fs::metadata(real).map_err(|e| ToolError::io(shown, "read", &e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid(format!(
            "{} is a directory, not a file",
            shown.display()
        )));
    }
    if let Some(kind) = describe_special(&meta) {
        return Err(ToolError::invalid(format!(
            "{} is {kind}, not a regular file; it is never read",
            shown.display()
        )));
    }
    Ok(meta)
}

/// Fails with `FILE_TOO_LARGE` when `size` is over `limit`. `what` names the operation
/// ("view without view_range") and `fix` tells the agent what to do instead.
pub fn check_size(size: u64, limit: u64, shown: &Path, what: &str, fix: &str) -> ToolResult<()> {
    if size > limit {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{} is {size} bytes, over the {limit}-byte limit for {what} (--max-file-size); {fix}",
                shown.display(),
            ),
        ));
    }
    Ok(())
}

/// Reads a whole regular file that is known to be within the size limit.
pub fn read_file(real: &Path, shown: &Path, expected_size: u64) -> ToolResult<Vec<u8>> {
    let mut file = File::open(real).map_err(|e| ToolError::io(shown, "read", &e))?;
    let mut bytes = Vec::with_capacity(expected_size as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(shown, "read", &e))?;
    Ok(bytes)
}

/// Writes `bytes` to `real` so that a reader (or a crash) sees either the old content or
/// the new, never a mix: a temporary file in the same directory, fsync, rename over the
/// target, fsync of the directory. An existing file keeps its mode and, where the
/// process may set it, its owner; a new file gets [`NEW_FILE_MODE`].
pub fn atomic_write(real: &Path, shown: &Path, bytes: &[u8]) -> ToolResult<()> {
    let dir = real.parent().ok_or_else(|| {
        ToolError::invalid(format!("{} has no parent directory", shown.display()))
    })?;
    let existing = fs::metadata(real).ok();
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| ToolError::io(shown, "create a temporary file next to", &e))?;
    let write_err = |e: std::io::Error| ToolError::io(shown, "write", &e);
    tmp.as_file_mut().write_all(bytes).map_err(write_err)?;
    let mode = existing
        .as_ref()
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(NEW_FILE_MODE);
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(write_err)?;
    if let Some(meta) = &existing {
        // Only root (or the owner, for the group) may change ownership; failing to is
        // not a reason to refuse the edit.
        let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(meta.uid()), Some(meta.gid()));
    }
    tmp.as_file().sync_all().map_err(write_err)?;
    tmp.persist(real)
        .map_err(|e| ToolError::io(shown, "replace", &e.error))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_keeps_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        atomic_write(&p, &p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let q = dir.path().join("new.txt");
        atomic_write(&q, &q, b"n").unwrap();
        assert_eq!(
            fs::metadata(&q).unwrap().permissions().mode() & 0o777,
            NEW_FILE_MODE
        );
    }
}

/// Serialises read-modify-write cycles on the same file, so two concurrent edits of one
/// file (from one session or several) cannot both read the old content and lose one of
/// the changes. Striped by path hash: a fixed, small amount of memory.
#[derive(Debug)]
pub struct PathLocks {
    stripes: Vec<std::sync::Mutex<()>>,
}

impl Default for PathLocks {
    fn default() -> Self {
        PathLocks {
            stripes: (0..64).map(|_| std::sync::Mutex::new(())).collect(),
        }
    }
}

impl PathLocks {
    pub fn lock(&self, path: &Path) -> std::sync::MutexGuard<'_, ()> {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        path.hash(&mut h);
        let stripe = &self.stripes[(h.finish() as usize) % self.stripes.len()];
        // A panic while holding the lock left no shared data behind it to repair.
        stripe.lock().unwrap_or_else(|p| p.into_inner())
    }
}
