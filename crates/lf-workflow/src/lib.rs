//! Workflows: versioned graphs of trigger, lens and tool steps, written as
//! a blueprint of readable step keys, kept as immutable numbered versions,
//! validated against the node catalog, and run by the rules this crate
//! holds: the engine that moves a run from its trigger to its end, and the
//! runs it keeps.
//!
//! - The workflow itself: [`blueprint`] (what `create_workflow` takes),
//!   `model.rs` (versions, nodes, edges), [`mod@validate`] (the pure
//!   validator and its report), [`catalog`] (every node type this server
//!   runs, declared once, as data), [`WorkflowService`] over a
//!   [`WorkflowStore`].
//! - Running it: [`engine`] (a pure step function from a run's state and
//!   an event to the next actions), [`run`] (runs, their store under a
//!   lease, and `run_workflow`'s use cases), [`exec`] (the node types whose
//!   output is a function of their config and input, run here by
//!   [`run_pure`]), [`schedule`] and [`follow`] (when scheduled and
//!   event-triggered workflows start), [`hook`] (webhook triggers and their
//!   secrets), [`kv`] (the state steps keep between runs).
//! - What steps reach: saved connections ([`connection`]), secrets sealed
//!   by a [`SecretSealer`] the composition root provides.
//!
//! lf-workflow knows nothing about SQL, MCP, HTTP or an async runtime (it
//! reads and writes workflow data with serde_json, and JSONPath with
//! serde_json_path). It does not drive runs: lf-runner claims them, keeps
//! their timers, runs the executors that reach outside (a model, the
//! network, the stores) and feeds what happens to [`engine::step`]. It
//! does not know lenses either: it asks about them through
//! [`LensLookup`], which the composition root implements over lf-lens.
//! Every [`ConnectionStore`] answers [`ConnectionLookup`], and no key and
//! no cipher is known here. Webhook secrets are made here and kept by a
//! [`hook::WebhookStore`] as their SHA-256 only.
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
//! Decided here once; the [`engine`] implements it, the docs render it.
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
//! - The node catalog lists only the types this server runs, each with
//!   one executor in lf-runner's table or settled by the engine (see
//!   [`catalog`]).
//! - The engine is a pure function: the same plan, state, event and
//!   [`engine::Tick`] (the time, and the jitter's seed) give the same
//!   actions; it reads no clock and does no I/O.
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
pub mod profile;
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
    Connection, ConnectionService, ConnectionStore, NewConnection, Redaction, SealBinding, SealedSecret,
    Secret, SecretSealer,
};
pub use dag::Dag;
pub use exec::{NodeError, NodeErrorCode, run_pure};
pub use lookup::{
    ConnectionLookup, EgressPolicy, EgressRefusal, Facts, LensFacts, LensLookup, LensParam, LensUse,
    SavedConnection,
};
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
