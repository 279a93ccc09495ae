//! Model profiles: what to ask and where. A profile names an endpoint (one
//! the operator declares, `[[models]]` in the configuration file and
//! `default`, or a saved connection of its owner's with provider
//! `openai_compatible`), a model, its parameters and its prices, and is
//! private to its owner or public.
//!
//! - `model.rs`: [`ModelProfile`] and the checks of what a profile is given;
//! - `store.rs`: [`ModelProfileStore`], its contract;
//! - `service.rs`: [`ProfileService`], the use cases for a principal, and
//!   [`ProfileService::locate`], the one rule that turns what a caller names
//!   as a model (a profile's id or name, an operator's endpoint, a bare
//!   model name) into a profile, which the composition root's resolver
//!   turns into a client;
//! - `memory.rs`, `contract.rs`: the in-memory store and the suite every
//!   store runs.
//!
//! Invariants: a private profile is its owner's alone (to anyone else it
//! does not exist, by id or by name); a connection's secret never enters a
//! profile (the profile names the connection, the runner opens it); nothing
//! is saved unless all of a profile passes its checks, its endpoint included.

pub mod contract;
mod memory;
mod model;
mod service;
mod store;

pub use memory::MemoryProfiles;
pub use model::{
    DEFAULT_ENDPOINT, Endpoint, MAX_PRICE, MAX_STOP_CHARS, MAX_STOPS, MAX_TOKENS, MODEL_PROVIDER,
    ModelProfile, OperatorEndpoint, Parameters, Prices, ProfileName, ProfileVisibility, parse_model_name,
    profile_not_found, profile_taken,
};
pub use service::{Located, NewProfile, ProfileService, ProfileUpdate, ProfileView};
pub use store::ModelProfileStore;
