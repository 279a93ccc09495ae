//! Where a store's connections come from, and how a store method asks for
//! one: every store holds [`Conns`] and runs each method's statements with
//! [`on!`], in one of four ways.
//!
//! - `reading`: reads of one statement, or of several that need not agree
//!   (SQLite: a reader connection; PostgreSQL: a pooled connection).
//! - `snapshot`: reads that must see one state of the database (SQLite: a
//!   deferred transaction on a reader, one WAL snapshot; PostgreSQL:
//!   `REPEATABLE READ, READ ONLY`).
//! - `write`: a write of several statements, whole or not at all (SQLite: a
//!   `BEGIN IMMEDIATE` transaction on the writer; PostgreSQL: a transaction).
//! - `write_one`: a write of one statement, which is whole by itself
//!   (SQLite: as `write`, since the writer's turn and `BEGIN IMMEDIATE`
//!   still serialize it; PostgreSQL: the statement alone, sparing the
//!   transaction's two round trips).
//!
//! The body handed to [`on!`] is the same for both backends: a call of a
//! function generic over [`crate::dialect::Conn`], compiled once per
//! backend. A method whose SQL differs by backend (full-text search, the
//! writes that keep its index, the direct readers) matches on [`Conns`]
//! itself.

use crate::sqlite;

/// The connections of one database, shared by every store over it (both
/// are handles on a shared pool).
#[derive(Clone)]
pub(crate) enum Conns {
    Sqlite(sqlite::Handle),
    Postgres(sqlx::PgPool),
}

/// Runs `$body` with `$conn` bound to a connection of `$conns`'s backend,
/// as `$how` (`reading`, `snapshot`, `write` or `write_one`) provides it.
macro_rules! on {
    ($conns:expr, write_one, |$conn:ident| $body:expr) => {
        match $conns {
            $crate::conns::Conns::Sqlite(db) => db.write(async |$conn| $body.await).await,
            $crate::conns::Conns::Postgres(pool) => {
                $crate::postgres::reading(pool, async |$conn| $body.await).await
            }
        }
    };
    ($conns:expr, $how:ident, |$conn:ident| $body:expr) => {
        match $conns {
            $crate::conns::Conns::Sqlite(db) => db.$how(async |$conn| $body.await).await,
            $crate::conns::Conns::Postgres(pool) => {
                $crate::postgres::$how(pool, async |$conn| $body.await).await
            }
        }
    };
}
pub(crate) use on;
