//! An in-memory [`AuthStore`]: for tests, examples and apps that embed
//! lf-auth without a database. Same contract as the SQL stores: every
//! method runs under one lock, so the conditional writes are atomic.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use lf_core::{LenserId, LfError, LfResult, Timestamp};

use crate::model::{
    ClientId, CodeRecord, FamilyId, GrantInfo, GrantTokens, Handle, Lenser, LenserRecord, LocalLenser,
    OAuthClient, RefreshRecord, SESSION_LABEL, TokenId, TokenInfo, TokenRecord,
};
use crate::secret::SecretHash;
use crate::store::AuthStore;

#[derive(Default)]
struct Inner {
    lensers: HashMap<LenserId, LenserRecord>,
    handles: HashMap<Handle, LenserId>,
    tokens: HashMap<TokenId, TokenRecord>,
    token_hashes: HashMap<SecretHash, TokenId>,
    clients: HashMap<ClientId, OAuthClient>,
    codes: HashMap<SecretHash, CodeRecord>,
    refresh: HashMap<TokenId, RefreshRecord>,
    refresh_hashes: HashMap<SecretHash, TokenId>,
    local: Option<LenserId>,
}

fn taken(what: &str) -> LfError {
    LfError::conflict(format!("That {what} is already taken. Choose another and retry."))
}

/// A row that breaks the store's contract (a token of a lenser or client
/// that does not exist): a bug in the caller, hence INTERNAL, as the SQL
/// stores' foreign keys answer.
fn dangling(what: &str) -> LfError {
    LfError::internal(format!("refused a row naming a {what} that does not exist"))
}

/// Revokes every token of `family` not revoked yet.
fn revoke_family_in(s: &mut Inner, family: FamilyId, at: Timestamp) {
    for t in s.tokens.values_mut().filter(|t| t.info.family_id == Some(family)) {
        t.info.revoked_at.get_or_insert(at);
    }
    for r in s.refresh.values_mut().filter(|r| r.family_id == family) {
        r.revoked_at.get_or_insert(at);
    }
}

impl Inner {
    fn put_lenser(&mut self, record: &LenserRecord) -> LfResult<()> {
        if self.handles.contains_key(&record.lenser.handle) {
            return Err(taken("handle"));
        }
        if self.lensers.contains_key(&record.lenser.id) {
            return Err(taken("lenser id"));
        }
        self.handles.insert(record.lenser.handle.clone(), record.lenser.id);
        self.lensers.insert(record.lenser.id, record.clone());
        Ok(())
    }

    fn check_owner(&self, lenser: LenserId, client: Option<&ClientId>) -> LfResult<()> {
        if !self.lensers.contains_key(&lenser) {
            return Err(dangling("lenser"));
        }
        match client {
            Some(c) if !self.clients.contains_key(c) => Err(dangling("client")),
            _ => Ok(()),
        }
    }

    fn check_token(&self, t: &TokenRecord) -> LfResult<()> {
        if self.tokens.contains_key(&t.info.id) || self.refresh.contains_key(&t.info.id) {
            return Err(taken("token id"));
        }
        if self.token_hashes.contains_key(&t.hash) {
            return Err(taken("token"));
        }
        self.check_owner(t.info.lenser, t.info.client_id.as_ref())
    }

    fn check_refresh(&self, r: &RefreshRecord) -> LfResult<()> {
        if self.tokens.contains_key(&r.id) || self.refresh.contains_key(&r.id) {
            return Err(taken("token id"));
        }
        if self.refresh_hashes.contains_key(&r.hash) {
            return Err(taken("refresh token"));
        }
        self.check_owner(r.lenser, Some(&r.client_id))
    }

    fn check_grant(&self, g: &GrantTokens) -> LfResult<()> {
        self.check_token(&g.access)?;
        self.check_refresh(&g.refresh)?;
        if g.access.info.id == g.refresh.id {
            return Err(taken("token id"));
        }
        Ok(())
    }

    fn put_token(&mut self, t: &TokenRecord) {
        self.token_hashes.insert(t.hash, t.info.id);
        self.tokens.insert(t.info.id, t.clone());
    }

    fn put_refresh(&mut self, r: &RefreshRecord) {
        self.refresh_hashes.insert(r.hash, r.id);
        self.refresh.insert(r.id, r.clone());
    }

    fn put_grant(&mut self, g: &GrantTokens) {
        self.put_token(&g.access);
        self.put_refresh(&g.refresh);
    }
}

/// An [`AuthStore`] kept in process memory.
#[derive(Default)]
pub struct MemoryAuthStore {
    inner: Mutex<Inner>,
}

impl MemoryAuthStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl AuthStore for MemoryAuthStore {
    async fn create_lenser(&self, record: &LenserRecord) -> LfResult<()> {
        self.lock().put_lenser(record)
    }

    async fn lenser_by_handle(&self, handle: &Handle) -> LfResult<Option<LenserRecord>> {
        let s = self.lock();
        Ok(s.handles.get(handle).and_then(|id| s.lensers.get(id)).cloned())
    }

    async fn lenser_by_id(&self, id: LenserId) -> LfResult<Option<Lenser>> {
        Ok(self.lock().lensers.get(&id).map(|r| r.lenser.clone()))
    }

    async fn local_lenser(&self, candidate: &LenserRecord) -> LfResult<LocalLenser> {
        let mut s = self.lock();
        if let Some(record) = s.local.and_then(|id| s.lensers.get(&id)) {
            return Ok(LocalLenser { lenser: record.lenser.clone(), created: false });
        }
        s.put_lenser(candidate)?;
        s.local = Some(candidate.lenser.id);
        Ok(LocalLenser { lenser: candidate.lenser.clone(), created: true })
    }

    async fn insert_token(&self, token: &TokenRecord) -> LfResult<()> {
        let mut s = self.lock();
        s.check_token(token)?;
        s.put_token(token);
        Ok(())
    }

    async fn token_by_hash(&self, hash: &SecretHash) -> LfResult<Option<TokenRecord>> {
        let s = self.lock();
        Ok(s.token_hashes.get(hash).and_then(|id| s.tokens.get(id)).cloned())
    }

    async fn touch_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        if let Some(t) = self.lock().tokens.get_mut(&id)
            && t.info.last_used_at.is_none_or(|last| last < at)
        {
            t.info.last_used_at = Some(at);
        }
        Ok(())
    }

    async fn revoke_token(&self, id: TokenId, at: Timestamp) -> LfResult<()> {
        let mut s = self.lock();
        let family = match s.tokens.get_mut(&id) {
            Some(t) => match t.info.family_id {
                Some(family) => family,
                None => {
                    t.info.revoked_at.get_or_insert(at);
                    return Ok(());
                }
            },
            None => s.refresh.get(&id).ok_or_else(|| LfError::not_found("Token", id))?.family_id,
        };
        revoke_family_in(&mut s, family, at);
        Ok(())
    }

    async fn list_grants(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<GrantInfo>> {
        let s = self.lock();
        let mut families: HashMap<FamilyId, Vec<&RefreshRecord>> = HashMap::new();
        for r in s.refresh.values() {
            families.entry(r.family_id).or_default().push(r);
        }
        let mut out: Vec<GrantInfo> = families
            .into_iter()
            .filter_map(|(family, refresh)| {
                let newest = refresh.iter().find(|r| r.used_at.is_none())?;
                let used = refresh.iter().filter_map(|r| r.used_at);
                let accessed = s
                    .tokens
                    .values()
                    .filter(|t| t.info.family_id == Some(family))
                    .filter_map(|t| t.info.last_used_at);
                Some(GrantInfo {
                    id: newest.id,
                    family_id: family,
                    lenser: newest.lenser,
                    client_id: newest.client_id.clone(),
                    scopes: newest.scopes,
                    created_at: refresh.iter().map(|r| r.created_at).min()?,
                    last_used_at: used.chain(accessed).max(),
                    expires_at: newest.expires_at,
                    revoked_at: newest.revoked_at,
                })
            })
            .filter(|g| lenser.is_none_or(|l| g.lenser == l))
            .filter(|g| active_at.is_none_or(|now| g.is_active(now)))
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(out)
    }

    async fn list_tokens(
        &self,
        lenser: Option<LenserId>,
        active_at: Option<Timestamp>,
    ) -> LfResult<Vec<TokenInfo>> {
        let s = self.lock();
        let mut out: Vec<TokenInfo> = s
            .tokens
            .values()
            .map(|t| &t.info)
            .filter(|i| lenser.is_none_or(|l| i.lenser == l))
            .filter(|i| active_at.is_none_or(|now| i.is_active(now)))
            .cloned()
            .collect();
        out.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(out)
    }

    async fn insert_client(&self, client: &OAuthClient) -> LfResult<()> {
        let mut s = self.lock();
        if s.clients.contains_key(&client.id) {
            return Err(taken("client id"));
        }
        s.clients.insert(client.id.clone(), client.clone());
        Ok(())
    }

    async fn client(&self, id: &ClientId) -> LfResult<Option<OAuthClient>> {
        Ok(self.lock().clients.get(id).cloned())
    }

    async fn insert_code(&self, code: &CodeRecord) -> LfResult<()> {
        let mut s = self.lock();
        if s.codes.contains_key(&code.hash) {
            return Err(taken("code"));
        }
        s.check_owner(code.lenser, Some(&code.client_id))?;
        s.codes.insert(code.hash, code.clone());
        Ok(())
    }

    async fn code_by_hash(&self, hash: &SecretHash) -> LfResult<Option<CodeRecord>> {
        Ok(self.lock().codes.get(hash).cloned())
    }

    async fn consume_code(&self, hash: &SecretHash, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        let mut s = self.lock();
        let usable = s.codes.get(hash).is_some_and(|c| c.used_at.is_none() && now < c.expires_at);
        if !usable {
            return Ok(false);
        }
        s.check_grant(grant)?;
        if let Some(c) = s.codes.get_mut(hash) {
            c.used_at = Some(now);
        }
        s.put_grant(grant);
        Ok(true)
    }

    async fn refresh_by_hash(&self, hash: &SecretHash) -> LfResult<Option<RefreshRecord>> {
        let s = self.lock();
        Ok(s.refresh_hashes.get(hash).and_then(|id| s.refresh.get(id)).cloned())
    }

    async fn rotate_refresh(&self, id: TokenId, now: Timestamp, grant: &GrantTokens) -> LfResult<bool> {
        let mut s = self.lock();
        let usable = s
            .refresh
            .get(&id)
            .is_some_and(|r| r.used_at.is_none() && r.revoked_at.is_none() && now < r.expires_at);
        if !usable {
            return Ok(false);
        }
        s.check_grant(grant)?;
        if let Some(r) = s.refresh.get_mut(&id) {
            r.used_at = Some(now);
        }
        s.put_grant(grant);
        Ok(true)
    }

    async fn revoke_family(&self, family: FamilyId, at: Timestamp) -> LfResult<()> {
        revoke_family_in(&mut self.lock(), family, at);
        Ok(())
    }

    async fn purge_expired(&self, before: Timestamp) -> LfResult<u64> {
        let mut s = self.lock();
        let s = &mut *s;
        let mut gone = 0u64;
        s.codes.retain(|_, c| {
            let keep = c.expires_at >= before;
            gone += u64::from(!keep);
            keep
        });
        let refresh_gone: Vec<TokenId> =
            s.refresh.values().filter(|r| r.expires_at < before).map(|r| r.id).collect();
        for id in refresh_gone {
            if let Some(r) = s.refresh.remove(&id) {
                s.refresh_hashes.remove(&r.hash);
                gone += 1;
            }
        }
        let tokens_gone: Vec<TokenId> = s
            .tokens
            .values()
            .filter(|t| {
                (t.info.family_id.is_some() || t.info.label.as_deref() == Some(SESSION_LABEL))
                    && t.info.expires_at.is_some_and(|e| e < before)
            })
            .map(|t| t.info.id)
            .collect();
        for id in tokens_gone {
            if let Some(t) = s.tokens.remove(&id) {
                s.token_hashes.remove(&t.hash);
                gone += 1;
            }
        }
        Ok(gone)
    }
}
