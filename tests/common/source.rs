//! The source files the tests that read the code itself walk (`tests/function_length.rs`,
//! `tests/layers.rs`).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, in path order; an unreadable folder fails the test.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
