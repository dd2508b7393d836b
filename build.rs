//! Embeds the spec suite and its adapters (`spec/adapters/*.yaml`) in the library, so that an installed `boris-spec` carries the
//! whole suite (`boris-spec run` needs no checkout): every `spec/**/*.yaml` becomes an
//! `include_str!` entry of `$OUT_DIR/embedded_spec.rs`. `include_str!` makes rustc
//! track each file's content; the directory itself is watched for added and removed
//! files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let spec = root.join("spec");
    println!("cargo:rerun-if-changed=spec");
    let mut files = Vec::new();
    walk(&spec, &mut files);
    files.sort();
    let adapters_dir = spec.join("adapters");
    let (adapters, files): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .partition(|f| f.starts_with(&adapters_dir));
    let mut out = String::from(
        "/// Every case of the suite: its path relative to `spec/`, and its text.\n\
         pub static CASES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        let rel = f.strip_prefix(&spec).expect("under spec/");
        let _ = writeln!(
            out,
            "    ({:?}, include_str!({:?})),",
            rel.to_string_lossy(),
            f.to_string_lossy()
        );
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("embedded_spec.rs");
    std::fs::write(dest, out).expect("write embedded_spec.rs");

    let mut out = String::from(
        "/// The built-in adapters (`spec/adapters/<name>.yaml`): name and text.\n\
         pub static ADAPTERS: &[(&str, &str)] = &[\n",
    );
    for f in &adapters {
        let name = f.file_stem().expect("a file name").to_string_lossy();
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            f.to_string_lossy()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"))
        .join("embedded_adapters.rs");
    std::fs::write(dest, out).expect("write embedded_adapters.rs");
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}
