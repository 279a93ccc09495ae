//! The public contract suite every [`AuthStore`] runs: the in-memory store
//! here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_auth::contract::suite(Arc::new(MyStore::open().await?)).await;
//! ```
//!
//! Each check uses fresh handles, ids and secrets, so the suite runs against
//! a store that already holds data (a shared PostgreSQL database) and may run
//! several times. A failed check panics with what the contract expected.
//! The checks need no async runtime: concurrent calls are joined by
//! [`lf_core::join_all`], which polls them side by side on the calling task.
//! [`service_flows`] runs the OAuth rules end to end on the store.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use lf_core::{Clock, ErrorCode, FixedClock, LenserId, LfResult, Scopes, Timestamp, join_all};

use crate::error::{AuthFailure, OAuthError, OAuthErrorKind};
use crate::model::{
    ClientId, CodeRecord, FamilyId, GrantTokens, Handle, Lenser, LenserRecord, NO_PASSWORD, OAuthClient,
    RefreshRecord, TokenId, TokenInfo, TokenRecord,
};
use crate::pkce;
use crate::secret::{ACCESS_TOKEN_PREFIX, CODE_PREFIX, REFRESH_TOKEN_PREFIX, SecretHash, new_secret};
use crate::service::{
    AuthConfig, AuthService, AuthorizationRequest, ClientRegistration, NewToken, TokenGrant,
};
use crate::store::AuthStore;

/// Runs every store check, then [`service_flows`], against `store`.
pub async fn suite(store: Arc<dyn AuthStore>) {
    let s = store.as_ref();
    lensers(s).await;
    local_lenser(s).await;
    tokens(s).await;
    token_listing(s).await;
    clients(s).await;
    codes(s).await;
    concurrent_consume(s).await;
    refresh_tokens(s).await;
    families(s).await;
    grants(s).await;
    purging(s).await;
    service_flows(store).await;
}

fn unique_handle() -> Handle {
    Handle::parse(&format!("c_{}", &TokenId::new().as_uuid().simple().to_string()[16..])).unwrap()
}

/// Microseconds within the last few years, different per call.
fn base_time() -> Timestamp {
    Timestamp::from_micros(
        1_700_000_000_000_000 + (TokenId::new().as_uuid().as_u128() % 1_000_000_000) as i64 * 1000,
    )
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

const MINUTE: i64 = 60_000_000;

async fn new_lenser(s: &dyn AuthStore, at: Timestamp) -> Lenser {
    let lenser = Lenser { id: LenserId::new(), handle: unique_handle(), created_at: at };
    s.create_lenser(&LenserRecord {
        lenser: lenser.clone(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA".into(),
    })
    .await
    .expect("create_lenser");
    lenser
}

async fn new_client(s: &dyn AuthStore, at: Timestamp) -> OAuthClient {
    let client = OAuthClient {
        id: ClientId::generate().unwrap(),
        name: "Contract client ✓ «ünïcödé»".into(),
        redirect_uris: vec![
            "https://app.example.com/cb?b=2&a=1".into(),
            "http://127.0.0.1/callback".into(),
            "http://localhost:8080/z".into(),
        ],
        created_at: at,
    };
    s.insert_client(&client).await.expect("insert_client");
    client
}

fn token(lenser: LenserId, at: Timestamp) -> (String, TokenRecord) {
    let secret = new_secret(ACCESS_TOKEN_PREFIX).unwrap();
    let record = TokenRecord {
        hash: SecretHash::of(&secret),
        info: TokenInfo {
            id: TokenId::new(),
            lenser,
            scopes: Scopes::READ,
            client_id: None,
            family_id: None,
            resource: None,
            label: None,
            created_at: at,
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        },
    };
    (secret, record)
}

fn grant(client: &OAuthClient, lenser: LenserId, family: FamilyId, at: Timestamp) -> GrantTokens {
    let (_, mut access) = token(lenser, at);
    access.info.client_id = Some(client.id.clone());
    access.info.family_id = Some(family);
    access.info.scopes = Scopes::READ_WRITE;
    access.info.resource = Some("https://mcp.example.com/mcp".into());
    access.info.expires_at = Some(at.plus_micros(60 * MINUTE));
    let refresh = RefreshRecord {
        id: TokenId::new(),
        hash: SecretHash::of(&new_secret(REFRESH_TOKEN_PREFIX).unwrap()),
        family_id: family,
        client_id: client.id.clone(),
        lenser,
        scopes: Scopes::READ_WRITE,
        resource: Some("https://mcp.example.com/mcp".into()),
        created_at: at,
        expires_at: at.plus_micros(30 * 24 * 60 * MINUTE),
        used_at: None,
        revoked_at: None,
    };
    GrantTokens { access, refresh }
}

fn code_record(client: &OAuthClient, lenser: LenserId, at: Timestamp) -> CodeRecord {
    CodeRecord {
        hash: SecretHash::of(&new_secret(CODE_PREFIX).unwrap()),
        client_id: client.id.clone(),
        lenser,
        redirect_uri: "http://127.0.0.1:5555/callback".into(),
        code_challenge: pkce::s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        scopes: Scopes::READ,
        resource: None,
        family_id: FamilyId::new(),
        created_at: at,
        expires_at: at.plus_micros(5 * MINUTE),
        used_at: None,
    }
}

/// The local lenser: recorded once, then the same whatever the candidate;
/// nothing written for a candidate that is refused. The store may already
/// have one from an earlier run.
async fn local_lenser(s: &dyn AuthStore) {
    let candidate = |handle: Handle| LenserRecord {
        lenser: Lenser { id: LenserId::new(), handle, created_at: base_time() },
        password_hash: NO_PASSWORD.into(),
    };
    let taken = new_lenser(s, base_time()).await;
    let refused = candidate(taken.handle.clone());
    let first = match s.local_lenser(&refused).await {
        // None recorded yet: the taken handle is refused, and nothing is recorded.
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::Conflict, "local_lenser with a taken handle: {e}");
            assert_eq!(s.lenser_by_id(refused.lenser.id).await.expect("lenser_by_id"), None);
            let fresh = candidate(unique_handle());
            let first = s.local_lenser(&fresh).await.expect("local_lenser");
            assert!(first.created, "the first local lenser is created");
            assert_eq!(first.lenser, fresh.lenser, "and is the candidate");
            first
        }
        // One recorded by an earlier run: the candidate is ignored.
        Ok(found) => {
            assert!(!found.created && found.lenser.id != refused.lenser.id, "{found:?}");
            found
        }
    };
    let other = candidate(unique_handle());
    let again = s.local_lenser(&other).await.expect("local_lenser again");
    assert_eq!((again.lenser.clone(), again.created), (first.lenser.clone(), false), "it never changes");
    assert_eq!(s.lenser_by_handle(&other.lenser.handle).await.expect("lenser_by_handle"), None);
    assert_eq!(s.lenser_by_id(first.lenser.id).await.expect("lenser_by_id"), Some(first.lenser.clone()));
    let racing = join_all(
        (0..4)
            .map(|_| {
                let c = candidate(unique_handle());
                Box::pin(async move { s.local_lenser(&c).await })
                    as Pin<Box<dyn Future<Output = LfResult<crate::LocalLenser>> + Send + '_>>
            })
            .collect(),
    )
    .await;
    for r in racing {
        assert_eq!(r.expect("local_lenser concurrently").lenser, first.lenser, "every call agrees");
    }
}

async fn lensers(s: &dyn AuthStore) {
    let at = base_time();
    let a = new_lenser(s, at).await;
    let got = s.lenser_by_handle(&a.handle).await.unwrap().expect("lenser_by_handle finds it");
    assert_eq!(got.lenser, a);
    assert!(got.password_hash.starts_with("$argon2id$"), "the PHC string round-trips");
    assert_eq!(s.lenser_by_id(a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(s.lenser_by_handle(&unique_handle()).await.unwrap(), None);
    assert_eq!(s.lenser_by_id(LenserId::new()).await.unwrap(), None);

    let same_handle =
        LenserRecord { lenser: Lenser { id: LenserId::new(), ..a.clone() }, password_hash: "x".into() };
    assert_eq!(code(s.create_lenser(&same_handle).await), ErrorCode::Conflict, "a taken handle is CONFLICT");
    let same_id =
        LenserRecord { lenser: Lenser { handle: unique_handle(), ..a.clone() }, password_hash: "x".into() };
    assert_eq!(code(s.create_lenser(&same_id).await), ErrorCode::Conflict, "a taken id is CONFLICT");
    assert_eq!(s.lenser_by_handle(&same_id.lenser.handle).await.unwrap(), None, "nothing half-stored");
}

async fn tokens(s: &dyn AuthStore) {
    let at = base_time();
    let owner = new_lenser(s, at).await;
    let client = new_client(s, at).await;

    // Every optional field empty, then every one set.
    let (secret, bare) = token(owner.id, at);
    s.insert_token(&bare).await.expect("insert_token");
    assert_eq!(s.token_by_hash(&SecretHash::of(&secret)).await.unwrap(), Some(bare.clone()));
    let (secret2, mut full) = token(owner.id, at.plus_micros(1));
    full.info.scopes = Scopes::READ_WRITE;
    full.info.client_id = Some(client.id.clone());
    full.info.family_id = Some(FamilyId::new());
    full.info.resource = Some("https://mcp.example.com/mcp".into());
    full.info.label = Some("laptop — «ünïcödé» 'quoted'".into());
    full.info.expires_at = Some(at.plus_micros(MINUTE));
    full.info.revoked_at = Some(at.plus_micros(2));
    full.info.last_used_at = Some(at.plus_micros(3));
    s.insert_token(&full).await.expect("insert_token with every field");
    assert_eq!(s.token_by_hash(&SecretHash::of(&secret2)).await.unwrap(), Some(full.clone()));
    assert_eq!(s.token_by_hash(&SecretHash::of("lf_mcp_unknown")).await.unwrap(), None);

    let (_, mut clash) = token(owner.id, at);
    clash.hash = bare.hash;
    assert_eq!(code(s.insert_token(&clash).await), ErrorCode::Conflict, "a taken hash is CONFLICT");
    let (_, mut clash) = token(owner.id, at);
    clash.info.id = bare.info.id;
    assert_eq!(code(s.insert_token(&clash).await), ErrorCode::Conflict, "a taken id is CONFLICT");

    // touch moves last_used_at forward only.
    s.touch_token(bare.info.id, at.plus_micros(10)).await.unwrap();
    s.touch_token(bare.info.id, at.plus_micros(5)).await.unwrap();
    let got = s.token_by_hash(&bare.hash).await.unwrap().unwrap();
    assert_eq!(got.info.last_used_at, Some(at.plus_micros(10)));
    s.touch_token(TokenId::new(), at).await.expect("touching an unknown token is no error");

    // revoke keeps the first time; NOT_FOUND for an unknown id.
    s.revoke_token(bare.info.id, at.plus_micros(20)).await.unwrap();
    s.revoke_token(bare.info.id, at.plus_micros(30)).await.unwrap();
    let got = s.token_by_hash(&bare.hash).await.unwrap().unwrap();
    assert_eq!(got.info.revoked_at, Some(at.plus_micros(20)));
    assert_eq!(code(s.revoke_token(TokenId::new(), at).await), ErrorCode::NotFound);
}

async fn token_listing(s: &dyn AuthStore) {
    let at = base_time();
    let (a, b) = (new_lenser(s, at).await, new_lenser(s, at).await);
    let mut mine = Vec::new();
    for i in 0..4 {
        let (_, mut t) = token(a.id, at.plus_micros(i));
        match i {
            1 => t.info.revoked_at = Some(at),
            2 => t.info.expires_at = Some(at.plus_micros(100)),
            3 => t.info.expires_at = Some(at.plus_micros(10 * MINUTE)),
            _ => {}
        }
        s.insert_token(&t).await.unwrap();
        mine.push(t.info);
    }
    // Same created_at: ids break the tie, descending.
    let (_, mut twin) = token(a.id, at.plus_micros(3));
    twin.info.id = TokenId::new();
    s.insert_token(&twin).await.unwrap();
    mine.push(twin.info.clone());
    let (_, other) = token(b.id, at);
    s.insert_token(&other).await.unwrap();

    let mut expected = mine.clone();
    expected.sort_by(|x, y| y.created_at.cmp(&x.created_at).then(y.id.cmp(&x.id)));
    let listed = s.list_tokens(Some(a.id), None).await.unwrap();
    assert_eq!(listed, expected, "all of a's tokens, newest first, ids descending on ties");

    let now = at.plus_micros(100);
    let active = s.list_tokens(Some(a.id), Some(now)).await.unwrap();
    let active_ids: Vec<TokenId> = active.iter().map(|t| t.id).collect();
    let expected_ids: Vec<TokenId> = expected.iter().filter(|t| t.is_active(now)).map(|t| t.id).collect();
    assert_eq!(active_ids, expected_ids, "revoked and expired (expires_at <= now) tokens left out");
    assert_eq!(active.len(), 3);

    let all = s.list_tokens(None, None).await.unwrap();
    assert!(all.iter().any(|t| t.id == other.info.id) && all.iter().any(|t| t.id == twin.info.id));
    assert!(all.windows(2).all(|w| (w[0].created_at, w[0].id) >= (w[1].created_at, w[1].id)));
}

async fn clients(s: &dyn AuthStore) {
    let at = base_time();
    let c = new_client(s, at).await;
    assert_eq!(s.client(&c.id).await.unwrap(), Some(c.clone()), "name and redirect URIs in order round-trip");
    assert_eq!(s.client(&ClientId::generate().unwrap()).await.unwrap(), None);
    assert_eq!(code(s.insert_client(&c).await), ErrorCode::Conflict);
    // A client identified by its metadata document's URL.
    let url = format!("https://app.example.com/clients/{}.json?v=1", TokenId::new());
    let by_url = OAuthClient { id: ClientId::parse(&url).unwrap(), ..c };
    s.insert_client(&by_url).await.expect("insert_client of a metadata document's client");
    assert_eq!(s.client(&by_url.id).await.unwrap(), Some(by_url), "a URL client id round-trips");
}

async fn codes(s: &dyn AuthStore) {
    let at = base_time();
    let lenser = new_lenser(s, at).await;
    let client = new_client(s, at).await;
    let mut c = code_record(&client, lenser.id, at);
    c.resource = Some("https://mcp.example.com/mcp".into());
    s.insert_code(&c).await.expect("insert_code");
    assert_eq!(s.code_by_hash(&c.hash).await.unwrap(), Some(c.clone()));
    assert_eq!(s.code_by_hash(&SecretHash::of("lf_code_nope")).await.unwrap(), None);
    assert_eq!(code(s.insert_code(&c).await), ErrorCode::Conflict);

    // Consumed once; the grant lands with it.
    let g = grant(&client, lenser.id, c.family_id, at);
    let now = at.plus_micros(MINUTE);
    assert!(s.consume_code(&c.hash, now, &g).await.unwrap(), "an unused, unexpired code is consumed");
    assert_eq!(s.code_by_hash(&c.hash).await.unwrap().unwrap().used_at, Some(now));
    assert_eq!(s.token_by_hash(&g.access.hash).await.unwrap(), Some(g.access.clone()));
    assert_eq!(s.refresh_by_hash(&g.refresh.hash).await.unwrap(), Some(g.refresh.clone()));

    // Never twice; a failed consume stores nothing.
    let g2 = grant(&client, lenser.id, c.family_id, at);
    assert!(!s.consume_code(&c.hash, now.plus_micros(1), &g2).await.unwrap(), "a used code is not consumed");
    assert_eq!(s.code_by_hash(&c.hash).await.unwrap().unwrap().used_at, Some(now), "used_at kept");
    assert_eq!(s.token_by_hash(&g2.access.hash).await.unwrap(), None);
    assert_eq!(s.refresh_by_hash(&g2.refresh.hash).await.unwrap(), None);

    // Expired: at expires_at it is already too late.
    let late = code_record(&client, lenser.id, at);
    s.insert_code(&late).await.unwrap();
    let g3 = grant(&client, lenser.id, late.family_id, at);
    assert!(
        !s.consume_code(&late.hash, late.expires_at, &g3).await.unwrap(),
        "an expired code is not consumed"
    );
    assert_eq!(s.code_by_hash(&late.hash).await.unwrap().unwrap().used_at, None);
    assert_eq!(s.token_by_hash(&g3.access.hash).await.unwrap(), None);
    assert!(s.consume_code(&late.hash, late.expires_at.plus_micros(-1), &g3).await.unwrap());
    assert!(!s.consume_code(&SecretHash::of("lf_code_unknown"), at, &g3).await.unwrap());
}

/// Many consumes of one code at once: exactly one wins, and only its tokens
/// are stored.
async fn concurrent_consume(s: &dyn AuthStore) {
    let at = base_time();
    let lenser = new_lenser(s, at).await;
    let client = new_client(s, at).await;
    let c = code_record(&client, lenser.id, at);
    s.insert_code(&c).await.unwrap();
    let grants: Vec<GrantTokens> = (0..8).map(|_| grant(&client, lenser.id, c.family_id, at)).collect();
    let now = at.plus_micros(1);
    let hash = c.hash;
    let results: Vec<LfResult<bool>> = join_all(
        grants
            .iter()
            .map(|g| Box::pin(s.consume_code(&hash, now, g)) as Pin<Box<dyn Future<Output = _> + Send + '_>>)
            .collect(),
    )
    .await;
    let won: Vec<usize> = results
        .into_iter()
        .enumerate()
        .filter_map(|(i, r)| r.expect("consume_code under contention").then_some(i))
        .collect();
    assert_eq!(won.len(), 1, "exactly one concurrent consume wins");
    for (i, g) in grants.iter().enumerate() {
        assert_eq!(s.token_by_hash(&g.access.hash).await.unwrap().is_some(), i == won[0]);
    }
}

/// A new lenser and client, and a code of theirs redeemed at `at` for the
/// first tokens of its family.
async fn signed_in(s: &dyn AuthStore, at: Timestamp) -> (Lenser, OAuthClient, CodeRecord, GrantTokens) {
    let lenser = new_lenser(s, at).await;
    let client = new_client(s, at).await;
    let c = code_record(&client, lenser.id, at);
    s.insert_code(&c).await.unwrap();
    let first = grant(&client, lenser.id, c.family_id, at);
    assert!(s.consume_code(&c.hash, at, &first).await.unwrap());
    (lenser, client, c, first)
}

async fn refresh_tokens(s: &dyn AuthStore) {
    let at = base_time();
    let (lenser, client, c, first) = signed_in(s, at).await;
    let old = first.refresh.clone();

    let next = grant(&client, lenser.id, c.family_id, at.plus_micros(5));
    let now = at.plus_micros(5);
    assert!(s.rotate_refresh(old.id, now, &next).await.unwrap(), "an unused refresh token rotates");
    assert_eq!(s.refresh_by_hash(&old.hash).await.unwrap().unwrap().used_at, Some(now));
    assert_eq!(s.refresh_by_hash(&next.refresh.hash).await.unwrap(), Some(next.refresh.clone()));
    assert!(s.token_by_hash(&next.access.hash).await.unwrap().is_some());

    let again = grant(&client, lenser.id, c.family_id, now);
    assert!(!s.rotate_refresh(old.id, now, &again).await.unwrap(), "a used refresh token does not rotate");
    assert_eq!(s.token_by_hash(&again.access.hash).await.unwrap(), None, "and stores nothing");

    // Expired and revoked ones do not rotate either.
    let expired_at = next.refresh.expires_at;
    assert!(!s.rotate_refresh(next.refresh.id, expired_at, &again).await.unwrap());
    s.revoke_family(c.family_id, now).await.unwrap();
    assert!(!s.rotate_refresh(next.refresh.id, now, &again).await.unwrap());
    assert!(!s.rotate_refresh(TokenId::new(), now, &again).await.unwrap());

    // Concurrent rotations of one refresh token: exactly one wins.
    let c = code_record(&client, lenser.id, at);
    s.insert_code(&c).await.unwrap();
    let first = grant(&client, lenser.id, c.family_id, at);
    assert!(s.consume_code(&c.hash, at, &first).await.unwrap());
    let grants: Vec<GrantTokens> = (0..6).map(|_| grant(&client, lenser.id, c.family_id, at)).collect();
    let id = first.refresh.id;
    let results: Vec<LfResult<bool>> = join_all(
        grants
            .iter()
            .map(|g| Box::pin(s.rotate_refresh(id, now, g)) as Pin<Box<dyn Future<Output = _> + Send + '_>>)
            .collect(),
    )
    .await;
    assert_eq!(results.into_iter().filter(|r| *r.as_ref().expect("rotate_refresh")).count(), 1);
}

async fn families(s: &dyn AuthStore) {
    let at = base_time();
    let lenser = new_lenser(s, at).await;
    let client = new_client(s, at).await;
    let (family, bystander) = (FamilyId::new(), FamilyId::new());
    let mut in_family = Vec::new();
    for f in [family, family, bystander] {
        let c = CodeRecord { family_id: f, ..code_record(&client, lenser.id, at) };
        s.insert_code(&c).await.unwrap();
        let g = grant(&client, lenser.id, f, at);
        assert!(s.consume_code(&c.hash, at, &g).await.unwrap());
        in_family.push(g);
    }
    // Revoking one access token of the family revokes all of it at once.
    let first = at.plus_micros(1);
    s.revoke_token(in_family[0].access.info.id, first).await.expect("revoke_token of a family's token");
    let revoked = |i: usize| {
        let g = &in_family[i];
        async move {
            let access = s.token_by_hash(&g.access.hash).await.unwrap().unwrap();
            let refresh = s.refresh_by_hash(&g.refresh.hash).await.unwrap().unwrap();
            (access.info.revoked_at, refresh.revoked_at)
        }
    };
    for i in 0..2 {
        assert_eq!(revoked(i).await, (Some(first), Some(first)), "revoke_token: every token of the family");
    }
    assert_eq!(revoked(2).await, (None, None), "another family is untouched");
    // Revoking again keeps the first time.
    s.revoke_family(family, at.plus_micros(9)).await.unwrap();
    assert_eq!(revoked(1).await, (Some(first), Some(first)), "revoke_family keeps the first time");
    // A refresh token's id revokes its family too.
    let later = at.plus_micros(20);
    s.revoke_token(in_family[2].refresh.id, later).await.expect("revoke_token of a refresh token");
    assert_eq!(revoked(2).await, (Some(later), Some(later)), "revoke_token by a refresh token's id");
    s.revoke_family(FamilyId::new(), later).await.expect("an unknown family is no error");
}

/// Grants: one per family, made of its refresh and access tokens.
async fn grants(s: &dyn AuthStore) {
    let at = base_time();
    let (lenser, client, c, first) = signed_in(s, at).await;
    s.touch_token(first.access.info.id, at.plus_micros(5)).await.unwrap();
    let rotated = at.plus_micros(10);
    let second = grant(&client, lenser.id, c.family_id, rotated);
    assert!(s.rotate_refresh(first.refresh.id, rotated, &second).await.unwrap());
    let other = code_record(&client, lenser.id, at);
    s.insert_code(&other).await.unwrap();
    let later = grant(&client, lenser.id, other.family_id, at.plus_micros(30));
    assert!(s.consume_code(&other.hash, at.plus_micros(30), &later).await.unwrap());
    // An admin token is no grant.
    let (_, admin) = token(lenser.id, at);
    s.insert_token(&admin).await.unwrap();

    let listed = s.list_grants(Some(lenser.id), None).await.expect("list_grants");
    assert_eq!(listed.len(), 2, "one grant per family: {listed:?}");
    assert_eq!(listed[0].family_id, other.family_id, "newest first");
    let g = &listed[1];
    assert_eq!((g.id, g.family_id), (second.refresh.id, c.family_id), "the newest refresh token's id");
    assert_eq!((g.lenser, &g.client_id, g.scopes), (lenser.id, &client.id, Scopes::READ_WRITE));
    assert_eq!(g.created_at, at, "when the user signed in");
    assert_eq!(g.last_used_at, Some(rotated), "the refresh is the latest use");
    assert_eq!((g.expires_at, g.revoked_at), (second.refresh.expires_at, None));
    s.touch_token(second.access.info.id, at.plus_micros(40)).await.unwrap();
    let touched = s.list_grants(Some(lenser.id), None).await.unwrap();
    assert_eq!(touched[1].last_used_at, Some(at.plus_micros(40)), "or an access token's use");

    let now = at.plus_micros(50);
    s.revoke_token(g.id, now).await.expect("revoke_token of a grant's id");
    let active = s.list_grants(Some(lenser.id), Some(now)).await.unwrap();
    assert_eq!(
        active.iter().map(|g| g.family_id).collect::<Vec<_>>(),
        [other.family_id],
        "revoked: inactive"
    );
    let all = s.list_grants(Some(lenser.id), None).await.unwrap();
    assert_eq!(all[1].revoked_at, Some(now));
    let expired = s.list_grants(Some(lenser.id), Some(later.refresh.expires_at)).await.unwrap();
    assert!(expired.is_empty(), "expired: inactive");
    let everyone = s.list_grants(None, None).await.unwrap();
    assert!(everyone.iter().filter(|g| g.lenser == lenser.id).count() == 2);
}

async fn purging(s: &dyn AuthStore) {
    // Long before every other check's rows (2001), so that purging, which
    // deletes everything expired before a time, never takes theirs, even
    // while another run of the suite shares the database.
    let at = Timestamp::from_micros(1_000_000_000_000_000 + base_time().as_micros() % 1_000_000_000_000);
    let lenser = new_lenser(s, at).await;
    let client = new_client(s, at).await;
    let old_code = code_record(&client, lenser.id, at);
    s.insert_code(&old_code).await.unwrap();
    let used = code_record(&client, lenser.id, at);
    s.insert_code(&used).await.unwrap();
    let g = grant(&client, lenser.id, used.family_id, at);
    assert!(s.consume_code(&used.hash, at, &g).await.unwrap());
    let (_, admin) = token(lenser.id, at);
    let admin =
        TokenRecord { info: TokenInfo { expires_at: Some(at.plus_micros(1)), ..admin.info }, ..admin };
    s.insert_token(&admin).await.unwrap();
    let (_, session) = token(lenser.id, at);
    let session = TokenRecord {
        info: TokenInfo {
            expires_at: Some(at.plus_micros(1)),
            label: Some(crate::SESSION_LABEL.into()),
            resource: Some("https://mcp.example.com/pages".into()),
            ..session.info
        },
        ..session
    };
    s.insert_token(&session).await.unwrap();
    let (_, live) = token(lenser.id, at);
    let far = g.refresh.expires_at.plus_micros(1_000_000_000);
    let live = TokenRecord {
        info: TokenInfo { expires_at: Some(far), label: Some(crate::SESSION_LABEL.into()), ..live.info },
        ..live
    };
    s.insert_token(&live).await.unwrap();

    // Before anything expired: nothing of these goes.
    s.purge_expired(at).await.unwrap();
    assert!(s.code_by_hash(&old_code.hash).await.unwrap().is_some());
    assert!(s.token_by_hash(&g.access.hash).await.unwrap().is_some());
    assert!(s.token_by_hash(&session.hash).await.unwrap().is_some());

    let later = g.refresh.expires_at.plus_micros(1);
    let gone = s.purge_expired(later).await.unwrap();
    assert!(gone >= 5, "two codes, an access token, a refresh token and a session, got {gone}");
    assert_eq!(s.token_by_hash(&session.hash).await.unwrap(), None, "an expired page session goes");
    assert!(s.token_by_hash(&live.hash).await.unwrap().is_some(), "a live one stays");
    assert_eq!(s.code_by_hash(&old_code.hash).await.unwrap(), None);
    assert_eq!(s.code_by_hash(&used.hash).await.unwrap(), None);
    assert_eq!(s.token_by_hash(&g.access.hash).await.unwrap(), None);
    assert_eq!(s.refresh_by_hash(&g.refresh.hash).await.unwrap(), None);
    assert!(s.token_by_hash(&admin.hash).await.unwrap().is_some(), "admin-issued tokens are kept");
}

const RESOURCE: &str = "https://mcp.example.com/mcp";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const REDIRECT: &str = "http://127.0.0.1:41234/callback";

/// A service over `store` with a fixed clock, and a client and lenser of
/// its own, for flows.
pub struct Flow {
    /// The service.
    pub auth: Arc<AuthService>,
    /// The clock, to move past expiries.
    pub clock: Arc<FixedClock>,
    /// A registered client (redirect URI `http://127.0.0.1/callback`).
    pub client: OAuthClient,
    /// A lenser with an account.
    pub lenser: LenserId,
}

impl Flow {
    /// Sets up a service (resource `https://mcp.example.com/mcp`), a lenser
    /// and a client on `store`.
    pub async fn new(store: Arc<dyn AuthStore>) -> Flow {
        let clock = Arc::new(FixedClock::new(base_time(), chrono_micros(1)));
        let config = AuthConfig { resources: vec![RESOURCE.into()], ..AuthConfig::default() };
        let auth = Arc::new(AuthService::new(store.clone(), clock.clone() as Arc<dyn Clock>, config));
        let lenser = new_lenser(store.as_ref(), clock.now()).await.id;
        let client = auth
            .register_client(ClientRegistration {
                client_name: Some("Flow".into()),
                redirect_uris: vec!["http://127.0.0.1/callback".into()],
                ..Default::default()
            })
            .await
            .expect("register_client");
        Flow { auth, clock, client, lenser }
    }

    /// A fresh code for [`REDIRECT`] and the RFC 7636 verifier.
    pub async fn code(&self) -> String {
        let req = AuthorizationRequest {
            response_type: Some("code".into()),
            client_id: Some(self.client.id.to_string()),
            redirect_uri: Some(REDIRECT.into()),
            code_challenge: Some(pkce::s256_challenge(VERIFIER)),
            code_challenge_method: Some("S256".into()),
            resource: Some(RESOURCE.into()),
            ..Default::default()
        };
        let valid = self.auth.validate_authorization(&req).await.expect("validate_authorization");
        self.auth.issue_code(&valid, self.lenser).await.expect("issue_code").code
    }

    /// Redeems `code` as the flow's client would.
    pub async fn redeem(&self, code: &str) -> Result<TokenGrant, OAuthError> {
        self.auth.redeem_code(self.client.id.as_str(), code, REDIRECT, VERIFIER, Some(RESOURCE)).await
    }

    /// Moves the clock.
    pub fn advance(&self, by: Duration) {
        self.clock.advance(chrono::TimeDelta::from_std(by).unwrap_or(chrono::TimeDelta::MAX));
    }
}

fn chrono_micros(n: i64) -> chrono::TimeDelta {
    chrono::TimeDelta::microseconds(n)
}

/// The OAuth rules end to end on `store`: code replay, concurrent redeems,
/// expiry, refresh rotation and replay, revocation, token authentication.
pub async fn service_flows(store: Arc<dyn AuthStore>) {
    // A redeemed code works once; its replay revokes what it became.
    let f = Flow::new(store.clone()).await;
    let code = f.code().await;
    let grant = f.redeem(&code).await.expect("the first redeem succeeds");
    let who = f.auth.authenticate(&grant.access_token, RESOURCE).await.unwrap().expect("the token works");
    assert_eq!((who.lenser, who.scopes), (f.lenser, Scopes::READ_WRITE));
    assert_eq!(f.redeem(&code).await.unwrap_err().kind, OAuthErrorKind::InvalidGrant, "a code works once");
    assert_eq!(f.redeem(&code).await.unwrap_err().kind, OAuthErrorKind::InvalidGrant, "twice in a row");
    assert_eq!(
        f.auth.authenticate(&grant.access_token, RESOURCE).await.unwrap(),
        Err(AuthFailure::Revoked),
        "a replayed code revokes the tokens it was turned into"
    );

    // Concurrent redeems: exactly one wins.
    let code = f.code().await;
    let results: Vec<Result<TokenGrant, OAuthError>> = join_all(
        (0..6).map(|_| Box::pin(f.redeem(&code)) as Pin<Box<dyn Future<Output = _> + Send + '_>>).collect(),
    )
    .await;
    let wins = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(wins, 1, "exactly one of concurrent redeems wins");
    assert!(results.iter().filter_map(|r| r.as_ref().err()).all(|e| e.kind == OAuthErrorKind::InvalidGrant));

    // A failed redeem does not consume the code.
    let code = f.code().await;
    let other = Flow::new(store.clone()).await;
    let wrong_verifier = "x".repeat(43);
    let id = f.client.id.as_str();
    assert_eq!(
        f.auth.redeem_code(id, &code, REDIRECT, &wrong_verifier, None).await.unwrap_err().kind,
        OAuthErrorKind::InvalidGrant
    );
    assert_eq!(
        f.auth
            .redeem_code(id, &code, "http://127.0.0.1:41234/callback/", VERIFIER, None)
            .await
            .unwrap_err()
            .kind,
        OAuthErrorKind::InvalidGrant
    );
    assert_eq!(
        f.auth.redeem_code(other.client.id.as_str(), &code, REDIRECT, VERIFIER, None).await.unwrap_err().kind,
        OAuthErrorKind::InvalidGrant,
        "another client's code"
    );
    let grant = f.redeem(&code).await.expect("the code survived the failed attempts");

    // Refresh rotation; replay revokes the family.
    let rotated = f.auth.refresh(id, &grant.refresh_token, Some("read"), None).await.expect("refresh");
    assert_eq!(rotated.scopes, Scopes::READ, "scope narrowed for the access token");
    let again = f.auth.refresh(id, &rotated.refresh_token, None, None).await.expect("the new one works");
    assert_eq!(again.scopes, Scopes::READ_WRITE, "the grant keeps its scopes");
    assert_eq!(
        f.auth.refresh(id, &grant.refresh_token, None, None).await.unwrap_err().kind,
        OAuthErrorKind::InvalidGrant,
        "a used refresh token fails"
    );
    for t in [&grant.access_token, &rotated.access_token, &again.access_token] {
        assert_eq!(f.auth.authenticate(t, RESOURCE).await.unwrap(), Err(AuthFailure::Revoked));
    }
    assert_eq!(
        f.auth.refresh(id, &again.refresh_token, None, None).await.unwrap_err().kind,
        OAuthErrorKind::InvalidGrant,
        "the whole family is revoked"
    );

    // Expiry, by the clock.
    let code = f.code().await;
    f.advance(f.auth.config().code_ttl);
    assert_eq!(f.redeem(&code).await.unwrap_err().kind, OAuthErrorKind::InvalidGrant, "an expired code");
    let grant = f.redeem(&f.code().await).await.unwrap();
    f.advance(f.auth.config().access_ttl);
    assert_eq!(f.auth.authenticate(&grant.access_token, RESOURCE).await.unwrap(), Err(AuthFailure::Expired));
    let fresh = f.auth.refresh(id, &grant.refresh_token, None, None).await.expect("refresh outlives access");
    assert!(f.auth.authenticate(&fresh.access_token, RESOURCE).await.unwrap().is_ok());
    assert_eq!(
        f.auth.authenticate(&fresh.access_token, "https://other.example.com/mcp").await.unwrap(),
        Err(AuthFailure::WrongResource)
    );

    // RFC 7009 revocation of a refresh token revokes its family.
    f.auth.revoke(&fresh.refresh_token, id).await.expect("revoke");
    assert_eq!(f.auth.authenticate(&fresh.access_token, RESOURCE).await.unwrap(), Err(AuthFailure::Revoked));
    f.auth.revoke("lf_mcp_not-a-token", id).await.expect("an unknown token is no error");

    // Admin tokens.
    let issued = f
        .auth
        .issue_token(NewToken {
            lenser: f.lenser,
            scopes: Scopes::READ,
            resource: None,
            ttl: None,
            label: None,
        })
        .await
        .unwrap();
    let who = f.auth.authenticate(&issued.secret, "http://127.0.0.1:8080/mcp").await.unwrap().unwrap();
    assert_eq!((who.token_id, who.scopes), (issued.info.id, Scopes::READ));
    f.auth.revoke_token(issued.info.id).await.unwrap();
    assert_eq!(f.auth.authenticate(&issued.secret, RESOURCE).await.unwrap(), Err(AuthFailure::Revoked));
    let listed = f.auth.list_tokens(Some(f.lenser), true).await.unwrap();
    assert!(listed.iter().any(|t| t.id == issued.info.id));
    assert!(f.auth.list_tokens(Some(f.lenser), false).await.unwrap().iter().all(|t| t.revoked_at.is_none()));
}
