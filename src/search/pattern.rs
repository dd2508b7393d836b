//! Which files a search looks at: a path glob (`grep`'s `include`, `glob`'s `pattern`)
//! and ripgrep's file types (`grep`'s `type`).
//!
//! A glob matches the path relative to the search root or the base name (DESIGN §8), so
//! `*.{ts,tsx}` finds files at any depth and `src/**/*.py` only under `src/`. `*` and
//! `?` never cross a `/`; `**` does. A pattern that starts with `/` is matched against the
//! absolute path instead (agents often pass one).

use globset::{GlobBuilder, GlobMatcher};
use ignore::types::{Types, TypesBuilder};
use std::path::Path;

#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    /// The pattern names directories: match the relative path too, not only the name.
    has_slash: bool,
    absolute: bool,
}

impl PathGlob {
    /// Compiles `pattern`; the error is globset's own description.
    pub fn new(pattern: &str) -> Result<Self, String> {
        PathGlob::with_case(pattern, false)
    }

    /// [`PathGlob::new`], matching letters regardless of case when `case_insensitive`
    /// (Gemini CLI's `glob` by default).
    pub fn with_case(pattern: &str, case_insensitive: bool) -> Result<Self, String> {
        let mut p = pattern.trim();
        while let Some(rest) = p.strip_prefix("./") {
            p = rest;
        }
        // `**/name-glob` matches exactly the entries whose name matches `name-glob`: match
        // the name alone, once per entry instead of twice.
        if let Some(rest) = p.strip_prefix("**/")
            && !rest.contains('/')
            && !rest.is_empty()
            && !rest.contains("**")
        {
            p = rest;
        }
        let matcher = compile(p, |b| {
            b.case_insensitive(case_insensitive)
                .literal_separator(true)
                .backslash_escape(true);
        })?;
        Ok(PathGlob {
            matcher,
            has_slash: p.contains('/'),
            absolute: p.starts_with('/'),
        })
    }

    /// Whether an entry matches, given its name, its path relative to the search root
    /// (asked for only when the pattern has a `/`) and its absolute path (asked for only
    /// when the pattern is absolute).
    pub fn is_match<'a>(
        &self,
        name: &Path,
        rel: impl FnOnce() -> &'a Path,
        absolute: impl FnOnce() -> std::path::PathBuf,
    ) -> bool {
        if self.absolute {
            return self.matcher.is_match(absolute());
        }
        self.matcher.is_match(name) || (self.has_slash && self.matcher.is_match(rel()))
    }
}

/// The longest glob compiled, in bytes: twice PATH_MAX, so a pattern can spell out any path
/// and a few alternatives. An outside fuzzer's 500 KB pattern made globset's regex
/// outgrow its size limit, which globset answers with a panic (issue 28 §7).
pub const MAX_GLOB_BYTES: usize = 8 * 1024;

/// Compiles `pattern` with the options `configure` sets, refusing one over
/// [`MAX_GLOB_BYTES`] before globset sees it. Every glob a tool takes goes through here.
pub fn compile(
    pattern: &str,
    configure: impl FnOnce(&mut GlobBuilder),
) -> Result<GlobMatcher, String> {
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(format!(
            "the pattern is {} bytes long, over the {MAX_GLOB_BYTES}-byte limit",
            pattern.len()
        ));
    }
    let mut builder = GlobBuilder::new(pattern);
    configure(&mut builder);
    let glob = builder.build().map_err(|e| e.kind().to_string())?;
    // Unreachable within the bound (a test compiles the costliest patterns at it); kept so
    // that a globset change can never turn a pattern into a panic.
    std::panic::catch_unwind(|| glob.compile_matcher())
        .map_err(|_| "the pattern is too complex to compile".to_string())
}

/// The type names a `type` argument accepts: ripgrep's (which include the seed's `python`,
/// `typescript` and `md` as aliases), sorted, plus `all`.
pub fn type_names() -> Vec<String> {
    let mut b = TypesBuilder::new();
    b.add_defaults();
    let mut names: Vec<String> = b
        .definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A matcher selecting the files of type `name` (ripgrep's definitions, matched on the
/// file name), or `None` when the name is unknown.
pub fn file_type(name: &str) -> Option<Types> {
    let name = name.trim();
    if name != "all" && !type_names().iter().any(|n| n == name) {
        return None;
    }
    let mut b = TypesBuilder::new();
    b.add_defaults();
    b.select(name);
    b.build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Every token at its costliest, repeated up to the bound, compiles without a panic,
    /// case-sensitive or not (the bound makes `compile`'s catch_unwind unreachable).
    #[test]
    fn the_costliest_patterns_at_the_bound_compile() {
        for token in [
            "a", "*", "?", "[!a]", "[a-z]", "**/", "{a,b}", "\\x", "é", "{*,?}",
        ] {
            let pattern = token.repeat(MAX_GLOB_BYTES / token.len());
            for case_insensitive in [false, true] {
                assert!(
                    PathGlob::with_case(&pattern, case_insensitive).is_ok(),
                    "{token} x {}",
                    MAX_GLOB_BYTES / token.len()
                );
            }
        }
    }

    fn m(pattern: &str, rel: &str) -> bool {
        let g = PathGlob::new(pattern).unwrap();
        let rel = Path::new(rel);
        let name = Path::new(rel.file_name().unwrap());
        g.is_match(name, || rel, || PathBuf::from("/w").join(rel))
    }

    #[test]
    fn relative_path_or_base_name() {
        assert!(m("*.go", "a/b/c.go"));
        assert!(m("*.go", "c.go"));
        assert!(!m("*.go", "a/c.rs"));
        assert!(m("*.{ts,tsx}", "web/x.tsx"));
        assert!(m("src/**/*.md", "src/a/b/x.md"));
        assert!(m("src/**/*.md", "src/x.md"));
        assert!(!m("src/**/*.md", "lib/src/x.md"));
        assert!(m("**/src/*.md", "lib/src/x.md"));
        assert!(m("src/*.rs", "src/a.rs"));
        assert!(!m("src/*.rs", "src/a/b.rs"));
        assert!(m("[ab].txt", "d/a.txt"));
        assert!(!m("[ab].txt", "d/c.txt"));
        assert!(m("./src/*.rs", "src/a.rs"));
        assert!(m("/w/src/*.rs", "src/a.rs"));
        assert!(!m("/x/src/*.rs", "src/a.rs"));
        assert!(m("*_test.c", "drivers/x/foo_test.c"));
        assert!(m("**/*_test.c", "drivers/x/foo_test.c"));
        assert!(m("**/*_test.c", "foo_test.c"));
        assert!(!m("**/*_test.c", "foo_test.c/x"));
        assert!(m("**/{a,b}.rs", "x/y/a.rs"));
    }

    #[test]
    fn bad_globs_are_errors() {
        assert!(PathGlob::new("a[").is_err());
        assert!(
            PathGlob::new(&"a".repeat(MAX_GLOB_BYTES + 1))
                .unwrap_err()
                .contains("over the 8192-byte limit")
        );
        assert!(PathGlob::new("{a,b").is_err());
    }

    #[test]
    fn types_cover_ripgrep_and_the_seed() {
        let names = type_names();
        for n in [
            "c",
            "cpp",
            "css",
            "go",
            "html",
            "java",
            "js",
            "json",
            "markdown",
            "md",
            "py",
            "python",
            "rust",
            "ts",
            "typescript",
            "yaml",
        ] {
            assert!(names.iter().any(|x| x == n), "{n}");
        }
        assert!(names.len() > 100);
        let py = file_type("python").unwrap();
        assert!(py.matched("a.pyi", false).is_whitelist());
        assert!(!py.matched("a.rs", false).is_whitelist());
        let md = file_type("md").unwrap();
        assert!(md.matched("README.mdx", false).is_whitelist());
        assert!(file_type("klingon").is_none());
    }
}
