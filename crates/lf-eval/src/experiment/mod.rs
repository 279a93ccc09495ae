//! Experiments: every contender asked every case of a pinned dataset
//! version, `repeats` times, each answer checked by assertions, priced and
//! timed; per contender a pass rate with its 95% interval, mean score,
//! errors, tokens, cost and latency percentiles.
//!
//! - `model.rs`: [`Experiment`], [`CellKey`], [`CellResult`], [`Tally`],
//!   the Wilson interval and nearest-rank percentiles;
//! - `contender.rs`: [`Contender`] (a model profile, an AI Lenser, a
//!   pinned lens version sent to a profile, a pinned workflow version), the
//!   forms `run_experiment` reads and [`ContenderCheck`];
//! - `assertion.rs`: [`Assertion`]: read and checked once, applied to each
//!   answer through lf-battle's checks (one implementation of each);
//! - `graded.rs`: [`Grading`]: what the judge is asked of a graded
//!   assertion and what its answers come to, through lf-battle's judge;
//! - `store.rs`: [`ExperimentStore`], its contract (cells claimed under a
//!   lease, a result written once by the lease's holder);
//! - `service.rs`: [`ExperimentService`], the use cases for a principal;
//!   the runner behind [`ExperimentRunner`] is lf-runner's;
//! - `compare.rs`: McNemar's exact test, the paired bootstrap and
//!   [`compare_contender`], what `compare_experiments` reports;
//! - `ratings.rs`: judged pairwise cells as leaderboard comparisons
//!   ([`Matchup`], [`ExperimentRatings`]);
//! - `memory.rs`, `contract.rs`: the in-memory store and the suite every
//!   store runs.

mod assertion;
mod compare;
mod contender;
pub mod contract;
mod graded;
mod memory;
mod model;
mod ratings;
mod service;
mod store;

pub use assertion::{Assertion, DEFAULT_THRESHOLD, TYPES, labelled, outcomes, parse_all};
pub use compare::{
    ALPHA, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED, Bootstrap, CaseChange, ContenderChange, McNemar, Outcome,
    Pairing, compare_contender, mcnemar, paired_bootstrap,
};
pub use contender::{ContenderCheck, ContenderForm, FORMS};
pub use graded::{GradedOutcome, Grading, JudgeOrder};
pub use memory::MemoryExperiments;
pub use model::{
    AssertionOutcome, CELL_ATTEMPTS, CellKey, CellResult, Contender, DEFAULT_CONCURRENCY, Experiment,
    ExperimentId, ExperimentStatus, Judged, MAX_ANSWER_CHARS, MAX_CELLS, MAX_CONCURRENCY, MAX_CONTENDERS,
    MAX_REPEATS, ResultFilter, Tally, experiment_not_found, rank_of, wilson,
};
pub use ratings::{ExperimentRatings, Matchup, Rated, RatedMatchup, as_result, matchups};
pub use service::{
    Comparison, ContenderFigures, ExperimentRunner, ExperimentService, ExperimentView, NewExperiment,
    ToCompare,
};
pub use store::ExperimentStore;
