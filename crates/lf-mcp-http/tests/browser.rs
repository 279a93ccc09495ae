//! The OAuth 2.1 flow end to end in headless Chromium, driven over WebDriver
//! with Debian's chromedriver: register a client (or serve its client ID
//! metadata document), open the authorize URL,
//! sign in, consent, follow the redirect to the client's loopback callback,
//! redeem the code with the PKCE verifier, call `/mcp` with the token.
//!
//! Not part of `cargo test`: it needs Chromium and chromedriver, so it is a
//! `test = false` target that .ci/run runs after installing them
//! (`cargo test -p lf-mcp-http --test browser`). It fails, never skips, when
//! chromedriver (`LF_CHROMEDRIVER`, default `chromedriver` on PATH) is missing.

mod common;
#[path = "client_metadata/documents.rs"]
mod documents;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{Options, PASSWORD, Server, call_tool, client, redeem_at};
use documents::{Answer, Documents};
use fantoccini::{ClientBuilder, Locator};
use lf_auth::pkce::s256_challenge;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const VERIFIER: &str = "Tq8bA7Zc2YwVx9LmN4pR6sK1jH3gF5dE0uI8oP7aB2c";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn start_chromedriver() -> (Driver, String) {
    let program = std::env::var("LF_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let port = free_port();
    let child = Command::new(&program)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {program} (install chromium-driver, or set LF_CHROMEDRIVER): {e}")
        });
    let driver = Driver(child);
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if client().get(format!("{url}/status")).send().await.is_ok() {
            return (driver, url);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not answer on {url}");
}

/// The client's loopback redirect target: answers one request and hands
/// over its request line.
async fn callback_server() -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://127.0.0.1:{}/callback", listener.local_addr().unwrap().port());
    let task = tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 8192];
            let n = socket.read(&mut buf).await.unwrap();
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            let line = request.lines().next().unwrap_or_default().to_owned();
            let body = "You can close this window.";
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
            if line.starts_with("GET /callback") {
                return line;
            }
        }
    });
    (uri, task)
}

#[tokio::test]
async fn oauth_sign_in_and_consent_in_chromium() {
    let s = Server::with(Options { lensers: vec!["alice"], ..Options::default() }).await;
    let (redirect_uri, callback) = callback_server().await;
    let registered: Value = client()
        .post(s.url("/oauth/register"))
        .json(&json!({ "client_name": "Browser test", "redirect_uris": [redirect_uri] }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = registered["client_id"].as_str().unwrap().to_owned();
    sign_in_in_chromium(&s, &client_id, &redirect_uri, callback, "Browser test").await;
    s.stop().await;
}

/// The same with a client that never registered: its `client_id` is the
/// URL of its metadata document, served on loopback (opened to the egress
/// guard and allowed over http on loopback for the test).
#[tokio::test]
async fn a_metadata_document_client_signs_in_in_chromium() {
    let s = Server::with(Options {
        lensers: vec!["alice"],
        serve: Some(|a| {
            a.common.egress_allow = Some("127.0.0.1".into());
            a.client_metadata_http_loopback = true;
        }),
        ..Options::default()
    })
    .await;
    let (redirect_uri, callback) = callback_server().await;
    let docs = Documents::start().await;
    let client_id = docs.url("/browser-client.json");
    let document = json!({
        "client_id": client_id,
        "client_name": "Browser document client",
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "none",
    });
    docs.serve("/browser-client.json", Answer::json(&document));
    sign_in_in_chromium(&s, &client_id, &redirect_uri, callback, "Browser document client").await;
    assert!(docs.hits("/browser-client.json") >= 1, "the document was fetched");
    s.stop().await;
}

/// Opens the authorize URL of `client_id` in headless Chromium, signs in
/// as alice and consents, follows the redirect to `callback`, redeems the
/// code with the PKCE verifier and calls a tool with the token.
async fn sign_in_in_chromium(
    s: &Server,
    client_id: &str,
    redirect_uri: &str,
    callback: tokio::task::JoinHandle<String>,
    client_name: &str,
) {
    let (_driver, driver_url) = start_chromedriver().await;
    let authorize = reqwest::Url::parse_with_params(
        &s.url("/oauth/authorize"),
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect_uri),
            ("scope", "read write"),
            ("state", "browser-state"),
            ("code_challenge", &s256_challenge(VERIFIER)),
            ("code_challenge_method", "S256"),
            ("resource", &s.resource()),
        ],
    )
    .unwrap();

    let mut caps = serde_json::Map::new();
    let chrome_args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"];
    let mut options = json!({ "args": chrome_args });
    if let Ok(binary) = std::env::var("LF_CHROMIUM") {
        options["binary"] = json!(binary);
    }
    caps.insert("goog:chromeOptions".into(), options);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let browser = ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&driver_url)
        .await
        .expect("a Chromium session");

    browser.goto(authorize.as_str()).await.unwrap();
    let heading = browser.find(Locator::Css("h1")).await.unwrap().text().await.unwrap();
    assert_eq!(heading, "Sign in to LenserFight", "{}", browser.source().await.unwrap());
    let page = browser.source().await.unwrap();
    assert!(page.contains(client_name), "the consent page names the client");
    browser.find(Locator::Css("input[name=handle]")).await.unwrap().send_keys("alice").await.unwrap();
    browser.find(Locator::Css("input[name=password]")).await.unwrap().send_keys(PASSWORD).await.unwrap();
    browser.find(Locator::Css("button[value=approve]")).await.unwrap().click().await.unwrap();

    let line = tokio::time::timeout(Duration::from_secs(20), callback)
        .await
        .expect("the browser reached the callback")
        .unwrap();
    let current = browser.current_url().await.unwrap();
    assert!(current.as_str().starts_with(redirect_uri), "the browser followed the redirect: {current}");
    browser.close().await.unwrap();

    let target = line.split(' ').nth(1).unwrap();
    let url = reqwest::Url::parse(&format!("http://127.0.0.1{target}")).unwrap();
    let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    assert_eq!(param("state").as_deref(), Some("browser-state"));
    let code = param("code").expect("a code");

    let r = redeem_at(s.url("/oauth/token"), client_id, &code, redirect_uri, Some(VERIFIER)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let grant: Value = r.json().await.unwrap();
    let token = grant["access_token"].as_str().unwrap();
    let created = call_tool(
        s,
        Some(token),
        "create_lens",
        json!({
            "title": "Made after signing in",
            "template_body": "Write a haiku about [[Subject]] that a child would enjoy reading aloud."
        }),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");
}
