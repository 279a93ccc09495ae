//! Datasets: named, owned lists of cases, versioned.
//!
//! - `model.rs`: [`Dataset`], [`DatasetVersion`], [`Case`] and the checks
//!   of what a case is given;
//! - `parse.rs`: cases read from inline JSON, JSONL or CSV text, every bad
//!   case reported by its place;
//! - `store.rs`: [`DatasetStore`], its contract;
//! - `service.rs`: [`DatasetService`], the use cases for a principal;
//! - `memory.rs`, `contract.rs`: the in-memory store and the suite every
//!   store runs.
//!
//! How versions are stored: a case has a position (1, 2, … in its dataset)
//! and records the version that added it; version `n` is the first
//! `case_count(n)` positions. Adding cases writes only the new rows and a
//! version row, so a new version copies nothing, and a page of a version
//! reads its positions by key. (Editing a case, when it comes, writes a
//! row for the same position and the new version that supersedes the
//! older one for versions from then on.)

pub mod contract;
mod memory;
mod model;
mod parse;
mod service;
mod store;

pub use memory::MemoryDatasets;
pub use model::{
    Case, CaseInput, Dataset, DatasetId, DatasetName, DatasetVersion, JsonObject, MAX_CASES_PER_CALL,
    MAX_CASES_PER_DATASET, Visibility, dataset_archived, dataset_moved, dataset_not_found, dataset_taken,
};
pub use parse::{CaseSource, read_cases};
pub use service::{DatasetService, NewDataset};
pub use store::DatasetStore;
