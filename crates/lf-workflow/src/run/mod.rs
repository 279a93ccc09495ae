//! Runs: the records the runner keeps and claims. A [`Run`] is pinned to
//! one workflow version; its state is the engine's [`crate::engine::RunState`],
//! written slot by slot under a [`Lease`] so that a runner that lost its
//! run cannot overwrite the one that took it.
//!
//! - `model.rs`: [`Run`], [`RunId`], [`IdempotencyKey`], [`Lease`];
//! - `store.rs`: [`RunStore`] and its contract;
//! - `memory.rs`: [`MemoryRunStore`];
//! - `service.rs`: [`RunService`], the use cases for a principal,
//!   `form.rs`, a form trigger's fields applied to a run's inputs, and
//!   `inputs.rs`, the bounds of what a starter hands a run;
//! - `visibility.rs`: [`RunScope`], who reads which runs;
//! - `credits.rs`: [`AgentCredits`], what an agent's runs may spend;
//! - `contract.rs`: the suite every store runs.

pub mod contract;
mod credits;
mod form;
mod inputs;
mod memory;
mod model;
mod service;
mod store;
mod visibility;

use lf_core::LfError;

pub use credits::{AgentCredits, CreditsLeft, agent_budget};
pub use inputs::{MAX_INPUT_BYTES, MAX_MODEL_ID_CHARS, check_inputs};
pub use memory::MemoryRunStore;
pub use model::{
    Caused, EventBounds, Held, IDEMPOTENCY_WINDOW_MICROS, IdempotencyKey, Lease, LeaseToken,
    MAX_IDEMPOTENCY_KEY_CHARS, Room, Run, RunFilter, RunId, RunOrigin,
};
pub use service::{NoSignal, RunDefaults, RunLog, RunService, RunSignal, Runnable, StartRun, Started};
pub use store::{RunStore, Wakeups};
pub use visibility::RunScope;

/// NOT_FOUND for a run that is not there or not the caller's to read.
pub fn run_not_found(id: RunId) -> LfError {
    LfError::not_found("Workflow run", id)
}
