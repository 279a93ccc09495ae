//! The OAuth 2.1 rules (`service/oauth.rs`): registration, authorization
//! requests, the token endpoint and revocation.

use super::*;

// ----- Client registration ---------------------------------------------------

#[test]
fn registration_rules() {
    let e = env();
    let reg = |name: Option<&str>, uris: &[&str]| ClientRegistration {
        client_name: name.map(str::to_owned),
        redirect_uris: uris.iter().map(|u| (*u).to_owned()).collect(),
        ..Default::default()
    };
    let c = block_on(e.auth.register_client(reg(None, &["https://app.example.com/cb"]))).unwrap();
    assert_eq!(c.name, DEFAULT_CLIENT_NAME);
    assert!(c.id.as_str().starts_with(CLIENT_ID_PREFIX));
    assert_eq!(block_on(e.auth.client(c.id.as_str())).unwrap(), Some(c.clone()));
    assert_eq!(block_on(e.auth.client("lf_client_nope")).unwrap(), None);
    assert_eq!(
        block_on(e.auth.register_client(reg(Some("  "), &["https://a.example/cb"]))).unwrap().name,
        DEFAULT_CLIENT_NAME
    );
    let long = "n".repeat(120);
    assert_eq!(
        block_on(e.auth.register_client(reg(Some(&long), &["https://a.example/cb"]))).unwrap().name,
        long
    );

    let md = OAuthErrorKind::InvalidClientMetadata;
    assert_eq!(
        kind(block_on(e.auth.register_client(reg(Some(&"n".repeat(121)), &["https://a.example/cb"])))),
        md
    );
    assert_eq!(
        kind(block_on(e.auth.register_client(reg(Some("a\u{202E}b"), &["https://a.example/cb"])))),
        md
    );
    assert_eq!(kind(block_on(e.auth.register_client(reg(Some("a\u{7}b"), &["https://a.example/cb"])))), md);
    let ru = OAuthErrorKind::InvalidRedirectUri;
    assert_eq!(kind(block_on(e.auth.register_client(reg(None, &[])))), ru);
    assert_eq!(kind(block_on(e.auth.register_client(reg(None, &["javascript:alert(1)"])))), ru);
    assert_eq!(kind(block_on(e.auth.register_client(reg(None, &["http://example.com/cb"])))), ru);
    let eleven: Vec<String> = (0..11).map(|i| format!("https://a.example/{i}")).collect();
    let eleven: Vec<&str> = eleven.iter().map(String::as_str).collect();
    assert_eq!(kind(block_on(e.auth.register_client(reg(None, &eleven)))), ru);

    let with =
        |grants: Option<&[&str]>, responses: Option<&[&str]>, method: Option<&str>| ClientRegistration {
            grant_types: grants.map(|g| g.iter().map(|s| (*s).to_owned()).collect()),
            response_types: responses.map(|g| g.iter().map(|s| (*s).to_owned()).collect()),
            token_endpoint_auth_method: method.map(str::to_owned),
            ..reg(None, &["https://a.example/cb"])
        };
    assert!(
        block_on(e.auth.register_client(with(
            Some(&["authorization_code", "refresh_token"]),
            Some(&["code"]),
            Some("none")
        )))
        .is_ok()
    );
    assert!(
        block_on(e.auth.register_client(with(None, None, Some("client_secret_basic")))).is_ok(),
        "replaced by none"
    );
    assert_eq!(
        kind(block_on(e.auth.register_client(with(Some(&["implicit", "authorization_code"]), None, None)))),
        md
    );
    assert_eq!(kind(block_on(e.auth.register_client(with(Some(&["refresh_token"]), None, None)))), md);
    assert_eq!(kind(block_on(e.auth.register_client(with(None, Some(&["token"]), None)))), md);
    assert_eq!(kind(block_on(e.auth.register_client(with(None, Some(&[]), None)))), md);
}

// ----- Authorization requests -------------------------------------------------

#[test]
fn authorization_requests_with_a_bad_client_or_redirect_uri_are_refused() {
    let e = env();
    let client = e.client();
    let check = |f: &dyn Fn(&mut AuthorizationRequest)| {
        let mut req = e.request(&client);
        f(&mut req);
        block_on(e.auth.validate_authorization(&req)).unwrap_err()
    };
    let err = check(&|r| r.client_id = None);
    assert_eq!(err.kind, OAuthErrorKind::InvalidRequest);
    let err = check(&|r| r.client_id = Some(ClientId::generate().unwrap().to_string()));
    assert_eq!(err.kind, OAuthErrorKind::InvalidClient);
    let err = check(&|r| r.client_id = Some("lf_client_x".into()));
    assert_eq!(err.kind, OAuthErrorKind::InvalidClient);
    let err = check(&|r| r.redirect_uri = None);
    assert_eq!(err.kind, OAuthErrorKind::InvalidRequest);
    for bad in [
        "http://127.0.0.1/callback/",
        "http://127.0.0.1:41234/other",
        "https://127.0.0.1/callback",
        "http://localhost/callback",
        "http://127.0.0.2/callback",
        "https://app.example.com/cb/",
        "https://app.example.com/cb?x=1",
        "https://evil.example.com/cb",
        "http://app.example.com/cb",
        "javascript:alert(1)",
        "data:text/html,hi",
    ] {
        let err = check(&|r| r.redirect_uri = Some(bad.into()));
        assert_eq!(err.kind, OAuthErrorKind::InvalidRequest, "{bad}");
    }
}

/// The errors a valid client and redirect URI can still carry: each an
/// [`OAuthError`], with nothing to redirect to (the type has no place for
/// it).
#[test]
fn other_authorization_errors_are_refused_too() {
    let e = env();
    let client = e.client();
    let check = |f: &dyn Fn(&mut AuthorizationRequest)| {
        let mut req = e.request(&client);
        f(&mut req);
        block_on(e.auth.validate_authorization(&req)).unwrap_err().kind
    };
    use OAuthErrorKind::*;
    assert_eq!(check(&|r| r.response_type = Some("token".into())), UnsupportedResponseType);
    assert_eq!(check(&|r| r.response_type = None), InvalidRequest);
    assert_eq!(check(&|r| r.code_challenge = None), InvalidRequest);
    assert_eq!(check(&|r| r.code_challenge_method = None), InvalidRequest);
    assert_eq!(check(&|r| r.code_challenge_method = Some("plain".into())), InvalidRequest);
    assert_eq!(check(&|r| r.code_challenge_method = Some("s256".into())), InvalidRequest);
    assert_eq!(check(&|r| r.code_challenge = Some(VERIFIER[..42].into())), InvalidRequest);
    assert_eq!(check(&|r| r.scope = Some("admin".into())), InvalidScope);
    assert_eq!(check(&|r| r.resource = Some("https://other.example.com/mcp".into())), InvalidTarget);
}

#[test]
fn a_valid_request_is_ready_for_consent() {
    let e = env();
    let client = e.client();
    let mut req = e.request(&client);
    req.resource = None;
    req.scope = Some("read".into());
    let valid = block_on(e.auth.validate_authorization(&req)).unwrap();
    assert_eq!(valid.client, client);
    assert_eq!(valid.redirect_uri, REDIRECT, "the requested URI, port included");
    assert_eq!(valid.redirect_host(), "127.0.0.1:41234");
    assert_eq!(valid.scopes, Scopes::READ);
    assert_eq!(valid.resource.as_deref(), Some(RESOURCE), "the configured resource by default");
    assert_eq!(
        valid.deny(),
        format!(
            "{REDIRECT}?error=access_denied&error_description=The%20user%20declined&state=st%26te&iss={}",
            "https%3A%2F%2Fmcp.example.com"
        )
    );
    assert_eq!(kind(valid.clone().narrow(Scopes::READ_WRITE)), OAuthErrorKind::InvalidScope, "no widening");
    let full = block_on(e.auth.validate_authorization(&e.request(&client))).unwrap();
    assert_eq!(full.scopes, Scopes::READ_WRITE, "default scope");
    assert_eq!(full.clone().narrow(Scopes::READ).unwrap().scopes, Scopes::READ);

    let me = e.lenser();
    let issued = block_on(e.auth.issue_code(&full, me)).unwrap();
    assert!(is_code(&issued.code));
    assert_eq!(
        issued.redirect_to,
        format!("{REDIRECT}?code={}&state=st%26te&iss=https%3A%2F%2Fmcp.example.com", issued.code),
        "RFC 9207: the issuer, after the state"
    );
    assert!(!format!("{issued:?}").contains(&issued.code));
    let stored = block_on(e.store.code_by_hash(&SecretHash::of(&issued.code))).unwrap().unwrap();
    assert_eq!((stored.client_id, stored.lenser, stored.redirect_uri.as_str()), (client.id, me, REDIRECT));
    assert_eq!(stored.code_challenge, CHALLENGE);
    assert_eq!(stored.expires_at.as_micros() - stored.created_at.as_micros(), 5 * 60 * 1_000_000);
}

// ----- Token endpoint: codes ---------------------------------------------------

#[test]
fn a_code_is_redeemed_once_with_the_rfc7636_verifier() {
    let e = env();
    let (client, me) = (e.client(), e.lenser());
    let code = e.code(&client, me);
    let grant = e.redeem(&client, &code).unwrap();
    assert!(is_access_token(&grant.access_token) && is_refresh_token(&grant.refresh_token));
    assert_eq!((grant.token_type, grant.expires_in, grant.scope.as_str()), ("Bearer", 3600, "read write"));
    assert!(!format!("{grant:?}").contains(&grant.access_token));
    let who = e.auth(&grant.access_token).unwrap();
    assert_eq!((who.lenser, who.client_id.as_ref()), (me, Some(&client.id)));
    assert_eq!(
        block_on(e.auth.authenticate(&grant.access_token, "https://other.example.com/mcp")).unwrap(),
        Err(AuthFailure::WrongResource),
        "bound to the resource it was issued for"
    );
    assert_eq!(kind(e.redeem(&client, &code)), OAuthErrorKind::InvalidGrant);
    assert_eq!(kind(e.redeem(&client, &code)), OAuthErrorKind::InvalidGrant, "twice in a row");
    assert_eq!(e.auth(&grant.access_token), Err(AuthFailure::Revoked), "replay revokes the code's tokens");
    assert_eq!(
        kind(block_on(e.auth.refresh(client.id.as_str(), &grant.refresh_token, None, None))),
        OAuthErrorKind::InvalidGrant
    );
}

#[test]
fn replay_revocation_can_be_turned_off() {
    let e = env_with(AuthConfig { revoke_on_code_replay: false, ..AuthConfig::default() });
    let (client, me) = (e.client(), e.lenser());
    let code = e.code(&client, me);
    let grant = e.redeem(&client, &code).unwrap();
    assert_eq!(kind(e.redeem(&client, &code)), OAuthErrorKind::InvalidGrant);
    assert!(block_on(e.auth.authenticate(&grant.access_token, RESOURCE)).unwrap().is_ok());
}

#[test]
fn failed_redeems_do_not_consume_the_code() {
    let e = env();
    let (client, me) = (e.client(), e.lenser());
    let other = e.client();
    let code = e.code(&client, me);
    let id = client.id.as_str();
    let try_ = |client_id: &str, code: &str, redirect: &str, verifier: &str, resource: Option<&str>| {
        kind(block_on(e.auth.redeem_code(client_id, code, redirect, verifier, resource)))
    };
    use OAuthErrorKind::*;
    assert_eq!(try_(id, &code, REDIRECT, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", None), InvalidGrant);
    assert_eq!(try_(id, &code, REDIRECT, CHALLENGE, None), InvalidGrant, "plain: the challenge as verifier");
    assert_eq!(try_(id, &code, REDIRECT, &VERIFIER[..42], None), InvalidGrant);
    assert_eq!(try_(id, &code, REDIRECT, "", None), InvalidRequest);
    for redirect in [
        "http://127.0.0.1:41234/callback/",
        "http://127.0.0.1:41235/callback",
        "http://127.0.0.1/callback",
        "http://localhost:41234/callback",
        "https://127.0.0.1:41234/callback",
        "http://127.0.0.1:41234/other",
        "",
    ] {
        assert_eq!(try_(id, &code, redirect, VERIFIER, None), InvalidGrant, "{redirect}");
    }
    assert_eq!(
        try_(other.id.as_str(), &code, REDIRECT, VERIFIER, None),
        InvalidGrant,
        "another client's code"
    );
    assert_eq!(
        try_(&ClientId::generate().unwrap().to_string(), &code, REDIRECT, VERIFIER, None),
        InvalidClient
    );
    assert_eq!(try_("", &code, REDIRECT, VERIFIER, None), InvalidClient);
    assert_eq!(try_(id, &code, REDIRECT, VERIFIER, Some("https://other.example.com/mcp")), InvalidTarget);
    assert_eq!(try_(id, &code.to_uppercase(), REDIRECT, VERIFIER, None), InvalidGrant);
    assert_eq!(try_(id, &format!("lf_code_{}", "0".repeat(64)), REDIRECT, VERIFIER, None), InvalidGrant);
    assert!(block_on(e.store.code_by_hash(&SecretHash::of(&code))).unwrap().unwrap().used_at.is_none());
    block_on(e.auth.redeem_code(id, &code, REDIRECT, VERIFIER, Some(RESOURCE))).expect("still redeemable");
}

#[test]
fn codes_expire_after_five_minutes() {
    let e = env();
    let (client, me) = (e.client(), e.lenser());
    let (code, other) = (e.code(&client, me), e.code(&client, me));
    e.advance(Duration::from_secs(5 * 60 - 1));
    e.redeem(&client, &code).expect("within five minutes");
    e.advance(Duration::from_secs(1));
    assert_eq!(kind(e.redeem(&client, &other)), OAuthErrorKind::InvalidGrant, "five minutes on");
    let stored = block_on(e.store.code_by_hash(&SecretHash::of(&other))).unwrap().unwrap();
    assert_eq!(stored.used_at, None, "an expired code is not consumed either");
    let short = env_with(AuthConfig { code_ttl: Duration::from_secs(10), ..AuthConfig::default() });
    let (client, me) = (short.client(), short.lenser());
    let code = short.code(&client, me);
    short.advance(Duration::from_secs(10));
    assert_eq!(kind(short.redeem(&client, &code)), OAuthErrorKind::InvalidGrant, "the TTL is configurable");
}

#[test]
fn of_concurrent_redeems_exactly_one_wins() {
    let e = env_with(AuthConfig { revoke_on_code_replay: false, ..AuthConfig::default() });
    let (client, me) = (e.client(), e.lenser());
    for _ in 0..5 {
        let code = e.code(&client, me);
        let results: Vec<Result<TokenGrant, OAuthError>> = block_on(join_all(
            (0..8)
                .map(|_| {
                    Box::pin(e.auth.redeem_code(client.id.as_str(), &code, REDIRECT, VERIFIER, None))
                        as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send + '_>>
                })
                .collect(),
        ));
        let winners: Vec<&TokenGrant> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1);
        assert!(block_on(e.auth.authenticate(&winners[0].access_token, RESOURCE)).unwrap().is_ok());
    }
}

// ----- Token endpoint: refresh -------------------------------------------------

#[test]
fn refresh_rotates_and_replay_revokes_the_family() {
    let e = env();
    let (client, _, first) = e.grant();
    let id = client.id.as_str();
    let second = block_on(e.auth.refresh(id, &first.refresh_token, None, Some(RESOURCE))).unwrap();
    assert_ne!(second.refresh_token, first.refresh_token);
    assert!(e.auth(&first.access_token).is_ok(), "rotation alone revokes nothing");
    assert!(e.auth(&second.access_token).is_ok());
    // An unrelated grant of the same client and lenser.
    let (_, _, bystander) = e.grant();

    assert_eq!(
        kind(block_on(e.auth.refresh(id, &first.refresh_token, None, None))),
        OAuthErrorKind::InvalidGrant
    );
    for t in [&first.access_token, &second.access_token] {
        assert_eq!(e.auth(t), Err(AuthFailure::Revoked));
    }
    assert_eq!(
        kind(block_on(e.auth.refresh(id, &second.refresh_token, None, None))),
        OAuthErrorKind::InvalidGrant
    );
    assert!(e.auth(&bystander.access_token).is_ok(), "other families are untouched");
}

#[test]
fn refresh_scope_may_only_narrow() {
    let e = env();
    let (client, _, full) = e.grant();
    let id = client.id.as_str();
    let read = block_on(e.auth.refresh(id, &full.refresh_token, Some("read"), None)).unwrap();
    assert_eq!((read.scopes, read.scope.as_str()), (Scopes::READ, "read"));
    assert_eq!(e.auth(&read.access_token).unwrap().scopes, Scopes::READ);
    let back = block_on(e.auth.refresh(id, &read.refresh_token, Some("read write"), None)).unwrap();
    assert_eq!(back.scopes, Scopes::READ_WRITE, "the grant's scopes stay with the refresh token");

    let (client, me) = (e.client(), e.lenser());
    let mut req = e.request(&client);
    req.scope = Some("read".into());
    let valid = block_on(e.auth.validate_authorization(&req)).unwrap();
    let code = block_on(e.auth.issue_code(&valid, me)).unwrap().code;
    let narrow = e.redeem(&client, &code).unwrap();
    let id = client.id.as_str();
    assert_eq!(
        kind(block_on(e.auth.refresh(id, &narrow.refresh_token, Some("write"), None))),
        OAuthErrorKind::InvalidScope
    );
    assert_eq!(
        kind(block_on(e.auth.refresh(id, &narrow.refresh_token, Some("admin"), None))),
        OAuthErrorKind::InvalidScope
    );
    assert_eq!(
        kind(block_on(e.auth.refresh(
            id,
            &narrow.refresh_token,
            None,
            Some("https://other.example.com/mcp")
        ))),
        OAuthErrorKind::InvalidTarget
    );
    block_on(e.auth.refresh(id, &narrow.refresh_token, None, None)).expect("failed refreshes did not use it");
}

#[test]
fn refresh_failures() {
    let e = env();
    let (client, _, grant) = e.grant();
    let other = e.client();
    let id = client.id.as_str();
    use OAuthErrorKind::*;
    assert_eq!(
        kind(block_on(e.auth.refresh(other.id.as_str(), &grant.refresh_token, None, None))),
        InvalidGrant
    );
    assert!(e.auth(&grant.access_token).is_ok(), "another client's attempt revokes nothing");
    assert_eq!(
        kind(block_on(e.auth.refresh("lf_client_0", &grant.refresh_token, None, None))),
        InvalidClient
    );
    assert_eq!(kind(block_on(e.auth.refresh(id, &grant.access_token, None, None))), InvalidGrant);
    assert_eq!(
        kind(block_on(e.auth.refresh(id, &format!("lf_rt_{}", "0".repeat(64)), None, None))),
        InvalidGrant
    );
    e.advance(Duration::from_secs(30 * 24 * 3600));
    assert_eq!(kind(block_on(e.auth.refresh(id, &grant.refresh_token, None, None))), InvalidGrant, "expired");

    let short = env_with(AuthConfig {
        refresh_ttl: Duration::from_secs(100),
        access_ttl: Duration::from_secs(10),
        ..AuthConfig::default()
    });
    let (client, _, grant) = short.grant();
    assert_eq!(grant.expires_in, 10);
    short.advance(Duration::from_secs(10));
    assert_eq!(
        block_on(short.auth.authenticate(&grant.access_token, RESOURCE)).unwrap(),
        Err(AuthFailure::Expired)
    );
    let next = block_on(short.auth.refresh(client.id.as_str(), &grant.refresh_token, None, None)).unwrap();
    short.advance(Duration::from_secs(99));
    block_on(short.auth.refresh(client.id.as_str(), &next.refresh_token, None, None))
        .expect("a rotated token gets a full lifetime");
}

// ----- Revocation ------------------------------------------------------------

#[test]
fn revocation_rfc7009() {
    let e = env();
    let (client, me, grant) = e.grant();
    let id = client.id.as_str();
    let other = e.client();
    use OAuthErrorKind::*;
    assert_eq!(kind(block_on(e.auth.revoke(&grant.access_token, other.id.as_str()))), UnauthorizedClient);
    assert!(e.auth(&grant.access_token).is_ok(), "refused: the token stays valid");
    assert_eq!(kind(block_on(e.auth.revoke(&grant.access_token, "lf_client_x"))), InvalidClient);

    block_on(e.auth.revoke(&grant.access_token, id)).unwrap();
    assert_eq!(e.auth(&grant.access_token), Err(AuthFailure::Revoked));
    assert_eq!(
        kind(block_on(e.auth.refresh(id, &grant.refresh_token, None, None))),
        InvalidGrant,
        "an access token takes its family"
    );
    let (second, _, other_grant) = e.grant();
    let other_id = second.id.as_str();
    let next = block_on(e.auth.refresh(other_id, &other_grant.refresh_token, None, None)).unwrap();
    block_on(e.auth.revoke(&next.refresh_token, other_id)).unwrap();
    assert_eq!(e.auth(&next.access_token), Err(AuthFailure::Revoked), "a refresh token takes its family");
    assert_eq!(kind(block_on(e.auth.refresh(other_id, &next.refresh_token, None, None))), InvalidGrant);
    for unknown in
        ["", "nonsense", &format!("lf_mcp_{}", "1".repeat(64)), &format!("lf_rt_{}", "1".repeat(64))]
    {
        block_on(e.auth.revoke(unknown, id)).expect("unknown tokens are no error");
    }
    block_on(e.auth.revoke(&grant.access_token, id)).expect("revoking again is no error");

    let admin = block_on(e.auth.issue_token(NewToken {
        lenser: me,
        scopes: Scopes::READ,
        resource: None,
        ttl: None,
        label: None,
    }))
    .unwrap();
    assert_eq!(
        kind(block_on(e.auth.revoke(&admin.secret, id))),
        UnauthorizedClient,
        "clients cannot revoke admin tokens"
    );
    assert!(e.auth(&admin.secret).is_ok());
}

// ----- Client ID metadata documents -----------------------------------------

/// Documents by URL, counting fetches.
struct Documents(std::sync::Mutex<(std::collections::HashMap<String, ClientMetadata>, usize)>);

#[async_trait::async_trait]
impl ClientMetadataSource for Documents {
    async fn fetch(&self, url: &ClientIdUrl) -> Result<ClientMetadata, OAuthError> {
        let mut docs = self.0.lock().unwrap();
        docs.1 += 1;
        docs.0
            .get(url.as_str())
            .cloned()
            .ok_or_else(|| OAuthError::new(OAuthErrorKind::InvalidClient, "no document there"))
    }
}

#[test]
fn a_metadata_document_client_signs_in_without_registering() {
    const URL: &str = "https://app.example.com/client.json";
    let docs = Arc::new(Documents(Default::default()));
    let doc = ClientMetadata {
        client_id: Some(URL.into()),
        client_name: Some("Example app".into()),
        redirect_uris: Some(vec![REGISTERED.into()]),
        token_endpoint_auth_method: Some("none".into()),
        ..ClientMetadata::default()
    };
    docs.0.lock().unwrap().0.insert(URL.into(), doc.clone());
    let mut e = env();
    let no_source = kind(block_on(e.auth.validate_authorization(&AuthorizationRequest {
        client_id: Some(URL.into()),
        ..e.request(&e.client())
    })));
    assert_eq!(no_source, OAuthErrorKind::InvalidClient, "without a source a URL is no client");
    e.auth = AuthService::new(e.store.clone(), e.clock.clone(), e.auth.config().clone())
        .with_client_metadata(docs.clone());
    let client = OAuthClient {
        id: ClientId::parse(URL).unwrap(),
        name: String::new(),
        redirect_uris: vec![],
        created_at: e.clock.now(),
    };
    let valid = block_on(e.auth.validate_authorization(&e.request(&client))).unwrap();
    assert_eq!((valid.client.name.as_str(), valid.client.id.metadata_url()), ("Example app", Some(URL)));
    assert_eq!(block_on(e.auth.client(URL)).unwrap(), None, "nothing is stored before consent");
    let lenser = e.lenser();
    let code = block_on(e.auth.issue_code(&valid, lenser)).unwrap().code;
    let grant = e.redeem(&client, &code).unwrap();
    assert_eq!(e.auth(&grant.access_token).unwrap().client_id.as_ref().map(ClientId::as_str), Some(URL));
    let refreshed = block_on(e.auth.refresh(URL, &grant.refresh_token, None, None)).unwrap();
    block_on(e.auth.revoke(&refreshed.refresh_token, URL)).unwrap();
    // A second consent finds the client stored.
    let again = e.code(&client, lenser);
    assert!(e.redeem(&client, &again).is_ok());

    // The document rules the redirect URIs at every request.
    docs.0.lock().unwrap().0.insert(
        URL.into(),
        ClientMetadata { redirect_uris: Some(vec!["https://app.example.com/cb".into()]), ..doc },
    );
    let err = block_on(e.auth.validate_authorization(&e.request(&client))).unwrap_err();
    assert_eq!(err.kind, OAuthErrorKind::InvalidRequest, "{err}");
    // http is refused unless the configuration permits it on loopback.
    let http = AuthorizationRequest {
        client_id: Some("http://127.0.0.1:9/client.json".into()),
        ..e.request(&client)
    };
    let fetches = docs.0.lock().unwrap().1;
    let err = block_on(e.auth.validate_authorization(&http)).unwrap_err();
    assert!(err.kind == OAuthErrorKind::InvalidClient && err.description.contains("https"), "{err}");
    assert_eq!(docs.0.lock().unwrap().1, fetches, "a refused URL is not fetched");
}
