//! The SQLite backend: one file in WAL mode, a few reader connections and
//! one writer connection.
//!
//! The connections are held here rather than in an sqlx pool: a pool checks
//! a connection back in by spawning a task that pings it, which costs more
//! than a point read. A local file's connections don't go stale, so there is
//! nothing to ping for.
//!
//! Writes are serialized twice. Within a process, they take turns on the one
//! writer connection, queueing in order instead of sleeping in SQLite's busy
//! handler. Across processes (or several [`crate::Database`] values on one
//! file), every write transaction starts with `BEGIN IMMEDIATE`, which takes
//! SQLite's write lock up front, waiting up to [`BUSY_TIMEOUT`]: a
//! transaction that read first and then wanted to write could otherwise fail
//! with SQLITE_BUSY as soon as another writer committed.
//!
//! Beside these sqlx connections, [`direct`] keeps connections that read on
//! the calling thread, and one that writes on the calling thread in the
//! writer's turn ([`Handle::write_direct`]); [`cache`] keeps what the point
//! reads every call repeats answered, while the tables they read are
//! unchanged; [`rows`] binds, reads and runs statements on them. The
//! statements themselves are each store's, beside its SQL
//! (`sqlite_direct.rs` in its folder), and this module knows none of them.
//! It is the only one that names rusqlite: the stores' direct statements
//! take the driver's `Connection` and `ToSql` from here.

mod cache;
mod direct;
mod rows;
#[cfg(test)]
pub(crate) mod testing;

use std::hash::Hash;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lf_core::{LfError, LfResult};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection as _};
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

pub(crate) use self::cache::ReadCache;
use self::direct::DirectReaders;
pub(crate) use self::rows::{
    DirectParams, DirectRow, DirectValue, Param, execute, first_row, first_row_of, rows,
};
// The driver's connection and parameter, as the stores' direct statements
// name them.
pub(crate) use rusqlite::{Connection, ToSql};

use crate::backend::Backend;
use crate::error::{map_db_err, open_failed};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The same for the readiness check, which must answer sooner.
const READY_BUSY: Duration = Duration::from_secs(1);

/// Statements cached per connection: every fixed statement of every store,
/// and every shape of the listings, with room to spare.
const STATEMENT_CACHE: usize = 256;

/// An open SQLite database. Every store over one database shares one handle.
#[derive(Clone)]
pub(crate) struct Handle {
    inner: Arc<Connections>,
}

struct Connections {
    /// Taken for every write transaction: the in-process write turn.
    writer: Mutex<Option<SqliteConnection>>,
    /// Taken for reads; empty for an in-memory database, which reads through
    /// the writer (a second connection would see another database).
    readers: Box<[Mutex<Option<SqliteConnection>>]>,
    /// Where the next read starts looking for a free reader.
    next_reader: AtomicUsize,
    /// Connections that read on the calling thread (see [`direct`]); `None`
    /// for an in-memory database.
    direct: Option<Arc<DirectReaders>>,
    /// The connection that writes on the calling thread
    /// ([`Handle::write_direct`]), taken only while `writer` is held;
    /// `None` for an in-memory database, and once closed.
    direct_writer: std::sync::Mutex<Option<rusqlite::Connection>>,
    /// Separate connections for diagnostics and tests, opened on first use.
    diagnostics: SqlitePool,
    /// How to open the file again, for [`Handle::ready`] (`None` in memory).
    file: Option<SqliteConnectOptions>,
}

/// A connection checked out for reading.
pub(crate) type ReadConn<'a> = MappedMutexGuard<'a, SqliteConnection>;

fn is_in_memory(url: &str) -> bool {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
    let (db, params) = rest.split_once('?').unwrap_or((rest, ""));
    db == ":memory:" || params.split('&').any(|kv| kv == "mode=memory")
}

fn closed() -> LfError {
    LfError::internal("the SQLite database was closed")
}

impl Handle {
    pub(crate) async fn open(url: &str) -> LfResult<Handle> {
        let options = SqliteConnectOptions::from_str(url).map_err(|e| {
            LfError::invalid_argument(format!("LENSERFIGHT_DATABASE_URL is not a valid sqlite: URL: {e}"))
                .with_field("LENSERFIGHT_DATABASE_URL")
        })?;
        let options =
            options.foreign_keys(true).busy_timeout(BUSY_TIMEOUT).statement_cache_capacity(STATEMENT_CACHE);
        let in_memory = is_in_memory(url);
        let options = if in_memory {
            // No WAL in memory; sqlx names the database uniquely and shares
            // it between this process's connections to that name.
            options
        } else {
            create_parent_dirs(options.get_filename())?;
            options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
        };
        let connect = async || options.connect().await.map_err(|e| open_failed(Backend::Sqlite, "open", e));

        // The writer first: it creates the file and turns on WAL before any
        // other connection opens it.
        let writer = connect().await?;
        // Through the diagnostics pool: sqlx's migrator over a plain
        // connection makes `Database::connect` a future rustc cannot prove Send.
        let diagnostics = SqlitePoolOptions::new().max_connections(1).connect_lazy_with(options.clone());
        MIGRATOR.run(&diagnostics).await.map_err(|e| open_failed(Backend::Sqlite, "migrate", e))?;
        let mut readers = Vec::new();
        let mut direct = None;
        let mut direct_writer = None;
        if !in_memory {
            direct = Some(Arc::new(DirectReaders::open(options.get_filename().to_owned())?));
            direct_writer = Some(direct::open_writer(options.get_filename())?);
            // Readers run side by side under WAL; more of them than cores
            // would only wait for a core.
            let n = std::thread::available_parallelism().map_or(4, |n| n.get()).clamp(2, 8);
            for _ in 0..n {
                readers.push(Mutex::new(Some(connect().await?)));
            }
        }
        Ok(Handle {
            inner: Arc::new(Connections {
                writer: Mutex::new(Some(writer)),
                readers: readers.into_boxed_slice(),
                next_reader: AtomicUsize::new(0),
                direct,
                direct_writer: std::sync::Mutex::new(direct_writer),
                diagnostics,
                file: (!in_memory).then(|| options.clone().create_if_missing(false).busy_timeout(READY_BUSY)),
            }),
        })
    }

    /// See [`crate::Database::ready`]: a file is opened anew (the open
    /// connections would go on reading a file since removed or made
    /// unreadable); in memory the diagnostics pool answers.
    pub(crate) async fn ready(&self) -> Result<(), String> {
        let applied = match &self.inner.file {
            Some(options) => {
                let mut conn = options
                    .connect()
                    .await
                    .map_err(|e| format!("the database file does not open: {}", crate::ready::kind(&e)))?;
                let applied = sqlx::query_as(crate::ready::APPLIED).fetch_all(&mut conn).await;
                let _ = conn.close().await;
                applied
            }
            None => sqlx::query_as(crate::ready::APPLIED).fetch_all(&self.inner.diagnostics).await,
        };
        let applied: Vec<(i64, Vec<u8>, bool)> =
            applied.map_err(|e| format!("the database does not answer: {}", crate::ready::kind(&e)))?;
        crate::ready::current(&MIGRATOR, &applied)
    }

    /// A connection to read with: a free reader if there is one, else the
    /// next one in turn, once it is free.
    pub(crate) async fn read(&self) -> LfResult<ReadConn<'_>> {
        let readers = &self.inner.readers;
        let guard = if readers.is_empty() {
            self.inner.writer.lock().await
        } else {
            let start = self.inner.next_reader.fetch_add(1, Ordering::Relaxed);
            let free = (0..readers.len()).find_map(|i| readers[(start + i) % readers.len()].try_lock().ok());
            match free {
                Some(guard) => guard,
                None => readers[start % readers.len()].lock().await,
            }
        };
        MutexGuard::try_map(guard, Option::as_mut).map_err(|_| closed())
    }

    /// Runs `f` on a connection to read with (see [`Handle::read`]).
    pub(crate) async fn reading<R>(
        &self,
        f: impl AsyncFnOnce(&mut SqliteConnection) -> LfResult<R>,
    ) -> LfResult<R> {
        f(&mut *self.read().await?).await
    }

    /// Runs `f` on a connection that reads on the calling thread (see
    /// [`direct`]), for a point read whose answers `cache` keeps while the
    /// database does not change (see [`DirectReaders::run_cached`]). An
    /// in-memory database is read every time: its only connection is the
    /// writer, whose own commits SQLite's `data_version` does not count.
    pub(crate) async fn direct_cached<K: Hash + Eq, V: Clone>(
        &self,
        cache: &ReadCache<K, V>,
        key: K,
        f: impl FnOnce(&rusqlite::Connection) -> LfResult<Option<V>>,
    ) -> LfResult<Option<V>> {
        match &self.inner.direct {
            Some(readers) => readers.run_cached(cache, key, f),
            None => direct::borrowing(&mut *self.read().await?, f).await,
        }
    }

    /// Runs `f` on a connection that reads directly (see [`direct`]), on a
    /// blocking thread: for a scan that takes long enough to hold up the
    /// other tasks of an async thread.
    pub(crate) async fn direct_blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> LfResult<R> + Send + 'static,
    ) -> LfResult<R> {
        match &self.inner.direct {
            Some(readers) => {
                let readers = readers.clone();
                tokio::task::spawn_blocking(move || readers.run(f))
                    .await
                    .map_err(|e| LfError::internal(format!("a read on a blocking thread failed: {e}")))?
            }
            None => direct::borrowing(&mut *self.read().await?, f).await,
        }
    }

    /// Runs `f` in a read transaction on a connection to read with: under
    /// WAL, every query of `f` sees the database as one snapshot.
    pub(crate) async fn snapshot<R>(
        &self,
        f: impl AsyncFnOnce(&mut SqliteConnection) -> LfResult<R>,
    ) -> LfResult<R> {
        let mut conn = self.read().await?;
        let mut tx = conn.begin().await.map_err(map_db_err)?;
        let out = f(&mut tx).await?;
        tx.commit().await.map_err(map_db_err)?;
        Ok(out)
    }

    /// Runs `f` in a write transaction begun with `BEGIN IMMEDIATE` on the
    /// writer, and commits when it returns `Ok`. On `Err`, or if the future is
    /// dropped, the transaction rolls back before the next write begins.
    pub(crate) async fn write<R>(
        &self,
        f: impl AsyncFnOnce(&mut SqliteConnection) -> LfResult<R>,
    ) -> LfResult<R> {
        let mut writer = self.inner.writer.lock().await;
        let conn = writer.as_mut().ok_or_else(closed)?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(map_db_err)?;
        // However the transaction ends, even dropped half way.
        let _counted = Wrote(self.inner.direct.as_deref());
        let out = f(&mut tx).await?;
        tx.commit().await.map_err(map_db_err)?;
        Ok(out)
    }

    /// Like [`Handle::write`], for a write that runs through rusqlite, on
    /// a blocking thread, in the writer's turn: for the few writes every
    /// call of an agent makes (its day's counts and its action log), where
    /// sqlx's hand-off of each statement to its connection's thread and
    /// back costs more than the statements. This hands the whole
    /// transaction over once, so its commit's fsync holds up no async
    /// thread. (Dropped while it runs, the write goes on; a write after it
    /// waits in SQLite's lock, under the busy timeout, not in this turn.)
    /// An in-memory database, which waits for no disk, writes on the
    /// calling thread through the sqlx writer's own connection.
    pub(crate) async fn write_direct<R: Send + 'static>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> LfResult<R> + Send + 'static,
    ) -> LfResult<R> {
        let mut writer = self.inner.writer.lock().await;
        let conn = writer.as_mut().ok_or_else(closed)?;
        if self.inner.direct.is_none() {
            return direct::borrowing(conn, |c| direct::in_write_transaction(c, f)).await;
        }
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let direct = inner.direct_writer.lock().unwrap_or_else(|e| e.into_inner());
            let _counted = Wrote(inner.direct.as_deref());
            direct::in_write_transaction(direct.as_ref().ok_or_else(closed)?, f)
        })
        .await
        .map_err(|e| LfError::internal(format!("a write on a blocking thread failed: {e}")))?
    }

    pub(crate) fn diagnostics_pool(&self) -> &SqlitePool {
        &self.inner.diagnostics
    }

    /// Closes every connection once it is free. Reads and writes fail from
    /// then on.
    pub(crate) async fn close(&self) {
        let inner = &self.inner;
        {
            let _turn = inner.writer.lock().await;
            inner.direct_writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        for slot in std::iter::once(&inner.writer).chain(inner.readers.iter()) {
            if let Some(conn) = slot.lock().await.take() {
                let _ = conn.close().await;
            }
        }
        if let Some(direct) = &inner.direct {
            direct.close();
        }
        inner.diagnostics.close().await;
    }
}

/// Counts a write transaction with the direct readers when it ends
/// (see [`DirectReaders::wrote`]), whether it committed or not.
struct Wrote<'a>(Option<&'a DirectReaders>);

impl Drop for Wrote<'_> {
    fn drop(&mut self) {
        if let Some(readers) = self.0 {
            readers.wrote();
        }
    }
}

fn create_parent_dirs(path: &Path) -> LfResult<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir).map_err(|e| {
            open_failed(Backend::Sqlite, &format!("create the directory {} of", dir.display()), e)
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_urls() {
        for url in ["sqlite::memory:", "sqlite://:memory:", "sqlite://?mode=memory", "sqlite:x?mode=memory"] {
            assert!(is_in_memory(url), "{url}");
        }
        for url in ["sqlite:x.db", "sqlite:///tmp/memory.db", "sqlite://memory"] {
            assert!(!is_in_memory(url), "{url}");
        }
    }

    /// The settings DESIGN.md §11 asks for, on every connection the stores
    /// use (synchronous, foreign_keys and busy_timeout are per connection).
    #[tokio::test]
    async fn every_connection_has_the_pragmas() {
        let dir = tempfile::tempdir().unwrap();
        let db = Handle::open(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
        let inner = &db.inner;
        assert!(inner.readers.len() >= 2);
        for slot in std::iter::once(&inner.writer).chain(inner.readers.iter()) {
            let mut guard = slot.lock().await;
            let conn = guard.as_mut().unwrap();
            let journal: String =
                sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut *conn).await.unwrap();
            assert_eq!(journal, "wal");
            for (pragma, expected) in
                [("PRAGMA synchronous", 2), ("PRAGMA foreign_keys", 1), ("PRAGMA busy_timeout", 5000)]
            {
                let got: i64 = sqlx::query_scalar(pragma).fetch_one(&mut *conn).await.unwrap();
                assert_eq!(got, expected, "{pragma} (synchronous 2 is FULL)");
            }
        }
        // The direct readers: the same busy timeout, and they cannot write.
        let (busy, query_only) = db
            .direct_blocking(|c| {
                let pragma = |name| c.pragma_query_value(None, name, |r| r.get::<_, i64>(0));
                Ok((pragma("busy_timeout").unwrap(), pragma("query_only").unwrap()))
            })
            .await
            .unwrap();
        assert_eq!((busy, query_only), (5000, 1));
        let write = db.direct_blocking(|c| Ok(c.execute("CREATE TABLE t (x)", []).is_err())).await.unwrap();
        assert!(write, "a direct reader refuses to write");
        // The direct writer: the sqlx writer's pragmas.
        let pragmas = db
            .write_direct(|c| {
                let pragma = |name: &str| c.pragma_query_value(None, name, |r| r.get::<_, i64>(0)).unwrap();
                Ok([pragma("synchronous"), pragma("foreign_keys"), pragma("busy_timeout")])
            })
            .await
            .unwrap();
        assert_eq!(pragmas, [2, 1, 5000], "the direct writer's synchronous, foreign_keys and busy_timeout");
        db.close().await;
        assert_eq!(db.read().await.err().map(|e| e.code()), Some(lf_core::ErrorCode::Internal));
        let closed = db.direct_blocking(|_| Ok(())).await.err().map(|e| e.code());
        assert_eq!(closed, Some(lf_core::ErrorCode::Internal));
    }

    /// Runs `sql` in a write transaction of `db`.
    async fn exec(db: &Handle, sql: &'static str) {
        db.write(async |c| {
            sqlx::query(sql).execute(&mut *c).await.map_err(map_db_err)?;
            Ok(())
        })
        .await
        .unwrap()
    }

    /// Two handles on a new file in `dir` (as two processes would have),
    /// which holds table `t (k, v)` with the row `insert` inserts, watched
    /// as the tables of the cached reads are (migration 0016), and table
    /// `u (x)`, not watched.
    async fn two_handles(dir: &Path, insert: &'static str) -> (Handle, Handle) {
        let url = format!("sqlite://{}", dir.join("lf.db").display());
        let (db, other) = (Handle::open(&url).await.unwrap(), Handle::open(&url).await.unwrap());
        exec(&db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v)").await;
        for watch in [
            "CREATE TRIGGER t_i AFTER INSERT ON t BEGIN UPDATE cached_reads_generation SET n = n + 1; END",
            "CREATE TRIGGER t_u AFTER UPDATE ON t BEGIN UPDATE cached_reads_generation SET n = n + 1; END",
            "CREATE TRIGGER t_d AFTER DELETE ON t BEGIN UPDATE cached_reads_generation SET n = n + 1; END",
            "CREATE TABLE u (x)",
        ] {
            exec(&db, watch).await;
        }
        exec(&db, insert).await;
        (db, other)
    }

    /// Row `k` of `t` as a cached read of `db` kept in `cache` answers it,
    /// counting in `reads` each time the database is read.
    async fn read_t(
        db: &Handle,
        cache: &ReadCache<i64, String>,
        reads: &std::cell::Cell<usize>,
        k: i64,
    ) -> Option<String> {
        db.direct_cached(cache, k, |c| {
            reads.set(reads.get() + 1);
            let sql = "SELECT v FROM t WHERE k = ?1";
            Ok(c.query_row(sql, [k], |r| r.get::<_, String>(0)).ok())
        })
        .await
        .unwrap()
    }

    /// A cached read is answered from the cache while nothing it reads is
    /// changed, and read again after any commit that changes a watched
    /// table: of this handle's writer, or of another handle on the same
    /// file (as another process would). A commit to a table no cached read
    /// reads leaves what is kept.
    #[tokio::test]
    async fn cached_reads_follow_every_change_to_what_they_read() {
        let dir = tempfile::tempdir().unwrap();
        let (db, other) = two_handles(dir.path(), "INSERT INTO t VALUES (1, 'one')").await;
        let cache = ReadCache::new(1 << 10, String::len);
        let reads = std::cell::Cell::new(0);
        let get = async |k: i64| read_t(&db, &cache, &reads, k).await;
        let expect = async |k: i64, value: Option<&str>, total_reads: usize| {
            assert_eq!(get(k).await.as_deref(), value);
            assert_eq!(reads.get(), total_reads, "reads of the database after reading {k} as {value:?}");
        };
        expect(1, Some("one"), 1).await;
        expect(1, Some("one"), 1).await;
        // What is not there is read again every time.
        expect(2, None, 2).await;
        expect(2, None, 3).await;
        // Another handle's commit, then this handle's.
        exec(&other, "UPDATE t SET v = 'uno' WHERE k = 1").await;
        expect(1, Some("uno"), 4).await;
        expect(1, Some("uno"), 4).await;
        exec(&db, "INSERT INTO t VALUES (2, 'two')").await;
        expect(1, Some("uno"), 5).await;
        expect(2, Some("two"), 6).await;
        expect(2, Some("two"), 6).await;
        exec(&db, "INSERT INTO u VALUES (1)").await;
        exec(&other, "INSERT INTO u VALUES (2)").await;
        expect(1, Some("uno"), 6).await;
        expect(2, Some("two"), 6).await;
        // A row deleted elsewhere is gone, and every other answer is read
        // again too.
        exec(&other, "DELETE FROM t WHERE k = 1").await;
        expect(1, None, 7).await;
        expect(2, Some("two"), 8).await;
        expect(2, Some("two"), 8).await;
        other.close().await;
        db.close().await;
    }

    /// Within one call, only the first cached read looks for changes: a
    /// later one answers the database as the first found it (another
    /// handle's commit since is the next call's to see), unless this
    /// process has committed a write since, which is then looked for: a
    /// call sees its own writes.
    #[tokio::test]
    async fn within_a_call_only_its_first_cached_read_looks() {
        let dir = tempfile::tempdir().unwrap();
        let (db, other) = two_handles(dir.path(), "INSERT INTO t VALUES (1, 'one'), (2, 'two')").await;
        let cache = ReadCache::new(1 << 10, String::len);
        let reads = std::cell::Cell::new(0);
        let get = async |k: i64| read_t(&db, &cache, &reads, k).await.unwrap();
        assert_eq!((get(1).await, get(2).await), ("one".into(), "two".into()));
        assert_eq!(reads.get(), 2);
        let seen = lf_core::call::within(async {
            let first = get(1).await;
            exec(&other, "UPDATE t SET v = 'uno' WHERE k = 1").await;
            let again = get(1).await;
            let two = get(2).await;
            let kept = reads.get();
            exec(&db, "UPDATE t SET v = 'dos' WHERE k = 2").await;
            let own = get(2).await;
            let one_now = get(1).await;
            [first, again, two, kept.to_string(), own, one_now]
        })
        .await;
        assert_eq!(seen, ["one", "one", "two", "2", "dos", "uno"]);
        assert_eq!(reads.get(), 4, "both read again after the call's own write");
        // Another call looks afresh: another handle's commit is seen at its
        // first read.
        exec(&other, "UPDATE t SET v = 'eins' WHERE k = 1").await;
        let next = lf_core::call::within(async { (get(1).await, get(2).await) }).await;
        assert_eq!(next, ("eins".into(), "dos".into()));
        assert_eq!(reads.get(), 6);
        other.close().await;
        db.close().await;
    }

    /// A direct write commits what it wrote when it returns `Ok`, and
    /// nothing when it returns `Err`, on a file and in memory; the sqlx
    /// writer sees what it committed; after close it fails.
    #[tokio::test]
    async fn direct_writes_commit_or_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = format!("sqlite://{}", dir.path().join("lf.db").display());
        for url in [file.as_str(), "sqlite::memory:"] {
            let db = Handle::open(url).await.unwrap();
            exec(&db, "CREATE TABLE t (x INTEGER PRIMARY KEY)").await;
            let insert = |x: i64| {
                move |c: &rusqlite::Connection| -> LfResult<()> {
                    c.execute("INSERT INTO t VALUES (?1)", [x]).map_err(LfError::internal)?;
                    Ok(())
                }
            };
            db.write_direct(insert(1)).await.unwrap();
            let failed = db
                .write_direct(move |c| {
                    insert(2)(c)?;
                    Err::<(), _>(LfError::internal("no"))
                })
                .await;
            assert!(failed.is_err());
            // A unique violation of a later statement undoes the first too.
            let clash = db.write_direct(move |c| insert(3)(c).and_then(|_| insert(1)(c))).await;
            assert!(clash.is_err());
            let xs: Vec<i64> = db
                .reading(async |c| {
                    Ok(sqlx::query_scalar("SELECT x FROM t").fetch_all(&mut *c).await.unwrap())
                })
                .await
                .unwrap();
            assert_eq!(xs, [1], "{url}");
            exec(&db, "INSERT INTO t VALUES (4)").await;
            db.close().await;
            assert_eq!(
                db.write_direct(insert(5)).await.err().map(|e| e.code()),
                Some(lf_core::ErrorCode::Internal)
            );
        }
    }

    /// Readers on several threads and a writer on another handle, at once:
    /// no read answers older than what was committed before it began.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cached_reads_under_concurrent_commits_are_never_stale() {
        use std::sync::atomic::AtomicI64;

        let dir = tempfile::tempdir().unwrap();
        let (db, other) = two_handles(dir.path(), "INSERT INTO t VALUES (1, 0)").await;
        let readers = db.inner.direct.clone().unwrap();
        let cache = Arc::new(ReadCache::new(1 << 10, |_: &i64| 0));
        let committed = Arc::new(AtomicI64::new(0));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let (readers, cache, committed, done) =
                    (readers.clone(), cache.clone(), committed.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut reads = 0;
                    while !done.load(Ordering::SeqCst) {
                        let floor = committed.load(Ordering::SeqCst);
                        let read = |c: &rusqlite::Connection| {
                            Ok(Some(c.query_row("SELECT v FROM t WHERE k = 1", [], |r| r.get(0)).unwrap()))
                        };
                        let v = readers.run_cached(&cache, 1, read).unwrap().unwrap();
                        assert!(v >= floor, "read {v} after {floor} was committed");
                        reads += 1;
                    }
                    reads
                })
            })
            .collect();
        for n in 1..=300 {
            exec(&other, "UPDATE t SET v = v + 1 WHERE k = 1").await;
            committed.store(n, Ordering::SeqCst);
        }
        done.store(true, Ordering::SeqCst);
        for thread in threads {
            assert!(thread.join().unwrap() > 0);
        }
        other.close().await;
        db.close().await;
    }

    /// A direct reader left in a transaction is not used again: it would
    /// answer from its old snapshot.
    #[tokio::test]
    async fn a_reader_left_in_a_transaction_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let (db, other) = two_handles(dir.path(), "INSERT INTO t VALUES (1, 'one')").await;
        let readers = db.inner.direct.clone().unwrap();
        let value = |c: &rusqlite::Connection| c.query_row("SELECT v FROM t", [], |r| r.get::<_, String>(0));
        let stuck = readers.run(|c| {
            c.execute_batch("BEGIN").unwrap();
            Ok(value(c).unwrap())
        });
        assert_eq!(stuck.unwrap(), "one");
        exec(&other, "UPDATE t SET v = 'uno'").await;
        let next = readers.run(|c| Ok((c.is_autocommit(), value(c).unwrap()))).unwrap();
        assert_eq!(next, (true, "uno".to_owned()));
        other.close().await;
        db.close().await;
    }

    /// An in-memory database reads directly through the writer's connection
    /// and sees what was written on it.
    #[tokio::test]
    async fn in_memory_direct_reads_see_the_writers_data() {
        let db = Handle::open("sqlite::memory:").await.unwrap();
        exec(&db, "CREATE TABLE t (x)").await;
        exec(&db, "INSERT INTO t VALUES (42)").await;
        // Read every time: the writer's own commits leave no trace in its
        // data_version.
        let cache = ReadCache::new(1 << 10, |_: &i64| 0);
        let reads = std::cell::Cell::new(0);
        for expected in [42, 43] {
            let x = db
                .direct_cached(&cache, (), |c| {
                    reads.set(reads.get() + 1);
                    Ok(Some(c.query_row("SELECT x FROM t", [], |r| r.get::<_, i64>(0)).unwrap()))
                })
                .await
                .unwrap();
            assert_eq!(x, Some(expected));
            exec(&db, "UPDATE t SET x = x + 1").await;
        }
        assert_eq!(reads.get(), 2);
        let scanned = db.direct_blocking(|c| {
            Ok(c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).unwrap())
        });
        assert_eq!(scanned.await.unwrap(), 1);
        db.close().await;
    }
}
