//! [`AuthStore`] over SQLite: the tables of `0002_auth.sql`, through the
//! statements of `auth_sql`.
//!
//! The conditional writes (consuming a code, rotating a refresh token) are
//! one `UPDATE … WHERE used_at IS NULL AND expires_at > $now` in a write
//! transaction begun `BEGIN IMMEDIATE` with the inserts of the new tokens:
//! writers take turns, so of racing calls exactly one sees the row still
//! unused.

use async_trait::async_trait;
use lf_auth::{
    AuthStore, ClientId, CodeRecord, FamilyId, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    OAuthClient, RefreshRecord, SecretHash, TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfResult, Timestamp};
use sqlx::sqlite::{SqliteConnection, SqliteQueryResult, SqliteRow};
use sqlx::{Executor, Row, Sqlite};

use super::direct::first_row;
use super::map_direct_err;
use super::{Handle as Db, ReadCache};
use crate::auth_rows::{Columns, Dialect, Holds, Query, token_record};
use crate::auth_sql::{self as sql, token_columns};
use crate::error::{corrupt, map_db_err};
use crate::rows::json_strings;

const LIST_TOKENS: &str = concat!(
    "SELECT ",
    token_columns!(),
    " FROM access_tokens WHERE ($1 IS NULL OR lenser_id = $1) \
     AND ($2 IS NULL OR (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))) \
     ORDER BY created_at DESC, id DESC"
);

/// Timestamps are INTEGER microseconds since the epoch, lists JSON text.
impl Dialect for Sqlite {
    const LIST_TOKENS: &'static str = LIST_TOKENS;

    fn bind_time(q: Query<Self>, t: Timestamp) -> Query<Self> {
        q.bind(t.as_micros())
    }

    fn bind_opt_time(q: Query<Self>, t: Option<Timestamp>) -> Query<Self> {
        q.bind(t.map(|t| t.as_micros()))
    }

    fn bind_strings(q: Query<Self>, items: &[String]) -> Query<Self> {
        q.bind(json_strings(items))
    }

    fn time(row: &SqliteRow, column: &str) -> LfResult<Timestamp> {
        row.try_get(column).map(Timestamp::from_micros).map_err(map_db_err)
    }

    fn opt_time(row: &SqliteRow, column: &str) -> LfResult<Option<Timestamp>> {
        Ok(row.try_get::<Option<i64>, _>(column).map_err(map_db_err)?.map(Timestamp::from_micros))
    }

    fn strings(row: &SqliteRow, column: &str) -> LfResult<Vec<String>> {
        strings(column, &row.try_get::<String, _>(column).map_err(map_db_err)?)
    }

    fn rows_affected(result: SqliteQueryResult) -> u64 {
        result.rows_affected()
    }

    fn exec(conn: &mut SqliteConnection) -> impl Executor<'_, Database = Sqlite> {
        conn
    }
}

fn strings(column: &str, json: &str) -> LfResult<Vec<String>> {
    serde_json::from_str(json).map_err(|e| corrupt(format!("{column}: {e}")))
}

/// A row of a direct reader, read as the SQLite dialect reads sqlx's rows,
/// by the same record mappers.
struct DirectRow<'a, 'r>(&'a rusqlite::Row<'r>);

impl Columns for DirectRow<'_, '_> {
    type Db = Sqlite;

    fn value<T>(&self, column: &str) -> LfResult<T>
    where
        Sqlite: Holds<T>,
        T: rusqlite::types::FromSql,
    {
        self.0.get(column).map_err(map_direct_err)
    }

    fn time(&self, column: &str) -> LfResult<Timestamp> {
        self.value(column).map(Timestamp::from_micros)
    }

    fn opt_time(&self, column: &str) -> LfResult<Option<Timestamp>> {
        Ok(self.value::<Option<i64>>(column)?.map(Timestamp::from_micros))
    }

    fn strings(&self, column: &str) -> LfResult<Vec<String>> {
        strings(column, &self.value::<String>(column)?)
    }
}

/// The access tokens a process keeps, at most (a few thousand).
const CACHE_BYTES: usize = 1 << 20;

/// About how many bytes of strings an access token holds.
fn token_weight(token: &TokenRecord) -> usize {
    let info = &token.info;
    [&info.resource, &info.label].iter().map(|s| s.as_ref().map_or(0, String::len)).sum::<usize>()
        + info.client_id.as_ref().map_or(0, |c| c.as_str().len())
}

/// [`AuthStore`] over SQLite.
pub(crate) struct SqliteAuthStore {
    db: Db,
    /// The answers of `token_by_hash` for known tokens, by hash, while the
    /// database is unchanged.
    read_cache: ReadCache<[u8; 32], TokenRecord>,
}

impl SqliteAuthStore {
    pub(crate) fn new(db: Db) -> Self {
        Self { db, read_cache: ReadCache::new(CACHE_BYTES, token_weight) }
    }
}

#[async_trait]
impl AuthStore for SqliteAuthStore {
    async fn create_lenser(&self, record: &LenserRecord) -> LfResult<()> {
        self.db.write(async |conn| sql::insert_lenser(conn, record).await).await
    }

    async fn lenser_by_handle(&self, handle: &Handle) -> LfResult<Option<LenserRecord>> {
        sql::lenser_by_handle(&mut *self.db.read().await?, handle).await
    }

    async fn lenser_by_id(&self, id: LenserId) -> LfResult<Option<Lenser>> {
        sql::lenser_by_id(&mut *self.db.read().await?, id).await
    }

    async fn local_lenser(&self, candidate: &LenserRecord) -> LfResult<LocalLenser> {
        self.db.write(async |conn| sql::local_lenser(conn, candidate).await).await
    }

    async fn insert_token(&self, token: &TokenRecord) -> LfResult<()> {
        self.db.write(async |conn| sql::insert_token(conn, token).await).await
    }

    async fn token_by_hash(&self, hash: &SecretHash) -> LfResult<Option<TokenRecord>> {
        // Every authenticated HTTP request starts here: read on this thread,
        // or kept from the last time while nothing has changed (a revocation
        // or a touch is a change). An unknown hash is not kept.
        let key = *hash.as_bytes();
        let read =
            |conn: &_| first_row(conn, sql::TOKEN_BY_HASH, [&key], |row| token_record(&DirectRow(row)));
        self.db.direct_cached(&self.read_cache, key, read).await
    }

    async fn touch_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        self.db.write(async |conn| sql::touch_token(conn, id, at).await).await
    }

    async fn revoke_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        self.db.write(async |conn| sql::revoke_token(conn, id, at).await).await
    }

    async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<TokenInfo>> {
        sql::list_tokens(&mut *self.db.read().await?, lenser, active_at).await
    }

    async fn insert_client(&self, client: &OAuthClient) -> LfResult<()> {
        self.db.write(async |conn| sql::insert_client(conn, client).await).await
    }

    async fn client(&self, id: &ClientId) -> LfResult<Option<OAuthClient>> {
        sql::client(&mut *self.db.read().await?, id).await
    }

    async fn insert_code(&self, code: &CodeRecord) -> LfResult<()> {
        self.db.write(async |conn| sql::insert_code(conn, code).await).await
    }

    async fn code_by_hash(&self, hash: &SecretHash) -> LfResult<Option<CodeRecord>> {
        sql::code_by_hash(&mut *self.db.read().await?, hash).await
    }

    async fn consume_code(&self, hash: &SecretHash, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        self.db.write(async |conn| sql::consume_code(conn, hash, now, grant).await).await
    }

    async fn refresh_by_hash(&self, hash: &SecretHash) -> LfResult<Option<RefreshRecord>> {
        sql::refresh_by_hash(&mut *self.db.read().await?, hash).await
    }

    async fn rotate_refresh(&self, id: TokenId, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        self.db.write(async |conn| sql::rotate_refresh(conn, id, now, grant).await).await
    }

    async fn revoke_family(&self, family: FamilyId, at: Timestamp) -> LfResult<()> {
        self.db.write(async |conn| sql::revoke_family(conn, family, at).await).await
    }

    async fn purge_expired(&self, before: Timestamp) -> LfResult<u64> {
        self.db.write(async |conn| sql::purge_expired(conn, before).await).await
    }
}
