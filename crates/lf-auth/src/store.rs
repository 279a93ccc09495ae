//! The storage contract of accounts, tokens and OAuth grants.
//! Implementations: [`crate::MemoryAuthStore`] here, SQLite and PostgreSQL
//! in lf-store. All of them run [`crate::contract::suite`].

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, Timestamp};

use crate::model::{
    ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    OAuthClient, RefreshRecord, TokenId, TokenInfo, TokenRecord,
};
use crate::secret::SecretHash;

/// Where accounts, access tokens, OAuth clients, codes and refresh tokens
/// live. Secrets are never handed to a store: only their [`SecretHash`]es,
/// which it looks rows up by (an index on each hash column); the service
/// compares what comes back in constant time.
///
/// The store applies no OAuth rule but the two conditional writes below; the
/// rules are [`crate::AuthService`]'s. Rows it is handed are valid (ids,
/// scopes `read` or `read write`, lensers and clients that exist).
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - CONFLICT from [`AuthStore::create_lenser`] when the handle or the id is
///   taken, and from every insert when an id or a hash is taken;
/// - CONFLICT from [`AuthStore::local_lenser`] when it would create the
///   local lenser and the candidate's handle or id is taken, or another call
///   recorded one at the same time;
/// - NOT_FOUND from [`AuthStore::revoke_token`] when neither an access
///   token nor a refresh token has that id.
///
/// Lookups answer `Ok(None)` for a row that is not there.
///
/// Atomicity every implementation MUST provide:
/// - [`AuthStore::consume_code`] is one conditional update (unused and
///   unexpired) plus the inserts of the tokens it grants, in one
///   transaction: of any number of concurrent calls for one code, exactly
///   one returns `true`, and a call that returns `false` changes nothing;
/// - [`AuthStore::rotate_refresh`] likewise for a refresh token (unused,
///   unrevoked, unexpired);
/// - [`AuthStore::revoke_family`] revokes every access and refresh token of
///   the family in one transaction, and so does [`AuthStore::revoke_token`]
///   for a token of a family;
/// - [`AuthStore::local_lenser`] reads the recorded local lenser, or stores
///   the candidate and records it, in one transaction: there is at most one
///   local lenser, and once recorded it never changes.
#[async_trait]
pub trait AuthStore: Send + Sync {
    /// Stores a new account. CONFLICT if the handle (or the id) is taken.
    async fn create_lenser(&self, record: &LenserRecord) -> LfResult<()>;

    /// The account with this handle, with its password hash.
    async fn lenser_by_handle(&self, handle: &Handle) -> LfResult<Option<LenserRecord>>;

    /// The account with this id.
    async fn lenser_by_id(&self, id: LenserId) -> LfResult<Option<Lenser>>;

    /// The local lenser (see [`LocalLenser`]): the recorded one, with
    /// `created: false`, if there is one (`candidate` is then ignored);
    /// otherwise `candidate` stored as an account and recorded as the local
    /// lenser, with `created: true`. CONFLICT, and nothing written, when the
    /// candidate's handle or id is taken or another call recorded a local
    /// lenser meanwhile (calling again answers that one).
    async fn local_lenser(&self, candidate: &LenserRecord) -> LfResult<LocalLenser>;

    /// Stores a new access token. CONFLICT if its id or hash is taken.
    async fn insert_token(&self, token: &TokenRecord) -> LfResult<()>;

    /// The access token with this hash, revoked and expired ones included.
    async fn token_by_hash(&self, hash: &SecretHash) -> LfResult<Option<TokenRecord>>;

    /// Sets `last_used_at` to `at` unless it is already at or after `at`. No
    /// error for an unknown id.
    async fn touch_token(&self, id: TokenId, at: Timestamp) -> LfResult<()>;

    /// Revokes the access token or refresh token `id` at `at`: an access
    /// token of no family (admin-issued) alone; an access token of a family,
    /// or a refresh token, with every access and refresh token of its
    /// family, in one transaction, so that no token of the grant works
    /// after it. The first revocation time of each token is kept. NOT_FOUND
    /// if neither an access token nor a refresh token has this id.
    async fn revoke_token(&self, id: TokenId, at: Timestamp) -> LfResult<()>;

    /// Access tokens, newest first (`created_at` descending, then id
    /// descending): of one lenser, or of everyone with `None`. With
    /// `active_at: Some(now)` only those neither revoked nor expired at `now`.
    async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<TokenInfo>>;

    /// OAuth grants, one per family that has a refresh token not used yet,
    /// newest first (`created_at` descending, then id descending): of one
    /// lenser, or of everyone with `None`. With `active_at: Some(now)` only
    /// those whose refresh token is neither revoked nor expired at `now`.
    /// See [`GrantInfo`] for what each field is made of.
    async fn list_grants(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<GrantInfo>>;

    /// Stores a new client. CONFLICT if its id is taken.
    async fn insert_client(&self, client: &OAuthClient) -> LfResult<()>;

    /// The client with this id; redirect URIs in registration order.
    async fn client(&self, id: &ClientId) -> LfResult<Option<OAuthClient>>;

    /// Stores a new authorization code. CONFLICT if its hash is taken.
    async fn insert_code(&self, code: &CodeRecord) -> LfResult<()>;

    /// The code with this hash, used and expired ones included.
    async fn code_by_hash(&self, hash: &SecretHash) -> LfResult<Option<CodeRecord>>;

    /// Atomically: if the code with this hash is unused and
    /// `now < expires_at`, marks it used at `now`, stores `grant`'s access
    /// and refresh tokens, and answers `true`; otherwise changes nothing and
    /// answers `false`. Exactly one of concurrent calls for one code wins.
    async fn consume_code(&self, hash: &SecretHash, now: Timestamp, grant: &GrantTokens) -> LfResult<bool>;

    /// The refresh token with this hash, used, revoked and expired ones
    /// included.
    async fn refresh_by_hash(&self, hash: &SecretHash) -> LfResult<Option<RefreshRecord>>;

    /// Atomically: if refresh token `id` is unused, unrevoked and
    /// `now < expires_at`, marks it used at `now`, stores `grant`'s tokens,
    /// and answers `true`; otherwise changes nothing and answers `false`.
    /// Exactly one of concurrent calls for one token wins.
    async fn rotate_refresh(&self, id: TokenId, now: Timestamp, grant: &GrantTokens) -> LfResult<bool>;

    /// Revokes, at `at`, every access token and refresh token of `family`
    /// not revoked yet, in one transaction. No error for an unknown family.
    async fn revoke_family(&self, family: FamilyId, at: Timestamp) -> LfResult<()>;

    /// Deletes what can no longer be used and is no longer needed: codes and
    /// refresh tokens that expired before `before`, and access tokens of an
    /// OAuth family or browser sessions (no family, labelled
    /// [`crate::SESSION_LABEL`]) that expired before `before`. Admin-issued
    /// tokens are kept. Answers how many rows went.
    async fn purge_expired(&self, before: Timestamp) -> LfResult<u64>;
}
