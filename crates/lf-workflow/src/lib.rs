//! Workflows: versioned graphs of trigger, lens and tool steps, written as
//! a blueprint of readable step keys, kept as immutable numbered versions,
//! and validated against the node catalog before anything runs.
//!
//! lf-workflow knows nothing about SQL, MCP, HTTP or an async runtime (it
//! reads and writes workflow data with serde_json, and JSONPath with
//! serde_json_path). It does not know lenses either: it asks about them
//! through [`LensLookup`], which the composition root implements over
//! lf-lens. Saved connections are its own ([`connection`]): every
//! [`ConnectionStore`] answers [`ConnectionLookup`], and secrets are sealed
//! by a [`SecretSealer`] the composition root provides, so no key and no
//! cipher is known here. So are webhook secrets ([`hook`]): made here, kept
//! by a [`hook::WebhookStore`] as their SHA-256 only. It does not run workflows: runs, node results, leases and the
//! engine's step function are part 2, beside [`WorkflowStore`]. What it
//! does run is what needs nothing from outside: [`Condition::test`], and
//! the node types whose output is a pure function of their config and
//! input, through [`run_pure`] ([`exec`]).
//!
//! ```
//! use std::sync::Arc;
//! use lf_core::{LenserId, Principal};
//! use lf_workflow::{MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, VersionSelector, WorkflowService};
//!
//! let service = WorkflowService::new(
//!     Arc::new(MemoryWorkflowStore::new()),
//!     Arc::new(MemoryLenses::new()),
//!     Arc::new(MemoryConnections::new()),
//! );
//! let me = Principal::Service { acting_as: Some(LenserId::new()) };
//! let blueprint = serde_json::from_value(serde_json::json!({
//!     "title": "Tidy feed",
//!     "steps": [
//!         {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
//!         {"key": "feed", "kind": "tool", "name": "Read feed", "node_type": "rss_feed",
//!          "config": {"url": "https://blog.rust-lang.org/feed.xml", "limit": 5}},
//!         {"key": "titles", "kind": "tool", "name": "Titles", "node_type": "extract_field",
//!          "config": {"path": "$.items[*].title", "all": true}}
//!     ],
//!     "connections": [
//!         {"from_step": "start", "to_step": "feed", "input_parameter": "input"},
//!         {"from_step": "feed", "output_key": "items", "to_step": "titles", "input_parameter": "input"}
//!     ]
//! })).unwrap();
//! let created = pollster::block_on(service.create(&me, NewWorkflow { blueprint, owner: None })).unwrap();
//! assert_eq!(created.version.number, 1);
//! let checked = pollster::block_on(service.validate(&me, created.workflow.id, VersionSelector::Head)).unwrap();
//! assert!(checked.report.valid && checked.report.run_ready);
//! ```
//!
//! # Data flow
//!
//! Decided here once; part 2's engine implements it, the docs render it.
//! - A trigger's output is the run's `inputs` object.
//! - A connection carries a part of its upstream node's output, picked by
//!   `output_key` ([`Pick`]): a top-level field by name, or an RFC 9535
//!   JSONPath starting with `$` (one match: that value; several: an array
//!   of them); `output`, or no key, is the whole output. A pick that
//!   selects nothing carries nothing: the connection is *not taken*.
//! - Branches are output fields: `if_condition` outputs `{"true": input}`
//!   or `{"false": input}`, `switch` the name of the first case that holds,
//!   `try_catch` `try` or `catch`. A connection from a branch not taken
//!   carries nothing, and a step none of whose incoming connections was
//!   taken is skipped (`merge` waits only for what reaches it). Every node
//!   also has an `error` output, its error when it fails, for
//!   `error_catch`.
//! - A connection with a `condition` (structured operators, [`Condition`],
//!   tested on the upstream output) is taken only when it holds.
//! - A lens step's and every AI step's output is an object with `text`,
//!   `model`, `input_tokens` and `output_tokens` (some AI steps add fields:
//!   the catalog says which).
//! - Each node's inputs are its configured `parameters` merged with its
//!   wired inputs, by input parameter: wired values win over configured
//!   ones, unless the connections into that parameter say otherwise with
//!   `merge_strategy`: `last_write_wins` (the default: the last connection
//!   in blueprint order), `concat` (texts joined by a blank line, the
//!   configured value first), `array` (the configured value first, then
//!   the wired ones), `json_object` (keyed by upstream step key; the
//!   configured value is not used). Connections into one parameter must
//!   agree on their strategy.
//! - A lens step's input parameters are its lens's parameters, by label,
//!   case-insensitively. A tool node takes inputs under any name, `input`
//!   being the conventional name of its main input; `[[name]]` in a tool's
//!   template fields is filled from its inputs.
//!
//! # Invariants
//! - A version is immutable and numbered 1, 2, 3… in the order it was
//!   made; the head is the newest. Node and edge ids, positions and
//!   ordinals are the server's.
//! - No secret is ever part of a workflow: secret-named fields are refused
//!   at any depth, and a step names a saved connection instead.
//! - The validator is pure, deterministic and linear in nodes plus edges;
//!   what creation accepts, it reports no error for (given the same lenses
//!   and connections).
//! - The node catalog lists only types part 2 executes (52 of the
//!   original's 96; see [`catalog`]).
//! - Every read goes through the store with the caller's reach: unlisted
//!   is readable by id and listed to its owner only; "not yours to read"
//!   is NOT_FOUND.

pub mod blueprint;
pub mod catalog;
pub mod condition;
pub mod connection;
pub mod contract;
mod dag;
pub mod engine;
pub mod examples;
pub mod exec;
pub mod follow;
mod graph;
pub mod hook;
mod json;
pub mod kv;
mod lookup;
mod memory;
mod model;
pub mod path;
pub mod run;
pub mod schedule;
pub mod secrets;
mod service;
mod store;
pub mod validate;
mod view;

pub use blueprint::{Blueprint, GraphDraft, RawBlueprint, RawConnection, RawConnector, RawStep};
pub use condition::{CompareOp, Condition};
pub use connection::{
    Connection, ConnectionService, ConnectionStore, NewConnection, SealBinding, SealedSecret, Secret,
    SecretSealer,
};
pub use dag::Dag;
pub use exec::{NodeError, NodeErrorCode, run_pure};
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
