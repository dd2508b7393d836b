//! Path resolution against a model filesystem of arbitrary symlinks (loops, absolute
//! and relative targets, `..`): no path that passes the scope check ever lies outside
//! the allowed root, and the result is fully resolved.
#![no_main]
use boris::scope::{LinkReader, Scope};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

struct ModelFs(HashMap<PathBuf, PathBuf>);

impl LinkReader for ModelFs {
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.0.get(path).cloned()
    }
}

/// Paths built from a small alphabet, so that links and inputs collide often.
fn path_from(bytes: &[u8]) -> String {
    const PARTS: [&str; 8] = ["..", ".", "a", "b", "w", "l", "/", "etc"];
    let mut s = String::new();
    for &b in bytes {
        let part = PARTS[b as usize % PARTS.len()];
        if !s.is_empty() && part != "/" && !s.ends_with('/') {
            s.push('/');
        }
        s.push_str(part);
    }
    s
}

fuzz_target!(|input: (Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>)| {
    let (path_bytes, links) = input;
    let mut map = HashMap::new();
    for (from, to) in links.iter().take(8) {
        let from = boris::scope::normalize(Path::new("/w"), Path::new(&path_from(from)));
        map.insert(from, PathBuf::from(path_from(to)));
    }
    let fs = ModelFs(map);
    let scope = Scope::new(vec![PathBuf::from("/w")], vec![]).expect("valid scope");
    if let Ok(p) = scope.resolve_with(&fs, Path::new("/w/a"), &path_from(&path_bytes)) {
        assert!(p.real.starts_with("/w"), "{p:?} escaped /w");
        assert!(
            !p.real
                .components()
                .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        );
        let mut prefix = PathBuf::from("/");
        for c in p.real.components().skip(1) {
            prefix.push(c);
            assert!(
                fs.read_link(&prefix).is_none(),
                "{p:?} not fully resolved at {prefix:?}"
            );
        }
    }
});
