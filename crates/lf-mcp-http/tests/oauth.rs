//! Bearer tokens and the OAuth 2.1 flow over HTTP, with the negative cases:
//! PKCE, code replay (sequential and concurrent), expiry, other clients'
//! codes, redirect URI variants, refresh replay, scopes, origins.

mod common;

use std::time::Duration;

use common::{Options, PASSWORD, Server, call_tool, client, post_mcp_as, redeem_at, rpc};
use lf_auth::pkce::s256_challenge;
use lf_core::Scopes;
use lf_mcp_http::admin::AdminCommand;
use reqwest::StatusCode;
use serde_json::{Value, json};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const REDIRECT: &str = "http://127.0.0.1:41234/callback";

async fn alice() -> Server {
    Server::with(Options { lensers: vec!["alice", "bob"], fixed_clock: true, ..Options::default() }).await
}

async fn register(s: &Server, redirect_uris: &[&str]) -> String {
    let r = register_from(s, redirect_uris, None).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["token_endpoint_auth_method"], "none");
    body["client_id"].as_str().unwrap().to_owned()
}

/// A registration, through a proxy that says the client is `forwarded_for`.
async fn register_from(s: &Server, redirect_uris: &[&str], forwarded_for: Option<&str>) -> reqwest::Response {
    let mut r = client()
        .post(s.url("/oauth/register"))
        .json(&json!({ "client_name": "Test <b>client</b>", "redirect_uris": redirect_uris }));
    if let Some(address) = forwarded_for {
        r = r.header("x-forwarded-for", address);
    }
    r.send().await.unwrap()
}

/// A server behind a proxy on loopback, whose X-Forwarded-For is believed.
async fn behind_a_proxy(serve: fn(&mut lf_mcp_http::ServeArgs)) -> Server {
    Server::with(Options { lensers: vec!["alice", "bob"], serve: Some(serve), ..Options::default() }).await
}

fn authorize_query(client_id: &str, redirect_uri: &str, scope: &str) -> Vec<(&'static str, String)> {
    vec![
        ("response_type", "code".into()),
        ("client_id", client_id.into()),
        ("redirect_uri", redirect_uri.into()),
        ("scope", scope.into()),
        ("state", "st4te".into()),
        ("code_challenge", s256_challenge(VERIFIER)),
        ("code_challenge_method", "S256".into()),
    ]
}

/// The value of a hidden input on the page.
fn hidden(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker)? + marker.len();
    Some(page[start..].split('"').next()?.to_owned())
}

/// Opens the consent page, signs in as `handle` and approves; the redirect.
async fn consent(
    s: &Server,
    query: &[(&'static str, String)],
    handle: &str,
    password: &str,
    write: bool,
) -> reqwest::Response {
    consent_from(s, query, handle, password, write, None).await
}

/// [`consent`] through a proxy that says the client is `forwarded_for`.
async fn consent_from(
    s: &Server,
    query: &[(&'static str, String)],
    handle: &str,
    password: &str,
    write: bool,
    forwarded_for: Option<&str>,
) -> reqwest::Response {
    let page = client().get(s.url("/oauth/authorize")).query(query).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let headers = page.headers().clone();
    assert_eq!(headers["x-frame-options"], "DENY");
    assert!(headers["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    let cookie = headers["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let html = page.text().await.unwrap();
    assert!(html.contains("Test &lt;b&gt;client&lt;/b&gt;"), "the client name is shown, escaped");
    assert!(html.contains("127.0.0.1:41234"), "the redirect host is shown");
    let mut form: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    form.push(("csrf".into(), hidden(&html, "csrf").unwrap()));
    form.push(("handle".into(), handle.into()));
    form.push(("password".into(), password.into()));
    form.push(("decision".into(), "approve".into()));
    if write {
        form.push(("grant_write".into(), "1".into()));
    }
    let mut submit = client().post(s.url("/oauth/authorize")).header("cookie", cookie).form(&form);
    if let Some(address) = forwarded_for {
        submit = submit.header("x-forwarded-for", address);
    }
    submit.send().await.unwrap()
}

fn query_param(location: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(location).unwrap();
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

async fn code_for(s: &Server, client_id: &str) -> String {
    let r = consent(s, &authorize_query(client_id, REDIRECT, "read write"), "alice", PASSWORD, true).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(REDIRECT), "{location}");
    assert_eq!(query_param(&location, "state").as_deref(), Some("st4te"));
    query_param(&location, "code").unwrap()
}

async fn redeem(s: &Server, client_id: &str, code: &str, verifier: Option<&str>) -> reqwest::Response {
    redeem_at(s.url("/oauth/token"), client_id, code, REDIRECT, verifier).await
}

/// Asserts that the authorization request `query` is refused on the
/// server's own page (400), with no redirect.
async fn shown_not_redirected(s: &Server, query: &[(&'static str, String)], what: &str) {
    let r = client().get(s.url("/oauth/authorize")).query(query).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{what}");
    assert!(r.headers().get("location").is_none(), "{what}: not redirected");
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "{what}");
    assert!(r.text().await.unwrap().contains("This sign-in cannot continue"), "{what}");
}

async fn error_of(r: reqwest::Response) -> (StatusCode, String) {
    let status = r.status();
    let body: Value = r.json().await.unwrap();
    (status, body["error"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn discovery_documents_describe_the_server() {
    let s = alice().await;
    let meta = s.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(meta["issuer"], s.base);
    assert_eq!(meta["token_endpoint"], s.url("/oauth/token"));
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(meta["authorization_response_iss_parameter_supported"], true, "RFC 9207");
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let pr: Value = client().get(s.url(path)).send().await.unwrap().json().await.unwrap();
        assert_eq!(pr["resource"], s.resource());
        assert_eq!(pr["authorization_servers"], json!([s.base]));
    }
    s.stop().await;
}

#[tokio::test]
async fn the_whole_flow_then_refresh_rotation_and_replay() {
    let s = alice().await;
    let client_id = register(&s, &[REDIRECT]).await;
    let code = code_for(&s, &client_id).await;
    let r = redeem(&s, &client_id, &code, Some(VERIFIER)).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["cache-control"], "no-store");
    let grant: Value = r.json().await.unwrap();
    assert_eq!(grant["token_type"], "Bearer");
    assert_eq!(grant["scope"], "read write");
    let access = grant["access_token"].as_str().unwrap().to_owned();
    assert!(access.starts_with("lf_mcp_") && access.len() == 7 + 64);
    let created = call_tool(
        &s,
        Some(&access),
        "create_lens",
        json!({
            "title": "Alice's lens",
            "template_body": "Summarize [[Topic]] for a curious twelve-year-old in three short paragraphs."
        }),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");

    // Rotation: the new pair works, the old access token keeps working
    // until it expires, the old refresh token is spent.
    let refresh = grant["refresh_token"].as_str().unwrap().to_owned();
    let form = |rt: &str| {
        vec![
            ("grant_type", "refresh_token".to_owned()),
            ("client_id", client_id.clone()),
            ("refresh_token", rt.to_owned()),
        ]
    };
    let r = client().post(s.url("/oauth/token")).form(&form(&refresh)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let second: Value = r.json().await.unwrap();
    let access2 = second["access_token"].as_str().unwrap().to_owned();
    assert_eq!(post_mcp_as(&s, Some(&access2), &rpc("tools/list", json!({}))).await.status(), StatusCode::OK);

    // Replaying the spent refresh token revokes the whole family.
    let r = client().post(s.url("/oauth/token")).form(&form(&refresh)).send().await.unwrap();
    assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_grant".into()));
    for t in [&access, &access2] {
        assert_eq!(
            post_mcp_as(&s, Some(t), &rpc("tools/list", json!({}))).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let rt2 = second["refresh_token"].as_str().unwrap();
    let r = client().post(s.url("/oauth/token")).form(&form(rt2)).send().await.unwrap();
    assert_eq!(error_of(r).await.1, "invalid_grant");
    s.stop().await;
}

#[tokio::test]
async fn pkce_is_required_and_checked_and_failures_do_not_consume_the_code() {
    let s = alice().await;
    let client_id = register(&s, &[REDIRECT]).await;
    let code = code_for(&s, &client_id).await;
    let r = redeem(&s, &client_id, &code, None).await;
    assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_request".into()));
    let wrong = "wrongwrongwrongwrongwrongwrongwrongwrongwrong";
    let r = redeem(&s, &client_id, &code, Some(wrong)).await;
    assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_grant".into()));
    // Another client's code.
    let other = register(&s, &[REDIRECT]).await;
    let r = redeem(&s, &other, &code, Some(VERIFIER)).await;
    assert_eq!(error_of(r).await.1, "invalid_grant");
    // None of that consumed it.
    let r = redeem(&s, &client_id, &code, Some(VERIFIER)).await;
    assert_eq!(r.status(), StatusCode::OK);

    s.stop().await;
}

/// Whatever is wrong with an authorization request, the server says so on
/// its own page: a client anyone can register must not make this origin
/// redirect to its URI before the user has acted (RFC 9700 §4.11.2).
#[tokio::test]
async fn authorization_errors_are_shown_never_redirected() {
    let s = alice().await;
    let landing = "https://evil.example/landing";
    let client_id = register(&s, &[landing]).await;
    let query = authorize_query(&client_id, landing, "read");
    let without = |name: &str| query.iter().filter(|(k, _)| *k != name).cloned().collect::<Vec<_>>();
    let with = |name: &str, value: &str| {
        query.iter().map(|(k, v)| (*k, if *k == name { value.to_owned() } else { v.clone() })).collect()
    };
    let cases: Vec<(&str, Vec<(&'static str, String)>)> = vec![
        ("no response_type", without("response_type")),
        ("response_type=token", with("response_type", "token")),
        ("no code_challenge", without("code_challenge")),
        ("plain PKCE", with("code_challenge_method", "plain")),
        ("a bad challenge", with("code_challenge", "short")),
        ("an unknown scope", with("scope", "admin")),
        (
            "another resource",
            [query.clone(), vec![("resource", "https://other.example/mcp".into())]].concat(),
        ),
        ("an unknown client", with("client_id", "lf_client_00000000000000000000000000000000")),
        ("an unregistered redirect URI", with("redirect_uri", "https://evil.example/other")),
        ("no client", without("client_id")),
    ];
    for (what, query) in cases {
        shown_not_redirected(&s, &query, what).await;
    }
    s.stop().await;
}

/// Every authorization response names the issuer (RFC 9207).
#[tokio::test]
async fn authorization_responses_carry_the_issuer() {
    let s = alice().await;
    let client_id = register(&s, &[REDIRECT]).await;
    let query = authorize_query(&client_id, REDIRECT, "read write");
    let r = consent(&s, &query, "alice", PASSWORD, true).await;
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(query_param(&location, "code").is_some(), "{location}");
    assert_eq!(query_param(&location, "iss").as_deref(), Some(s.base.as_str()), "{location}");

    // Denied: the error goes back with the state and the issuer.
    let page = client().get(s.url("/oauth/authorize")).query(&query).send().await.unwrap();
    let cookie = page.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let html = page.text().await.unwrap();
    let mut form: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    form.push(("csrf".into(), hidden(&html, "csrf").unwrap()));
    form.push(("decision".into(), "deny".into()));
    let r =
        client().post(s.url("/oauth/authorize")).header("cookie", cookie).form(&form).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(query_param(&location, "error").as_deref(), Some("access_denied"));
    assert_eq!(query_param(&location, "state").as_deref(), Some("st4te"));
    assert_eq!(query_param(&location, "iss").as_deref(), Some(s.base.as_str()), "{location}");
    s.stop().await;
}

#[tokio::test]
async fn codes_are_single_use_even_concurrently_and_expire() {
    let s = alice().await;
    let client_id = register(&s, &[REDIRECT]).await;
    let code = code_for(&s, &client_id).await;
    assert_eq!(redeem(&s, &client_id, &code, Some(VERIFIER)).await.status(), StatusCode::OK);
    for _ in 0..2 {
        let r = redeem(&s, &client_id, &code, Some(VERIFIER)).await;
        assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_grant".into()));
    }

    for _ in 0..3 {
        let code = code_for(&s, &client_id).await;
        let mut attempts = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let (url, client_id, code) = (s.url("/oauth/token"), client_id.clone(), code.clone());
            attempts.spawn(async move {
                redeem_at(url, &client_id, &code, REDIRECT, Some(VERIFIER)).await.status()
            });
        }
        let wins = attempts.join_all().await.into_iter().filter(|st| *st == StatusCode::OK).count();
        assert_eq!(wins, 1, "exactly one concurrent redeem wins");
    }

    let code = code_for(&s, &client_id).await;
    s.advance(Duration::from_secs(5 * 60 + 1));
    let r = redeem(&s, &client_id, &code, Some(VERIFIER)).await;
    assert_eq!(error_of(r).await.1, "invalid_grant");
    s.stop().await;
}

#[tokio::test]
async fn redirect_uri_variants_are_never_redirected_to() {
    let s = alice().await;
    let registered = "https://app.example.com/oauth/callback";
    let client_id = register(&s, &[registered]).await;
    for variant in [
        "https://app.example.com/oauth/callback/",
        "https://app.example.com/oauth/other",
        "http://app.example.com/oauth/callback",
        "https://evil.example/oauth/callback",
        "https://app.example.com.evil.example/oauth/callback",
        "https://app.example.com/oauth/callback?x=1",
        "javascript:alert(1)",
    ] {
        shown_not_redirected(&s, &authorize_query(&client_id, variant, "read"), variant).await;
    }
    // Registration refuses what could never be safe.
    for bad in ["javascript:alert(1)", "http://app.example.com/cb", "https://app.example.com/cb#frag"] {
        let r = client()
            .post(s.url("/oauth/register"))
            .json(&json!({ "redirect_uris": [bad] }))
            .send()
            .await
            .unwrap();
        assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_redirect_uri".into()), "{bad}");
    }
    s.stop().await;
}

#[tokio::test]
async fn sign_in_failures_csrf_and_deny() {
    let s = alice().await;
    let client_id = register(&s, &[REDIRECT]).await;
    let query = authorize_query(&client_id, REDIRECT, "read write");
    let r = consent(&s, &query, "alice", "not the password", true).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.text().await.unwrap().contains("do not match"));
    let r = consent(&s, &query, "nobody_here", PASSWORD, true).await;
    assert_eq!(r.status(), StatusCode::OK);

    // Without the CSRF cookie the form is refused.
    let mut form: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    form.extend([
        ("csrf".to_owned(), "a".repeat(64)),
        ("handle".to_owned(), "alice".to_owned()),
        ("password".to_owned(), PASSWORD.to_owned()),
        ("decision".to_owned(), "approve".to_owned()),
    ]);
    let r = client().post(s.url("/oauth/authorize")).form(&form).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.headers().get("location").is_none());

    // Unticking write grants read only.
    let r = consent(&s, &query, "alice", PASSWORD, false).await;
    let code = query_param(r.headers()["location"].to_str().unwrap(), "code").unwrap();
    let grant: Value = redeem(&s, &client_id, &code, Some(VERIFIER)).await.json().await.unwrap();
    assert_eq!(grant["scope"], "read");
    s.stop().await;
}

#[tokio::test]
async fn bearer_tokens_are_checked_and_scopes_enforced() {
    let s = alice().await;
    let write = s.token("alice", Scopes::READ_WRITE).await;
    let read = s.token("alice", Scopes::READ).await;
    let list = rpc("tools/list", json!({}));
    assert_eq!(post_mcp_as(&s, Some(&write), &list).await.status(), StatusCode::OK);
    assert_eq!(post_mcp_as(&s, Some(&read), &list).await.status(), StatusCode::OK);

    let create = rpc(
        "tools/call",
        json!({ "name": "create_lens", "arguments": {
        "title": "Nope", "template_body": "This lens must never be created by a token with read scope only." } }),
    );
    let r = post_mcp_as(&s, Some(&read), &create).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
    let found = call_tool(&s, Some(&read), "list_lenses", json!({})).await;
    assert_eq!(found["structuredContent"]["total"], 0);

    let lenser = s.lenser("alice").await;
    let for_other = || lf_auth::NewToken {
        lenser,
        scopes: Scopes::READ_WRITE,
        resource: Some("https://other.example/mcp".into()),
        ttl: None,
        label: None,
    };
    let other_resource = s.auth.issue_token(for_other()).await;
    // This server only issues for its own resource...
    assert!(other_resource.is_err());
    // ...and refuses a token another server on the same database issued for
    // its own resource.
    let other_server = lf_auth::AuthService::new(
        s.auth.store().clone(),
        std::sync::Arc::new(lf_core::SystemClock),
        lf_auth::AuthConfig { resources: vec!["https://other.example/mcp".into()], ..Default::default() },
    );
    let foreign = other_server.issue_token(for_other()).await.unwrap();
    let expiring = s
        .auth
        .issue_token(lf_auth::NewToken {
            lenser,
            scopes: Scopes::READ_WRITE,
            resource: None,
            ttl: Some(Duration::from_secs(60)),
            label: None,
        })
        .await
        .unwrap();
    assert_eq!(post_mcp_as(&s, Some(&expiring.secret), &list).await.status(), StatusCode::OK);
    s.advance(Duration::from_secs(61));
    let revoked = s.token("alice", Scopes::READ_WRITE).await;
    let id = s.auth.list_tokens(Some(lenser), false).await.unwrap()[0].id;
    s.auth.revoke_token(id).await.unwrap();
    for bad in [
        expiring.secret.as_str(),
        revoked.as_str(),
        foreign.secret.as_str(),
        "lf_mcp_0000000000000000000000000000000000000000000000000000000000000000",
        "not-a-token",
    ] {
        let r = post_mcp_as(&s, Some(bad), &list).await;
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{bad}");
        let challenge = r.headers()["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("resource_metadata="), "{challenge}");
    }
    s.stop().await;
}

#[tokio::test]
async fn oauth_endpoints_refuse_other_origins_and_rate_limit() {
    let s = alice().await;
    for origin in ["http://evil.example", "null"] {
        let r = client()
            .post(s.url("/oauth/token"))
            .header("origin", origin)
            .form(&[("grant_type", "authorization_code")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin}");
    }
    let mut limited = None;
    for i in 0..20 {
        let r = client()
            .post(s.url("/oauth/register"))
            .json(&json!({ "redirect_uris": [REDIRECT] }))
            .send()
            .await
            .unwrap();
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some((i, r.headers()["retry-after"].to_str().unwrap().parse::<u64>().unwrap()));
            break;
        }
        assert_eq!(r.status(), StatusCode::CREATED);
    }
    let (after, retry) = limited.expect("registration is rate limited");
    assert!(after >= 5 && retry >= 1, "{after} {retry}");
    s.stop().await;
}

/// Ten failed sign-ins at one handle, each from another address, lock that
/// handle's sign-in (even with the right password, from a new address);
/// other handles sign in as usual.
#[tokio::test]
async fn a_handle_is_locked_after_ten_failures_from_any_addresses() {
    let s = behind_a_proxy(|a| a.trusted_proxies = Some(vec!["127.0.0.1".into()])).await;
    let client_id = register(&s, &[REDIRECT]).await;
    let query = authorize_query(&client_id, REDIRECT, "read");
    for i in 1..=10 {
        let from = format!("198.51.100.{i}");
        let r = consent_from(&s, &query, "alice", "not the password", true, Some(&from)).await;
        assert_eq!(r.status(), StatusCode::OK, "failure {i} from its own address is judged");
        assert!(r.text().await.unwrap().contains("do not match"));
    }
    let r = consent_from(&s, &query, "Alice", PASSWORD, true, Some("198.51.100.200")).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let r = consent_from(&s, &query, "bob", PASSWORD, true, Some("198.51.100.201")).await;
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "bob is not locked");
    s.stop().await;
}

/// Registers from each of `addresses` in turn; the index of the first
/// refused (registration allows a burst of 5 per address).
async fn limited_at(s: &Server, addresses: Vec<String>) -> Option<usize> {
    for (i, a) in addresses.iter().enumerate() {
        let r = register_from(s, &[REDIRECT], Some(a)).await;
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            return Some(i);
        }
        assert_eq!(r.status(), StatusCode::CREATED, "{a}");
    }
    None
}

/// The per-address limits count the client behind a trusted proxy, and an
/// IPv6 client as its /64; a proxy that is not trusted is the client.
#[tokio::test]
async fn per_address_limits_count_the_client_behind_trusted_proxies_by_64() {
    let distinct = |n: u8| (1..=n).map(|i| format!("203.0.113.{i}")).collect::<Vec<_>>();
    let s = behind_a_proxy(|a| a.trusted_proxies = Some(vec!["127.0.0.0/8".into()])).await;
    assert_eq!(limited_at(&s, distinct(8)).await, None, "eight clients");
    let one_64 = (1..=8).map(|i| format!("2001:db8:1:2::{i:x}")).collect();
    assert_eq!(limited_at(&s, one_64).await, Some(5), "one /64 is one client");
    assert_eq!(limited_at(&s, vec!["[2001:db8:1:3::1]:443".into()]).await, None, "another /64");
    s.stop().await;

    let s = behind_a_proxy(|_| {}).await;
    assert_eq!(limited_at(&s, distinct(8)).await, Some(5), "without trusted proxies, the peer is the client");
    s.stop().await;
}

/// Registrations are capped per hour from all addresses together.
#[tokio::test]
async fn registrations_are_capped_overall() {
    let s = behind_a_proxy(|a| {
        a.trusted_proxies = Some(vec!["127.0.0.1".into()]);
        a.registrations_per_hour = 3;
    })
    .await;
    for i in 1..=3 {
        let r = register_from(&s, &[REDIRECT], Some(&format!("203.0.113.{i}"))).await;
        assert_eq!(r.status(), StatusCode::CREATED, "{i}");
    }
    let r = register_from(&s, &[REDIRECT], Some("203.0.113.4")).await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=1200).contains(&wait), "{wait}");
    s.stop().await;
}

/// Runs an admin command on the server's database; what it printed.
async fn admin(s: &Server, command: impl FnOnce(lf_server::CommonArgs) -> AdminCommand) -> String {
    let common = lf_server::CommonArgs { database_url: Some(s.database_url.clone()), ..Default::default() };
    let mut out = Vec::new();
    lf_mcp_http::admin::run(command(common), &mut &b""[..], &mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

/// The status of a tools/list with `token`.
async fn works(s: &Server, token: &str) -> StatusCode {
    post_mcp_as(s, Some(token), &rpc("tools/list", json!({}))).await.status()
}

/// `admin list-tokens` shows an OAuth sign-in as a grant, and
/// `admin revoke-token` of its id, or of one of its access tokens, ends it:
/// the refresh token no longer refreshes, the access token no longer works.
#[tokio::test]
async fn revoking_a_grant_s_token_ends_the_grant() {
    let s = alice().await;
    let client_id = register(&s, &[REDIRECT]).await;
    let sign_in = || async {
        let code = code_for(&s, &client_id).await;
        let grant: Value = redeem(&s, &client_id, &code, Some(VERIFIER)).await.json().await.unwrap();
        let token = |k: &str| grant[k].as_str().unwrap().to_owned();
        (token("access_token"), token("refresh_token"))
    };
    let refresh = |rt: String| {
        let form = [("grant_type", "refresh_token"), ("client_id", &client_id), ("refresh_token", &rt)]
            .map(|(k, v)| (k, v.to_owned()));
        client().post(s.url("/oauth/token")).form(&form).send()
    };
    let listing =
        || admin(&s, |common| AdminCommand::ListTokens { common, handle: Some("alice".into()), all: false });

    // By an access token's id, as list-tokens shows it.
    let (access, refresh_token) = sign_in().await;
    assert_eq!(works(&s, &access).await, StatusCode::OK);
    let listed = listing().await;
    let (tokens, grants) = listed.split_once("OAuth grants").unwrap();
    assert!(grants.contains("Test <b>client</b> (") && grants.contains("read write"), "{listed}");
    let token_id = tokens.lines().nth(1).unwrap().split('\t').next().unwrap().to_owned();
    admin(&s, |common| AdminCommand::RevokeToken { common, id: token_id }).await;
    assert_eq!(works(&s, &access).await, StatusCode::UNAUTHORIZED);
    let r = refresh(refresh_token).await.unwrap();
    assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_grant".into()), "no refresh after it");
    assert!(!listing().await.split_once("OAuth grants").unwrap().1.contains("Test <b>client</b>"), "gone");

    // By the grant's id, after a refresh.
    let (_, refresh_token) = sign_in().await;
    let r = refresh(refresh_token).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let next: Value = r.json().await.unwrap();
    let listed = listing().await;
    let grant_line = listed.split_once("OAuth grants").unwrap().1.lines().nth(2).unwrap().to_owned();
    let grant_id = grant_line.split('\t').next().unwrap().to_owned();
    admin(&s, |common| AdminCommand::RevokeToken { common, id: grant_id }).await;
    assert_eq!(works(&s, next["access_token"].as_str().unwrap()).await, StatusCode::UNAUTHORIZED);
    let r = refresh(next["refresh_token"].as_str().unwrap().to_owned()).await.unwrap();
    assert_eq!(error_of(r).await, (StatusCode::BAD_REQUEST, "invalid_grant".into()));
    s.stop().await;
}
