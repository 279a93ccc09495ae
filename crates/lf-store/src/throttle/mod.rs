//! [`ThrottleStore`] over either backend: the table of `0023_throttles.sql`
//! (SQLite) and `0019_throttles.sql` (PostgreSQL). An update is one write
//! transaction: on PostgreSQL under an advisory lock on the key (a key
//! with no row yet has nothing for `FOR UPDATE` to lock), on SQLite under
//! the database's write lock, which processes sharing the file take too.
//! So concurrent updates of one key, from any process, see each other.

use async_trait::async_trait;
use lf_auth::throttle::{Change, Step, ThrottleStore};
use lf_core::{LfResult, Timestamp};

use crate::backend::Backend;
use crate::conns::{Conns, on};
use crate::dialect::{Bind, Columns, Conn, Dialect, execute, query, row_of};

/// Serializes the updates of key `$1` until the transaction ends
/// (PostgreSQL only).
const LOCK_KEY: &str = "SELECT pg_advisory_xact_lock(hashtextextended('throttle ' || $1, 0))";
const LIVE: &str = "SELECT state FROM edge_throttles WHERE throttle_key = $1 AND expires_at > $2";
const SET: &str = "INSERT INTO edge_throttles (throttle_key, state, expires_at) VALUES ($1, $2, $3) \
     ON CONFLICT (throttle_key) DO UPDATE SET state = excluded.state, expires_at = excluded.expires_at";
const REMOVE: &str = "DELETE FROM edge_throttles WHERE throttle_key = $1";
const FORGET: &str = "DELETE FROM edge_throttles WHERE expires_at <= $1";

/// [`ThrottleStore`] over either backend.
pub(crate) struct SqlThrottleStore {
    conns: Conns,
}

impl SqlThrottleStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl ThrottleStore for SqlThrottleStore {
    async fn update(&self, key: &str, now: Timestamp, step: &mut Step<'_>) -> LfResult<()> {
        on!(&self.conns, write, |conn| update(conn, key, now, step))
    }

    async fn forget_expired(&self, now: Timestamp) -> LfResult<u64> {
        on!(&self.conns, write_one, |conn| execute(conn, query(FORGET).put_time(now)))
    }
}

/// Reads, steps and writes `key`'s state; run it in a write transaction.
async fn update<C: Conn>(conn: &mut C, key: &str, now: Timestamp, step: &mut Step<'_>) -> LfResult<()> {
    if <C::Database as Dialect>::BACKEND == Backend::Postgres {
        execute(conn, query(LOCK_KEY).put(key.to_owned())).await?;
    }
    let live = query(LIVE).put(key.to_owned()).put_time(now);
    let state = row_of(conn, live, |row| row.text("state").map(str::to_owned)).await?;
    match step(state.as_deref()) {
        Change::Keep => {}
        Change::Set { state, expires_at } => {
            execute(conn, query(SET).put(key.to_owned()).put(state).put_time(expires_at)).await?;
        }
        Change::Remove => {
            execute(conn, query(REMOVE).put(key.to_owned())).await?;
        }
    }
    Ok(())
}
