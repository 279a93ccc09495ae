//! Client ID metadata documents over HTTP: a client whose `client_id` is
//! the URL of its metadata document, served on loopback (opened through
//! `LENSERFIGHT_EGRESS_ALLOW=127.0.0.1` and
//! `LENSERFIGHT_CLIENT_METADATA_HTTP_LOOPBACK`), signs in with the whole
//! authorization code + PKCE flow; bad documents are refused on the
//! server's own page, never redirected; documents are cached as their
//! caching headers say.

mod common;

#[path = "client_metadata/documents.rs"]
mod documents;

use std::time::Duration;

use common::{Options, PASSWORD, Server, call_tool, client, redeem_at};
use documents::{Answer, Documents};
use lf_auth::pkce::s256_challenge;
use lf_mcp_http::ServeArgs;
use reqwest::StatusCode;
use serde_json::{Value, json};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const REDIRECT: &str = "http://127.0.0.1:41234/callback";

fn open_loopback(args: &mut ServeArgs) {
    args.common.egress_allow = Some("127.0.0.1".into());
    args.client_metadata_http_loopback = true;
}

async fn server() -> Server {
    Server::with(Options {
        lensers: vec!["alice"],
        serve: Some(open_loopback),
        config: Some(|c| c.client_metadata.timeout = Duration::from_secs(1)),
        ..Options::default()
    })
    .await
}

fn document(client_id: &str) -> Value {
    json!({
        "client_id": client_id,
        "client_name": "Doc <i>client</i>",
        "redirect_uris": ["http://127.0.0.1/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

fn authorize_query(client_id: &str, redirect_uri: &str) -> Vec<(&'static str, String)> {
    vec![
        ("response_type", "code".into()),
        ("client_id", client_id.into()),
        ("redirect_uri", redirect_uri.into()),
        ("scope", "read write".into()),
        ("state", "st4te".into()),
        ("code_challenge", s256_challenge(VERIFIER)),
        ("code_challenge_method", "S256".into()),
    ]
}

fn hidden(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker).unwrap() + marker.len();
    page[start..].split('"').next().unwrap().to_owned()
}

fn query_param(location: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(location).unwrap();
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

/// The authorization page for `query`: its status, Location and text.
async fn authorize_page(s: &Server, query: &[(&'static str, String)]) -> (StatusCode, bool, String) {
    let r = client().get(s.url("/oauth/authorize")).query(query).send().await.unwrap();
    let (status, located) = (r.status(), r.headers().contains_key("location"));
    (status, located, r.text().await.unwrap())
}

/// Signs in as alice on the page of `query` and approves; the redirect's
/// code.
async fn sign_in(s: &Server, query: &[(&'static str, String)]) -> String {
    let page = client().get(s.url("/oauth/authorize")).query(query).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let cookie = page.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let html = page.text().await.unwrap();
    assert!(html.contains("Doc &lt;i&gt;client&lt;/i&gt;"), "the document's name is shown, escaped");
    assert!(
        html.contains("Its details come from <strong>127.0.0.1</strong>"),
        "and the host vouching for it"
    );
    let mut form: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    form.extend([
        ("csrf".into(), hidden(&html, "csrf")),
        ("handle".into(), "alice".into()),
        ("password".into(), PASSWORD.into()),
        ("decision".into(), "approve".into()),
        ("grant_write".into(), "1".into()),
    ]);
    let r =
        client().post(s.url("/oauth/authorize")).header("cookie", cookie).form(&form).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(REDIRECT), "{location}");
    assert_eq!(query_param(&location, "state").as_deref(), Some("st4te"));
    query_param(&location, "code").unwrap()
}

#[tokio::test]
async fn a_client_signs_in_with_its_metadata_document() {
    let s = server().await;
    let docs = Documents::start().await;
    let metadata = s.get_json("/.well-known/oauth-authorization-server").await;
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    assert!(metadata["registration_endpoint"].is_string(), "dynamic registration stays");

    let client_id = docs.url("/clients/app.json");
    docs.serve(
        "/clients/app.json",
        Answer::json(&document(&client_id)).header("cache-control", "max-age=300"),
    );
    // Unknown at the token endpoint until a user granted it something.
    let r = redeem_at(s.url("/oauth/token"), &client_id, "lf_code_nope", REDIRECT, Some(VERIFIER)).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(docs.hits("/clients/app.json"), 0, "the token endpoint never fetches a document");

    let code = sign_in(&s, &authorize_query(&client_id, REDIRECT)).await;
    assert_eq!(docs.hits("/clients/app.json"), 1, "max-age=300: the page and the sign-in share one fetch");
    let r = redeem_at(s.url("/oauth/token"), &client_id, &code, REDIRECT, Some(VERIFIER)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let grant: Value = r.json().await.unwrap();
    let token = grant["access_token"].as_str().unwrap();
    assert_eq!(grant["scope"], "read write");
    let created = call_tool(
        &s,
        Some(token),
        "create_lens",
        json!({ "title": "Made by a metadata client", "template_body": "Write a limerick about [[Subject]] for a curious child." }),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");
    let refreshed = client()
        .post(s.url("/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("client_id", &client_id),
            ("refresh_token", grant["refresh_token"].as_str().unwrap()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(refreshed.status(), StatusCode::OK);

    // A second sign-in of the same client (its row is kept once).
    let again = sign_in(&s, &authorize_query(&client_id, REDIRECT)).await;
    let r = redeem_at(s.url("/oauth/token"), &client_id, &again, REDIRECT, Some(VERIFIER)).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(docs.hits("/clients/app.json"), 1, "still cached");

    // no-store: fetched at every request.
    let fresh_id = docs.url("/clients/fresh.json");
    docs.serve("/clients/fresh.json", Answer::json(&document(&fresh_id)).header("cache-control", "no-store"));
    for _ in 0..2 {
        let (status, ..) = authorize_page(&s, &authorize_query(&fresh_id, REDIRECT)).await;
        assert_eq!(status, StatusCode::OK);
    }
    assert_eq!(docs.hits("/clients/fresh.json"), 2);
    // The document rules the redirect URIs: one it does not list is refused.
    let (status, located, page) =
        authorize_page(&s, &authorize_query(&fresh_id, "https://evil.example/cb")).await;
    assert_eq!((status, located), (StatusCode::BAD_REQUEST, false));
    assert!(page.contains("not one of the client&#39;s registered redirect URIs"), "{page}");
    assert!(page.contains("<code>invalid_request</code>"), "{page}");
    s.stop().await;
}

#[tokio::test]
async fn bad_documents_are_refused_on_the_page_never_redirected() {
    let s = server().await;
    let docs = Documents::start().await;
    let wrong_id = docs.url("/wrong.json");
    let secret_id = docs.url("/secret.json");
    let jwt_id = docs.url("/jwt.json");
    let none_id = docs.url("/none.json");
    let big_id = docs.url("/big.json");
    let mut big = document(&big_id);
    big["padding"] = json!("x".repeat(6 * 1024));
    let cases: Vec<(String, Answer, &str)> = vec![
        (wrong_id, Answer::json(&document("https://other.example/client.json")), "names another client_id"),
        (
            secret_id.clone(),
            Answer::json(&json!({ "client_secret": "s3cret" }).merge(document(&secret_id))),
            "carries a client secret",
        ),
        (
            jwt_id.clone(),
            Answer::json(
                &json!({ "token_endpoint_auth_method": "client_secret_post" }).merge(document(&jwt_id)),
            ),
            "shared-secret token_endpoint_auth_method",
        ),
        (
            none_id.clone(),
            Answer::json(&json!({ "client_id": none_id, "client_name": "No redirects" })),
            "has no redirect_uris",
        ),
        (big_id, Answer::json(&big), "is larger than 5120 bytes"),
        (
            docs.url("/slow.json"),
            Answer::json(&json!({})).delay(Duration::from_secs(3)),
            "did not arrive within 1 seconds",
        ),
        (docs.url("/html.json"), Answer::raw(200, "text/html", "<html>hello</html>"), "is not a JSON object"),
        (
            docs.url("/list.json"),
            Answer::raw(200, "application/json", "[1, 2]"),
            "is not a valid client metadata document",
        ),
        (docs.url("/gone.json"), Answer::raw(404, "text/plain", "gone"), "answered HTTP 404 instead of 200"),
        (
            docs.url("/moved.json"),
            Answer::raw(302, "text/plain", "").header("location", "/wrong.json"),
            "answered with a redirect",
        ),
    ];
    for (url, answer, said) in cases {
        let path = reqwest::Url::parse(&url).unwrap().path().to_owned();
        docs.serve(&path, answer);
        let (status, located, page) = authorize_page(&s, &authorize_query(&url, REDIRECT)).await;
        assert_eq!((status, located), (StatusCode::BAD_REQUEST, false), "{said}");
        assert!(page.contains("This sign-in cannot continue") && page.contains(said), "{said}: {page}");
        assert!(page.contains("<code>invalid_client</code>"), "{said}: {page}");
        assert!(!page.contains("s3cret") && !page.contains("hello"), "{said}: the document is never echoed");
    }
    // URLs the draft refuses are not fetched at all.
    for (url, said) in [
        (docs.url("/"), "must have a path"),
        (docs.url("/a/../wrong.json"), "must not have . or .. path segments"),
        (format!("{}#frag", docs.url("/wrong.json")), "contains characters a URL may not"),
    ] {
        let (status, located, page) = authorize_page(&s, &authorize_query(&url, REDIRECT)).await;
        assert_eq!((status, located), (StatusCode::BAD_REQUEST, false), "{said}");
        assert!(page.contains(said), "{said}: {page}");
    }
    assert_eq!(docs.hits("/"), 0);
    s.stop().await;
}

#[tokio::test]
async fn http_and_loopback_need_both_settings() {
    let docs = Documents::start().await;
    let client_id = docs.url("/client.json");
    docs.serve("/client.json", Answer::json(&document(&client_id)));
    // Without the http setting: https is required, nothing is fetched.
    let s = Server::with(Options {
        serve: Some(|a| a.common.egress_allow = Some("127.0.0.1".into())),
        ..Options::default()
    })
    .await;
    let (status, _, page) = authorize_page(&s, &authorize_query(&client_id, REDIRECT)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("must use https"), "{page}");
    s.stop().await;
    // With it, the egress guard still keeps loopback closed unless the
    // allow-list opens it.
    let s = Server::with(Options {
        serve: Some(|a| a.client_metadata_http_loopback = true),
        ..Options::default()
    })
    .await;
    let (status, _, page) = authorize_page(&s, &authorize_query(&client_id, REDIRECT)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("could not be fetched") && page.contains("LENSERFIGHT_EGRESS_ALLOW"), "{page}");
    assert_eq!(docs.hits("/client.json"), 0);
    s.stop().await;
}

trait Merge {
    fn merge(self, other: Value) -> Value;
}

impl Merge for Value {
    /// `other` with this object's fields over it.
    fn merge(self, mut other: Value) -> Value {
        for (k, v) in self.as_object().unwrap() {
            other[k] = v.clone();
        }
        other
    }
}
