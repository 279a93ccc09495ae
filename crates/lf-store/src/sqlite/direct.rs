//! Reads on the calling thread, for the reads every call repeats (a lens and
//! its version, a bearer token) and for the one large scan (the results of
//! every closed battle).
//!
//! sqlx runs each SQLite connection on a thread of its own and hands every
//! statement and every row across: on one core, a point read spends more
//! time on that hand-off (two thread switches and the channels) than in
//! SQLite, and a scan pays it for every row. These connections, opened
//! with rusqlite on the same SQLite library, run a statement where it is
//! called instead: a point read holds the calling thread no longer than
//! sqlx's worker would have held its own.
//!
//! They only read: each is opened with `query_only` on, so a statement that
//! writes fails, and under WAL they never wait for the writer. An in-memory
//! database has no second connection to the same data (see
//! [`super::Handle::read`]); its reads borrow the sqlx writer's connection
//! through sqlx's raw handle while holding it.
//!
//! The reads every call repeats also keep their answers in a
//! [`ReadCache`], for as long as the tables they read have not changed:
//! see [`DirectReaders::run_cached`].

use std::cell::Cell;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use lf_core::LfResult;
use rusqlite::{Connection, OpenFlags};

use super::BUSY_TIMEOUT;
use super::cache::ReadCache;
use crate::error::map_db;

/// Idle connections kept; more are opened when more threads read at once,
/// and closed after.
const KEPT: usize = 8;

/// How much of the file each connection maps into memory.
const MMAP_BYTES: i64 = 256 << 20;

/// Statements each connection keeps prepared.
const STATEMENTS: usize = 32;

/// The count that every change to a table a cached read reads moves on
/// (see [`DirectReaders::generations`]).
const CACHED_READS_GENERATION: &str = "SELECT n FROM cached_reads_generation WHERE id = 1";

/// Numbers the [`DirectReaders`] of this process.
static NEXT_READERS: AtomicU64 = AtomicU64::new(0);

/// The direct readers of one database file.
pub(crate) struct DirectReaders {
    path: PathBuf,
    idle: Mutex<Vec<Reader>>,
    closed: AtomicBool,
    /// The cached reads' generation as this process knows it: bumped by
    /// every reader that finds their tables changed since it last looked (see
    /// [`DirectReaders::generations`]).
    generation: AtomicU64,
    /// Which readers these are, among every process's: what a call's
    /// [`Checked`] names.
    id: u64,
    /// Write transactions this process has committed to the file (see
    /// [`DirectReaders::wrote`]).
    writes: AtomicU64,
}

/// What a call's first cached read found, kept in its
/// [`lf_core::call::CallScope`] so that its later cached reads need not
/// look for changes again (see [`DirectReaders::run_cached`]).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Checked {
    /// [`DirectReaders::id`] of the readers that looked.
    readers: u64,
    /// [`DirectReaders::writes`] before they looked.
    writes: u64,
    /// The generation answers kept then had to have.
    current: u64,
}

/// A direct reader connection, with the generation of the cached reads'
/// tables it last saw.
struct Reader {
    conn: Connection,
    /// [`CACHED_READS_GENERATION`] when this connection last looked; `None` before
    /// it first did.
    seen: Cell<Option<i64>>,
}

impl DirectReaders {
    /// Readers of the file at `path`, whose writer has already opened it (and
    /// turned WAL on). Opens one now, so that a file that cannot be read
    /// fails at start rather than on the first call.
    pub(crate) fn open(path: PathBuf) -> LfResult<Self> {
        let readers = Self {
            path,
            idle: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            id: NEXT_READERS.fetch_add(1, Ordering::Relaxed),
            writes: AtomicU64::new(0),
        };
        let first = readers.connect()?;
        readers.idle().push(first);
        Ok(readers)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Reader>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connect(&self) -> LfResult<Reader> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(map_db)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_db)?;
        conn.pragma_update(None, "query_only", true).map_err(map_db)?;
        // Pages straight from the OS's cache instead of a copy into each
        // connection's own (2 MB by default, a few thousand lenses' worth).
        conn.pragma_update(None, "mmap_size", MMAP_BYTES).map_err(map_db)?;
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        Ok(Reader { conn, seen: Cell::new(None) })
    }

    /// Runs `f` on an idle connection (opening one if none is idle).
    pub(crate) fn run<R>(&self, f: impl FnOnce(&Connection) -> LfResult<R>) -> LfResult<R> {
        self.with_reader(|reader| f(&reader.conn))
    }

    fn with_reader<R>(&self, f: impl FnOnce(&Reader) -> LfResult<R>) -> LfResult<R> {
        if self.closed.load(Ordering::Acquire) {
            return Err(super::closed());
        }
        let taken = self.idle().pop();
        let reader = match taken {
            Some(reader) => reader,
            None => self.connect()?,
        };
        let out = f(&reader);
        // A connection left in a transaction (one whose end failed) would
        // hold its old snapshot: it is closed instead of kept.
        let mut idle = self.idle();
        if idle.len() < KEPT && !self.closed.load(Ordering::Acquire) && reader.conn.is_autocommit() {
            idle.push(reader);
        }
        out
    }

    /// Like [`DirectReaders::run`] for a read whose answer `cache` keeps
    /// under `key`: the kept answer when the database has not changed since
    /// it was read, else `f`'s, kept when it is `Some`.
    ///
    /// Checking costs one read of a one-row table
    /// ([`CACHED_READS_GENERATION`]); a read of what is not kept runs in the
    /// same transaction.
    ///
    /// Within a call ([`lf_core::call::within`]), only the first cached
    /// read looks: the call keeps what it found ([`Checked`]), and its later
    /// cached reads answer what is kept under that generation without a
    /// transaction, for as long as this process has committed no write
    /// since the look began (the call's own writes among them). Such an
    /// answer is the database as it was at the call's first cached read,
    /// with every write this process made before that read's look began: a
    /// call reads one moment of the database, and sees its own writes.
    pub(crate) fn run_cached<K: Hash + Eq, V: Clone>(
        &self,
        cache: &ReadCache<K, V>,
        key: K,
        f: impl FnOnce(&Connection) -> LfResult<Option<V>>,
    ) -> LfResult<Option<V>> {
        let noted = lf_core::call::with_current(|call| call.and_then(|c| c.kept::<Checked>()));
        if let Some(checked) = noted
            && checked.readers == self.id
            && checked.writes == self.writes.load(Ordering::SeqCst)
            && let Some(kept) = cache.get(checked.current, &key)
        {
            return Ok(Some(kept));
        }
        // Loaded before the look: a write committed after it is counted
        // after this, and is then looked for again.
        let writes = self.writes.load(Ordering::SeqCst);
        self.with_reader(|reader| {
            in_transaction(&reader.conn, "BEGIN", || {
                let (read_in, current) = self.generations(reader)?;
                let checked = Checked { readers: self.id, writes, current };
                lf_core::call::with_current(|call| call.map(|c| c.keep(checked)));
                if let Some(kept) = cache.get(current, &key) {
                    return Ok(Some(kept));
                }
                let read = f(&reader.conn)?;
                if let Some(value) = &read {
                    cache.put(read_in, key, value.clone());
                }
                Ok(read)
            })
        })
    }

    /// Looks for changes with `reader`, which begins its read transaction
    /// doing so: the generation that answers read in that transaction are
    /// kept under, and the generation kept answers must have to be used.
    ///
    /// The count [`CACHED_READS_GENERATION`] reads moves on, by a trigger in
    /// the writing transaction, with every change to a table the cached
    /// reads read (migration `0016`), whichever connection or process
    /// makes it; writes to other tables (an agent's action log and day
    /// counts, which every call of an agent writes) leave it, and what is
    /// kept, alone. A reader that finds it changed since it last looked
    /// bumps the shared generation, and answers kept under an older one are
    /// not used again.
    ///
    /// Why a kept answer is never stale: it is kept under the generation `g`
    /// taken before the transaction it was read in began, or under the one
    /// its reader bumped to on beginning it if no other bump came between.
    /// Say a commit came after the transaction began. A reader that later
    /// looks for changes does so after the commit; the first time it did so
    /// after the commit, it found a change (or it had never looked) and
    /// bumped the generation, after the commit, so after `g` was taken (and
    /// after the bump to `g`, which was the only one in between). So the
    /// generation it then uses, taken after looking, is past `g`.
    fn generations(&self, reader: &Reader) -> LfResult<(u64, u64)> {
        let before = self.generation.load(Ordering::SeqCst);
        let mut stmt = reader.conn.prepare_cached(CACHED_READS_GENERATION).map_err(map_db)?;
        let now: i64 = stmt.query_row([], |row| row.get(0)).map_err(map_db)?;
        if reader.seen.replace(Some(now)) != Some(now) {
            let bumped = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
            let read_in = if bumped == before + 1 { bumped } else { before };
            return Ok((read_in, bumped));
        }
        Ok((before, self.generation.load(Ordering::SeqCst)))
    }

    /// Counts a write transaction this process committed to the file (the
    /// writer calls it after each commit, before it answers): a call that
    /// looked for changes before it looks again (see
    /// [`DirectReaders::run_cached`]).
    pub(crate) fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }

    /// Closes the idle connections; reads fail from then on (a read under
    /// way finishes, and its connection is closed after it).
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.idle().clear();
    }
}

/// Runs `f` in one transaction on `conn`, begun with `begin` (`BEGIN` to
/// read: every statement of `f` sees the database as it was when the first
/// began; `BEGIN IMMEDIATE` to write): committed when `f` returns `Ok`,
/// rolled back when it or the commit fails (a panic drops the connection).
fn in_transaction<R>(conn: &Connection, begin: &str, f: impl FnOnce() -> LfResult<R>) -> LfResult<R> {
    let run = |sql| conn.prepare_cached(sql).and_then(|mut stmt| stmt.execute([])).map_err(map_db);
    run(begin)?;
    let out = f().and_then(|out| run("COMMIT").map(|_| out));
    if out.is_err() && !conn.is_autocommit() {
        let _ = run("ROLLBACK");
    }
    out
}

/// Runs `f` on the connection behind sqlx's `conn`, which the caller holds
/// exclusively: sqlx's worker waits while the handle is locked.
pub(crate) async fn borrowing<R>(
    conn: &mut sqlx::SqliteConnection,
    f: impl FnOnce(&Connection) -> LfResult<R>,
) -> LfResult<R> {
    let mut locked = conn.lock_handle().await.map_err(map_db)?;
    let raw = locked.as_raw_handle();
    // SAFETY: `raw` is an open connection of the same SQLite library (one
    // libsqlite3-sys serves sqlx and rusqlite), and nothing else uses it
    // while `locked` lives, which outlives `borrowed`. A connection made
    // from a handle does not close it when dropped; it only finalizes the
    // statements it prepared.
    let borrowed = unsafe { Connection::from_handle(raw.as_ptr()) }.map_err(map_db)?;
    let out = f(&borrowed);
    drop(borrowed);
    drop(locked);
    out
}

/// Opens the connection that writes on the calling thread, to the file at
/// `path`, whose sqlx writer has opened it (and turned WAL on): with the
/// pragmas of the sqlx connections (foreign keys on, FULL synchronous, the
/// same busy timeout). It runs only while the sqlx writer's turn is held
/// ([`super::Handle::write_direct`]).
pub(crate) fn open_writer(path: &std::path::Path) -> LfResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(map_db)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(map_db)?;
    conn.pragma_update(None, "foreign_keys", true).map_err(map_db)?;
    conn.pragma_update(None, "synchronous", "FULL").map_err(map_db)?;
    conn.set_prepared_statement_cache_capacity(STATEMENTS);
    Ok(conn)
}

/// Runs `f` in a write transaction on `conn` begun with `BEGIN IMMEDIATE`,
/// and commits when it returns `Ok`; on `Err` (or a commit that fails) it
/// rolls back.
pub(crate) fn in_write_transaction<R>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> LfResult<R>,
) -> LfResult<R> {
    in_transaction(conn, "BEGIN IMMEDIATE", || f(conn))
}
