//! Lenses: reusable prompt templates with parameters, immutable semver
//! versions, forks and visibility tiers.
//!
//! lf-lens knows nothing about SQL, MCP, HTTP or JSON, and needs no async
//! runtime of its own: another Rust app can parse and resolve templates with
//! [`Template`], or run the whole [`LensService`] on the [`MemoryLensStore`].
//!
//! ```
//! use std::sync::Arc;
//! use lf_core::{LenserId, Principal};
//! use lf_lens::{LensService, MemoryLensStore, NewLens, ParamValues, TemplateBody, Title, VersionSelector, Visibility};
//!
//! let service = LensService::new(Arc::new(MemoryLensStore::new()));
//! let me = Principal::Service { acting_as: Some(LenserId::new()) };
//! let view = pollster::block_on(service.create(&me, NewLens {
//!     title: Title::parse("Code reviewer").unwrap(),
//!     description: None,
//!     body: TemplateBody::parse("You are a senior [[Language]] engineer. Review this code: [[Code]] Focus: [[Focus!]]").unwrap(),
//!     visibility: Visibility::Private,
//!     params: vec![],
//! })).unwrap();
//! let values = ParamValues::new().insert("language", "Rust").insert("Code", "fn main() {}");
//! let run = pollster::block_on(service.run(&me, view.lens.id, VersionSelector::Head, &values, None)).unwrap();
//! assert_eq!(run.prompt, "You are a senior Rust engineer. Review this code: fn main() {} Focus: ");
//! ```
//!
//! Invariants:
//! - a version is immutable; its parameters are exactly the distinct tokens of
//!   its body, in order of first appearance;
//! - the head is the newest version, and its semver is greater than every
//!   other version's;
//! - every read goes through the store with the caller's reach;
//! - a label points at a version of its own lens, and every move of it is
//!   recorded (see `labels.rs`).

pub mod contract;
mod labels;
mod memory;
mod model;
mod service;
mod store;
pub mod template;
mod versioning;

pub use labels::{LabelChange, LabelChanged, LabelMove, LabelSet, LensLabel, SetLabel, VersionRef};
pub use lf_core::LabelName;
pub use memory::{MemoryLensStore, head_moved, version_not_found};
pub use model::{
    Bump, Changelog, Description, Lens, LensDraft, LensFilter, LensPatch, LensRun, LensStatus, LensVersion,
    Param, SearchQuery, Semver, TemplateBody, Title, VersionSelector, VersionSummary, Visibility,
};
pub use service::{
    Candidate, Extracted, FindAndRun, ForkLens, LensService, LensUpdate, LensView, MAX_VALUE_CHARS,
    MAX_VALUES, NewLens, ParamValues, Resolved, UpdateOutcome, Validation, VersionDiff, estimate_tokens,
};
pub use store::{LensStore, SEARCH_RANK_WINDOW};
pub use template::{Template, TypeHint, Unterminated};
pub use versioning::{Change, MAX_PARAMS, ParamChange, ParamDeclaration, build_params, check_option};
