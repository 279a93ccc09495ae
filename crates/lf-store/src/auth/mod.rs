//! [`AuthStore`] over either backend: accounts, access tokens and OAuth
//! grants in the tables of `0002_auth.sql`, through the statements of
//! `sql`, the same on both. On SQLite, `token_by_hash` (every authenticated
//! HTTP request) reads on a direct reader (`sqlite_direct`) and keeps its
//! answers while the database is unchanged (see `sqlite::direct`).
//!
//! Adding a method: its statements and function in `sql` (generic over
//! [`crate::dialect::Conn`]), its row mapping in `rows`, and one line here
//! saying how it runs (see [`crate::conns`]).

pub(crate) mod rows;
pub(crate) mod sql;
mod sqlite_direct;

use async_trait::async_trait;
use lf_auth::{
    AuthStore, ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord,
    LocalLenser, OAuthClient, RefreshRecord, SecretHash, TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfResult, Timestamp};

use crate::conns::{Conns, on};
use crate::{postgres, sqlite};

/// The access tokens a process keeps, at most (a few thousand).
const CACHE_BYTES: usize = 1 << 20;

/// About how many bytes of strings an access token holds.
fn token_weight(token: &TokenRecord) -> usize {
    let info = &token.info;
    [&info.resource, &info.label].iter().map(|s| s.as_ref().map_or(0, String::len)).sum::<usize>()
        + info.client_id.as_ref().map_or(0, |c| c.as_str().len())
}

/// [`AuthStore`] over either backend.
pub(crate) struct SqlAuthStore {
    conns: Conns,
    /// SQLite: the answers of `token_by_hash` for known tokens, by hash,
    /// while the database is unchanged.
    read_cache: sqlite::ReadCache<[u8; 32], TokenRecord>,
}

impl SqlAuthStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns, read_cache: sqlite::ReadCache::new(CACHE_BYTES, token_weight) }
    }
}

#[async_trait]
impl AuthStore for SqlAuthStore {
    async fn create_lenser(&self, record: &LenserRecord) -> LfResult<()> {
        // Two statements and a lock: the agents' handles are checked too.
        on!(&self.conns, write, |conn| sql::insert_lenser(conn, record))
    }

    async fn lenser_by_handle(&self, handle: &Handle) -> LfResult<Option<LenserRecord>> {
        on!(&self.conns, reading, |conn| sql::lenser_by_handle(conn, handle))
    }

    async fn lenser_by_id(&self, id: LenserId) -> LfResult<Option<Lenser>> {
        on!(&self.conns, reading, |conn| sql::lenser_by_id(conn, id))
    }

    async fn local_lenser(&self, candidate: &LenserRecord) -> LfResult<LocalLenser> {
        on!(&self.conns, write, |conn| sql::local_lenser(conn, candidate))
    }

    async fn insert_token(&self, token: &TokenRecord) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::insert_token(conn, token))
    }

    async fn token_by_hash(&self, hash: &SecretHash) -> LfResult<Option<TokenRecord>> {
        match &self.conns {
            // Every authenticated HTTP request starts here: read on this
            // thread, or kept from the last time while nothing has changed
            // (a revocation or a touch is a change). An unknown hash is not
            // kept.
            Conns::Sqlite(db) => {
                let key = *hash.as_bytes();
                db.direct_cached(&self.read_cache, key, |conn| sqlite_direct::token_by_hash(conn, &key)).await
            }
            Conns::Postgres(pool) => {
                postgres::reading(pool, async |conn| sql::token_by_hash(conn, hash).await).await
            }
        }
    }

    async fn touch_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::touch_token(conn, id, at))
    }

    async fn revoke_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::revoke_token(conn, id, at))
    }

    async fn list_grants(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<GrantInfo>> {
        on!(&self.conns, reading, |conn| sql::list_grants(conn, lenser, active_at))
    }

    async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<TokenInfo>> {
        on!(&self.conns, reading, |conn| sql::list_tokens(conn, lenser, active_at))
    }

    async fn insert_client(&self, client: &OAuthClient) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::insert_client(conn, client))
    }

    async fn client(&self, id: &ClientId) -> LfResult<Option<OAuthClient>> {
        on!(&self.conns, reading, |conn| sql::client(conn, id))
    }

    async fn insert_code(&self, code: &CodeRecord) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::insert_code(conn, code))
    }

    async fn code_by_hash(&self, hash: &SecretHash) -> LfResult<Option<CodeRecord>> {
        on!(&self.conns, reading, |conn| sql::code_by_hash(conn, hash))
    }

    async fn consume_code(&self, hash: &SecretHash, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        on!(&self.conns, write, |conn| sql::consume_code(conn, hash, now, grant))
    }

    async fn refresh_by_hash(&self, hash: &SecretHash) -> LfResult<Option<RefreshRecord>> {
        on!(&self.conns, reading, |conn| sql::refresh_by_hash(conn, hash))
    }

    async fn rotate_refresh(&self, id: TokenId, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        on!(&self.conns, write, |conn| sql::rotate_refresh(conn, id, now, grant))
    }

    async fn revoke_family(&self, family: FamilyId, at: Timestamp) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::revoke_family(conn, family, at))
    }

    async fn purge_expired(&self, before: Timestamp) -> LfResult<u64> {
        on!(&self.conns, write, |conn| sql::purge_expired(conn, before))
    }
}
