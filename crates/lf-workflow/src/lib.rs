//! Workflows (draft docs; rewritten below).

pub mod blueprint;
pub mod catalog;
pub mod condition;
pub mod contract;
mod dag;
mod lookup;
mod memory;
mod model;
pub mod path;
pub mod secrets;
mod service;
mod store;
pub mod validate;
mod view;

pub use blueprint::{Blueprint, GraphDraft, RawBlueprint, RawConnection, RawConnector, RawStep};
pub use condition::{CompareOp, Condition};
pub use dag::Dag;
pub use lookup::{ConnectionLookup, Facts, LensFacts, LensLookup, LensParam, SavedConnection};
pub use memory::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, workflow_head_moved, workflow_not_found,
    workflow_version_not_found,
};
pub use model::*;
pub use path::Pick;
pub use service::{
    Created, CreationSummary, NewWorkflow, NodeTypeList, Updated, Validated, WorkflowService, WorkflowUpdate,
    WorkflowView,
};
pub use store::WorkflowStore;
pub use validate::{Graph, GraphEdge, GraphNode, Issue, IssueCode, NodeSummary, Report, validate};
pub use view::{Described, DescribedConnection, DescribedNode, GraphView};
