//! [`AuthStore`] over PostgreSQL: the tables of `0002_auth.sql`, through the
//! statements of `auth_sql`.
//!
//! The conditional writes (consuming a code, rotating a refresh token) are
//! one `UPDATE … WHERE used_at IS NULL AND expires_at > $now` in a
//! transaction with the inserts of the new tokens. PostgreSQL re-evaluates
//! the `WHERE` of an update that waited for a concurrent one on the same row,
//! so of racing calls exactly one updates it; the others update nothing and
//! insert nothing.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use lf_auth::{
    AuthStore, ClientId, CodeRecord, FamilyId, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    OAuthClient, RefreshRecord, SecretHash, TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfResult, Timestamp};
use sqlx::postgres::{PgConnection, PgPool, PgQueryResult, PgRow};
use sqlx::{Executor, Postgres, Row};

use crate::auth_rows::{Dialect, Query};
use crate::auth_sql::{self as sql, token_columns};
use crate::error::map_db_err;

const LIST_TOKENS: &str = concat!(
    "SELECT ",
    token_columns!(),
    " FROM access_tokens WHERE ($1::uuid IS NULL OR lenser_id = $1) \
     AND ($2::timestamptz IS NULL OR (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))) \
     ORDER BY created_at DESC, id DESC"
);

/// Timestamps are `timestamptz`, lists `text[]`.
impl Dialect for Postgres {
    const LIST_TOKENS: &'static str = LIST_TOKENS;

    fn bind_time(q: Query<Self>, t: Timestamp) -> Query<Self> {
        q.bind(t.to_datetime())
    }

    fn bind_opt_time(q: Query<Self>, t: Option<Timestamp>) -> Query<Self> {
        q.bind(t.map(|t| t.to_datetime()))
    }

    fn bind_strings(q: Query<Self>, items: &[String]) -> Query<Self> {
        q.bind(items.to_vec())
    }

    fn time(row: &PgRow, column: &str) -> LfResult<Timestamp> {
        row.try_get(column).map(Timestamp::from_datetime).map_err(map_db_err)
    }

    fn opt_time(row: &PgRow, column: &str) -> LfResult<Option<Timestamp>> {
        Ok(row.try_get::<Option<DateTime<Utc>>, _>(column).map_err(map_db_err)?.map(Timestamp::from_datetime))
    }

    fn strings(row: &PgRow, column: &str) -> LfResult<Vec<String>> {
        row.try_get(column).map_err(map_db_err)
    }

    fn rows_affected(result: PgQueryResult) -> u64 {
        result.rows_affected()
    }

    fn exec(conn: &mut PgConnection) -> impl Executor<'_, Database = Postgres> {
        conn
    }
}

/// [`AuthStore`] over PostgreSQL.
pub(crate) struct PgAuthStore {
    pool: PgPool,
}

impl PgAuthStore {
    pub(crate) fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Runs `f` in a transaction, committed when it returns `Ok`.
    async fn write<R>(&self, f: impl AsyncFnOnce(&mut PgConnection) -> LfResult<R>) -> LfResult<R> {
        super::write(&self.pool, f).await
    }
}

#[async_trait]
impl AuthStore for PgAuthStore {
    async fn create_lenser(&self, record: &LenserRecord) -> LfResult<()> {
        self.write(async |conn| sql::insert_lenser(conn, record).await).await
    }

    async fn lenser_by_handle(&self, handle: &Handle) -> LfResult<Option<LenserRecord>> {
        sql::lenser_by_handle(&self.pool, handle).await
    }

    async fn lenser_by_id(&self, id: LenserId) -> LfResult<Option<Lenser>> {
        sql::lenser_by_id(&self.pool, id).await
    }

    async fn local_lenser(&self, candidate: &LenserRecord) -> LfResult<LocalLenser> {
        self.write(async |conn| sql::local_lenser(conn, candidate).await).await
    }

    async fn insert_token(&self, token: &TokenRecord) -> LfResult<()> {
        self.write(async |conn| sql::insert_token(conn, token).await).await
    }

    async fn token_by_hash(&self, hash: &SecretHash) -> LfResult<Option<TokenRecord>> {
        sql::token_by_hash(&self.pool, hash).await
    }

    async fn touch_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        self.write(async |conn| sql::touch_token(conn, id, at).await).await
    }

    async fn revoke_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        sql::revoke_token(&self.pool, id, at).await
    }

    async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<TokenInfo>> {
        sql::list_tokens(&self.pool, lenser, active_at).await
    }

    async fn insert_client(&self, client: &OAuthClient) -> LfResult<()> {
        self.write(async |conn| sql::insert_client(conn, client).await).await
    }

    async fn client(&self, id: &ClientId) -> LfResult<Option<OAuthClient>> {
        sql::client(&self.pool, id).await
    }

    async fn insert_code(&self, code: &CodeRecord) -> LfResult<()> {
        self.write(async |conn| sql::insert_code(conn, code).await).await
    }

    async fn code_by_hash(&self, hash: &SecretHash) -> LfResult<Option<CodeRecord>> {
        sql::code_by_hash(&self.pool, hash).await
    }

    async fn consume_code(&self, hash: &SecretHash, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        self.write(async |conn| sql::consume_code(conn, hash, now, grant).await).await
    }

    async fn refresh_by_hash(&self, hash: &SecretHash) -> LfResult<Option<RefreshRecord>> {
        sql::refresh_by_hash(&self.pool, hash).await
    }

    async fn rotate_refresh(&self, id: TokenId, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        self.write(async |conn| sql::rotate_refresh(conn, id, now, grant).await).await
    }

    async fn revoke_family(&self, family: FamilyId, at: Timestamp) -> LfResult<()> {
        self.write(async |conn| sql::revoke_family(conn, family, at).await).await
    }

    async fn purge_expired(&self, before: Timestamp) -> LfResult<u64> {
        self.write(async |conn| sql::purge_expired(conn, before).await).await
    }
}
