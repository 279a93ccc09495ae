//! What the direct path ([`super::direct`]) binds, reads and runs: a
//! statement's parameters ([`DirectParams`], each a [`Param`] held in
//! place), a row ([`DirectRow`]), the functions that run a statement on a
//! direct connection, and the driver's errors told in sqlx's words, so that
//! [`crate::error`] maps them as it maps sqlx's. Binding and reading them
//! in the stores' words ([`crate::dialect::Bind`],
//! [`crate::dialect::Columns`]) is in `dialect`, beside sqlx's.

use std::os::raw::c_int;

use lf_core::{LfError, LfResult};
use rusqlite::types::{FromSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, RowIndex, ToSql};
use sqlx::error::ErrorKind;

use crate::error::{DbError, Failure, conflict_or, map_db};

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
fn constraint_kind(code: c_int) -> ErrorKind {
    use rusqlite::ffi;
    match code {
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => ErrorKind::UniqueViolation,
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ErrorKind::ForeignKeyViolation,
        ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
        ffi::SQLITE_CONSTRAINT_CHECK => ErrorKind::CheckViolation,
        _ => ErrorKind::Other,
    }
}

/// Each row `sql` answers with `params`, mapped by `f`.
pub(crate) fn rows<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    mut f: impl FnMut(&DirectRow<'_, '_>) -> LfResult<T>,
) -> LfResult<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_db)?;
    let mut rows = stmt.query(params).map_err(map_db)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(map_db)? {
        out.push(f(&DirectRow(row))?);
    }
    Ok(out)
}

/// The first row `sql` answers with `params`, mapped by `f`, if any.
pub(crate) fn first_row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    f: impl FnOnce(&DirectRow<'_, '_>) -> LfResult<T>,
) -> LfResult<Option<T>> {
    let mut stmt = conn.prepare_cached(sql).map_err(map_db)?;
    let mut rows = stmt.query(params).map_err(map_db)?;
    rows.next().map_err(map_db)?.map(|row| f(&DirectRow(row))).transpose()
}

/// The first row `sql` answers with `params`, mapped by `f` (see
/// [`first_row`]).
pub(crate) fn first_row_of<T>(
    conn: &Connection,
    sql: &str,
    params: &DirectParams,
    f: impl FnOnce(&DirectRow<'_, '_>) -> LfResult<T>,
) -> LfResult<Option<T>> {
    first_row(conn, sql, params.by_place(), f)
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
    let mut stmt = conn.prepare_cached(sql).map_err(map_db)?;
    debug_assert!(params.in_order(&stmt), "{sql} numbers its parameters in order of appearance");
    stmt.execute(params.by_place()).map_err(conflict_or(|| LfError::conflict(taken())))
}

/// What a direct connection reads and binds a [`crate::dialect::Value`]
/// with: rusqlite's own decoding, and a [`Param`] binding what sqlx's
/// SQLite driver stores (an id as its 16 bytes, a flag as 0 or 1). (A
/// supertrait of `Value`, so that rusqlite is named in `sqlite/` only.)
pub(crate) trait DirectValue: FromSql {
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
/// dozen columns takes no allocation of its own.
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

impl ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
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

/// The parameters of a statement the direct writer runs, bound (through
/// [`crate::dialect::Bind`]) as the SQLite dialect binds sqlx's, so that
/// each row shape is bound by one function whichever path writes it.
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

    /// These parameters and then `param`.
    pub(crate) fn and(mut self, param: Param) -> Self {
        self.0.push(param);
        self
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

/// A row of a direct reader, read (through [`crate::dialect::Columns`]) as
/// the SQLite dialect reads sqlx's rows, so that each row shape is decoded
/// by one function whichever path read it.
pub(crate) struct DirectRow<'a, 'r>(&'a rusqlite::Row<'r>);

impl DirectRow<'_, '_> {
    /// Column `col` (a position or a name), as rusqlite decodes it.
    pub(crate) fn decode<T: FromSql>(&self, col: impl RowIndex) -> LfResult<T> {
        self.0.get(col).map_err(map_db)
    }

    /// Text column `col`, borrowed from the row.
    pub(crate) fn borrow_text(&self, col: impl RowIndex) -> LfResult<&str> {
        self.0.get_ref(col).and_then(|v| Ok(v.as_str()?)).map_err(map_db)
    }
}

#[cfg(test)]
mod tests {
    use lf_core::ErrorCode;

    use super::*;
    use crate::error::map_db_err;
    use crate::sqlite::Handle;

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

    /// The direct writer's `execute` answers a unique violation as an
    /// insert through sqlx does (`dialect::insert`): CONFLICT saying what
    /// clashed, and nothing of the statement kept.
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
        let params =
            |id: i64, word: &str| DirectParams::new().and(Param::Int(id)).and(Param::Text(word.into()));
        let taken = || "the word is taken".to_owned();
        let (first, clash) = (params(1, "a"), params(2, "a"));
        db.write_direct(move |c| execute(c, insert, &first, taken)).await.unwrap();
        let direct = db.write_direct(move |c| execute(c, insert, &clash, taken)).await.unwrap_err();
        let by_sqlx = db
            .write(async |c| {
                let q = sqlx::query(insert).bind(3_i64).bind("a");
                q.execute(&mut *c).await.map_err(conflict_or(|| LfError::conflict(taken())))?;
                Ok(())
            })
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
