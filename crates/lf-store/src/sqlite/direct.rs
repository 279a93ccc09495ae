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
//!
//! The reads every call repeats also keep their answers in a
//! [`ReadCache`], for as long as the tables they read have not changed:
//! see [`DirectReaders::run_cached`].

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use lf_core::{LfError, LfResult, Timestamp};
use rusqlite::{Connection, OpenFlags};

use super::BUSY_TIMEOUT;
use sqlx::Sqlite;

use crate::dialect::{Col, Columns, Dialect, Value};
use crate::error::{DbError, Failure, conflict_or, map_db};
use sqlx::error::ErrorKind;

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
        let conn = Connection::open_with_flags(&self.path, flags).map_err(map_direct_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(map_direct_err)?;
        conn.pragma_update(None, "query_only", true).map_err(map_direct_err)?;
        // Pages straight from the OS's cache instead of a copy into each
        // connection's own (2 MB by default, a few thousand lenses' worth).
        conn.pragma_update(None, "mmap_size", MMAP_BYTES).map_err(map_direct_err)?;
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
        let mut stmt = reader.conn.prepare_cached(CACHED_READS_GENERATION).map_err(map_direct_err)?;
        let now: i64 = stmt.query_row([], |row| row.get(0)).map_err(map_direct_err)?;
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

/// Answers of one kind of point read, kept for as long as the tables the
/// cached reads read do not change (see [`DirectReaders::run_cached`]), up
/// to a budget of bytes.
///
/// Any change to one of those tables starts a new generation and forgets
/// every answer: no answer is told apart from the rows it came from, so none is
/// kept past a change to any of them. A full cache forgets half of what it
/// holds.
pub(crate) struct ReadCache<K, V> {
    state: Mutex<CacheState<K, V>>,
    /// The most the kept answers may weigh, in bytes.
    budget: usize,
    /// About how many bytes an answer holds (its strings), besides its key
    /// and its own size, which every entry is counted with.
    weigh: fn(&V) -> usize,
}

struct CacheState<K, V> {
    /// The generation every entry was read in.
    generation: u64,
    entries: HashMap<K, V, foldhash::fast::RandomState>,
    /// What the entries weigh together.
    weight: usize,
}

impl<K: Hash + Eq, V: Clone> ReadCache<K, V> {
    pub(crate) fn new(budget: usize, weigh: fn(&V) -> usize) -> Self {
        let state = CacheState { generation: 0, entries: HashMap::default(), weight: 0 };
        Self { state: Mutex::new(state), budget, weigh }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CacheState<K, V>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn weight_of(&self, value: &V) -> usize {
        std::mem::size_of::<(K, V)>() + (self.weigh)(value)
    }

    /// Forgets every other entry, the first included, in the map's order
    /// (which has nothing to do with when or how often they were read): a
    /// full cache makes room without losing everything it holds.
    fn drop_half(&self, state: &mut CacheState<K, V>) {
        let mut keep = true;
        let mut dropped = 0;
        state.entries.retain(|_, value| {
            keep = !keep;
            if !keep {
                dropped += self.weight_of(value);
            }
            keep
        });
        state.weight -= dropped;
    }

    /// The answer kept for `key` in `generation`, if any.
    fn get(&self, generation: u64, key: &K) -> Option<V> {
        let state = self.state();
        if state.generation != generation {
            return None;
        }
        state.entries.get(key).cloned()
    }

    /// Keeps `value`, read in `generation`, unless a newer generation has
    /// begun since or it alone weighs more than the budget.
    fn put(&self, generation: u64, key: K, value: V) {
        let weight = self.weight_of(&value);
        if weight > self.budget {
            return;
        }
        let mut state = self.state();
        if generation < state.generation {
            return;
        }
        if generation > state.generation {
            state.entries.clear();
            state.weight = 0;
            state.generation = generation;
        }
        while state.weight + weight > self.budget {
            self.drop_half(&mut state);
        }
        state.weight += weight;
        if let Some(old) = state.entries.insert(key, value) {
            state.weight -= self.weight_of(&old);
        }
    }
}

/// Runs `f` in one transaction on `conn`, begun with `begin` (`BEGIN` to
/// read: every statement of `f` sees the database as it was when the first
/// began; `BEGIN IMMEDIATE` to write): committed when `f` returns `Ok`,
/// rolled back when it or the commit fails (a panic drops the connection).
fn in_transaction<R>(conn: &Connection, begin: &str, f: impl FnOnce() -> LfResult<R>) -> LfResult<R> {
    let run = |sql| conn.prepare_cached(sql).and_then(|mut stmt| stmt.execute([])).map_err(map_direct_err);
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

/// A rusqlite error as the domain's, mapped as sqlx's are
/// ([`crate::error::map_db`]).
pub(crate) fn map_direct_err(e: rusqlite::Error) -> LfError {
    map_db(e)
}

impl DbError for rusqlite::Error {
    fn failure(&self) -> Failure {
        match self {
            rusqlite::Error::QueryReturnedNoRows => Failure::NoRow,
            rusqlite::Error::SqliteFailure(e, _) => Failure::Refused(constraint_kind(e.extended_code)),
            _ => Failure::Other,
        }
    }
}

/// The constraint SQLite's extended result code `code` reports as sqlx's
/// SQLite driver tells it (its `SqliteError::kind`): the tests below hold
/// both paths' errors to one mapping.
fn constraint_kind(code: std::os::raw::c_int) -> ErrorKind {
    use rusqlite::ffi;
    match code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => ErrorKind::UniqueViolation,
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ErrorKind::ForeignKeyViolation,
        ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
        ffi::SQLITE_CONSTRAINT_CHECK => ErrorKind::CheckViolation,
        _ => ErrorKind::Other,
    }
}

/// What a direct connection reads and binds a [`Value`] with: rusqlite's
/// own decoding, and a [`Param`] binding what sqlx's SQLite driver stores
/// (an id as its 16 bytes, a flag as 0 or 1). (A supertrait of [`Value`],
/// so that rusqlite is named here only.)
pub(crate) trait DirectValue: rusqlite::types::FromSql {
    /// The value as a parameter, moved in.
    fn into_param(self) -> Param;
}

macro_rules! direct_values {
    ($($t:ty => |$v:ident| $param:expr),* $(,)?) => {
        $(impl DirectValue for $t {
            fn into_param(self) -> Param {
                let $v = self;
                $param
            }
        }

        impl DirectValue for Option<$t> {
            fn into_param(self) -> Param {
                self.map_or(Param::Null, DirectValue::into_param)
            }
        })*
    };
}

direct_values!(
    uuid::Uuid => |v| Param::Id(v),
    String => |v| Param::Text(v),
    i64 => |v| Param::Int(v),
    f64 => |v| Param::Real(v),
    bool => |v| Param::Int(i64::from(v)),
    Vec<u8> => |v| Param::Blob(v),
);

/// One parameter of a [`DirectParams`], held in place: binding a row of a
/// dozen columns takes no allocation of its own (a boxed `ToSql` each did,
/// which showed in the profile of the action log's batched writes).
pub(crate) enum Param {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// A text the code spells (a safety class, an outcome, an error code).
    Word(&'static str),
    Blob(Vec<u8>),
    Id(uuid::Uuid),
}

impl rusqlite::types::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::ValueRef;
        Ok(rusqlite::types::ToSqlOutput::Borrowed(match self {
            Param::Null => ValueRef::Null,
            Param::Int(i) => ValueRef::Integer(*i),
            Param::Real(f) => ValueRef::Real(*f),
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Word(s) => ValueRef::Text(s.as_bytes()),
            Param::Blob(b) => ValueRef::Blob(b),
            Param::Id(id) => ValueRef::Blob(id.as_bytes()),
        }))
    }
}

/// The parameters of a statement the direct writer runs, bound as the
/// SQLite [`Dialect`] binds sqlx's, so that each row shape is bound by one
/// function whichever path writes it.
#[derive(Default)]
pub(crate) struct DirectParams(Vec<Param>);

impl DirectParams {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Room for `n` parameters.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    /// The parameters, bound by place.
    fn by_place(&self) -> impl rusqlite::Params + '_ {
        rusqlite::params_from_iter(self.0.iter())
    }

    /// Whether `stmt` takes as many parameters as these, each `?` or `$n`
    /// at its place `n`: what binding by place takes (the stores' fixed
    /// statements number theirs in order of appearance, none twice).
    fn in_order(&self, stmt: &rusqlite::Statement<'_>) -> bool {
        stmt.parameter_count() == self.0.len()
            && (1..=self.0.len()).all(|i| stmt.parameter_name(i).is_none_or(|name| name == format!("${i}")))
    }
}

impl crate::dialect::Bind for DirectParams {
    fn put<T: Value>(mut self, value: T) -> Self {
        self.0.push(value.into_param());
        self
    }

    fn put_word(mut self, word: Option<&'static str>) -> Self {
        self.0.push(word.map_or(Param::Null, Param::Word));
        self
    }

    fn put_time(self, t: Timestamp) -> Self {
        self.put(Sqlite::store_time(t))
    }

    fn put_opt_time(self, t: Option<Timestamp>) -> Self {
        self.put(t.map(Sqlite::store_time))
    }

    fn put_strings(self, items: &[String]) -> Self {
        self.put(Sqlite::store_strings(items))
    }
}

/// Runs the statement `sql` with `params` on `conn`: the rows it changed.
/// A unique violation is CONFLICT saying `taken()`, what clashed, as
/// [`crate::dialect::insert`] has it.
pub(crate) fn execute(
    conn: &Connection,
    sql: &str,
    params: &DirectParams,
    taken: impl FnOnce() -> String,
) -> LfResult<usize> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_direct_err)?;
    debug_assert!(params.in_order(&stmt), "{sql} numbers its parameters in order of appearance");
    stmt.execute(params.by_place()).map_err(conflict_or(|| LfError::conflict(taken())))
}

/// The first row `sql` answers with `params`, mapped by `f` (see
/// [`first_row`]).
pub(crate) fn first_row_of<T>(
    conn: &Connection,
    sql: &str,
    params: &DirectParams,
    f: impl FnOnce(&rusqlite::Row<'_>) -> LfResult<T>,
) -> LfResult<Option<T>> {
    first_row(conn, sql, params.by_place(), f)
}

/// Opens the connection that writes on the calling thread, to the file at
/// `path`, whose sqlx writer has opened it (and turned WAL on): with the
/// pragmas of the sqlx connections (foreign keys on, FULL synchronous, the
/// same busy timeout). It runs only while the sqlx writer's turn is held
/// ([`super::Handle::write_direct`]).
pub(crate) fn open_writer(path: &std::path::Path) -> LfResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(map_direct_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(map_direct_err)?;
    conn.pragma_update(None, "foreign_keys", true).map_err(map_direct_err)?;
    conn.pragma_update(None, "synchronous", "FULL").map_err(map_direct_err)?;
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

/// A row of a direct reader, read as the SQLite [`Dialect`] reads sqlx's
/// rows, so that each row shape is decoded by one function whichever path
/// read it.
pub(crate) struct DirectRow<'a, 'r>(pub(crate) &'a rusqlite::Row<'r>);

impl DirectRow<'_, '_> {
    fn get_ref(&self, col: Col<'_>) -> rusqlite::Result<rusqlite::types::ValueRef<'_>> {
        match col {
            Col::At(i) => self.0.get_ref(i),
            Col::Named(name) => self.0.get_ref(name),
        }
    }
}

impl Columns for DirectRow<'_, '_> {
    fn value<'c, T: Value>(&self, col: impl Into<Col<'c>>) -> LfResult<T> {
        match col.into() {
            Col::At(i) => self.0.get(i),
            Col::Named(name) => self.0.get(name),
        }
        .map_err(map_direct_err)
    }

    fn text<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<&str> {
        self.get_ref(col.into()).and_then(|v| Ok(v.as_str()?)).map_err(map_direct_err)
    }

    fn time<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Timestamp> {
        self.value(col).map(Sqlite::load_time)
    }

    fn opt_time<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Option<Timestamp>> {
        Ok(self.value::<Option<<Sqlite as Dialect>::Time>>(col)?.map(Sqlite::load_time))
    }

    fn strings<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Vec<String>> {
        let col = col.into();
        Sqlite::load_strings(col, self.value(col)?)
    }
}

#[cfg(test)]
mod tests {
    use lf_core::ErrorCode;

    use super::*;
    use crate::dialect::{Bind, insert as insert_by_sqlx, query};
    use crate::error::map_db_err;
    use crate::sqlite::Handle;

    /// Entries weigh their key and value plus their strings; what would pass
    /// the budget makes room by dropping half the entries, what alone passes
    /// it is not kept, and an answer read in an older generation is not kept
    /// either.
    #[test]
    fn the_cache_keeps_to_its_budget_and_its_generation() {
        let entry = std::mem::size_of::<(u32, String)>();
        let cache = ReadCache::new(3 * entry + 30, String::len);
        let kept = |keys: &[u32]| keys.iter().map(|k| cache.get(1, k).is_some()).collect::<Vec<_>>();
        for k in 0..3 {
            cache.put(1, k, "0123456789".to_owned());
        }
        assert_eq!(kept(&[0, 1, 2]), [true; 3]);
        assert_eq!(cache.get(1, &0).as_deref(), Some("0123456789"));
        cache.put(1, 3, "x".to_owned());
        let left = kept(&[0, 1, 2]).into_iter().filter(|k| *k).count();
        assert_eq!((left, cache.get(1, &3).is_some()), (1, true), "two of three dropped to make room");
        cache.put(1, 4, "y".repeat(3 * entry + 30));
        assert_eq!(kept(&[3, 4]), [true, false], "too heavy alone");
        cache.put(0, 5, "old".to_owned());
        assert_eq!(kept(&[3, 5]), [true, false], "read in an older generation");
        assert_eq!(cache.get(2, &3), None, "not in a newer generation");
        cache.put(2, 6, "new".to_owned());
        assert_eq!((cache.get(1, &3), cache.get(2, &6).as_deref()), (None, Some("new")));
        // Replacing an entry counts its weight once.
        for _ in 0..10 {
            cache.put(2, 6, "0123456789".to_owned());
        }
        cache.put(2, 7, "0123456789".to_owned());
        assert_eq!((cache.get(2, &6).is_some(), cache.get(2, &7).is_some()), (true, true));
    }

    /// Every constraint a statement can break, and one statement that
    /// fails otherwise: the direct path's error is the sqlx path's, code
    /// and message, on the writer of a file and in memory. A unique or
    /// primary key violation is CONFLICT, the rest INTERNAL.
    #[tokio::test]
    async fn both_paths_map_a_refused_statement_alike() {
        let dir = tempfile::tempdir().unwrap();
        let file = format!("sqlite://{}", dir.path().join("lf.db").display());
        let violations = [
            ("INSERT INTO parent VALUES (1)", ErrorCode::Conflict),
            ("INSERT INTO child (id, parent, name, n) VALUES (1, 1, 'a', 1)", ErrorCode::Conflict),
            ("INSERT INTO child (id, parent, name, n) VALUES (2, 1, 'taken', 1)", ErrorCode::Conflict),
            ("INSERT INTO child (id, parent, name, n) VALUES (2, 9, 'b', 1)", ErrorCode::Internal),
            ("INSERT INTO child (id, parent, name, n) VALUES (2, 1, NULL, 1)", ErrorCode::Internal),
            ("INSERT INTO child (id, parent, name, n) VALUES (2, 1, 'b', -1)", ErrorCode::Internal),
            ("INSERT INTO nowhere VALUES (1)", ErrorCode::Internal),
        ];
        for url in [file.as_str(), "sqlite::memory:"] {
            let db = Handle::open(url).await.unwrap();
            db.write(async |c| {
                for sql in [
                    "CREATE TABLE parent (id INTEGER PRIMARY KEY)",
                    "CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES parent(id), \
                     name TEXT NOT NULL UNIQUE, n INTEGER CHECK (n >= 0))",
                    "INSERT INTO parent VALUES (1)",
                    "INSERT INTO child (id, parent, name, n) VALUES (1, 1, 'taken', 1)",
                ] {
                    sqlx::query(sql).execute(&mut *c).await.map_err(map_db_err)?;
                }
                Ok(())
            })
            .await
            .unwrap();
            let shown = |e: LfError| (e.code(), e.message().to_owned());
            for (sql, code) in violations {
                let by_sqlx = db
                    .write(async |c| sqlx::query(sql).execute(&mut *c).await.map(|_| ()).map_err(map_db_err))
                    .await
                    .map_err(shown);
                let direct = db.write_direct(move |c| c.execute(sql, []).map(|_| ()).map_err(map_db)).await;
                assert_eq!(direct.map_err(shown), by_sqlx, "{url}: {sql}");
                assert_eq!(by_sqlx.err().map(|(c, _)| c), Some(code), "{url}: {sql}");
            }
            db.close().await;
        }
    }

    /// The direct writer's `execute` answers a unique violation as
    /// `dialect::insert` does on sqlx: CONFLICT saying what clashed, and
    /// nothing of the statement kept.
    #[tokio::test]
    async fn the_direct_writer_answers_conflict_for_a_unique_violation() {
        let dir = tempfile::tempdir().unwrap();
        let db = Handle::open(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
        db.write(async |c| {
            sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY, word TEXT UNIQUE)")
                .execute(&mut *c)
                .await
                .map_err(map_db_err)?;
            Ok(())
        })
        .await
        .unwrap();
        let insert = "INSERT INTO t (id, word) VALUES ($1, $2)";
        let params = |id: i64, word: &str| DirectParams::new().put(id).put(word.to_owned());
        let taken = || "the word is taken".to_owned();
        let (first, clash) = (params(1, "a"), params(2, "a"));
        db.write_direct(move |c| execute(c, insert, &first, taken)).await.unwrap();
        let direct = db.write_direct(move |c| execute(c, insert, &clash, taken)).await.unwrap_err();
        let by_sqlx = db
            .write(async |c| insert_by_sqlx(c, query(insert).put(3_i64).put("a".to_owned()), taken).await)
            .await
            .unwrap_err();
        assert_eq!(direct.code(), ErrorCode::Conflict);
        assert_eq!((direct.code(), direct.message()), (by_sqlx.code(), by_sqlx.message()));
        assert_eq!(direct.message(), "the word is taken");
        let n: i64 = db
            .reading(async |c| {
                Ok(sqlx::query_scalar("SELECT count(*) FROM t").fetch_one(&mut *c).await.unwrap())
            })
            .await
            .unwrap();
        assert_eq!(n, 1);
        db.close().await;
    }
}
