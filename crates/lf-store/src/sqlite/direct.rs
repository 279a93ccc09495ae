//! Reads on the calling thread, for the reads every call repeats (a lens and
//! its version, a bearer token) and for the one large scan (the results of
//! every closed battle).
//!
//! sqlx runs each SQLite connection on a thread of its own and hands every
//! statement and every row across: on one core, a point read spends more
//! time on that hand-off (two thread switches and the channels) than in
//! SQLite, and a scan of 100,000 rows pays it per row. These connections,
//! opened with rusqlite on the same SQLite library, run a statement where it
//! is called instead. A point read takes a few microseconds, the same time
//! sqlx's worker would have blocked its own thread.
//!
//! They only read: each is opened with `query_only` on, so a statement that
//! writes fails, and under WAL they never wait for the writer. An in-memory
//! database has no second connection to the same data (see
//! [`super::Handle::read`]); its reads borrow the sqlx writer's connection
//! through sqlx's raw handle while holding it.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use lf_core::{LfError, LfResult};
use rusqlite::{Connection, OpenFlags};

use super::BUSY_TIMEOUT;

/// Idle connections kept; more are opened when more threads read at once,
/// and closed after.
const KEPT: usize = 8;

/// How much of the file each connection maps into memory.
const MMAP_BYTES: i64 = 256 << 20;

/// Statements each connection keeps prepared.
const STATEMENTS: usize = 32;

/// The direct readers of one database file.
pub(crate) struct DirectReaders {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    closed: AtomicBool,
}

impl DirectReaders {
    /// Readers of the file at `path`, whose writer has already opened it (and
    /// turned WAL on). Opens one now, so that a file that cannot be read
    /// fails at start rather than on the first call.
    pub(crate) fn open(path: PathBuf) -> LfResult<Self> {
        let readers = Self { path, idle: Mutex::new(Vec::new()), closed: AtomicBool::new(false) };
        let first = readers.connect()?;
        readers.idle().push(first);
        Ok(readers)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connect(&self) -> LfResult<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(map_direct_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_direct_err)?;
        conn.pragma_update(None, "query_only", true).map_err(map_direct_err)?;
        // Pages straight from the OS's cache instead of a copy into each
        // connection's own (2 MB by default, a few thousand lenses' worth).
        conn.pragma_update(None, "mmap_size", MMAP_BYTES).map_err(map_direct_err)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        Ok(conn)
    }

    /// Runs `f` on an idle connection (opening one if none is idle).
    pub(crate) fn run<R>(&self, f: impl FnOnce(&Connection) -> LfResult<R>) -> LfResult<R> {
        if self.closed.load(Ordering::Acquire) {
            return Err(super::closed());
        }
        let taken = self.idle().pop();
        let conn = match taken {
            Some(conn) => conn,
            None => self.connect()?,
        };
        let out = f(&conn);
        let mut idle = self.idle();
        if idle.len() < KEPT && !self.closed.load(Ordering::Acquire) {
            idle.push(conn);
        }
        out
    }

    /// Closes the idle connections; reads fail from then on (a read under
    /// way finishes, and its connection is closed after it).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.idle().clear();
    }
}

/// Runs `f` on the connection behind sqlx's `conn`, which the caller holds
/// exclusively: sqlx's worker waits while the handle is locked.
pub(crate) async fn borrowing<R>(
    conn: &mut sqlx::SqliteConnection,
    f: impl FnOnce(&Connection) -> LfResult<R>,
) -> LfResult<R> {
    let mut locked = conn.lock_handle().await.map_err(crate::error::map_db_err)?;
    let raw = locked.as_raw_handle();
    // SAFETY: `raw` is an open connection of the same SQLite library (one
    // libsqlite3-sys serves sqlx and rusqlite), and nothing else uses it
    // while `locked` lives, which outlives `borrowed`. A connection made
    // from a handle does not close it when dropped; it only finalizes the
    // statements it prepared.
    let borrowed = unsafe { Connection::from_handle(raw.as_ptr()) }.map_err(map_direct_err)?;
    let out = f(&borrowed);
    drop(borrowed);
    drop(locked);
    out
}

/// Each row `sql` answers with `params`, mapped by `f`.
pub(crate) fn rows<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    mut f: impl FnMut(&rusqlite::Row<'_>) -> LfResult<T>,
) -> LfResult<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_direct_err)?;
    let mut rows = stmt.query(params).map_err(map_direct_err)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(map_direct_err)? {
        out.push(f(row)?);
    }
    Ok(out)
}

/// The first row `sql` answers with `params`, mapped by `f`, if any.
pub(crate) fn first_row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    f: impl FnOnce(&rusqlite::Row<'_>) -> LfResult<T>,
) -> LfResult<Option<T>> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_direct_err)?;
    let mut rows = stmt.query(params).map_err(map_direct_err)?;
    rows.next().map_err(map_direct_err)?.map(f).transpose()
}

/// A rusqlite error as the domain's: INTERNAL, with the error kept as its
/// cause (like [`crate::map_db_err`] does for sqlx).
pub(crate) fn map_direct_err(e: rusqlite::Error) -> LfError {
    LfError::internal(e)
}

/// A result row read by column position, from sqlx or from a direct reader,
/// so that each row shape is decoded by one function. By position, not name:
/// rusqlite finds a name by comparing it with every column's, which on a
/// lens row (22 columns) cost more than the read. (`auth_rows::Columns`
/// reads the few-column auth rows by name, for both backends.)
pub(crate) trait Cols {
    fn col<T>(&self, i: usize) -> LfResult<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite> + rusqlite::types::FromSql;
}

impl Cols for sqlx::sqlite::SqliteRow {
    fn col<T>(&self, i: usize) -> LfResult<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite> + rusqlite::types::FromSql,
    {
        sqlx::Row::try_get(self, i).map_err(crate::error::map_db_err)
    }
}

impl Cols for rusqlite::Row<'_> {
    fn col<T>(&self, i: usize) -> LfResult<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite> + rusqlite::types::FromSql,
    {
        self.get(i).map_err(map_direct_err)
    }
}
