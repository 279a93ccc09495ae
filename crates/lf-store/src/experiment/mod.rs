//! [`ExperimentStore`] over either backend: the `experiments`,
//! `experiment_cells` and `experiment_results` tables of
//! `0034_experiments.sql` (SQLite) and `0030_experiments.sql`
//! (PostgreSQL), through the statements of `sql`, the same on both.
//! A claim reads the cell's row, decides by [`lf_battle::decide_lease`]
//! and writes only if the row is still what it read; a result is inserted
//! only while its writer holds the cell's lease, and once, with its
//! matchups (`experiment_matchups`, `0038_experiment_matchups.sql` and
//! `0034_experiment_matchups.sql`) and their version's bump in the same
//! transaction.

mod sql;

use async_trait::async_trait;
use lf_battle::Claim;
use lf_core::{LfResult, Page, PageRequest, Reach, Timestamp};
use lf_eval::dataset::DatasetId;
use lf_eval::experiment::{
    CellKey, CellResult, Experiment, ExperimentId, ExperimentStatus, ExperimentStore, Outcome, RatedMatchup,
    ResultFilter, Tally,
};

use crate::conns::{Conns, on};

/// [`ExperimentStore`] over either backend.
pub(crate) struct SqlExperimentStore {
    conns: Conns,
}

impl SqlExperimentStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl ExperimentStore for SqlExperimentStore {
    async fn add_experiment(&self, experiment: &Experiment) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::add(conn, experiment))
    }

    async fn experiment(&self, reach: Reach, id: ExperimentId) -> LfResult<Option<Experiment>> {
        on!(&self.conns, reading, |conn| sql::by_id(conn, reach, id))
    }

    async fn of_dataset(
        &self,
        reach: Reach,
        dataset: DatasetId,
        page: PageRequest,
    ) -> LfResult<Page<Experiment>> {
        on!(&self.conns, reading, |conn| sql::of_dataset(conn, reach, dataset, page))
    }

    async fn running(&self) -> LfResult<Vec<Experiment>> {
        on!(&self.conns, reading, |conn| sql::running(conn))
    }

    async fn finish(&self, id: ExperimentId, to: ExperimentStatus, at: Timestamp) -> LfResult<bool> {
        on!(&self.conns, write_one, |conn| sql::finish(conn, id, to, at))
    }

    async fn claim_cell(
        &self,
        cell: CellKey,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
        budget: u32,
    ) -> LfResult<Claim> {
        on!(&self.conns, write, |conn| sql::claim(conn, cell, holder, now, until, budget))
    }

    async fn renew_cell(&self, cell: CellKey, holder: &str, until: Timestamp) -> LfResult<bool> {
        on!(&self.conns, write_one, |conn| sql::renew(conn, cell, holder, until))
    }

    async fn save_result(&self, result: &CellResult, holder: &str, now: Timestamp) -> LfResult<bool> {
        if result.matchups.is_empty() {
            return on!(&self.conns, write_one, |conn| sql::save(conn, result, holder, now));
        }
        on!(&self.conns, write, |conn| sql::save(conn, result, holder, now))
    }

    async fn done(&self, id: ExperimentId, first: u32, last: u32) -> LfResult<Vec<CellKey>> {
        on!(&self.conns, reading, |conn| sql::done(conn, id, first, last))
    }

    async fn tallies(&self, id: ExperimentId) -> LfResult<Vec<Tally>> {
        on!(&self.conns, snapshot, |conn| sql::tallies(conn, id))
    }

    async fn results(
        &self,
        id: ExperimentId,
        filter: &ResultFilter,
        page: PageRequest,
    ) -> LfResult<Page<CellResult>> {
        on!(&self.conns, reading, |conn| sql::results(conn, id, filter, page))
    }

    async fn outcomes(&self, id: ExperimentId, contender: u16, last: u32) -> LfResult<Vec<Outcome>> {
        on!(&self.conns, reading, |conn| sql::outcomes(conn, id, contender, last))
    }

    async fn matchups_version(&self) -> LfResult<i64> {
        on!(&self.conns, reading, |conn| sql::matchups_version(conn))
    }

    async fn matchups(&self) -> LfResult<Vec<RatedMatchup>> {
        on!(&self.conns, reading, |conn| sql::matchups(conn))
    }
}
