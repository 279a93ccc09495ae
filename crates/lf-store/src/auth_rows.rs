//! Conversions between stored auth values and lf-auth's types, shared by
//! both backends. Reading back is strict: a value lf-auth would refuse is a
//! corrupt row (INTERNAL).
//!
//! Both backends store the same columns; they differ only in timestamps and
//! lists of strings, which each spells in its [`Dialect`]. Everything else
//! binds and reads as sqlx does, so the record mappers and binders below
//! serve both.

use lf_auth::{
    ClientId, CodeRecord, FamilyId, Handle, Lenser, LenserRecord, OAuthClient, RefreshRecord, SecretHash,
    TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfResult, Scopes, Timestamp};
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, Type};
use uuid::Uuid;

use crate::error::{corrupt, map_db_err};

/// A query as `sqlx::query` makes it from a fixed statement.
pub(crate) type Query<DB> = sqlx::query::Query<'static, DB, <DB as Database>::Arguments>;

/// A value type that `DB` binds and reads as sqlx does.
pub(crate) trait Holds<T>: Database {
    fn bind(q: Query<Self>, value: T) -> Query<Self>;
    fn read(row: &Self::Row, column: &str) -> LfResult<T>;
}

impl<DB, T> Holds<T> for DB
where
    DB: Database,
    T: for<'e> Encode<'e, DB> + for<'r> Decode<'r, DB> + Type<DB>,
    for<'c> &'c str: ColumnIndex<DB::Row>,
{
    fn bind(q: Query<DB>, value: T) -> Query<DB> {
        q.bind(value)
    }

    fn read(row: &DB::Row, column: &str) -> LfResult<T> {
        row.try_get(column).map_err(map_db_err)
    }
}

/// How a backend stores the values of the auth tables: the plain ones as
/// sqlx does ([`Holds`]), timestamps and lists of strings its own way.
pub(crate) trait Dialect:
    Database<Arguments: IntoArguments<Self> + 'static>
    + Holds<String>
    + Holds<Option<String>>
    + Holds<Uuid>
    + Holds<Option<Uuid>>
    + Holds<Vec<u8>>
{
    /// The statement of `list_tokens`: its NULL tests need casts on
    /// PostgreSQL.
    const LIST_TOKENS: &'static str;
    fn bind_time(q: Query<Self>, t: Timestamp) -> Query<Self>;
    fn bind_opt_time(q: Query<Self>, t: Option<Timestamp>) -> Query<Self>;
    fn bind_strings(q: Query<Self>, items: &[String]) -> Query<Self>;
    fn time(row: &Self::Row, column: &str) -> LfResult<Timestamp>;
    fn opt_time(row: &Self::Row, column: &str) -> LfResult<Option<Timestamp>>;
    fn strings(row: &Self::Row, column: &str) -> LfResult<Vec<String>>;
    fn rows_affected(result: Self::QueryResult) -> u64;
    /// A connection as an executor, for a write of several statements.
    fn exec(conn: &mut Self::Connection) -> impl Executor<'_, Database = Self>;
}

/// [`Dialect`]'s binds as methods of a query, in the order of its parameters.
pub(crate) trait Bind {
    type Db: Dialect;
    fn put<T>(self, value: T) -> Self
    where
        Self::Db: Holds<T>;
    fn put_time(self, t: Timestamp) -> Self;
    fn put_opt_time(self, t: Option<Timestamp>) -> Self;
    fn put_strings(self, items: &[String]) -> Self;
}

impl<DB: Dialect> Bind for Query<DB> {
    type Db = DB;

    fn put<T>(self, value: T) -> Self
    where
        DB: Holds<T>,
    {
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

/// [`Dialect`]'s reads as methods of a row, by column name.
pub(crate) trait Columns {
    type Db: Dialect;
    /// (Every value type is also one rusqlite reads: SQLite's direct readers
    /// map rows with the same functions, see `sqlite::direct`.)
    fn value<T>(&self, column: &str) -> LfResult<T>
    where
        Self::Db: Holds<T>,
        T: rusqlite::types::FromSql;
    fn time(&self, column: &str) -> LfResult<Timestamp>;
    fn opt_time(&self, column: &str) -> LfResult<Option<Timestamp>>;
    fn strings(&self, column: &str) -> LfResult<Vec<String>>;
}

impl<R: Row<Database: Dialect>> Columns for R {
    type Db = R::Database;

    fn value<T>(&self, column: &str) -> LfResult<T>
    where
        R::Database: Holds<T>,
        T: rusqlite::types::FromSql,
    {
        <R::Database as Holds<T>>::read(self, column)
    }

    fn time(&self, column: &str) -> LfResult<Timestamp> {
        R::Database::time(self, column)
    }

    fn opt_time(&self, column: &str) -> LfResult<Option<Timestamp>> {
        R::Database::opt_time(self, column)
    }

    fn strings(&self, column: &str) -> LfResult<Vec<String>> {
        R::Database::strings(self, column)
    }
}

/// The stored form of a token's scopes: `read` or `read write`.
pub(crate) fn scopes_text(scopes: Scopes) -> String {
    lf_auth::format_scope(scopes)
}

pub(crate) fn scopes(s: &str) -> LfResult<Scopes> {
    match s {
        "read" => Ok(Scopes::READ),
        "read write" => Ok(Scopes::READ_WRITE),
        other => Err(corrupt(format!("scopes {other:?}"))),
    }
}

pub(crate) fn secret_hash(bytes: &[u8]) -> LfResult<SecretHash> {
    SecretHash::from_slice(bytes).ok_or_else(|| corrupt(format!("a secret hash of {} bytes", bytes.len())))
}

/// The stored form of a secret hash.
pub(crate) fn hash_bytes(hash: &SecretHash) -> Vec<u8> {
    hash.as_bytes().to_vec()
}

pub(crate) fn client_id(s: &str) -> LfResult<ClientId> {
    ClientId::parse(s).ok_or_else(|| corrupt(format!("client id {s:?}")))
}

pub(crate) fn handle(s: &str) -> LfResult<Handle> {
    Handle::parse(s).map_err(|_| corrupt(format!("handle {s:?}")))
}

fn hash_of<R: Columns>(row: &R, column: &str) -> LfResult<SecretHash> {
    secret_hash(&row.value::<Vec<u8>>(column)?)
}

/// A `lensers` row.
pub(crate) fn lenser_record<R: Columns>(row: &R) -> LfResult<LenserRecord> {
    Ok(LenserRecord {
        lenser: Lenser {
            id: LenserId::from_uuid(row.value("id")?),
            handle: handle(&row.value::<String>("handle")?)?,
            created_at: row.time("created_at")?,
        },
        password_hash: row.value("password_hash")?,
    })
}

/// An `access_tokens` row.
pub(crate) fn token_record<R: Columns>(row: &R) -> LfResult<TokenRecord> {
    Ok(TokenRecord {
        hash: hash_of(row, "token_hash")?,
        info: TokenInfo {
            id: TokenId::from_uuid(row.value("id")?),
            lenser: LenserId::from_uuid(row.value("lenser_id")?),
            scopes: scopes(&row.value::<String>("scopes")?)?,
            client_id: row.value::<Option<String>>("client_id")?.as_deref().map(client_id).transpose()?,
            family_id: row.value::<Option<Uuid>>("family_id")?.map(FamilyId::from_uuid),
            resource: row.value("resource")?,
            label: row.value("label")?,
            created_at: row.time("created_at")?,
            expires_at: row.opt_time("expires_at")?,
            revoked_at: row.opt_time("revoked_at")?,
            last_used_at: row.opt_time("last_used_at")?,
        },
    })
}

/// An `oauth_codes` row.
pub(crate) fn code_record<R: Columns>(row: &R) -> LfResult<CodeRecord> {
    Ok(CodeRecord {
        hash: hash_of(row, "code_hash")?,
        client_id: client_id(&row.value::<String>("client_id")?)?,
        lenser: LenserId::from_uuid(row.value("lenser_id")?),
        redirect_uri: row.value("redirect_uri")?,
        code_challenge: row.value("code_challenge")?,
        scopes: scopes(&row.value::<String>("scopes")?)?,
        resource: row.value("resource")?,
        family_id: FamilyId::from_uuid(row.value("family_id")?),
        created_at: row.time("created_at")?,
        expires_at: row.time("expires_at")?,
        used_at: row.opt_time("used_at")?,
    })
}

/// A `refresh_tokens` row.
pub(crate) fn refresh_record<R: Columns>(row: &R) -> LfResult<RefreshRecord> {
    Ok(RefreshRecord {
        id: TokenId::from_uuid(row.value("id")?),
        hash: hash_of(row, "token_hash")?,
        family_id: FamilyId::from_uuid(row.value("family_id")?),
        client_id: client_id(&row.value::<String>("client_id")?)?,
        lenser: LenserId::from_uuid(row.value("lenser_id")?),
        scopes: scopes(&row.value::<String>("scopes")?)?,
        resource: row.value("resource")?,
        created_at: row.time("created_at")?,
        expires_at: row.time("expires_at")?,
        used_at: row.opt_time("used_at")?,
        revoked_at: row.opt_time("revoked_at")?,
    })
}

/// An `oauth_clients` row.
pub(crate) fn client_record<R: Columns>(row: &R) -> LfResult<OAuthClient> {
    Ok(OAuthClient {
        id: client_id(&row.value::<String>("id")?)?,
        name: row.value("name")?,
        redirect_uris: row.strings("redirect_uris")?,
        created_at: row.time("created_at")?,
    })
}

/// Binds the columns of an `access_tokens` row, in table order.
pub(crate) fn bind_token<Q: Bind>(q: Q, t: &TokenRecord) -> Q {
    let i = &t.info;
    q.put(i.id.as_uuid())
        .put(hash_bytes(&t.hash))
        .put(i.lenser.as_uuid())
        .put(scopes_text(i.scopes))
        .put(i.client_id.as_ref().map(|c| c.as_str().to_owned()))
        .put(i.family_id.map(|f| f.as_uuid()))
        .put(i.resource.clone())
        .put(i.label.clone())
        .put_time(i.created_at)
        .put_opt_time(i.expires_at)
        .put_opt_time(i.revoked_at)
        .put_opt_time(i.last_used_at)
}

/// Binds the columns of a `refresh_tokens` row, in table order.
pub(crate) fn bind_refresh<Q: Bind>(q: Q, r: &RefreshRecord) -> Q {
    q.put(r.id.as_uuid())
        .put(hash_bytes(&r.hash))
        .put(r.family_id.as_uuid())
        .put(r.client_id.as_str().to_owned())
        .put(r.lenser.as_uuid())
        .put(scopes_text(r.scopes))
        .put(r.resource.clone())
        .put_time(r.created_at)
        .put_time(r.expires_at)
        .put_opt_time(r.used_at)
        .put_opt_time(r.revoked_at)
}

/// Binds the columns of an `oauth_codes` row, in table order.
pub(crate) fn bind_code<Q: Bind>(q: Q, c: &CodeRecord) -> Q {
    q.put(hash_bytes(&c.hash))
        .put(c.client_id.as_str().to_owned())
        .put(c.lenser.as_uuid())
        .put(c.redirect_uri.clone())
        .put(c.code_challenge.clone())
        .put(scopes_text(c.scopes))
        .put(c.resource.clone())
        .put(c.family_id.as_uuid())
        .put_time(c.created_at)
        .put_time(c.expires_at)
        .put_opt_time(c.used_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_round_trip_and_refuse_the_rest() {
        for s in [Scopes::READ, Scopes::READ_WRITE] {
            assert_eq!(scopes(&scopes_text(s)).unwrap(), s);
        }
        for bad in ["write", "", "read  write", "admin"] {
            assert_eq!(scopes(bad).unwrap_err().code(), lf_core::ErrorCode::Internal);
        }
        assert!(secret_hash(&[0; 31]).is_err() && secret_hash(&[0; 32]).is_ok());
        assert!(client_id("nope").is_err() && handle("A b").is_err());
    }
}
