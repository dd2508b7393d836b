//! Search: what `grep` and `glob` share.
//!
//! - [`output`]: pure formatting — result lines, context merging, `offset`/`head_limit`
//!   pagination, the 2000-character line cut and the 30,000-character result cap — apart
//!   from all I/O, with proptest properties next to it.
//! - [`pattern`]: the path glob (`include`, `glob`'s `pattern`) that matches the path
//!   relative to the search root or the base name, and ripgrep's file types.
//! - [`walk`]: the parallel directory walk on ripgrep's `ignore` crate, with the ignore
//!   rules of DESIGN §8 and the path scope applied to every entry.

pub mod output;
pub mod pattern;
pub mod walk;
