//! Workflows (draft docs; rewritten below).

pub mod catalog;
pub mod condition;
mod dag;
mod lookup;
mod model;
pub mod path;
pub mod validate;

pub use condition::{CompareOp, Condition};
pub use dag::Dag;
pub use lookup::*;
pub use model::*;
pub use path::Pick;
pub use validate::{Graph, GraphEdge, GraphNode, Issue, IssueCode, NodeSummary, Report, validate};
