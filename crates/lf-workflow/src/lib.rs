//! Workflows (draft docs; rewritten below).

pub mod catalog;
pub mod condition;
mod model;
pub mod path;

pub use condition::{CompareOp, Condition};
pub use model::*;
pub use path::Pick;
