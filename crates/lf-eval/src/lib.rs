//! Evaluations: datasets of cases that experiments ask every contender
//! (issue 35). This first slice holds datasets: owned, with the visibility
//! tiers of lenses, versioned (adding cases makes a new version, and a
//! version never changes, so an experiment pins one).
//!
//! lf-eval knows nothing about SQL, MCP or HTTP: its stores are traits
//! ([`dataset::DatasetStore`]) with an in-memory implementation here, SQLite
//! and PostgreSQL ones in lf-store, and a contract suite every one runs.
//!
//! Invariants: a version is immutable (its cases are the first
//! `case_count` positions of its dataset, and positions are only ever
//! appended); a private dataset is its owner's alone (NOT_FOUND alike for
//! what is missing and what the caller may not read); nothing is saved
//! unless every case of a call passes its checks.

pub mod dataset;
pub mod experiment;
