//! Search: what `grep` and `glob` do, apart from the tools. Nothing here knows the MCP
//! tools or their context: callers pass plain values (the root they resolved, the path
//! scope, the file size limit, a cancellation token).
//!
//! - [`grep`]: the content search engine — the walk, counting, ordering, paging.
//! - [`glob`]: the file search engine.
//! - [`output`]: pure formatting — result lines, context merging, `offset`/`head_limit`
//!   pagination, the 2000-character line cut and the 30,000-character result cap — apart
//!   from all I/O, with proptest properties next to it.
//! - [`pattern`]: the path glob (`include`, `glob`'s `pattern`) that matches the path
//!   relative to the search root or the base name, and ripgrep's file types.
//! - [`walk`]: the parallel directory walk on ripgrep's `ignore` crate, with the ignore
//!   rules of DESIGN §8 and the path scope applied to every entry.

pub mod glob;
pub mod grep;
pub mod output;
pub mod pattern;
pub mod walk;

/// A search stopped because its call was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

#[cfg(test)]
mod tests {
    /// Search depends on the scope, not on the tools (issue 14: the tools import search,
    /// never the other way round).
    #[test]
    fn search_does_not_use_the_tools() {
        let tools = concat!("crate::", "tools");
        let up = concat!("super::super::", "tools");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/search");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("src/search is readable") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path).expect("a source file");
                assert!(
                    !source.contains(tools) && !source.contains(up),
                    "{} uses the tools module",
                    path.display()
                );
                checked += 1;
            }
        }
        assert!(checked >= 5, "only {checked} files under {}", dir.display());
    }
}
