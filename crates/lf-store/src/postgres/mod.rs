//! The PostgreSQL backend, for several server processes on one database:
//! an sqlx pool, migrations applied under the migrator's advisory lock, and
//! the ways a store method runs on it (see [`crate::conns`]).
//!
//! Search lowercases with the database's locale: create the database with a
//! UTF-8 encoding and locale (e.g. `initdb --encoding=UTF8 --locale=C.UTF-8`),
//! or non-ASCII capitals are not folded.

use std::str::FromStr;
use std::time::Duration;

use lf_core::{LfError, LfResult};
use sqlx::Connection;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};

use crate::backend::Backend;
use crate::error::{map_db_err, open_failed};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// A connection idle for longer is pinged before use, so one that the server
/// closed meanwhile is replaced instead of failing a call.
const PING_AFTER_IDLE: Duration = Duration::from_secs(30);

/// How long the first connection may take before the server counts as not
/// answering.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

// Each of these runs its work in a boxed future. sqlx's PostgreSQL futures
// are large, and a store method that serves both backends returns a future
// as large as its larger branch, which every call allocates and moves, the
// cached SQLite reads' calls too. Boxed here, the PostgreSQL branch costs
// one allocation on a path that waits for the network anyway, and the
// SQLite one nothing.

/// Runs `f` on a connection of the pool: reads, and writes of one
/// statement, which commits by itself.
pub(crate) async fn reading<R>(
    pool: &PgPool,
    f: impl AsyncFnOnce(&mut PgConnection) -> LfResult<R>,
) -> LfResult<R> {
    Box::pin(async move { f(&mut *pool.acquire().await.map_err(map_db_err)?).await }).await
}

/// Runs `f` in a read-only `REPEATABLE READ` transaction: every query of `f`
/// sees one snapshot.
pub(crate) async fn snapshot<R>(
    pool: &PgPool,
    f: impl AsyncFnOnce(&mut PgConnection) -> LfResult<R>,
) -> LfResult<R> {
    in_transaction(pool, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", f).await
}

/// Runs `f` in a transaction, committed when it returns `Ok`.
pub(crate) async fn write<R>(
    pool: &PgPool,
    f: impl AsyncFnOnce(&mut PgConnection) -> LfResult<R>,
) -> LfResult<R> {
    in_transaction(pool, "BEGIN", f).await
}

/// Runs `f` in the transaction `begin` starts, committed when `f` returns
/// `Ok`.
async fn in_transaction<R>(
    pool: &PgPool,
    begin: &'static str,
    f: impl AsyncFnOnce(&mut PgConnection) -> LfResult<R>,
) -> LfResult<R> {
    Box::pin(async move {
        let mut tx = pool.begin_with(begin).await.map_err(map_db_err)?;
        let out = f(&mut tx).await?;
        tx.commit().await.map_err(map_db_err)?;
        Ok(out)
    })
    .await
}

/// See [`crate::Database::ready`].
pub(crate) async fn ready(pool: &PgPool) -> Result<(), String> {
    let applied: Vec<(i64, Vec<u8>, bool)> = sqlx::query_as(crate::ready::APPLIED)
        .fetch_all(pool)
        .await
        .map_err(|e| format!("the database does not answer: {}", crate::ready::kind(&e)))?;
    crate::ready::current(&MIGRATOR, &applied)
}

pub(crate) async fn open(url: &str) -> LfResult<PgPool> {
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| {
            // The sqlx message may quote the URL, password included: not shown.
            LfError::invalid_argument(
                "LENSERFIGHT_DATABASE_URL is not a valid postgres:// URL: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
            )
            .with_field("LENSERFIGHT_DATABASE_URL")
            .with_source(e)
        })?
        .application_name("lenserfight");
    // One plain connection first: the pool would retry a refused or rejected
    // connection until its acquire timeout and then report only "timed out".
    let probe = tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&options))
        .await
        .map_err(|e| open_failed(Backend::Postgres, "connect (no answer within 10 s) to", e))?
        .map_err(|e| open_failed(Backend::Postgres, "connect to", e))?;
    let _ = probe.close().await;
    let pool = PgPoolOptions::new()
        // No ping on every checkout: sqlx already pings each connection as
        // it comes back, off the caller's path. Only a connection idle for a
        // while is checked again.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > PING_AFTER_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .connect_with(options)
        .await
        .map_err(|e| open_failed(Backend::Postgres, "connect to", e))?;
    // sqlx holds an advisory lock while migrating: processes starting
    // together apply each migration once.
    MIGRATOR.run(&pool).await.map_err(|e| open_failed(Backend::Postgres, "migrate", e))?;
    Ok(pool)
}
