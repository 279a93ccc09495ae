//! Auth rows, as both backends and SQLite's direct reader read and write
//! them (by column name). Both backends store the same columns; timestamps
//! and lists of strings are spelled by each backend's
//! [`crate::dialect::Dialect`]. Reading back is strict: a value lf-auth
//! would refuse is a corrupt row (INTERNAL).

use lf_auth::{
    ClientId, CodeRecord, FamilyId, GrantInfo, Handle, Lenser, LenserRecord, OAuthClient, RefreshRecord,
    SecretHash, TokenId, TokenInfo, TokenRecord,
};
use lf_core::{LenserId, LfResult, Scopes};
use uuid::Uuid;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

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

fn hash_of(row: &impl Columns, column: &str) -> LfResult<SecretHash> {
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

/// The `family_id` of an `access_tokens` or `refresh_tokens` row (none for
/// an admin-issued access token).
pub(crate) fn family_of<R: Columns>(row: &R) -> LfResult<Option<FamilyId>> {
    Ok(row.value::<Option<Uuid>>("family_id")?.map(FamilyId::from_uuid))
}

/// A row of `list_grants`: a family's live refresh token and what its
/// family's tokens say.
pub(crate) fn grant_info<R: Columns>(row: &R) -> LfResult<GrantInfo> {
    let last_refresh = row.opt_time("last_refresh")?;
    let last_access = row.opt_time("last_access")?;
    Ok(GrantInfo {
        id: TokenId::from_uuid(row.value("id")?),
        family_id: FamilyId::from_uuid(row.value("family_id")?),
        lenser: LenserId::from_uuid(row.value("lenser_id")?),
        client_id: client_id(&row.value::<String>("client_id")?)?,
        scopes: scopes(&row.value::<String>("scopes")?)?,
        created_at: row.time("first_created")?,
        last_used_at: last_refresh.max(last_access),
        expires_at: row.time("expires_at")?,
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
