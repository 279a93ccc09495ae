//! The statements of [`lf_workflow::kv::KvStore`] and the code that runs
//! them, the same on both backends but for the lock PostgreSQL alone
//! takes. Every statement names the owner: none reads or counts another
//! owner's rows.
//!
//! What keeps the bounds when several processes share the database:
//! - a write purges the owner's expired entries, counts the others and
//!   upserts in one write transaction, serialized per owner by SQLite's
//!   write lock or a PostgreSQL advisory lock on the owner ([`LOCK_OWNER`]),
//!   so racing writes of new keys never pass the bound together;
//! - a pass looks its attempt up, forgets the passes that left the
//!   window, counts and inserts in one write transaction, serialized per
//!   bucket the same way ([`LOCK_BUCKET`]): of racing passes for the last
//!   place, one goes through. An attempt's row is its key (the primary
//!   key), so it is counted once.

use lf_core::{LfResult, Timestamp};
use lf_workflow::kv::{Bucket, EntryId, KvValue, Pass, store_full};
use serde_json::Value;

use super::rows::{bind_bucket, bind_entry, bind_key, value};
use crate::backend::Backend;
use crate::dialect::{Bind, Columns, Conn, Dialect, execute, query, row_of};
use crate::error::map_db_err;

const GET: &str = "SELECT value FROM kv_entries WHERE owner_id = $1 AND namespace = $2 AND entry_key = $3 \
     AND (expires_at IS NULL OR expires_at > $4)";
/// Serializes the writes of owner `$1` until the transaction ends
/// (PostgreSQL only: on SQLite the write transaction already holds the
/// database's write lock).
const LOCK_OWNER: &str = "SELECT pg_advisory_xact_lock(hashtextextended('kv ' || $1::text, 0))";
const PURGE: &str = "DELETE FROM kv_entries WHERE owner_id = $1 AND expires_at <= $2";
/// The owner's entries other than the one at `$2`, `$3` (all live after
/// the purge).
const OTHERS: &str = "SELECT count(*) AS n FROM kv_entries WHERE owner_id = $1 \
     AND NOT (namespace = $2 AND entry_key = $3)";
const UPSERT: &str = "INSERT INTO kv_entries (owner_id, namespace, entry_key, value, expires_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (owner_id, namespace, entry_key) DO UPDATE SET \
     value = excluded.value, expires_at = excluded.expires_at, updated_at = excluded.updated_at";

/// Serializes the passes of bucket `$1`, `$2`, `$3` (PostgreSQL only).
const LOCK_BUCKET: &str =
    "SELECT pg_advisory_xact_lock(hashtextextended('rate ' || $1::text || ' ' || $2::text || ' ' || $3, 0))";
const SEEN: &str = "SELECT 1 AS seen FROM rate_limit_passes \
     WHERE owner_id = $1 AND workflow_id = $2 AND step = $3 AND attempt_key = $4";
/// Forgets the bucket's passes at or before `$4`, the window's start.
const FORGET: &str = "DELETE FROM rate_limit_passes WHERE owner_id = $1 AND workflow_id = $2 AND step = $3 AND passed_at <= $4";
const IN_WINDOW: &str =
    "SELECT count(*) AS n FROM rate_limit_passes WHERE owner_id = $1 AND workflow_id = $2 AND step = $3";
/// The bucket's pass `$4` places from its oldest.
const NTH_OLDEST: &str = "SELECT passed_at FROM rate_limit_passes \
     WHERE owner_id = $1 AND workflow_id = $2 AND step = $3 ORDER BY passed_at LIMIT 1 OFFSET $4";
const INSERT_PASS: &str = "INSERT INTO rate_limit_passes (owner_id, workflow_id, step, attempt_key, passed_at) VALUES ($1, $2, $3, $4, $5)";

fn is_postgres<C: Conn>() -> bool {
    <C::Database as Dialect>::BACKEND == Backend::Postgres
}

pub(crate) async fn get<C: Conn>(conn: &mut C, entry: &EntryId, now: Timestamp) -> LfResult<Option<Value>> {
    row_of(conn, bind_key(query(GET), entry).put_time(now), value).await
}

/// Writes an entry; run it in a write transaction.
pub(crate) async fn put<C: Conn>(
    conn: &mut C,
    entry: &EntryId,
    v: &KvValue,
    expires_at: Option<Timestamp>,
    now: Timestamp,
    max_entries: u64,
) -> LfResult<()> {
    let owner = entry.owner;
    if is_postgres::<C>() {
        execute(conn, query(LOCK_OWNER).put(owner.as_uuid())).await?;
    }
    execute(conn, query(PURGE).put(owner.as_uuid()).put_time(now)).await?;
    let others = bind_key(query::<C::Database>(OTHERS), entry)
        .fetch_one(conn.exec())
        .await
        .map_err(map_db_err)?
        .value::<i64>("n")?;
    if others as u64 >= max_entries {
        return Err(store_full(max_entries));
    }
    execute(conn, bind_entry(query(UPSERT), entry, v, expires_at, now)).await?;
    Ok(())
}

/// Counts a pass if the window has room; run it in a write transaction.
pub(crate) async fn pass<C: Conn>(
    conn: &mut C,
    bucket: &Bucket,
    attempt_key: &str,
    limit: u32,
    window_micros: i64,
    now: Timestamp,
) -> LfResult<Pass> {
    let limit = i64::from(limit.max(1));
    if is_postgres::<C>() {
        execute(conn, bind_bucket(query(LOCK_BUCKET), bucket)).await?;
    }
    let seen = bind_bucket(query(SEEN), bucket).put(attempt_key.to_owned());
    if row_of(conn, seen, |_| Ok(())).await?.is_some() {
        return Ok(Pass::Again);
    }
    execute(conn, bind_bucket(query(FORGET), bucket).put_time(now.plus_micros(-window_micros))).await?;
    let count = bind_bucket(query::<C::Database>(IN_WINDOW), bucket)
        .fetch_one(conn.exec())
        .await
        .map_err(map_db_err)?
        .value::<i64>("n")?;
    if count < limit {
        execute(conn, bind_bucket(query(INSERT_PASS), bucket).put(attempt_key.to_owned()).put_time(now))
            .await?;
        return Ok(Pass::Through);
    }
    // With more passes than `limit` (a lowered limit), the window frees up
    // once enough of them have left it.
    let frees = bind_bucket(query::<C::Database>(NTH_OLDEST), bucket)
        .put(count - limit)
        .fetch_one(conn.exec())
        .await
        .map_err(map_db_err)?
        .time("passed_at")?;
    Ok(Pass::Full { frees_at: frees.plus_micros(window_micros) })
}
