//! [`AskStore`] over either backend: the `battle_asks` table of
//! `0028_battle_asks.sql` (SQLite) and `0024_battle_asks.sql`
//! (PostgreSQL), through the same statements on both. A claim reads the
//! row, decides by [`lf_battle::decide`] and writes only if the row is
//! still what it read, so two claims racing never both win.

use async_trait::async_trait;
use lf_battle::{AskRecord, AskStore, Claim, decide};
use lf_core::{BattleId, ContenderId, LfResult, Timestamp};

use crate::conns::{Conns, on};
use crate::dialect::{Bind, Columns, Conn, execute, query, row_of};

const READ: &str =
    "SELECT attempts, holder, lease_until FROM battle_asks WHERE battle_id = $1 AND contender_id = $2";
const INSERT: &str = "INSERT INTO battle_asks (battle_id, contender_id, attempts, holder, lease_until) \
     VALUES ($1, $2, 1, $3, $4) ON CONFLICT (battle_id, contender_id) DO NOTHING";
const TAKE: &str = "UPDATE battle_asks SET attempts = $3, holder = $4, lease_until = $5 \
     WHERE battle_id = $1 AND contender_id = $2 AND attempts = $6 AND holder = $7";
const RENEW: &str =
    "UPDATE battle_asks SET lease_until = $4 WHERE battle_id = $1 AND contender_id = $2 AND holder = $3";

/// [`AskStore`] over either backend.
pub(crate) struct SqlAskStore {
    conns: Conns,
}

impl SqlAskStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

async fn read<C: Conn>(conn: &mut C, b: BattleId, c: ContenderId) -> LfResult<Option<AskRecord>> {
    let q = query(READ).put(b.as_uuid()).put(c.as_uuid());
    row_of(conn, q, |row| {
        Ok(AskRecord {
            battle_id: b,
            contender_id: c,
            attempts: u32::try_from(row.value::<i64>("attempts")?).unwrap_or(u32::MAX),
            holder: row.text("holder")?.to_owned(),
            lease_until: row.time("lease_until")?,
        })
    })
    .await
}

/// The claim refused by the row another claim just wrote.
async fn lost<C: Conn>(
    conn: &mut C,
    b: BattleId,
    c: ContenderId,
    holder: &str,
    now: Timestamp,
    budget: u32,
) -> LfResult<Claim> {
    Ok(match read(conn, b, c).await? {
        Some(r) => decide(&r, holder, now, budget).err().unwrap_or(Claim::Leased { until: r.lease_until }),
        None => Claim::Leased { until: now },
    })
}

async fn claim<C: Conn>(
    conn: &mut C,
    (b, c): (BattleId, ContenderId),
    holder: &str,
    now: Timestamp,
    until: Timestamp,
    budget: u32,
) -> LfResult<Claim> {
    let Some(r) = read(conn, b, c).await? else {
        if budget == 0 {
            return Ok(Claim::Spent { attempts: 0 });
        }
        let q = query(INSERT).put(b.as_uuid()).put(c.as_uuid()).put(holder.to_owned()).put_time(until);
        return match execute(conn, q).await? {
            1 => Ok(Claim::Attempt(1)),
            _ => lost(conn, b, c, holder, now, budget).await,
        };
    };
    let n = match decide(&r, holder, now, budget) {
        Ok(n) => n,
        Err(refused) => return Ok(refused),
    };
    let q = query(TAKE)
        .put(b.as_uuid())
        .put(c.as_uuid())
        .put(i64::from(n))
        .put(holder.to_owned())
        .put_time(until)
        .put(i64::from(r.attempts))
        .put(r.holder.clone());
    match execute(conn, q).await? {
        1 => Ok(Claim::Attempt(n)),
        _ => lost(conn, b, c, holder, now, budget).await,
    }
}

async fn renew<C: Conn>(
    conn: &mut C,
    b: BattleId,
    c: ContenderId,
    holder: &str,
    until: Timestamp,
) -> LfResult<bool> {
    let q = query(RENEW).put(b.as_uuid()).put(c.as_uuid()).put(holder.to_owned()).put_time(until);
    Ok(execute(conn, q).await? == 1)
}

#[async_trait]
impl AskStore for SqlAskStore {
    async fn claim_ask(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
        budget: u32,
    ) -> LfResult<Claim> {
        on!(&self.conns, write, |conn| claim(conn, (battle_id, contender_id), holder, now, until, budget))
    }

    async fn renew_ask(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
        holder: &str,
        until: Timestamp,
    ) -> LfResult<bool> {
        on!(&self.conns, write_one, |conn| renew(conn, battle_id, contender_id, holder, until))
    }

    async fn ask_record(
        &self,
        battle_id: BattleId,
        contender_id: ContenderId,
    ) -> LfResult<Option<AskRecord>> {
        on!(&self.conns, reading, |conn| read(conn, battle_id, contender_id))
    }
}
