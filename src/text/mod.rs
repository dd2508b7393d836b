//! Pure text logic, apart from all I/O so that each piece can be property-tested and
//! fuzzed on its own: view ranges, line scanning and truncation, line numbering.

pub mod line_index;
pub mod lines;
pub mod ranges;
pub mod replace;
pub mod sanitize;
pub mod sentinel;
pub mod truncate;
