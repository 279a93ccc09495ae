//! How the two backends differ in what they store, in one place, and the
//! few words every store is written in over them.
//!
//! A store's statements and code are written once, generic over a
//! connection of either backend ([`Conn`]). Plain values ([`Value`]: ids,
//! texts, numbers, flags, bytes, each possibly NULL) bind and read as sqlx
//! does on both. What the backends store differently, each spells in its
//! [`Dialect`]: timestamps (INTEGER microseconds on SQLite, `timestamptz` on
//! PostgreSQL) and lists of strings (JSON text, `text[]`). A statement whose
//! text differs (a cast PostgreSQL needs, a row lock SQLite takes by other
//! means, a JSON aggregate) is written in both spellings side by side, as
//! [`Spellings`]. Queries bind with [`Bind`], rows read with [`Columns`],
//! on sqlx's queries and rows and on SQLite's direct path's
//! ([`DirectParams`], [`DirectRow`]) alike, so each row shape is bound and
//! decoded by one function whichever path runs it.

use chrono::{DateTime, Utc};
use lf_core::{LfError, LfResult, Timestamp};
use sqlx::{
    ColumnIndex, Connection, Database, Decode, Encode, Executor, IntoArguments, Postgres, QueryBuilder, Row,
    Sqlite, Type,
};
use uuid::Uuid;

use crate::backend::Backend;
use crate::error::{conflict_or, corrupt, map_db_err};
use crate::sqlite::{DirectParams, DirectRow, DirectValue, Param};

/// A query as `sqlx::query` makes it from a fixed statement.
pub(crate) type Query<DB> = sqlx::query::Query<'static, DB, <DB as Database>::Arguments>;

/// A query of fixed statement `sql`, to bind with [`Bind`].
pub(crate) fn query<DB: Dialect>(sql: &'static str) -> Query<DB> {
    sqlx::query(sql)
}

/// A plain column value: an id, a text, a number (whole or floating), a
/// flag, bytes, or one of
/// them NULL. Both backends bind and read it as sqlx does, and SQLite's
/// direct path reads and binds it too ([`DirectValue`]).
pub(crate) trait Value:
    for<'q> Encode<'q, Sqlite>
    + for<'r> Decode<'r, Sqlite>
    + Type<Sqlite>
    + for<'q> Encode<'q, Postgres>
    + for<'r> Decode<'r, Postgres>
    + Type<Postgres>
    + DirectValue
    + Send
    + 'static
{
}

macro_rules! values {
    ($($t:ty),*) => {
        $(impl Value for $t {}
        impl Value for Option<$t> {})*
    };
}
values!(Uuid, String, i64, f64, bool, Vec<u8>);

/// A column of a result row: by position, or by name. Rows with many
/// columns (lenses) are read by position: a direct reader finds a name by
/// comparing it with every column's, which on a lens row costs more than
/// the read. Rows of a few columns are read by name.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Col<'a> {
    At(usize),
    Named(&'a str),
}

impl From<usize> for Col<'static> {
    fn from(i: usize) -> Self {
        Col::At(i)
    }
}

impl<'a> From<&'a str> for Col<'a> {
    fn from(name: &'a str) -> Self {
        Col::Named(name)
    }
}

impl std::fmt::Display for Col<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Col::At(i) => write!(f, "column {i}"),
            Col::Named(name) => f.write_str(name),
        }
    }
}

/// A backend, as the stores see it. Each backend writes only its spelling:
/// which backend it is, and how it stores a timestamp and a list of strings
/// (`Time`, `Strings` and the four functions that convert them). Binding and
/// reading values in terms of that spelling is the same on both
/// (`as_sqlx_does`). Implemented for sqlx's `Sqlite` and `Postgres`, below,
/// and nothing else.
pub(crate) trait Dialect: Database<Arguments: IntoArguments<Self> + 'static> {
    const BACKEND: Backend;
    /// How a timestamp is stored.
    type Time;
    /// How a list of strings is stored.
    type Strings;
    fn store_time(t: Timestamp) -> Self::Time;
    fn load_time(stored: Self::Time) -> Timestamp;
    fn store_strings(items: &[String]) -> Self::Strings;
    /// The list stored as `stored` in `col` (named in the error of a corrupt
    /// one).
    fn load_strings(col: Col<'_>, stored: Self::Strings) -> LfResult<Vec<String>>;

    fn bind<T: Value>(q: Query<Self>, value: T) -> Query<Self>;
    /// Binds `value` where `qb` stands, for a statement assembled from
    /// fixed fragments (the listings).
    fn push_bind<T: Value>(qb: &mut QueryBuilder<Self>, value: T) -> &mut QueryBuilder<Self>;
    fn bind_time(q: Query<Self>, t: Timestamp) -> Query<Self>;
    fn bind_opt_time(q: Query<Self>, t: Option<Timestamp>) -> Query<Self>;
    fn bind_strings(q: Query<Self>, items: &[String]) -> Query<Self>;
    fn get<T: Value>(row: &Self::Row, col: Col<'_>) -> LfResult<T>;
    /// A text column, borrowed from the row rather than copied.
    fn text<'r>(row: &'r Self::Row, col: Col<'_>) -> LfResult<&'r str>;
    fn time(row: &Self::Row, col: Col<'_>) -> LfResult<Timestamp>;
    fn opt_time(row: &Self::Row, col: Col<'_>) -> LfResult<Option<Timestamp>>;
    fn strings(row: &Self::Row, col: Col<'_>) -> LfResult<Vec<String>>;
    fn rows_affected(done: Self::QueryResult) -> u64;
    /// A connection as an executor, for a store method of several
    /// statements (see [`Conn::exec`]).
    fn exec(conn: &mut Self::Connection) -> impl Executor<'_, Database = Self>;
}

/// A connection of either backend: what every store function takes.
pub(crate) trait Conn: Connection<Database: Dialect<Connection = Self>> {
    /// This connection as an executor, for one statement of several.
    fn exec(&mut self) -> impl Executor<'_, Database = Self::Database> {
        <Self::Database as Dialect>::exec(self)
    }
}

impl<C: Connection<Database: Dialect<Connection = C>>> Conn for C {}

/// Runs `q`, a statement that answers no rows: how many rows it changed.
pub(crate) async fn execute<C: Conn>(conn: &mut C, q: Query<C::Database>) -> LfResult<u64> {
    let done = q.execute(conn.exec()).await.map_err(map_db_err)?;
    Ok(C::Database::rows_affected(done))
}

/// Runs `sql`, a statement of one parameter, `param`, and reads every row
/// it answers with `from_row`.
pub(crate) async fn all_rows<C: Conn, P: Value, T>(
    conn: &mut C,
    sql: &'static str,
    param: P,
    from_row: fn(&<C::Database as Database>::Row) -> LfResult<T>,
) -> LfResult<Vec<T>> {
    rows_of(conn, query::<C::Database>(sql).put(param), from_row).await
}

/// Runs `q` and reads the first row it answers, if any, with `from_row`:
/// a row by its key (within the caller's reach, where the statement checks
/// it), or whether there is one.
pub(crate) async fn row_of<C: Conn, T>(
    conn: &mut C,
    q: Query<C::Database>,
    from_row: impl FnOnce(&<C::Database as Database>::Row) -> LfResult<T>,
) -> LfResult<Option<T>> {
    let row = q.fetch_optional(conn.exec()).await.map_err(map_db_err)?;
    row.as_ref().map(from_row).transpose()
}

/// Runs `q` and reads every row it answers with `from_row`.
pub(crate) async fn rows_of<C: Conn, T>(
    conn: &mut C,
    q: Query<C::Database>,
    from_row: impl Fn(&<C::Database as Database>::Row) -> LfResult<T>,
) -> LfResult<Vec<T>> {
    let rows = q.fetch_all(conn.exec()).await.map_err(map_db_err)?;
    rows.iter().map(from_row).collect()
}

/// Runs the insert `q`; a unique violation is CONFLICT saying `taken()`,
/// what clashed.
pub(crate) async fn insert<C: Conn>(
    conn: &mut C,
    q: Query<C::Database>,
    taken: impl FnOnce() -> String,
) -> LfResult<()> {
    q.execute(conn.exec()).await.map_err(conflict_or(|| LfError::conflict(taken())))?;
    Ok(())
}

/// A statement that the backends spell differently, in both spellings.
/// Each spelling is a fixed text; [`Spellings::of`] picks the one of the
/// backend a query runs on.
pub(crate) struct Spellings {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

impl Spellings {
    pub(crate) fn of<DB: Dialect>(&self) -> &'static str {
        match DB::BACKEND {
            Backend::Sqlite => self.sqlite,
            Backend::Postgres => self.postgres,
        }
    }
}

/// The [`Spellings`] of the statement macro `$stmt`, which takes the
/// backend (`sqlite` or `postgres`) as its first argument, then `$arg`s.
macro_rules! spelled {
    ($stmt:ident $(, $arg:tt)*) => {
        $crate::dialect::Spellings { sqlite: $stmt!(sqlite $(, $arg)*), postgres: $stmt!(postgres $(, $arg)*) }
    };
}
pub(crate) use spelled;

/// [`Dialect`]'s binds as methods of a query, in the order of its
/// parameters.
pub(crate) trait Bind: Sized {
    fn put<T: Value>(self, value: T) -> Self;
    fn put_time(self, t: Timestamp) -> Self;
    fn put_opt_time(self, t: Option<Timestamp>) -> Self;
    fn put_strings(self, items: &[String]) -> Self;
    /// A text the code spells (or NULL): the direct writer binds it in
    /// place, without a copy.
    fn put_word(self, word: Option<&'static str>) -> Self {
        self.put(word.map(str::to_owned))
    }
}

impl<DB: Dialect> Bind for Query<DB> {
    fn put<T: Value>(self, value: T) -> Self {
        DB::bind(self, value)
    }

    fn put_time(self, t: Timestamp) -> Self {
        DB::bind_time(self, t)
    }

    fn put_opt_time(self, t: Option<Timestamp>) -> Self {
        DB::bind_opt_time(self, t)
    }

    fn put_strings(self, items: &[String]) -> Self {
        DB::bind_strings(self, items)
    }
}

/// The direct path binds as the SQLite dialect binds sqlx's queries.
impl Bind for DirectParams {
    fn put<T: Value>(self, value: T) -> Self {
        self.and(value.into_param())
    }

    fn put_word(self, word: Option<&'static str>) -> Self {
        self.and(word.map_or(Param::Null, Param::Word))
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

/// [`Dialect`]'s reads as methods of a result row, from sqlx or from a
/// SQLite direct reader.
pub(crate) trait Columns {
    fn value<'c, T: Value>(&self, col: impl Into<Col<'c>>) -> LfResult<T>;
    fn text<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<&str>;
    fn time<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Timestamp>;
    fn opt_time<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Option<Timestamp>>;
    fn strings<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Vec<String>>;
}

impl<R: Row<Database: Dialect>> Columns for R {
    fn value<'c, T: Value>(&self, col: impl Into<Col<'c>>) -> LfResult<T> {
        R::Database::get(self, col.into())
    }

    fn text<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<&str> {
        R::Database::text(self, col.into())
    }

    fn time<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Timestamp> {
        R::Database::time(self, col.into())
    }

    fn opt_time<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Option<Timestamp>> {
        R::Database::opt_time(self, col.into())
    }

    fn strings<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<Vec<String>> {
        R::Database::strings(self, col.into())
    }
}

/// The direct path reads as the SQLite dialect reads sqlx's rows.
impl Columns for DirectRow<'_, '_> {
    fn value<'c, T: Value>(&self, col: impl Into<Col<'c>>) -> LfResult<T> {
        match col.into() {
            Col::At(i) => self.decode(i),
            Col::Named(name) => self.decode(name),
        }
    }

    fn text<'c>(&self, col: impl Into<Col<'c>>) -> LfResult<&str> {
        match col.into() {
            Col::At(i) => self.borrow_text(i),
            Col::Named(name) => self.borrow_text(name),
        }
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

/// Column `col` of an sqlx row, as sqlx decodes it.
fn get<'r, R, T>(row: &'r R, col: Col<'_>) -> LfResult<T>
where
    R: Row,
    T: Decode<'r, R::Database> + Type<R::Database>,
    usize: ColumnIndex<R>,
    for<'n> &'n str: ColumnIndex<R>,
{
    match col {
        Col::At(i) => row.try_get(i),
        Col::Named(name) => row.try_get(name),
    }
    .map_err(map_db_err)
}

/// A list of strings as JSON text: how SQLite stores one, and how both
/// backends store the lists inside a row (parameter options, a run's
/// parameters), in JSON columns.
pub(crate) fn json_strings(items: &[String]) -> String {
    serde_json::Value::from(items).to_string()
}

/// The methods of [`Dialect`] that both backends implement alike: as sqlx
/// does, in terms of the backend's spelling. (A macro, not default methods:
/// only the concrete backend can name the sqlx bounds they need.)
macro_rules! as_sqlx_does {
    () => {
        fn bind<T: Value>(q: Query<Self>, value: T) -> Query<Self> {
            q.bind(value)
        }

        fn push_bind<T: Value>(qb: &mut QueryBuilder<Self>, value: T) -> &mut QueryBuilder<Self> {
            qb.push_bind(value)
        }

        fn bind_time(q: Query<Self>, t: Timestamp) -> Query<Self> {
            q.bind(Self::store_time(t))
        }

        fn bind_opt_time(q: Query<Self>, t: Option<Timestamp>) -> Query<Self> {
            q.bind(t.map(Self::store_time))
        }

        fn bind_strings(q: Query<Self>, items: &[String]) -> Query<Self> {
            q.bind(Self::store_strings(items))
        }

        fn get<T: Value>(row: &Self::Row, col: Col<'_>) -> LfResult<T> {
            get(row, col)
        }

        fn text<'r>(row: &'r Self::Row, col: Col<'_>) -> LfResult<&'r str> {
            get(row, col)
        }

        fn time(row: &Self::Row, col: Col<'_>) -> LfResult<Timestamp> {
            get(row, col).map(Self::load_time)
        }

        fn opt_time(row: &Self::Row, col: Col<'_>) -> LfResult<Option<Timestamp>> {
            Ok(get::<_, Option<Self::Time>>(row, col)?.map(Self::load_time))
        }

        fn strings(row: &Self::Row, col: Col<'_>) -> LfResult<Vec<String>> {
            Self::load_strings(col, get(row, col)?)
        }

        fn rows_affected(done: Self::QueryResult) -> u64 {
            done.rows_affected()
        }

        fn exec(conn: &mut Self::Connection) -> impl Executor<'_, Database = Self> {
            conn
        }
    };
}

/// Timestamps are INTEGER microseconds since the epoch, lists of strings
/// JSON text; rows lock by the write transaction's `BEGIN IMMEDIATE`.
impl Dialect for Sqlite {
    const BACKEND: Backend = Backend::Sqlite;
    type Time = i64;
    type Strings = String;

    fn store_time(t: Timestamp) -> i64 {
        t.as_micros()
    }

    fn load_time(stored: i64) -> Timestamp {
        Timestamp::from_micros(stored)
    }

    fn store_strings(items: &[String]) -> String {
        json_strings(items)
    }

    fn load_strings(col: Col<'_>, stored: String) -> LfResult<Vec<String>> {
        serde_json::from_str(&stored).map_err(|e| corrupt(format!("{col}: {e}")))
    }

    as_sqlx_does!();
}

/// Timestamps are `timestamptz`, lists of strings `text[]`; rows lock with
/// `SELECT … FOR UPDATE`.
impl Dialect for Postgres {
    const BACKEND: Backend = Backend::Postgres;
    type Time = DateTime<Utc>;
    type Strings = Vec<String>;

    fn store_time(t: Timestamp) -> DateTime<Utc> {
        t.to_datetime()
    }

    fn load_time(stored: DateTime<Utc>) -> Timestamp {
        Timestamp::from_datetime(stored)
    }

    fn store_strings(items: &[String]) -> Vec<String> {
        items.to_vec()
    }

    fn load_strings(_: Col<'_>, stored: Vec<String>) -> LfResult<Vec<String>> {
        Ok(stored)
    }

    as_sqlx_does!();
}
