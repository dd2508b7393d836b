//! The engines every profile's tools share: the faces (Boris's own tools in `boris/`,
//! each outside contract's in its folder) only shape arguments and answers over these.

pub mod code;
pub mod edit;
pub mod schema;
pub mod search;
pub mod shell;
pub mod view;
