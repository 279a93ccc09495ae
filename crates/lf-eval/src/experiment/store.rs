//! The storage contract of experiments. Implementations:
//! [`super::MemoryExperiments`] here, SQLite and PostgreSQL in lf-store.
//! All of them run [`super::contract::suite`].

use async_trait::async_trait;
use lf_battle::Claim;
use lf_core::{LfResult, Page, PageRequest, Reach, Timestamp};

use super::compare::Outcome;
use super::model::{CellKey, CellResult, Experiment, ExperimentId, ExperimentStatus, ResultFilter, Tally};
use super::ratings::RatedMatchup;
use crate::dataset::DatasetId;

/// Where experiments, their cells' leases and their results live.
///
/// A cell has no row until it is claimed: the matrix is implicit (every
/// position of the pinned version × contender × repeat), so starting an
/// experiment writes one row, and nothing reads the whole matrix at once.
/// A cell is claimed as battle asks are ([`lf_battle::decide`]'s rule:
/// attempts counted before they are made, a lease that another takes over
/// once it has expired); its result is written once, and only by the
/// holder of its lease.
///
/// What a reach reads of an experiment: its owner's own, everyone's that
/// are not private; the service checks it before reading cells.
#[async_trait]
pub trait ExperimentStore: Send + Sync {
    /// Stores a new experiment. CONFLICT when the id is taken.
    async fn add_experiment(&self, experiment: &Experiment) -> LfResult<()>;

    /// The experiment `id`, when `reach` reads it.
    async fn experiment(&self, reach: Reach, id: ExperimentId) -> LfResult<Option<Experiment>>;

    /// The experiments on `dataset` that `reach` reads, newest first: one
    /// page and the total.
    async fn of_dataset(
        &self,
        reach: Reach,
        dataset: DatasetId,
        page: PageRequest,
    ) -> LfResult<Page<Experiment>>;

    /// Every experiment still running (to resume after a restart).
    async fn running(&self) -> LfResult<Vec<Experiment>>;

    /// Moves the experiment from running to `to` at `at`: false when it
    /// was no longer running.
    async fn finish(&self, id: ExperimentId, to: ExperimentStatus, at: Timestamp) -> LfResult<bool>;

    /// Counts an attempt at `cell` for `holder`, leased until `until`,
    /// unless another holds an unexpired lease (at `now`), `budget`
    /// attempts were made, or the cell has its result (then
    /// [`Claim::Spent`]). Atomic against every other claim.
    async fn claim_cell(
        &self,
        cell: CellKey,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
        budget: u32,
    ) -> LfResult<Claim>;

    /// Moves `holder`'s lease on `cell` to `until`: false when it is not
    /// (or no longer) the holder.
    async fn renew_cell(&self, cell: CellKey, holder: &str, until: Timestamp) -> LfResult<bool>;

    /// Writes `result` when the cell was claimed, its lease is `holder`'s
    /// or has expired (at `now`: a process that made the last attempt and
    /// died leaves the cell to whoever writes why it has no answer), and
    /// the cell has no result yet: false (nothing written) otherwise.
    async fn save_result(&self, result: &CellResult, holder: &str, now: Timestamp) -> LfResult<bool>;

    /// The cells of positions `first..=last` that have their result.
    async fn done(&self, id: ExperimentId, first: u32, last: u32) -> LfResult<Vec<CellKey>>;

    /// Each contender's figures over the cells with a result, by contender
    /// (contenders without one are left out); its `cost_usd` adds the
    /// judge's dollars ([`CellResult::judge_cost_usd`]) to the answers'. Summed by the store: nothing
    /// holds every cell.
    async fn tallies(&self, id: ExperimentId) -> LfResult<Vec<Tally>>;

    /// The results `filter` keeps, by position, contender and repeat: one
    /// page and the total; their matchups are left out
    /// ([`matchups`](Self::matchups) reads them).
    async fn results(
        &self,
        id: ExperimentId,
        filter: &ResultFilter,
        page: PageRequest,
    ) -> LfResult<Page<CellResult>>;

    /// The outcome of each of `contender`'s cells with a result at
    /// positions `1..=last`, by position then repeat: what comparing two
    /// experiments reads, one contender at a time (four small fields a
    /// cell, not the answers).
    async fn outcomes(&self, id: ExperimentId, contender: u16, last: u32) -> LfResult<Vec<Outcome>>;

    /// A number that changes whenever [`matchups`](Self::matchups) may
    /// answer differently (a result with matchups was written): one small
    /// read.
    async fn matchups_version(&self) -> LfResult<i64>;

    /// The matchups of every experiment everyone may read (not private),
    /// in any order, each with its case's tags ([`super::ratings`]).
    async fn matchups(&self) -> LfResult<Vec<RatedMatchup>>;
}
