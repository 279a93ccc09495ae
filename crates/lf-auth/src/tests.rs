//! The rules of [`AuthService`] on the in-memory store, with a fixed clock.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{Clock, ErrorCode, FixedClock, LenserId, Scopes, Timestamp};
use pollster::block_on;

use crate::contract;
use crate::service::DUMMY_HASH;
use crate::*;
use lf_core::join_all;

mod oauth;

const RESOURCE: &str = "https://mcp.example.com/mcp";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const REGISTERED: &str = "http://127.0.0.1/callback";
const REDIRECT: &str = "http://127.0.0.1:41234/callback";

struct Env {
    auth: AuthService,
    store: Arc<MemoryAuthStore>,
    clock: Arc<FixedClock>,
}

fn env_with(config: AuthConfig) -> Env {
    let store = Arc::new(MemoryAuthStore::new());
    let clock = Arc::new(FixedClock::new(
        Timestamp::from_micros(1_777_593_600_000_000),
        chrono::TimeDelta::microseconds(1),
    ));
    let auth = AuthService::new(store.clone(), clock.clone() as Arc<dyn Clock>, config);
    Env { auth, store, clock }
}

const ISSUER: &str = "https://mcp.example.com";

fn env() -> Env {
    env_with(AuthConfig {
        resources: vec![RESOURCE.into()],
        issuer: Some(ISSUER.into()),
        ..AuthConfig::default()
    })
}

impl Env {
    fn advance(&self, d: Duration) {
        self.clock.advance(chrono::TimeDelta::from_std(d).unwrap());
    }

    /// A lenser without paying for argon2: a record straight into the store.
    fn lenser(&self) -> LenserId {
        let lenser = Lenser {
            id: LenserId::new(),
            handle: Handle::parse(&format!("u{}", &TokenId::new().as_uuid().simple().to_string()[20..]))
                .unwrap(),
            created_at: self.clock.now(),
        };
        block_on(
            self.store
                .create_lenser(&LenserRecord { lenser: lenser.clone(), password_hash: DUMMY_HASH.into() }),
        )
        .unwrap();
        lenser.id
    }

    fn client(&self) -> OAuthClient {
        block_on(self.auth.register_client(ClientRegistration {
            client_name: Some("Test client".into()),
            redirect_uris: vec![REGISTERED.into(), "https://app.example.com/cb".into()],
            ..Default::default()
        }))
        .unwrap()
    }

    fn request(&self, client: &OAuthClient) -> AuthorizationRequest {
        AuthorizationRequest {
            response_type: Some("code".into()),
            client_id: Some(client.id.to_string()),
            redirect_uri: Some(REDIRECT.into()),
            scope: None,
            state: Some("st&te".into()),
            code_challenge: Some(CHALLENGE.into()),
            code_challenge_method: Some("S256".into()),
            resource: Some(RESOURCE.into()),
        }
    }

    fn code(&self, client: &OAuthClient, lenser: LenserId) -> String {
        let valid = block_on(self.auth.validate_authorization(&self.request(client))).unwrap();
        block_on(self.auth.issue_code(&valid, lenser)).unwrap().code
    }

    fn redeem(&self, client: &OAuthClient, code: &str) -> Result<TokenGrant, OAuthError> {
        block_on(self.auth.redeem_code(client.id.as_str(), code, REDIRECT, VERIFIER, None))
    }

    fn grant(&self) -> (OAuthClient, LenserId, TokenGrant) {
        let (client, lenser) = (self.client(), self.lenser());
        let code = self.code(&client, lenser);
        let grant = self.redeem(&client, &code).unwrap();
        (client, lenser, grant)
    }

    fn auth(&self, token: &str) -> Result<Authenticated, AuthFailure> {
        block_on(self.auth.authenticate(token, RESOURCE)).unwrap()
    }
}

fn kind<T: std::fmt::Debug>(r: Result<T, OAuthError>) -> OAuthErrorKind {
    r.unwrap_err().kind
}

#[test]
fn contract_suite_on_the_memory_store() {
    block_on(contract::suite(Arc::new(MemoryAuthStore::new())));
}

// ----- Accounts -------------------------------------------------------------

#[test]
fn accounts_sign_in_with_one_uniform_failure() {
    let e = env();
    let me = block_on(e.auth.create_lenser("Alice_1", "correct horse battery")).unwrap();
    assert_eq!(me.handle.as_str(), "alice_1");
    let stored = block_on(e.store.lenser_by_handle(&me.handle)).unwrap().unwrap();
    assert!(
        stored.password_hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "argon2id, default parameters"
    );
    assert!(!stored.password_hash.contains("correct horse"));
    assert_eq!(block_on(e.auth.find_lenser("ALICE_1")).unwrap(), Some(me.clone()));
    assert_eq!(block_on(e.auth.find_lenser("nobody")).unwrap(), None);
    assert_eq!(block_on(e.auth.lenser(me.id)).unwrap(), Some(me.clone()));

    assert_eq!(block_on(e.auth.verify_password("alice_1", "correct horse battery")).unwrap(), me.id);
    let failures = [
        block_on(e.auth.verify_password("alice_1", "wrong horse battery")).unwrap_err(),
        block_on(e.auth.verify_password("nobody", "correct horse battery")).unwrap_err(),
        block_on(e.auth.verify_password("no such handle!", "correct horse battery")).unwrap_err(),
        block_on(e.auth.verify_password("alice_1", "short")).unwrap_err(),
    ];
    for f in &failures {
        assert_eq!((f.code(), f.message()), (ErrorCode::PermissionDenied, sign_in_failed().message()));
    }
}

#[test]
fn unknown_handles_are_checked_against_a_real_default_hash() {
    let e = env();
    let check = block_on(e.auth.sign_in_check("nobody_here")).unwrap();
    assert_eq!(check.lenser, None);
    assert_eq!(check.hash, DUMMY_HASH);
    // The same algorithm and cost as a real hash, so the same time.
    let real = hash_password(&Password::parse("some password").unwrap()).unwrap();
    let params = |h: &str| h.rsplitn(3, '$').nth(2).unwrap().to_owned();
    assert_eq!(params(DUMMY_HASH), params(&real));
    // And it is a hash that verifies, so argon2 runs in full.
    let dummy = argon2::PasswordHash::new(DUMMY_HASH).unwrap();
    use argon2::PasswordVerifier;
    argon2::Argon2::default()
        .verify_password(b"no one knows this password: lenserfight dummy", &dummy)
        .expect("the dummy hash is a real argon2id hash");
    let err = check.verify("no one knows this password: lenserfight dummy").unwrap_err();
    assert_eq!(err.code(), ErrorCode::PermissionDenied, "even its own password signs nobody in");
}

#[test]
fn account_rules() {
    let e = env();
    block_on(e.auth.create_lenser("bob", "password1")).unwrap();
    let taken = block_on(e.auth.create_lenser("BOB", "password2")).unwrap_err();
    assert_eq!(taken.code(), ErrorCode::Conflict);
    for (h, p, field) in
        [("b", "password1", "handle"), ("b-o-b", "password1", "handle"), ("carol", "seven77", "password")]
    {
        let err = block_on(e.auth.create_lenser(h, p)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert!(err.details().iter().any(|(k, v)| k == "field" && *v == lf_core::Detail::Str(field.into())));
    }
    assert_eq!(block_on(e.auth.find_lenser("x")).unwrap_err().code(), ErrorCode::InvalidArgument);
}

// ----- Admin tokens ----------------------------------------------------------

#[test]
fn tokens_are_stored_only_as_hashes() {
    let e = env();
    let me = e.lenser();
    let issued = block_on(e.auth.issue_token(NewToken {
        lenser: me,
        scopes: Scopes::READ_WRITE,
        resource: None,
        ttl: None,
        label: Some("  laptop  ".into()),
    }))
    .unwrap();
    assert!(is_access_token(&issued.secret));
    assert_eq!(issued.info.label.as_deref(), Some("laptop"));
    assert!(!format!("{issued:?}").contains(&issued.secret));
    let stored = block_on(e.store.token_by_hash(&SecretHash::of(&issued.secret))).unwrap().unwrap();
    assert_eq!(stored.info, issued.info);
    assert!(!format!("{stored:?}").contains(&issued.secret[7..]));
    let listed = block_on(e.auth.list_tokens(Some(me), false)).unwrap();
    assert_eq!(listed, vec![issued.info.clone()]);

    let who = e.auth(&issued.secret).unwrap();
    assert_eq!(who.principal(), lf_core::Principal::Lenser { id: me, scopes: Scopes::READ_WRITE });
    // No resource: any resource of this server.
    assert!(block_on(e.auth.authenticate(&issued.secret, "http://127.0.0.1:8080/mcp")).unwrap().is_ok());
}

#[test]
fn authentication_failures_are_typed() {
    let e = env();
    let me = e.lenser();
    let issue = |scopes, resource: Option<&str>, ttl| {
        block_on(e.auth.issue_token(NewToken {
            lenser: me,
            scopes,
            resource: resource.map(str::to_owned),
            ttl,
            label: None,
        }))
        .unwrap()
    };
    for bad in [
        "",
        "Bearer lf_mcp_",
        "lf_mcp_123",
        &format!("lf_mcp_{}", "A".repeat(64)),
        &format!("lf_mcp_{} ", "a".repeat(64)),
        &format!("lf_rt_{}", "a".repeat(64)),
    ] {
        assert_eq!(e.auth(bad), Err(AuthFailure::Malformed), "{bad:?}");
    }
    assert_eq!(e.auth(&format!("lf_mcp_{}", "a".repeat(64))), Err(AuthFailure::Unknown));

    let revoked = issue(Scopes::READ, None, None);
    block_on(e.auth.revoke_token(revoked.info.id)).unwrap();
    block_on(e.auth.revoke_token(revoked.info.id)).expect("revoking twice is fine");
    assert_eq!(e.auth(&revoked.secret), Err(AuthFailure::Revoked));

    let short = issue(Scopes::READ, None, Some(Duration::from_secs(60)));
    assert!(e.auth(&short.secret).is_ok());
    e.advance(Duration::from_secs(60));
    assert_eq!(e.auth(&short.secret), Err(AuthFailure::Expired), "at expires_at it has expired");

    let bound = issue(Scopes::READ, Some(RESOURCE), None);
    assert!(e.auth(&bound.secret).is_ok());
    for other in
        ["https://mcp.example.com/mcp/", "https://evil.example.com/mcp", "http://mcp.example.com/mcp"]
    {
        assert_eq!(
            block_on(e.auth.authenticate(&bound.secret, other)).unwrap(),
            Err(AuthFailure::WrongResource)
        );
    }
    assert_eq!(block_on(e.auth.revoke_token(TokenId::new())).unwrap_err().code(), ErrorCode::NotFound);
    let active = block_on(e.auth.list_tokens(Some(me), false)).unwrap();
    assert_eq!(active.iter().map(|t| t.id).collect::<Vec<_>>(), vec![bound.info.id]);
    assert_eq!(block_on(e.auth.list_tokens(Some(me), true)).unwrap().len(), 3);
    assert_eq!(block_on(e.auth.list_tokens(Some(LenserId::new()), true)).unwrap(), vec![]);
}

#[test]
fn last_used_is_written_at_most_once_per_interval() {
    let e = env();
    let me = e.lenser();
    let t = block_on(e.auth.issue_token(NewToken {
        lenser: me,
        scopes: Scopes::READ,
        resource: None,
        ttl: None,
        label: None,
    }))
    .unwrap();
    let last = || block_on(e.auth.list_tokens(Some(me), true)).unwrap()[0].last_used_at;
    assert_eq!(last(), None);
    e.auth(&t.secret).unwrap();
    let first = last().expect("the first use is recorded");
    e.advance(Duration::from_secs(30));
    e.auth(&t.secret).unwrap();
    assert_eq!(last(), Some(first), "not again within the interval");
    e.advance(Duration::from_secs(31));
    e.auth(&t.secret).unwrap();
    assert!(last().unwrap() > first);
}

#[test]
fn issuing_rules() {
    let e = env();
    let me = e.lenser();
    let new = |scopes, resource: Option<&str>, label: Option<String>, lenser| NewToken {
        lenser,
        scopes,
        resource: resource.map(str::to_owned),
        ttl: None,
        label,
    };
    let err = |n| block_on(e.auth.issue_token(n)).unwrap_err().code();
    assert_eq!(err(new(Scopes { read: false, write: true }, None, None, me)), ErrorCode::InvalidArgument);
    assert_eq!(err(new(Scopes::default(), None, None, me)), ErrorCode::InvalidArgument);
    assert_eq!(err(new(Scopes::READ, None, Some("x".repeat(121)), me)), ErrorCode::InvalidArgument);
    assert_eq!(err(new(Scopes::READ, None, Some("a\nb".into()), me)), ErrorCode::InvalidArgument);
    assert_eq!(
        err(new(Scopes::READ, Some("https://other.example.com/mcp"), None, me)),
        ErrorCode::InvalidArgument
    );
    assert_eq!(err(new(Scopes::READ, None, None, LenserId::new())), ErrorCode::NotFound);
    assert!(block_on(e.auth.issue_token(new(Scopes::READ, None, Some("x".repeat(120)), me))).is_ok());
    let kept = err(new(Scopes::READ, None, Some(" Browser Session ".into()), me));
    assert_eq!(kept, ErrorCode::InvalidArgument, "the sessions' label is theirs alone");

    // With no configured resources, any absolute http(s) URL will do.
    let open = env_with(AuthConfig::default());
    let me = open.lenser();
    let ok = |r: &str| block_on(open.auth.issue_token(new(Scopes::READ, Some(r), None, me))).is_ok();
    assert!(ok("http://127.0.0.1:8080/mcp") && ok("https://x.example/mcp"));
    assert!(
        !ok("ftp://x.example/mcp") && !ok("https://x.example/mcp#f") && !ok("https:///mcp") && !ok("mcp")
    );
}

#[test]
fn purging_keeps_what_still_works() {
    let e = env();
    let (client, me, grant) = e.grant();
    let pending = e.code(&client, me);
    let admin = block_on(e.auth.issue_token(NewToken {
        lenser: me,
        scopes: Scopes::READ,
        resource: None,
        ttl: Some(Duration::from_secs(1)),
        label: None,
    }))
    .unwrap();
    let session = block_on(e.auth.issue_session(me, RESOURCE.into(), Duration::from_secs(60))).unwrap();
    assert_eq!(session.info.label.as_deref(), Some(crate::SESSION_LABEL));
    assert_eq!(block_on(e.auth.purge_expired()).unwrap(), 0);
    e.advance(Duration::from_secs(3600));
    assert_eq!(
        block_on(e.auth.purge_expired()).unwrap(),
        4,
        "the used code, the pending code, the access token, the browser session"
    );
    assert_eq!(block_on(e.store.token_by_hash(&SecretHash::of(&session.secret))).unwrap(), None);
    assert_eq!(block_on(e.store.code_by_hash(&SecretHash::of(&pending))).unwrap(), None);
    assert_eq!(e.auth(&admin.secret), Err(AuthFailure::Expired), "admin tokens are kept");
    block_on(e.auth.refresh(client.id.as_str(), &grant.refresh_token, None, None))
        .expect("refresh tokens are kept until they expire");
}

#[test]
fn a_login_name_makes_a_valid_handle() {
    for (login, handle) in [
        ("alice", "alice"),
        ("Alice.Smith", "alice_smith"),
        ("  j--doe  ", "j_doe"),
        ("José", "jos"),
        ("_x_y_", "x_y"),
        ("me", Handle::FALLBACK),
        ("", Handle::FALLBACK),
        ("éé", Handle::FALLBACK),
        ("a_very_long_login_name_that_goes_on_and_on", "a_very_long_login_name_that_goes"),
    ] {
        let made = Handle::from_login(login);
        assert_eq!(made.as_str(), handle, "{login:?}");
        assert_eq!(Handle::parse(made.as_str()).unwrap(), made, "{login:?} makes a valid handle");
    }
    let long = Handle::from_login("a_very_long_login_name_that_goes_on");
    assert_eq!(long.with_suffix("12").as_str(), "a_very_long_login_name_that_g_12");
    assert_eq!(Handle::from_login("alice").with_suffix("2").as_str(), "alice_2");
    assert!(
        Handle::parse(Handle::from_login("x_y_z_0123456789_0123456789_abc").with_suffix("9").as_str())
            .is_ok()
    );
}

#[test]
fn the_local_lenser_is_created_once_and_never_signs_in() {
    let e = env();
    let alice = block_on(e.auth.create_lenser("alice", "correct horse battery")).unwrap();
    let local = block_on(e.auth.local_lenser("Alice")).unwrap();
    assert!(local.created);
    assert_eq!(local.lenser.handle.as_str(), "alice_2", "alice is taken: a suffix");
    assert_ne!(local.lenser.id, alice.id);
    // Later starts, whatever the login name now is.
    let again = block_on(e.auth.local_lenser("bob")).unwrap();
    assert_eq!((again.lenser, again.created), (local.lenser.clone(), false));
    assert_eq!(block_on(e.auth.find_lenser("bob")).unwrap(), None, "no second account");
    // No password signs in as it, not even the marker itself.
    for password in ["", "correct horse battery", NO_PASSWORD, "!no password"] {
        let e = block_on(e.auth.verify_password("alice_2", password)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::PermissionDenied, "{password:?}");
        assert_eq!(e.message(), sign_in_failed().message(), "the same failure as an unknown handle");
    }
    assert_eq!(block_on(e.auth.verify_password("alice", "correct horse battery")).unwrap(), alice.id);
}
