//! The statements of [`lf_auth::AuthStore`] and the code that runs them,
//! the same on both backends (only `list_tokens`'s and `list_grants`'s
//! statements are spelled twice: PostgreSQL needs their NULL tests cast).
//!
//! The conditional writes (consuming a code, rotating a refresh token) are
//! one `UPDATE … WHERE used_at IS NULL AND expires_at > $now` in a write
//! transaction with the inserts of the new tokens. On SQLite the
//! transaction begins `BEGIN IMMEDIATE`, so writers take turns and of racing
//! calls exactly one sees the row still unused; PostgreSQL re-evaluates the
//! `WHERE` of an update that waited for a concurrent one on the same row, so
//! exactly one updates it, and the others update nothing and insert nothing.

use lf_auth::{
    ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    OAuthClient, RefreshRecord, SecretHash, TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfError, LfResult, Timestamp};
use sqlx::Database;

use super::rows::{
    bind_code, bind_refresh, bind_token, client_record, code_record, family_of, grant_info, hash_bytes,
    lenser_record, refresh_record, token_record,
};
use crate::dialect::{Bind, Conn, Spellings, Value, execute, insert, query, row_of, spelled};
use crate::error::map_db_err;

const INSERT_LENSER: &str =
    "INSERT INTO lensers (id, handle, password_hash, created_at) VALUES ($1, $2, $3, $4)";
const LENSER_BY_HANDLE: &str = "SELECT id, handle, password_hash, created_at FROM lensers WHERE handle = $1";
const LENSER_BY_ID: &str = "SELECT id, handle, password_hash, created_at FROM lensers WHERE id = $1";
const LOCAL_LENSER: &str = "SELECT l.id, l.handle, l.password_hash, l.created_at \
     FROM local_lenser AS o JOIN lensers AS l ON l.id = o.lenser_id";
const RECORD_LOCAL_LENSER: &str = "INSERT INTO local_lenser (only_row, lenser_id) VALUES (1, $1)";

/// The columns of `access_tokens`, in the order [`bind_token`] binds them.
macro_rules! token_columns {
    () => {
        "id, token_hash, lenser_id, scopes, client_id, family_id, resource, label, created_at, expires_at, \
         revoked_at, last_used_at"
    };
}

const INSERT_TOKEN: &str = concat!(
    "INSERT INTO access_tokens (",
    token_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
);
pub(crate) const TOKEN_BY_HASH: &str =
    concat!("SELECT ", token_columns!(), " FROM access_tokens WHERE token_hash = $1");
const TOUCH_TOKEN: &str = "UPDATE access_tokens SET last_used_at = $2 \
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)";
const REVOKE_TOKEN: &str =
    "UPDATE access_tokens SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING family_id";
const REFRESH_FAMILY: &str = "SELECT family_id FROM refresh_tokens WHERE id = $1";

const INSERT_CLIENT: &str =
    "INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES ($1, $2, $3, $4)";
const CLIENT_BY_ID: &str = "SELECT id, name, redirect_uris, created_at FROM oauth_clients WHERE id = $1";

macro_rules! code_columns {
    () => {
        "code_hash, client_id, lenser_id, redirect_uri, code_challenge, scopes, resource, family_id, \
         created_at, expires_at, used_at"
    };
}
const INSERT_CODE: &str = concat!(
    "INSERT INTO oauth_codes (",
    code_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
);
const CODE_BY_HASH: &str = concat!("SELECT ", code_columns!(), " FROM oauth_codes WHERE code_hash = $1");
const CONSUME_CODE: &str = "UPDATE oauth_codes SET used_at = $2 \
     WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2";

macro_rules! refresh_columns {
    () => {
        "id, token_hash, family_id, client_id, lenser_id, scopes, resource, created_at, expires_at, used_at, \
         revoked_at"
    };
}
const INSERT_REFRESH: &str = concat!(
    "INSERT INTO refresh_tokens (",
    refresh_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
);
const REFRESH_BY_HASH: &str =
    concat!("SELECT ", refresh_columns!(), " FROM refresh_tokens WHERE token_hash = $1");
const ROTATE_REFRESH: &str = "UPDATE refresh_tokens SET used_at = $2 \
     WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2";
const REVOKE_FAMILY_TOKENS: &str =
    "UPDATE access_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL";
const REVOKE_FAMILY_REFRESH: &str =
    "UPDATE refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL";

macro_rules! list_tokens {
    (sqlite) => {
        concat!(
            "SELECT ",
            token_columns!(),
            " FROM access_tokens WHERE ($1 IS NULL OR lenser_id = $1) \
             AND ($2 IS NULL OR (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))) \
             ORDER BY created_at DESC, id DESC"
        )
    };
    (postgres) => {
        concat!(
            "SELECT ",
            token_columns!(),
            " FROM access_tokens WHERE ($1::uuid IS NULL OR lenser_id = $1) \
             AND ($2::timestamptz IS NULL OR (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))) \
             ORDER BY created_at DESC, id DESC"
        )
    };
}
const LIST_TOKENS: Spellings = spelled!(list_tokens);

/// A grant is its family's refresh token not used yet (each rotation marks
/// one used and adds one), with what the family's other tokens say.
macro_rules! list_grants {
    ($backend:tt) => {
        concat!(
            "SELECT r.id, r.family_id, r.client_id, r.lenser_id, r.scopes, r.expires_at, r.revoked_at, \
             (SELECT min(o.created_at) FROM refresh_tokens AS o WHERE o.family_id = r.family_id) AS first_created, \
             (SELECT max(o.used_at) FROM refresh_tokens AS o WHERE o.family_id = r.family_id) AS last_refresh, \
             (SELECT max(a.last_used_at) FROM access_tokens AS a WHERE a.family_id = r.family_id) AS last_access \
             FROM refresh_tokens AS r WHERE r.used_at IS NULL AND (",
            list_grants!(@null $backend, "$1", "uuid"),
            " OR r.lenser_id = $1) AND (",
            list_grants!(@null $backend, "$2", "timestamptz"),
            " OR (r.revoked_at IS NULL AND r.expires_at > $2)) ORDER BY first_created DESC, r.id DESC"
        )
    };
    (@null sqlite, $param:literal, $type:literal) => {
        concat!($param, " IS NULL")
    };
    (@null postgres, $param:literal, $type:literal) => {
        concat!($param, "::", $type, " IS NULL")
    };
}
const LIST_GRANTS: Spellings = spelled!(list_grants);

const PURGE_CODES: &str = "DELETE FROM oauth_codes WHERE expires_at < $1";
const PURGE_REFRESH: &str = "DELETE FROM refresh_tokens WHERE expires_at < $1";
/// OAuth families' tokens and browser sessions ([`lf_auth::SESSION_LABEL`]).
const PURGE_TOKENS: &str = "DELETE FROM access_tokens WHERE expires_at IS NOT NULL AND expires_at < $1 \
AND (family_id IS NOT NULL OR label = $2)";

fn taken(what: &'static str) -> impl FnOnce() -> String {
    move || format!("That {what} is already taken. Choose another and retry.")
}

/// Stores a lenser unless its handle or id is taken, by another lenser or
/// (the handle) by an AI Lenser: handles are one namespace. Run it in a
/// write transaction: the agents are checked under the handle's lock (see
/// `agent::sql`), so a racing agent creation and this one never both pass.
pub(crate) async fn insert_lenser<C: Conn>(conn: &mut C, record: &LenserRecord) -> LfResult<()> {
    let l = &record.lenser;
    let taken = || format!("The handle {} (or the id) is taken.", l.handle);
    let handle = l.handle.as_str();
    crate::agent::sql::lock_handle(conn, handle).await?;
    let agent =
        row_of(conn, query(crate::agent::sql::AGENT_HOLDS).put(handle.to_owned()), |_| Ok(())).await?;
    if agent.is_some() {
        return Err(LfError::conflict(taken()));
    }
    let q = query(INSERT_LENSER)
        .put(l.id.as_uuid())
        .put(handle.to_owned())
        .put(record.password_hash.clone())
        .put_time(l.created_at);
    insert(conn, q, taken).await
}

pub(crate) async fn lenser_by_handle<C: Conn>(
    conn: &mut C,
    handle: &Handle,
) -> LfResult<Option<LenserRecord>> {
    row_of(conn, query(LENSER_BY_HANDLE).put(handle.as_str().to_owned()), lenser_record).await
}

pub(crate) async fn lenser_by_id<C: Conn>(conn: &mut C, id: LenserId) -> LfResult<Option<Lenser>> {
    Ok(row_of(conn, query(LENSER_BY_ID).put(id.as_uuid()), lenser_record).await?.map(|r| r.lenser))
}

/// The recorded local lenser, or `candidate` stored and recorded as it
/// (migration `local_lenser`). Runs in the caller's write transaction, which
/// a CONFLICT rolls back.
pub(crate) async fn local_lenser<C: Conn>(conn: &mut C, candidate: &LenserRecord) -> LfResult<LocalLenser> {
    if let Some(recorded) = row_of(conn, query(LOCAL_LENSER), lenser_record).await? {
        return Ok(LocalLenser { lenser: recorded.lenser, created: false });
    }
    insert_lenser(conn, candidate).await?;
    let q = query(RECORD_LOCAL_LENSER).put(candidate.lenser.id.as_uuid());
    insert(conn, q, || "Another server recorded the local lenser meanwhile.".to_owned()).await?;
    Ok(LocalLenser { lenser: candidate.lenser.clone(), created: true })
}

pub(crate) async fn insert_token<C: Conn>(conn: &mut C, token: &TokenRecord) -> LfResult<()> {
    insert(conn, bind_token(query(INSERT_TOKEN), token), taken("token")).await
}

pub(crate) async fn token_by_hash<C: Conn>(conn: &mut C, hash: &SecretHash) -> LfResult<Option<TokenRecord>> {
    row_of(conn, query(TOKEN_BY_HASH).put(hash_bytes(hash)), token_record).await
}

pub(crate) async fn touch_token<C: Conn>(conn: &mut C, id: TokenId, at: Timestamp) -> LfResult<()> {
    execute(conn, query(TOUCH_TOKEN).put(id.as_uuid()).put_time(at)).await?;
    Ok(())
}

/// Revokes access token `id`, or the family of access or refresh token `id`
/// with all its tokens. Runs in the caller's transaction, so that a grant's
/// tokens are revoked together.
pub(crate) async fn revoke_token<C: Conn>(conn: &mut C, id: TokenId, at: Timestamp) -> LfResult<()> {
    let family = match row_of(conn, query(REVOKE_TOKEN).put(id.as_uuid()).put_time(at), family_of).await? {
        // An access token: of a family, or of none (admin-issued).
        Some(family) => family,
        None => {
            let family = row_of(conn, query(REFRESH_FAMILY).put(id.as_uuid()), family_of).await?;
            Some(family.flatten().ok_or_else(|| LfError::not_found("Token", id))?)
        }
    };
    match family {
        Some(family) => revoke_family(conn, family, at).await,
        None => Ok(()),
    }
}

pub(crate) async fn list_grants<C: Conn>(
    conn: &mut C,
    lenser: Option<LenserId>,
    active_at: Option<Timestamp>,
) -> LfResult<Vec<GrantInfo>> {
    listing(conn, &LIST_GRANTS, lenser, active_at, grant_info).await
}

pub(crate) async fn list_tokens<C: Conn>(
    conn: &mut C,
    lenser: Option<LenserId>,
    active_at: Option<Timestamp>,
) -> LfResult<Vec<TokenInfo>> {
    listing(conn, &LIST_TOKENS, lenser, active_at, |r| token_record(r).map(|t| t.info)).await
}

/// The rows of a listing `sql` of one lenser's (or everyone's) rows, active
/// at a time (or all), read by `from_row`.
async fn listing<C: Conn, T>(
    conn: &mut C,
    sql: &Spellings,
    lenser: Option<LenserId>,
    active_at: Option<Timestamp>,
    from_row: fn(&<C::Database as Database>::Row) -> LfResult<T>,
) -> LfResult<Vec<T>> {
    let rows = query::<C::Database>(sql.of::<C::Database>())
        .put(lenser.map(|l| l.as_uuid()))
        .put_opt_time(active_at)
        .fetch_all(conn.exec())
        .await
        .map_err(map_db_err)?;
    rows.iter().map(from_row).collect()
}

pub(crate) async fn insert_client<C: Conn>(conn: &mut C, client: &OAuthClient) -> LfResult<()> {
    let q = query(INSERT_CLIENT)
        .put(client.id.as_str().to_owned())
        .put(client.name.clone())
        .put_strings(&client.redirect_uris)
        .put_time(client.created_at);
    insert(conn, q, taken("client id")).await
}

pub(crate) async fn client<C: Conn>(conn: &mut C, id: &ClientId) -> LfResult<Option<OAuthClient>> {
    row_of(conn, query(CLIENT_BY_ID).put(id.as_str().to_owned()), client_record).await
}

pub(crate) async fn insert_code<C: Conn>(conn: &mut C, code: &CodeRecord) -> LfResult<()> {
    insert(conn, bind_code(query(INSERT_CODE), code), taken("code")).await
}

pub(crate) async fn code_by_hash<C: Conn>(conn: &mut C, hash: &SecretHash) -> LfResult<Option<CodeRecord>> {
    row_of(conn, query(CODE_BY_HASH).put(hash_bytes(hash)), code_record).await
}

pub(crate) async fn refresh_by_hash<C: Conn>(
    conn: &mut C,
    hash: &SecretHash,
) -> LfResult<Option<RefreshRecord>> {
    row_of(conn, query(REFRESH_BY_HASH).put(hash_bytes(hash)), refresh_record).await
}

/// Consumes the unused, unexpired code `hash` and inserts `grant`; false,
/// and nothing written, when the code was used or expired. Runs in the
/// caller's transaction.
pub(crate) async fn consume_code<C: Conn>(
    conn: &mut C,
    hash: &SecretHash,
    now: Timestamp,
    grant: &GrantTokens,
) -> LfResult<bool> {
    claim_then_grant(conn, CONSUME_CODE, hash_bytes(hash), now, grant).await
}

/// Marks the live refresh token `id` used and inserts `grant`; false, and
/// nothing written, when it was used, revoked or expired. Runs in the
/// caller's transaction.
pub(crate) async fn rotate_refresh<C: Conn>(
    conn: &mut C,
    id: TokenId,
    now: Timestamp,
    grant: &GrantTokens,
) -> LfResult<bool> {
    claim_then_grant(conn, ROTATE_REFRESH, id.as_uuid(), now, grant).await
}

/// The conditional `UPDATE` `sql` of row `key` at `now`, then, when it
/// updated the row, the inserts of `grant`.
async fn claim_then_grant<C: Conn, K: Value>(
    conn: &mut C,
    sql: &'static str,
    key: K,
    now: Timestamp,
    grant: &GrantTokens,
) -> LfResult<bool> {
    if execute(conn, query(sql).put(key).put_time(now)).await? == 0 {
        return Ok(false);
    }
    insert_token(conn, &grant.access).await?;
    insert(conn, bind_refresh(query(INSERT_REFRESH), &grant.refresh), taken("refresh token")).await?;
    Ok(true)
}

pub(crate) async fn revoke_family<C: Conn>(conn: &mut C, family: FamilyId, at: Timestamp) -> LfResult<()> {
    for sql in [REVOKE_FAMILY_TOKENS, REVOKE_FAMILY_REFRESH] {
        execute(conn, query(sql).put(family.as_uuid()).put_time(at)).await?;
    }
    Ok(())
}

pub(crate) async fn purge_expired<C: Conn>(conn: &mut C, before: Timestamp) -> LfResult<u64> {
    let mut gone = 0;
    for sql in [PURGE_CODES, PURGE_REFRESH] {
        gone += execute(conn, query(sql).put_time(before)).await?;
    }
    gone +=
        execute(conn, query(PURGE_TOKENS).put_time(before).put(lf_auth::SESSION_LABEL.to_owned())).await?;
    Ok(gone)
}
