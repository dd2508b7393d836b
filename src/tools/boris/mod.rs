//! Boris's own tools (the default profile's shapes, DESIGN §7), one module each, over the
//! engines in `engine/`.

pub mod apply_patch;
pub mod bash;
pub mod create;
pub mod diagnostics;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod navigate;
pub mod pipe;
pub mod rename;
pub mod tasks;
pub mod terminal;
pub mod undo;
pub mod view;
