//! [`BattleStore`] over either backend: the tables of `0003_battles.sql`
//! `0004_battle_results.sql`, `0013_answer_errors.sql` and the
//! `answer_costs` migrations (with the
//! `agent_id` of the `row_agents` migrations), through the statements of
//! `sql`, the same on both. Writes run in one write transaction that locks
//! the battle's row first, `get_sheet` in one read transaction, other reads
//! as one statement each (see [`crate::conns`]). On SQLite, `closed_results`
//! (the one large scan) reads on a direct reader, on a blocking thread
//! (`sqlite_direct`).

pub(crate) mod rows;
pub(crate) mod sql;
mod sqlite_direct;

use async_trait::async_trait;
use lf_battle::{
    AnswerCostRecord, AnswerError, Battle, BattleFilter, BattleResult, BattleSheet, BattleStatus,
    BattleStore, BattleSummary, BattleType, Contender, CostMean, HistoryFilter, JudgeError, Standing,
    StoredSubmission, StoredVote, Submission, Verdict, Vote, VotePick,
};
use lf_core::{BattleId, ContenderId, LenserId, LfResult, Page, PageRequest, Reach, SearchQuery, Timestamp};

use self::sql::Listing;
use crate::conns::{Conns, on};
use crate::postgres;

/// [`BattleStore`] over either backend.
pub(crate) struct SqlBattleStore {
    conns: Conns,
}

impl SqlBattleStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl BattleStore for SqlBattleStore {
    async fn create_battle(&self, battle: &Battle) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::create_battle(conn, battle))
    }

    async fn get_battle(&self, reach: Reach, id: BattleId) -> LfResult<Battle> {
        on!(&self.conns, reading, |conn| sql::get_battle(conn, reach, id))
    }

    async fn get_sheet(&self, reach: Reach, id: BattleId) -> LfResult<BattleSheet> {
        on!(&self.conns, snapshot, |conn| sql::get_sheet(conn, reach, id))
    }

    async fn list_battles(
        &self,
        reach: Reach,
        filter: &BattleFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        on!(&self.conns, reading, |conn| sql::list(conn, reach, Listing::List(filter), page))
    }

    async fn search_battles(
        &self,
        reach: Reach,
        query: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        on!(&self.conns, reading, |conn| sql::list(conn, reach, Listing::Search(query), page))
    }

    async fn battle_history(
        &self,
        reach: Reach,
        filter: &HistoryFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        on!(&self.conns, reading, |conn| sql::list(conn, reach, Listing::History(filter), page))
    }

    async fn add_contender(&self, contender: &Contender, expected_status: BattleStatus) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::add_contender(conn, contender, expected_status))
    }

    async fn set_status(
        &self,
        id: BattleId,
        from: BattleStatus,
        to: BattleStatus,
        at: Timestamp,
    ) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::set_status(conn, id, from, to, at))
    }

    async fn answered_executing(
        &self,
        after: Option<(Timestamp, BattleId)>,
        limit: u32,
    ) -> LfResult<Vec<Battle>> {
        on!(&self.conns, reading, |conn| sql::answered_executing(conn, after, limit))
    }

    async fn put_submission(
        &self,
        submission: &Submission,
        advance_to: Option<BattleStatus>,
        cost: Option<&lf_core::AnswerCost>,
    ) -> LfResult<StoredSubmission> {
        on!(&self.conns, write, |conn| sql::put_submission(conn, submission, advance_to, cost))
    }

    async fn put_vote(&self, vote: &Vote) -> LfResult<StoredVote> {
        on!(&self.conns, write, |conn| sql::put_vote(conn, vote))
    }

    async fn vote_of(
        &self,
        reach: Reach,
        battle_id: BattleId,
        voter: LenserId,
    ) -> LfResult<Option<VotePick>> {
        on!(&self.conns, snapshot, |conn| sql::vote_of(conn, reach, battle_id, voter))
    }

    async fn put_verdicts(
        &self,
        battle_id: BattleId,
        verdicts: &[Verdict],
        cost: Option<&AnswerCostRecord>,
    ) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::put_verdicts(conn, battle_id, verdicts, cost))
    }

    async fn add_judge_error(&self, error: &JudgeError) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::add_judge_error(conn, error))
    }

    async fn add_answer_error(&self, error: &AnswerError) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::add_answer_error(conn, error))
    }

    async fn put_answer_cost(&self, record: &AnswerCostRecord) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::put_answer_cost(conn, record))
    }

    async fn answer_costs(&self, reach: Reach, battle_id: BattleId) -> LfResult<Vec<AnswerCostRecord>> {
        on!(&self.conns, snapshot, |conn| sql::answer_costs(conn, reach, battle_id))
    }

    async fn cost_means(&self, battle_type: Option<BattleType>) -> LfResult<Vec<CostMean>> {
        on!(&self.conns, reading, |conn| sql::cost_means(conn, battle_type))
    }

    async fn close_battle(
        &self,
        id: BattleId,
        standings: &[Standing],
        winner: Option<ContenderId>,
        at: Timestamp,
    ) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::close_battle(conn, id, standings, winner, at))
    }

    async fn closed_results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>> {
        match &self.conns {
            // Read where it runs, on a blocking thread (see `sqlite::direct`):
            // through sqlx, every row would cross threads.
            Conns::Sqlite(db) => {
                db.direct_blocking(move |conn| sqlite_direct::closed_results(conn, battle_type)).await
            }
            Conns::Postgres(pool) => {
                postgres::reading(pool, async |conn| sql::closed_results(conn, battle_type).await).await
            }
        }
    }

    async fn results_version(&self) -> LfResult<i64> {
        on!(&self.conns, reading, |conn| sql::results_version(conn))
    }
}
