//! The OAuth 2.1 flow end to end in headless Chromium, driven over WebDriver
//! with Debian's chromedriver: register a client (or serve its client ID
//! metadata document), open the authorize URL,
//! sign in, consent, follow the redirect to the client's loopback callback,
//! redeem the code with the PKCE verifier, call `/mcp` with the token.
//!
//! The pages in Chromium too (a blind vote, an experiment's matrix, two
//! experiments compared), and the MCP Apps views inside a host: the test
//! plays the host, reads each `ui://` view over `/mcp`, frames it, speaks
//! the host's side of the MCP Apps postMessage protocol and forwards the
//! view's `tools/call` to the server. Screenshots are kept as artifacts.
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

#[tokio::test]
async fn experiments_compared_in_chromium() {
    let s = Server::with(Options { lensers: vec!["owner", "eve"], ..Options::default() }).await;
    let (a, b, _) = common::pages::compared(&s, "owner", "eve").await;
    let (_driver, driver_url) = start_chromedriver().await;
    let browser = chromium(&driver_url).await;
    browser.set_window_size(1280, 1400).await.unwrap();
    let compare = format!("/experiments/{a}/compare/{b}");
    // Eve reads neither: a 404.
    sign_in_page(&browser, &s, "eve", "/leaderboard").await;
    browser.goto(&s.url(&compare)).await.unwrap();
    assert_eq!(browser.find(Locator::Css("h1")).await.unwrap().text().await.unwrap(), "Not found");

    // The owner opens a's matrix, compares it with b through its form,
    // and again through the list of the dataset's other experiments.
    sign_in_page(&browser, &s, "owner", &format!("/experiments/{a}")).await;
    let form = "section.compare form";
    browser
        .find(Locator::Css(&format!("{form} input[name=with]")))
        .await
        .unwrap()
        .send_keys(&b)
        .await
        .unwrap();
    browser.find(Locator::Css(&format!("{form} button[type=submit]"))).await.unwrap().click().await.unwrap();
    wait_for_path(&browser, &compare).await;
    browser.goto(&s.url(&format!("/experiments/{a}"))).await.unwrap();
    let listed = format!("section.compare a[href='{compare}']");
    browser.find(Locator::Css(&listed)).await.unwrap().click().await.unwrap();
    wait_for_path(&browser, &compare).await;
    screenshot(&browser, "10-comparison").await;
    let regressions = browser.find_all(Locator::Css("section.regressions li.case")).await.unwrap();
    let fixes = browser.find_all(Locator::Css("section.fixes li.case")).await.unwrap();
    assert_eq!((regressions.len(), fixes.len()), (9, 2), "model-one's nine, then the two fixes");
    let first = regressions[0].text().await.unwrap();
    assert_eq!(first, "Case 1: 1 of 1 passed → 0 of 1 passed");
    let names: Vec<String> = {
        let mut v = Vec::new();
        for h in browser.find_all(Locator::Css("section.changes h3")).await.unwrap() {
            v.push(h.text().await.unwrap());
        }
        v
    };
    assert_eq!(names, ["model-one (9)", "model-one (1)", "model-<i>two</i> (1)"], "names as text");
    // A regression opens its cell in b.
    regressions[0].find(Locator::Css("a:last-child")).await.unwrap().click().await.unwrap();
    wait_for_path(&browser, &format!("/experiments/{b}/cells/1/0")).await;
    screenshot(&browser, "11-comparison-cell").await;
    let answer = browser.find(Locator::Css("section.result pre")).await.unwrap().text().await.unwrap();
    assert_eq!(answer, "Wrong now.");
    browser.close().await.unwrap();
    s.stop().await;
}

// ---------------------------------------------------------------- MCP Apps

const UI: &str = "io.modelcontextprotocol/ui";

/// The host's page: a frame for the view and the host's side of the MCP
/// Apps protocol (2026-01-26). `host.open(html, arguments, result)` frames
/// a view (sandboxed to scripts, an opaque origin, as hosts do); the host
/// answers `ui/initialize` with its capabilities and context, and once the
/// view says `ui/notifications/initialized` sends it the tool's input then
/// its result. The view's `tools/call` requests wait in `host.calls` for
/// the test to forward (`host.answer`); every message the view sent is in
/// `host.log`.
const HOST_PAGE: &str = r#"<!doctype html><html><head><meta charset="utf-8"><title>Test host</title></head>
<body><h1>A test MCP Apps host</h1><div id="slot"></div><script>
window.host = {
  log: [], calls: [], frame: null,
  open(html, args, result) {
    this.log = []; this.calls = []; this.args = args; this.result = result;
    const f = document.createElement("iframe");
    f.id = "view"; f.setAttribute("sandbox", "allow-scripts");
    f.style.cssText = "width:900px;height:300px;border:1px solid #999";
    f.srcdoc = html;
    document.getElementById("slot").replaceChildren(f);
    this.frame = f;
  },
  post(m) { this.frame.contentWindow.postMessage(m, "*"); },
  answer(id, result) { this.post({ jsonrpc: "2.0", id, result }); },
};
window.addEventListener("message", (ev) => {
  const h = window.host;
  if (!h.frame || ev.source !== h.frame.contentWindow) return;
  const m = ev.data;
  h.log.push(m);
  if (m.method === "ui/initialize") {
    h.answer(m.id, {
      protocolVersion: "2026-01-26",
      hostInfo: { name: "lenserfight-test-host", version: "1" },
      hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
      hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline"],
        platform: "web", locale: "en-US", containerDimensions: { width: 900, maxHeight: 4000 } },
    });
  } else if (m.method === "ui/notifications/initialized") {
    h.post({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: h.args } });
    h.post({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: h.result });
  } else if (m.method === "ui/notifications/size-changed") {
    h.frame.style.height = Math.ceil(m.params.height) + "px";
  } else if (m.method === "tools/call") {
    h.calls.push(m);
  } else if (m.method !== undefined && m.id !== undefined) {
    h.post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  }
});
</script></body></html>"#;

/// Serves [`HOST_PAGE`] on loopback: its URL.
async fn host_page() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/host", listener.local_addr().unwrap().port());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = socket.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]);
                let (status, body) = if request.starts_with("GET /host ") {
                    ("200 OK", HOST_PAGE)
                } else {
                    ("404 Not Found", "")
                };
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    url
}

/// The host's MCP client of the server, as one person: a 2026-07-28
/// client declaring the MCP Apps extension in every request.
struct AppsHost<'a> {
    s: &'a Server,
    token: String,
}

impl AppsHost<'_> {
    /// The JSON-RPC result of `method` with `params`.
    async fn result(&self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "lenserfight-test-host", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities":
                {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}}
        });
        let mut request = client()
            .post(self.s.url("/mcp"))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str) {
            request = request.header("mcp-name", name);
        }
        let request = request.json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{method}");
        let answer: Value = response.json().await.unwrap();
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// The view `tool` names in `tools/list`, read through `resources/read`.
    async fn view_of(&self, tool: &str) -> String {
        let listed = self.result("tools/list", json!({})).await;
        let tool = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == tool).unwrap();
        let uri = tool["_meta"]["ui"]["resourceUri"].as_str().expect("the tool names its view").to_owned();
        let read = self.result("resources/read", json!({"uri": uri})).await;
        let c = &read["contents"][0];
        assert_eq!(
            (c["uri"].as_str(), c["mimeType"].as_str()),
            (Some(uri.as_str()), Some("text/html;profile=mcp-app"))
        );
        c["text"].as_str().unwrap().to_owned()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": tool, "arguments": arguments})).await
    }
}

/// Frames `tool`'s view in the host page with the result of calling it
/// with `arguments` and waits for the view to draw it: the result.
async fn show(browser: &fantoccini::Client, host: &AppsHost<'_>, tool: &str, arguments: Value) -> Value {
    let html = host.view_of(tool).await;
    let result = host.call(tool, arguments.clone()).await;
    assert_eq!(result["isError"], false, "{tool}: {result}");
    browser
        .execute(
            "window.host.open(arguments[0], arguments[1], arguments[2])",
            vec![json!(html), arguments, result.clone()],
        )
        .await
        .unwrap();
    browser.wait().for_element(Locator::Css("iframe#view")).await.unwrap();
    browser.enter_frame(0).await.unwrap();
    browser.wait().at_most(Duration::from_secs(20)).for_element(Locator::Css("#app h1")).await.unwrap();
    browser.enter_parent_frame().await.unwrap();
    // The protocol as a host sees it: initialize, initialized, then the
    // view's size whenever it changes, until it is the drawn content's.
    let log = browser.execute("return window.host.log", vec![]).await.unwrap();
    let methods: Vec<&str> = log.as_array().unwrap().iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(&methods[..2], ["ui/initialize", "ui/notifications/initialized"], "{log}");
    let init = &log[0]["params"];
    assert_eq!(init["protocolVersion"], "2026-01-26", "{init}");
    assert!(init["appInfo"]["name"].is_string(), "{init}");
    assert_eq!(init["appCapabilities"], json!({"availableDisplayModes": ["inline"]}), "{init}");
    let last_size = "const s = window.host.log.filter((m) => m.method === 'ui/notifications/size-changed');\
return s.length ? [s[s.length - 1].params.height, window.host.frame.style.height] : null";
    for _ in 0..100 {
        browser.enter_frame(0).await.unwrap();
        let drawn =
            browser.execute("return Math.ceil(document.body.getBoundingClientRect().height)", vec![]).await;
        browser.enter_parent_frame().await.unwrap();
        let told = browser.execute(last_size, vec![]).await.unwrap();
        if told[0] == drawn.unwrap() {
            assert_eq!(told[1], json!(format!("{}px", told[0])), "the host sized its frame to it");
            return result;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{tool}: the view never told the host its drawn size: {}",
        browser.execute(last_size, vec![]).await.unwrap()
    );
}

/// The text of every cell of the view's table rows, row by row (in the frame).
async fn rows(browser: &fantoccini::Client) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for tr in browser.find_all(Locator::Css("#app tbody tr")).await.unwrap() {
        let mut cells = Vec::new();
        for td in tr.find_all(Locator::Css("td")).await.unwrap() {
            cells.push(td.text().await.unwrap());
        }
        out.push(cells);
    }
    out
}

async fn view_screenshot(browser: &fantoccini::Client, name: &str) {
    let png = browser.find(Locator::Css("iframe#view")).await.unwrap().screenshot().await.unwrap();
    std::fs::write(artifacts().join(format!("{name}.png")), png).unwrap();
}

#[tokio::test]
async fn mcp_apps_views_in_a_host_in_chromium() {
    let s = Server::with(Options {
        lensers: vec!["owner", "wri_a", "wri_b", "bob"],
        serve: Some(|a| a.common.toolsets = Some(vec!["default".into(), "eval".into()])),
        ..Options::default()
    })
    .await;
    let bob = AppsHost { s: &s, token: s.token("bob", Scopes::READ_WRITE).await };
    let owner = AppsHost { s: &s, token: s.token("owner", Scopes::READ_WRITE).await };
    // A closed battle bob voted in rates its writers; another is in voting.
    let (closed, contenders) = common::pages::battle(&s, "owner", ["wri_a", "wri_b"], false).await;
    let voted =
        bob.call("cast_battle_vote", json!({"battle_id": closed, "contender_id": contenders[0]})).await;
    assert_eq!(voted["isError"], false, "{voted}");
    for status in ["scoring", "closed"] {
        let args = json!({"battle_id": closed, "status": status, "confirm": true});
        let moved = owner.call("set_battle_status", args).await;
        assert_eq!(moved["isError"], false, "{moved}");
    }
    let (voting, _) = common::pages::battle(&s, "owner", ["wri_a", "wri_b"], false).await;
    let experiment = common::pages::experiment(&s, "owner").await;

    let host_url = host_page().await;
    let (_driver, driver_url) = start_chromedriver().await;
    let browser = chromium(&driver_url).await;
    browser.set_window_size(1000, 1200).await.unwrap();
    browser.goto(&host_url).await.unwrap();

    // The leaderboard: each rated writer's rank, name, rating and record.
    let board = show(&browser, &bob, "get_leaderboard", json!({"min_battles": 1})).await;
    let items = board["structuredContent"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{board}");
    let want: Vec<Vec<String>> = items
        .iter()
        .map(|r| {
            vec![
                r["rank"].to_string(),
                r["display_name"].as_str().unwrap().to_owned(),
                format!("{:.0}", r["rating"].as_f64().unwrap()),
                String::new(),
                format!("{}-{}-{}", r["wins"], r["losses"], r["ties"]),
                r["battles"].to_string(),
            ]
        })
        .collect();
    assert_eq!(want[0][1], "Writer wri_a", "bob's pick leads");
    browser.enter_frame(0).await.unwrap();
    assert_eq!(rows(&browser).await, want);
    browser.enter_parent_frame().await.unwrap();
    view_screenshot(&browser, "apps-1-leaderboard").await;

    // The experiment: each contender's name (markup as text) and figures.
    let shown = show(&browser, &owner, "get_experiment", json!({"experiment_id": experiment})).await;
    let figures = shown["structuredContent"]["contenders"].as_array().unwrap();
    browser.enter_frame(0).await.unwrap();
    let drawn = rows(&browser).await;
    assert_eq!(drawn.len(), figures.len());
    assert_eq!(
        drawn
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str(), r[3].as_str(), r[4].as_str()))
            .collect::<Vec<_>>(),
        [("model-one", "66.7%", "0.67", "1"), (common::pages::MARKUP_MODEL, "0.0%", "0.00", "0")],
        "{figures:?}"
    );
    assert_eq!((drawn[0][5].as_str(), drawn[0][6].as_str()), ("121", "180"), "latency p50 and p95");
    browser.enter_parent_frame().await.unwrap();
    view_screenshot(&browser, "apps-2-experiment").await;

    // A battle in voting: answers by position only, the script as text;
    // bob's vote goes to the host as tools/call of cast_battle_vote.
    let battle = show(&browser, &bob, "get_battle", json!({"battle_id": voting})).await;
    let sc = &battle["structuredContent"];
    assert_eq!(sc["status"], "voting", "{sc}");
    browser.enter_frame(0).await.unwrap();
    let page = browser.source().await.unwrap();
    assert!(!page.contains("Writer wri_a") && !page.contains("Writer wri_b"), "no names while voting");
    let mut answers = Vec::new();
    for pre in browser.find_all(Locator::Css(".answer pre")).await.unwrap() {
        answers.push(pre.text().await.unwrap());
    }
    let submitted: Vec<&str> =
        sc["submissions"].as_array().unwrap().iter().map(|x| x["content_text"].as_str().unwrap()).collect();
    assert_eq!(answers, submitted);
    assert!(answers[0].starts_with("<script>document.title='pwned'</script>"), "shown as text: {answers:?}");
    let (title, scripts) = (
        browser.execute("return document.title", vec![]).await.unwrap(),
        browser.execute("return document.querySelectorAll('#app script').length", vec![]).await.unwrap(),
    );
    assert_eq!((title, scripts), (json!("Battle · LenserFight"), json!(0)), "never run");
    browser.find(Locator::Css(".answer:nth-child(2) button")).await.unwrap().click().await.unwrap();
    browser.enter_parent_frame().await.unwrap();
    let mut call = Value::Null;
    for _ in 0..100 {
        let calls = browser.execute("return window.host.calls.splice(0)", vec![]).await.unwrap();
        if let Some(c) = calls.as_array().and_then(|c| c.first()) {
            call = c.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let second = &sc["submissions"][1]["contender_id"];
    assert_eq!(call["params"]["name"], "cast_battle_vote", "{call}");
    assert_eq!(call["params"]["arguments"], json!({"battle_id": voting, "contender_id": second}), "{call}");
    let counted = bob.call("cast_battle_vote", call["params"]["arguments"].clone()).await;
    browser
        .execute("window.host.answer(arguments[0], arguments[1])", vec![call["id"].clone(), counted])
        .await
        .unwrap();
    browser.enter_frame(0).await.unwrap();
    let mut status = String::new();
    for _ in 0..100 {
        status = browser.find(Locator::Css("#app [role=status]")).await.unwrap().text().await.unwrap();
        if status != "Voting…" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, "Your vote is counted.");
    browser.enter_parent_frame().await.unwrap();
    view_screenshot(&browser, "apps-3-battle-voted").await;
    let score = owner.call("get_battle_score", json!({"battle_id": voting})).await;
    let sc = &score["structuredContent"];
    assert_eq!(sc["total_vote_count"], 1, "{score}");
    let aggregate = sc["vote_aggregates"].as_array().unwrap().iter().find(|v| &v["contender_id"] == second);
    assert_eq!(aggregate.unwrap()["vote_count"], 1, "for the answer shown second: {score}");

    // The closed battle: names shown, with its standings.
    show(&browser, &bob, "get_battle", json!({"battle_id": closed})).await;
    browser.enter_frame(0).await.unwrap();
    let page = browser.source().await.unwrap();
    assert!(page.contains("Writer wri_a") && page.contains("Writer wri_b"), "names once closed");
    assert!(
        browser.find_all(Locator::Css(".answer button")).await.unwrap().is_empty(),
        "no vote once closed"
    );
    browser.enter_parent_frame().await.unwrap();
    view_screenshot(&browser, "apps-4-battle-closed").await;
    browser.close().await.unwrap();
    s.stop().await;
}
