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
use lf_core::Scopes;
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

    let browser = chromium(&driver_url).await;

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

/// A Chromium session over WebDriver.
async fn chromium(driver_url: &str) -> fantoccini::Client {
    let mut caps = serde_json::Map::new();
    let chrome_args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"];
    let mut options = json!({ "args": chrome_args });
    if let Ok(binary) = std::env::var("LF_CHROMIUM") {
        options["binary"] = json!(binary);
    }
    caps.insert("goog:chromeOptions".into(), options);
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector).capabilities(caps).connect(driver_url).await.expect("a Chromium session")
}

/// Where the pages' screenshots are kept: `target/browser-artifacts/pages/`.
fn artifacts() -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("browser-artifacts/pages");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn screenshot(browser: &fantoccini::Client, name: &str) {
    let png = browser.screenshot().await.unwrap();
    std::fs::write(artifacts().join(format!("{name}.png")), png).unwrap();
}

/// Signs in through the page (after signing out whoever was).
async fn sign_in_page(browser: &fantoccini::Client, s: &Server, handle: &str, next: &str) {
    browser.delete_all_cookies().await.unwrap();
    browser.goto(&s.url(next)).await.unwrap();
    let at = browser.current_url().await.unwrap();
    assert_eq!(at.path(), "/sign-in", "a page without a session leads to the sign-in");
    browser.find(Locator::Css("input[name=handle]")).await.unwrap().send_keys(handle).await.unwrap();
    browser.find(Locator::Css("input[name=password]")).await.unwrap().send_keys(PASSWORD).await.unwrap();
    browser.find(Locator::Css("form button[type=submit]")).await.unwrap().click().await.unwrap();
    wait_for_path(browser, next).await;
}

async fn wait_for_path(browser: &fantoccini::Client, path: &str) {
    for _ in 0..100 {
        if browser.current_url().await.unwrap().path() == path {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the browser did not reach {path}: {}", browser.current_url().await.unwrap());
}

/// The answers' texts in the order the page shows them.
async fn answers(browser: &fantoccini::Client) -> Vec<String> {
    let mut texts = Vec::new();
    for section in browser.find_all(Locator::Css("section.answer pre")).await.unwrap() {
        texts.push(section.text().await.unwrap());
    }
    texts
}

#[tokio::test]
async fn pages_blind_vote_in_chromium() {
    let people = vec!["owner", "wri_a", "wri_b", "bob", "eve"];
    let s = Server::with(Options { lensers: people, ..Options::default() }).await;
    let (id, contenders) = common::pages::battle(&s, "owner", ["wri_a", "wri_b"], false).await;
    let (draft, _) = common::pages::battle(&s, "owner", ["wri_a", "wri_b"], true).await;
    let (_driver, driver_url) = start_chromedriver().await;
    let browser = chromium(&driver_url).await;

    // Bob opens the arena: two answers, no names, the script shown as text.
    sign_in_page(&browser, &s, "bob", "/arena").await;
    screenshot(&browser, "1-arena").await;
    let page = browser.source().await.unwrap();
    let seen = answers(&browser).await;
    assert_eq!(seen.len(), 2, "{page}");
    assert!(!page.contains("Writer wri_a") && !page.contains("Writer wri_b"), "no names before the vote");
    assert!(
        seen.iter().any(|t| t.contains("<script>document.title='pwned'</script>")),
        "shown as text: {seen:?}"
    );
    assert_ne!(browser.title().await.unwrap(), "pwned", "never run");

    // A key votes; the names show.
    browser.find(Locator::Css("body")).await.unwrap().send_keys("b").await.unwrap();
    wait_for_path(&browser, &format!("/battles/{id}")).await;
    screenshot(&browser, "2-revealed").await;
    let page = browser.source().await.unwrap();
    assert!(page.contains("Writer wri_a") && page.contains("Writer wri_b"), "names after the vote: {page}");
    assert!(page.contains("your vote"));
    let token = s.token("owner", Scopes::READ).await;
    let score = call_tool(&s, Some(&token), "get_battle_score", json!({"battle_id": id})).await;
    assert_eq!(score["structuredContent"]["total_vote_count"], 1, "{score}");
    let bob_second = &seen[1];
    let picked = if bob_second.contains("<script>") { 0 } else { 1 };
    assert_eq!(
        score["structuredContent"]["vote_aggregates"][picked]["vote_count"], 1,
        "the vote is for the answer shown second: {score}"
    );

    // Another person sees the battle in another order, the one order() gives them.
    let cs: Vec<lf_core::ContenderId> = contenders.iter().map(|c| c.parse().unwrap()).collect();
    let battle_id: lf_core::BattleId = id.parse().unwrap();
    let bob_order = lf_pages::order(s.lenser("bob").await, battle_id, &cs);
    // Orders of two answers agree half the time: new people until one differs.
    let mut other = None;
    for n in 0..40 {
        let handle = format!("voter_{n}");
        let lenser = s.auth.create_lenser(&handle, PASSWORD).await.unwrap().id;
        if lf_pages::order(lenser, battle_id, &cs) != bob_order {
            other = Some(handle);
            break;
        }
    }
    let other = other.expect("someone sees another order than bob's");
    let other = other.as_str();
    sign_in_page(&browser, &s, other, &format!("/battles/{id}")).await;
    screenshot(&browser, "3-second-person").await;
    let theirs = answers(&browser).await;
    assert_eq!(theirs, vec![seen[1].clone(), seen[0].clone()], "shuffled the other way");
    assert!(!browser.source().await.unwrap().contains("Writer wri_a"), "names hidden from them");

    // A form posted without its CSRF token is refused.
    browser.execute("document.querySelector('form.vote input[name=csrf]').remove()", vec![]).await.unwrap();
    browser.find(Locator::Css("form.vote button[value=tie]")).await.unwrap().click().await.unwrap();
    wait_for_path(&browser, &format!("/battles/{id}/vote")).await;
    screenshot(&browser, "4-no-csrf").await;
    let page = browser.source().await.unwrap();
    assert!(page.contains("This form expired or came from elsewhere"), "{page}");
    let score = call_tool(&s, Some(&token), "get_battle_score", json!({"battle_id": id})).await;
    assert_eq!(score["structuredContent"]["total_vote_count"], 1, "not counted");

    // Eve cannot read the draft: every page of it is a 404.
    sign_in_page(&browser, &s, "eve", "/leaderboard").await;
    screenshot(&browser, "5-leaderboard").await;
    for path in [format!("/battles/{draft}"), "/battles/00000000-0000-4000-8000-000000000000".into()] {
        browser.goto(&s.url(&path)).await.unwrap();
        let heading = browser.find(Locator::Css("h1")).await.unwrap().text().await.unwrap();
        assert_eq!(heading, "Not found", "{path}");
        assert!(!browser.source().await.unwrap().contains("Ownership duel"));
    }
    screenshot(&browser, "6-not-found").await;

    // An experiment's matrix, one of its cells, and a workflow run's graph:
    // the owner's, a 404 for eve.
    let experiment = common::pages::experiment(&s, "owner").await;
    let (wf, run) = common::pages::workflow_run(&s, "owner").await;
    let (matrix, cell, graph) = (
        format!("/experiments/{experiment}"),
        format!("/experiments/{experiment}/cells/1/0"),
        format!("/workflows/{wf}/runs/{run}"),
    );
    for path in [&matrix, &graph] {
        browser.goto(&s.url(path)).await.unwrap();
        let heading = browser.find(Locator::Css("h1")).await.unwrap().text().await.unwrap();
        assert_eq!(heading, "Not found", "{path}");
    }
    // Tall enough for the heat map and the log in the screenshots.
    browser.set_window_size(1280, 1600).await.unwrap();
    sign_in_page(&browser, &s, "owner", &matrix).await;
    screenshot(&browser, "7-experiment").await;
    let cells = browser.find_all(Locator::Css("table.matrix td.cell")).await.unwrap();
    assert_eq!(cells.len(), 100, "50 cases × 2 contenders on the first page");
    browser.find(Locator::Css("td.cell.pass a")).await.unwrap().click().await.unwrap();
    wait_for_path(&browser, &cell).await;
    screenshot(&browser, "8-experiment-cell").await;
    let answer = browser.find(Locator::Css("section.result pre")).await.unwrap().text().await.unwrap();
    assert!(answer.contains("<script>document.title='pwned'</script>"), "shown as text: {answer}");
    assert_ne!(browser.title().await.unwrap(), "pwned", "never run");
    browser.goto(&s.url(&graph)).await.unwrap();
    screenshot(&browser, "9-workflow-run").await;
    let steps = browser.find_all(Locator::Css("svg.graph g.step.st-completed")).await.unwrap();
    assert_eq!(steps.len(), 4, "every step drawn, completed");
    browser.close().await.unwrap();
    s.stop().await;
}
