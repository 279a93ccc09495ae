//! [`BattleStore`] over SQLite and PostgreSQL: the tables of
//! `0003_battles.sql` and `0004_battle_results.sql`, through the statements
//! of `battle_sql`, which are the same on both backends. One store type
//! serves both; each method runs its statements on the backend's connection
//! of the right kind:
//!
//! - writes in one write transaction (SQLite: on the writer, `BEGIN
//!   IMMEDIATE`; PostgreSQL: a transaction that locks the battle's row first);
//! - `get_sheet` in one read transaction (SQLite: a deferred transaction on
//!   a reader, one WAL snapshot; PostgreSQL: `REPEATABLE READ, READ ONLY`);
//! - other reads as one statement each on a reader / a pooled connection.

use async_trait::async_trait;
use futures_util::TryStreamExt;
use lf_battle::{
    Battle, BattleFilter, BattleResult, BattleSheet, BattleStatus, BattleStore, BattleSummary, BattleType,
    Contender, HistoryFilter, JudgeError, Standing, StoredSubmission, StoredVote, Submission, Verdict, Vote,
};
use lf_core::{BattleId, ContenderId, LfResult, Page, PageRequest, Reach, Timestamp};
use sqlx::{Postgres, Row, Sqlite};

use crate::battle_rows::{self, BattleDialect};
use crate::battle_sql::{self as sql, Listing};
use crate::error::map_db_err;
use crate::sqlite::map_direct_err;
use crate::{postgres, sqlite};

impl BattleDialect for Sqlite {
    const LOCK_BATTLE: &'static str = "SELECT status FROM battles WHERE id = $1";
    // Also in migrations/sqlite/0004_battle_results.sql, for the battles
    // closed before it.
    const INSERT_RESULT: &'static str = "INSERT INTO battle_results (battle_id, battle_type, closed_at, entries) \
         SELECT b.id, b.battle_type, coalesce(b.closed_at, b.updated_at), \
         (SELECT json_group_array(json_array(c.contender_type, lower(hex(c.reference_id)), s.rank, c.display_name)) \
         FROM battle_standings s JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id \
         WHERE s.battle_id = b.id) FROM battles b WHERE b.id = $1";
}

impl BattleDialect for Postgres {
    const LOCK_BATTLE: &'static str = "SELECT status FROM battles WHERE id = $1 FOR UPDATE";
    // Also in migrations/postgres/0004_battle_results.sql, for the battles
    // closed before it.
    const INSERT_RESULT: &'static str = "INSERT INTO battle_results (battle_id, battle_type, closed_at, entries) \
         SELECT b.id, b.battle_type, coalesce(b.closed_at, b.updated_at), \
         coalesce((SELECT json_agg(json_build_array(c.contender_type, c.reference_id, s.rank, c.display_name)) \
         FROM battle_standings s JOIN battle_contenders c ON c.battle_id = s.battle_id AND c.id = s.contender_id \
         WHERE s.battle_id = b.id)::text, '[]') FROM battles b WHERE b.id = $1";
}

/// `battle_results` as `sql::CLOSED_RESULTS` selects it on SQLite, each row
/// decoded by position with its texts borrowed.
fn sqlite_closed_results(
    conn: &rusqlite::Connection,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<BattleResult>> {
    let (all, only) = (battle_type.is_none(), battle_type.map_or("", |t| t.as_str()));
    let params: &[(&str, &dyn rusqlite::ToSql)] = &[("$1", &all), ("$2", &only)];
    sqlite::rows(conn, sql::CLOSED_RESULTS, params, |row| {
        let text = |i| row.get_ref(i).and_then(|v| Ok(v.as_str()?)).map_err(map_direct_err);
        let closed_at = Timestamp::from_micros(row.get(2).map_err(map_direct_err)?);
        let id = row.get(0).map_err(map_direct_err)?;
        battle_rows::battle_result(id, text(1)?, closed_at, text(3)?)
    })
}

/// The same on PostgreSQL, each row decoded as it arrives: 100,000 rows are
/// never held at once.
async fn pg_closed_results(
    conn: &mut sqlx::PgConnection,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<BattleResult>> {
    let mut rows = sqlx::query(sql::CLOSED_RESULTS)
        .bind(battle_type.is_none())
        .bind(battle_type.map_or("", |t| t.as_str()))
        .fetch(conn);
    let mut results = Vec::new();
    while let Some(row) = rows.try_next().await.map_err(map_db_err)? {
        let closed_at = Timestamp::from_datetime(row.try_get(2).map_err(map_db_err)?);
        let (id, battle_type, entries) =
            (row.try_get(0).map_err(map_db_err)?, row.try_get(1).map_err(map_db_err)?, row.try_get(3));
        results.push(battle_rows::battle_result(id, battle_type, closed_at, entries.map_err(map_db_err)?)?);
    }
    Ok(results)
}

/// Where the store's connections come from.
pub(crate) enum Conns {
    Sqlite(sqlite::Handle),
    Postgres(sqlx::PgPool),
}

/// [`BattleStore`] over either backend.
pub(crate) struct SqlBattleStore {
    conns: Conns,
}

impl SqlBattleStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

/// Runs `$body` with `$conn` bound to a connection of the store's backend,
/// as `$how` (`reading`, `snapshot` or `write`) provides it. The body is
/// the same for both: a call of a generic `battle_sql` function.
macro_rules! on {
    ($self:ident, $how:ident, |$conn:ident| $body:expr) => {
        match &$self.conns {
            Conns::Sqlite(db) => db.$how(async |$conn| $body.await).await,
            Conns::Postgres(pool) => postgres::$how(pool, async |$conn| $body.await).await,
        }
    };
}

#[async_trait]
impl BattleStore for SqlBattleStore {
    async fn create_battle(&self, battle: &Battle) -> LfResult<()> {
        on!(self, write, |conn| sql::create_battle(conn, battle))
    }

    async fn get_battle(&self, reach: Reach, id: BattleId) -> LfResult<Battle> {
        on!(self, reading, |conn| sql::get_battle(conn, reach, id))
    }

    async fn get_sheet(&self, reach: Reach, id: BattleId) -> LfResult<BattleSheet> {
        on!(self, snapshot, |conn| sql::get_sheet(conn, reach, id))
    }

    async fn list_battles(
        &self,
        reach: Reach,
        filter: &BattleFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        on!(self, reading, |conn| sql::list(conn, reach, Listing::List(filter), page))
    }

    async fn battle_history(
        &self,
        reach: Reach,
        filter: &HistoryFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        on!(self, reading, |conn| sql::list(conn, reach, Listing::History(filter), page))
    }

    async fn add_contender(&self, contender: &Contender, expected_status: BattleStatus) -> LfResult<()> {
        on!(self, write, |conn| sql::add_contender(conn, contender, expected_status))
    }

    async fn set_status(
        &self,
        id: BattleId,
        from: BattleStatus,
        to: BattleStatus,
        at: Timestamp,
    ) -> LfResult<()> {
        on!(self, write, |conn| sql::set_status(conn, id, from, to, at))
    }

    async fn put_submission(
        &self,
        submission: &Submission,
        advance_to: Option<BattleStatus>,
    ) -> LfResult<StoredSubmission> {
        on!(self, write, |conn| sql::put_submission(conn, submission, advance_to))
    }

    async fn put_vote(&self, vote: &Vote) -> LfResult<StoredVote> {
        on!(self, write, |conn| sql::put_vote(conn, vote))
    }

    async fn put_verdicts(&self, battle_id: BattleId, verdicts: &[Verdict]) -> LfResult<()> {
        on!(self, write, |conn| sql::put_verdicts(conn, battle_id, verdicts))
    }

    async fn add_judge_error(&self, error: &JudgeError) -> LfResult<()> {
        on!(self, write, |conn| sql::add_judge_error(conn, error))
    }

    async fn close_battle(
        &self,
        id: BattleId,
        standings: &[Standing],
        winner: Option<ContenderId>,
        at: Timestamp,
    ) -> LfResult<()> {
        on!(self, write, |conn| sql::close_battle(conn, id, standings, winner, at))
    }

    async fn closed_results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>> {
        match &self.conns {
            // Read where it runs, on a blocking thread (see `sqlite::direct`):
            // through sqlx, every one of 100,000 rows would cross threads.
            Conns::Sqlite(db) => {
                db.direct_blocking(move |conn| sqlite_closed_results(conn, battle_type)).await
            }
            Conns::Postgres(pool) => {
                postgres::reading(pool, async |conn| pg_closed_results(conn, battle_type).await).await
            }
        }
    }

    async fn results_version(&self) -> LfResult<i64> {
        on!(self, reading, |conn| sql::results_version(conn))
    }
}
