//! [`AuthStore`] over PostgreSQL: the tables of `0002_auth.sql`.
//!
//! The conditional writes (consuming a code, rotating a refresh token) are
//! one `UPDATE … WHERE used_at IS NULL AND expires_at > $now` in a
//! transaction with the inserts of the new tokens. PostgreSQL re-evaluates
//! the `WHERE` of an update that waited for a concurrent one on the same row,
//! so of racing calls exactly one updates it; the others update nothing and
//! insert nothing.

use crate::auth_rows::{client_id, handle, scopes, scopes_text, secret_hash};
use crate::error::{conflict_or, map_db_err};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use lf_auth::{
    AuthStore, ClientId, CodeRecord, FamilyId, GrantTokens, Handle, Lenser, LenserRecord, OAuthClient,
    RefreshRecord, SecretHash, TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfError, LfResult, Timestamp};
use sqlx::postgres::{PgConnection, PgPool, PgRow};
use sqlx::{Postgres, Row};
use uuid::Uuid;

const INSERT_LENSER: &str =
    "INSERT INTO lensers (id, handle, password_hash, created_at) VALUES ($1, $2, $3, $4)";
const LENSER_BY_HANDLE: &str = "SELECT id, handle, password_hash, created_at FROM lensers WHERE handle = $1";
const LENSER_BY_ID: &str = "SELECT id, handle, password_hash, created_at FROM lensers WHERE id = $1";

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
const TOKEN_BY_HASH: &str = concat!("SELECT ", token_columns!(), " FROM access_tokens WHERE token_hash = $1");
const TOUCH_TOKEN: &str = "UPDATE access_tokens SET last_used_at = $2 \
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)";
const REVOKE_TOKEN: &str =
    "UPDATE access_tokens SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING id";
const LIST_TOKENS: &str = concat!(
    "SELECT ",
    token_columns!(),
    " FROM access_tokens WHERE ($1::uuid IS NULL OR lenser_id = $1) \
     AND ($2::timestamptz IS NULL OR (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2))) \
     ORDER BY created_at DESC, id DESC"
);

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

const PURGE_CODES: &str = "DELETE FROM oauth_codes WHERE expires_at < $1";
const PURGE_REFRESH: &str = "DELETE FROM refresh_tokens WHERE expires_at < $1";
const PURGE_TOKENS: &str =
    "DELETE FROM access_tokens WHERE family_id IS NOT NULL AND expires_at IS NOT NULL AND expires_at < $1";

fn get<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(
    row: &'r PgRow,
    column: &str,
) -> LfResult<T> {
    row.try_get(column).map_err(map_db_err)
}

fn time(row: &PgRow, column: &str) -> LfResult<Timestamp> {
    get::<DateTime<Utc>>(row, column).map(Timestamp::from_datetime)
}

fn opt_time(row: &PgRow, column: &str) -> LfResult<Option<Timestamp>> {
    Ok(get::<Option<DateTime<Utc>>>(row, column)?.map(Timestamp::from_datetime))
}

fn dt(t: Timestamp) -> DateTime<Utc> {
    t.to_datetime()
}

fn opt_dt(t: Option<Timestamp>) -> Option<DateTime<Utc>> {
    t.map(|t| t.to_datetime())
}

fn hash_of(row: &PgRow, column: &str) -> LfResult<SecretHash> {
    secret_hash(&get::<Vec<u8>>(row, column)?)
}

fn lenser_from_row(row: &PgRow) -> LfResult<LenserRecord> {
    Ok(LenserRecord {
        lenser: Lenser {
            id: LenserId::from_uuid(get(row, "id")?),
            handle: handle(&get::<String>(row, "handle")?)?,
            created_at: time(row, "created_at")?,
        },
        password_hash: get(row, "password_hash")?,
    })
}

fn token_from_row(row: &PgRow) -> LfResult<TokenRecord> {
    Ok(TokenRecord {
        hash: hash_of(row, "token_hash")?,
        info: TokenInfo {
            id: TokenId::from_uuid(get(row, "id")?),
            lenser: LenserId::from_uuid(get(row, "lenser_id")?),
            scopes: scopes(&get::<String>(row, "scopes")?)?,
            client_id: get::<Option<String>>(row, "client_id")?.as_deref().map(client_id).transpose()?,
            family_id: get::<Option<Uuid>>(row, "family_id")?.map(FamilyId::from_uuid),
            resource: get(row, "resource")?,
            label: get(row, "label")?,
            created_at: time(row, "created_at")?,
            expires_at: opt_time(row, "expires_at")?,
            revoked_at: opt_time(row, "revoked_at")?,
            last_used_at: opt_time(row, "last_used_at")?,
        },
    })
}

fn code_from_row(row: &PgRow) -> LfResult<CodeRecord> {
    Ok(CodeRecord {
        hash: hash_of(row, "code_hash")?,
        client_id: client_id(&get::<String>(row, "client_id")?)?,
        lenser: LenserId::from_uuid(get(row, "lenser_id")?),
        redirect_uri: get(row, "redirect_uri")?,
        code_challenge: get(row, "code_challenge")?,
        scopes: scopes(&get::<String>(row, "scopes")?)?,
        resource: get(row, "resource")?,
        family_id: FamilyId::from_uuid(get(row, "family_id")?),
        created_at: time(row, "created_at")?,
        expires_at: time(row, "expires_at")?,
        used_at: opt_time(row, "used_at")?,
    })
}

fn refresh_from_row(row: &PgRow) -> LfResult<RefreshRecord> {
    Ok(RefreshRecord {
        id: TokenId::from_uuid(get(row, "id")?),
        hash: hash_of(row, "token_hash")?,
        family_id: FamilyId::from_uuid(get(row, "family_id")?),
        client_id: client_id(&get::<String>(row, "client_id")?)?,
        lenser: LenserId::from_uuid(get(row, "lenser_id")?),
        scopes: scopes(&get::<String>(row, "scopes")?)?,
        resource: get(row, "resource")?,
        created_at: time(row, "created_at")?,
        expires_at: time(row, "expires_at")?,
        used_at: opt_time(row, "used_at")?,
        revoked_at: opt_time(row, "revoked_at")?,
    })
}

fn client_from_row(row: &PgRow) -> LfResult<OAuthClient> {
    Ok(OAuthClient {
        id: client_id(&get::<String>(row, "id")?)?,
        name: get(row, "name")?,
        redirect_uris: get(row, "redirect_uris")?,
        created_at: time(row, "created_at")?,
    })
}

fn taken(what: &'static str) -> impl FnOnce() -> LfError {
    move || LfError::conflict(format!("That {what} is already taken. Choose another and retry."))
}

async fn insert_token(conn: &mut PgConnection, t: &TokenRecord) -> LfResult<()> {
    let i = &t.info;
    sqlx::query(INSERT_TOKEN)
        .bind(i.id.as_uuid())
        .bind(t.hash.as_bytes().as_slice())
        .bind(i.lenser.as_uuid())
        .bind(scopes_text(i.scopes))
        .bind(i.client_id.as_ref().map(|c| c.as_str().to_owned()))
        .bind(i.family_id.map(|f| f.as_uuid()))
        .bind(i.resource.clone())
        .bind(i.label.clone())
        .bind(dt(i.created_at))
        .bind(opt_dt(i.expires_at))
        .bind(opt_dt(i.revoked_at))
        .bind(opt_dt(i.last_used_at))
        .execute(conn)
        .await
        .map_err(conflict_or(taken("token")))?;
    Ok(())
}

async fn insert_refresh(conn: &mut PgConnection, r: &RefreshRecord) -> LfResult<()> {
    sqlx::query(INSERT_REFRESH)
        .bind(r.id.as_uuid())
        .bind(r.hash.as_bytes().as_slice())
        .bind(r.family_id.as_uuid())
        .bind(r.client_id.as_str().to_owned())
        .bind(r.lenser.as_uuid())
        .bind(scopes_text(r.scopes))
        .bind(r.resource.clone())
        .bind(dt(r.created_at))
        .bind(dt(r.expires_at))
        .bind(opt_dt(r.used_at))
        .bind(opt_dt(r.revoked_at))
        .execute(conn)
        .await
        .map_err(conflict_or(taken("refresh token")))?;
    Ok(())
}

async fn insert_grant(conn: &mut PgConnection, g: &GrantTokens) -> LfResult<()> {
    insert_token(&mut *conn, &g.access).await?;
    insert_refresh(conn, &g.refresh).await
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
        let mut tx = self.pool.begin().await.map_err(map_db_err)?;
        let out = f(&mut tx).await?;
        tx.commit().await.map_err(map_db_err)?;
        Ok(out)
    }
}

#[async_trait]
impl AuthStore for PgAuthStore {
    async fn create_lenser(&self, record: &LenserRecord) -> LfResult<()> {
        let l = &record.lenser;
        self.write(async |conn| {
            sqlx::query(INSERT_LENSER)
                .bind(l.id.as_uuid())
                .bind(l.handle.as_str().to_owned())
                .bind(record.password_hash.clone())
                .bind(dt(l.created_at))
                .execute(&mut *conn)
                .await
                .map_err(conflict_or(|| {
                    LfError::conflict(format!("The handle {} (or the id) is taken.", l.handle))
                }))?;
            Ok(())
        })
        .await
    }

    async fn lenser_by_handle(&self, handle: &Handle) -> LfResult<Option<LenserRecord>> {
        let row = sqlx::query(LENSER_BY_HANDLE)
            .bind(handle.as_str().to_owned())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        row.as_ref().map(lenser_from_row).transpose()
    }

    async fn lenser_by_id(&self, id: LenserId) -> LfResult<Option<Lenser>> {
        let row = sqlx::query(LENSER_BY_ID)
            .bind(id.as_uuid())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        Ok(row.as_ref().map(lenser_from_row).transpose()?.map(|r| r.lenser))
    }

    async fn insert_token(&self, token: &TokenRecord) -> LfResult<()> {
        self.write(async |conn| insert_token(conn, token).await).await
    }

    async fn token_by_hash(&self, hash: &SecretHash) -> LfResult<Option<TokenRecord>> {
        let row = sqlx::query(TOKEN_BY_HASH)
            .bind(hash.as_bytes().as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        row.as_ref().map(token_from_row).transpose()
    }

    async fn touch_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        self.write(async |conn| {
            sqlx::query(TOUCH_TOKEN)
                .bind(id.as_uuid())
                .bind(dt(at))
                .execute(&mut *conn)
                .await
                .map_err(map_db_err)?;
            Ok(())
        })
        .await
    }

    async fn revoke_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        let row = sqlx::query(REVOKE_TOKEN)
            .bind(id.as_uuid())
            .bind(dt(at))
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        row.map(|_| ()).ok_or_else(|| LfError::not_found("Token", id))
    }

    async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<TokenInfo>> {
        let rows = sqlx::query(LIST_TOKENS)
            .bind(lenser.map(|l| l.as_uuid()))
            .bind(opt_dt(active_at))
            .fetch_all(&self.pool)
            .await
            .map_err(map_db_err)?;
        rows.iter().map(|r| token_from_row(r).map(|t| t.info)).collect()
    }

    async fn insert_client(&self, client: &OAuthClient) -> LfResult<()> {
        self.write(async |conn| {
            sqlx::query(INSERT_CLIENT)
                .bind(client.id.as_str().to_owned())
                .bind(client.name.clone())
                .bind(client.redirect_uris.clone())
                .bind(dt(client.created_at))
                .execute(&mut *conn)
                .await
                .map_err(conflict_or(taken("client id")))?;
            Ok(())
        })
        .await
    }

    async fn client(&self, id: &ClientId) -> LfResult<Option<OAuthClient>> {
        let row = sqlx::query(CLIENT_BY_ID)
            .bind(id.as_str().to_owned())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        row.as_ref().map(client_from_row).transpose()
    }

    async fn insert_code(&self, code: &CodeRecord) -> LfResult<()> {
        self.write(async |conn| {
            sqlx::query(INSERT_CODE)
                .bind(code.hash.as_bytes().as_slice())
                .bind(code.client_id.as_str().to_owned())
                .bind(code.lenser.as_uuid())
                .bind(code.redirect_uri.clone())
                .bind(code.code_challenge.clone())
                .bind(scopes_text(code.scopes))
                .bind(code.resource.clone())
                .bind(code.family_id.as_uuid())
                .bind(dt(code.created_at))
                .bind(dt(code.expires_at))
                .bind(opt_dt(code.used_at))
                .execute(&mut *conn)
                .await
                .map_err(conflict_or(taken("code")))?;
            Ok(())
        })
        .await
    }

    async fn code_by_hash(&self, hash: &SecretHash) -> LfResult<Option<CodeRecord>> {
        let row = sqlx::query(CODE_BY_HASH)
            .bind(hash.as_bytes().as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        row.as_ref().map(code_from_row).transpose()
    }

    async fn consume_code(&self, hash: &SecretHash, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        self.write(async |conn| {
            let consumed = sqlx::query(CONSUME_CODE)
                .bind(hash.as_bytes().as_slice())
                .bind(dt(now))
                .execute(&mut *conn)
                .await
                .map_err(map_db_err)?
                .rows_affected();
            if consumed == 0 {
                return Ok(false);
            }
            insert_grant(conn, grant).await?;
            Ok(true)
        })
        .await
    }

    async fn refresh_by_hash(&self, hash: &SecretHash) -> LfResult<Option<RefreshRecord>> {
        let row = sqlx::query(REFRESH_BY_HASH)
            .bind(hash.as_bytes().as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_db_err)?;
        row.as_ref().map(refresh_from_row).transpose()
    }

    async fn rotate_refresh(&self, id: TokenId, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        self.write(async |conn| {
            let rotated = sqlx::query(ROTATE_REFRESH)
                .bind(id.as_uuid())
                .bind(dt(now))
                .execute(&mut *conn)
                .await
                .map_err(map_db_err)?
                .rows_affected();
            if rotated == 0 {
                return Ok(false);
            }
            insert_grant(conn, grant).await?;
            Ok(true)
        })
        .await
    }

    async fn revoke_family(&self, family: FamilyId, at: Timestamp) -> LfResult<()> {
        self.write(async |conn| {
            for sql in [REVOKE_FAMILY_TOKENS, REVOKE_FAMILY_REFRESH] {
                sqlx::query(sql)
                    .bind(family.as_uuid())
                    .bind(dt(at))
                    .execute(&mut *conn)
                    .await
                    .map_err(map_db_err)?;
            }
            Ok(())
        })
        .await
    }

    async fn purge_expired(&self, before: Timestamp) -> LfResult<u64> {
        self.write(async |conn| {
            let mut gone = 0;
            for sql in [PURGE_CODES, PURGE_TOKENS, PURGE_REFRESH] {
                gone += sqlx::query(sql)
                    .bind(dt(before))
                    .execute(&mut *conn)
                    .await
                    .map_err(map_db_err)?
                    .rows_affected();
            }
            Ok(gone)
        })
        .await
    }
}
