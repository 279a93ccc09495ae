//! The edge's limits counted together by two server processes on one
//! database, as behind a balancer: calls to one webhook, and from one
//! address, alternated between the two built binaries pass as often as
//! one process allows, not twice; failed sign-ins at one handle lock it
//! after the threshold whichever process saw them. On one SQLite file
//! always; on PostgreSQL when LENSERFIGHT_TEST_POSTGRES_URL names a
//! server (`.ci/run` starts one; skipped without it).

use reqwest::StatusCode;
use serde_json::{Value, json};

#[path = "common/process.rs"]
mod process;

use process::{Home, Served};

const HOOKS_PER_MINUTE: usize = 4;
const REDIRECT: &str = "http://127.0.0.1:41234/callback";
/// Failed sign-ins that lock a handle (`lf_auth::throttle::MAX_FAILURES`).
const MAX_FAILURES: usize = 10;

fn client() -> reqwest::Client {
    lf_model::client_builder().no_proxy().build().unwrap()
}

/// Two processes of the binary on the database of `env` (the home's
/// SQLite file when it names none), one started after the other has
/// migrated it, believing X-Forwarded-For from loopback.
fn two_servers(home: &Home, env: &[(&str, &str)]) -> [Served; 2] {
    let per_minute = HOOKS_PER_MINUTE.to_string();
    let mut env = env.to_vec();
    env.push(("LENSERFIGHT_HOOKS_PER_MINUTE", &per_minute));
    env.push(("LENSERFIGHT_TRUSTED_PROXIES", "127.0.0.1"));
    let first = home.serve(&[], &env);
    let second = home.serve(&[], &env);
    [first, second]
}

/// A call to the webhook of `workflow` (no secret: 401 when it may pass)
/// through `server`, from `from`.
async fn hook(server: &Served, workflow: &str, from: &str) -> reqwest::Response {
    client()
        .post(format!("{}/hooks/{workflow}", server.base))
        .header("x-forwarded-for", from)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
}

/// Whether a call passed the limits (401: judged by its missing secret)
/// or was refused by them (429, with `Retry-After`).
fn passed(r: &reqwest::Response) -> bool {
    match r.status() {
        StatusCode::UNAUTHORIZED => true,
        StatusCode::TOO_MANY_REQUESTS => {
            assert!(r.headers().contains_key("retry-after"));
            false
        }
        other => panic!("a webhook call without its secret is 401 or 429, not {other}"),
    }
}

/// A fresh workflow id.
fn fresh() -> String {
    lf_core::WorkflowId::new().to_string()
}

async fn hooks_are_counted_together(servers: &[Served; 2]) {
    // One workflow, from as many addresses: its count is shared.
    let workflow = fresh();
    let mut through = 0;
    for i in 0..2 * HOOKS_PER_MINUTE + 2 {
        let r = hook(&servers[i % 2], &workflow, &format!("198.51.100.{}", i + 1)).await;
        through += usize::from(passed(&r));
    }
    assert_eq!(through, HOOKS_PER_MINUTE, "calls to one hook through two processes pass as through one");

    // One address, to as many workflows: its count is shared too.
    let from = "203.0.113.1";
    let mut through = 0;
    for i in 0..2 * HOOKS_PER_MINUTE + 2 {
        let r = hook(&servers[i % 2], &fresh(), from).await;
        through += usize::from(passed(&r));
    }
    assert_eq!(through, HOOKS_PER_MINUTE, "one address's calls through two processes pass as through one");
}

/// The value of a hidden input on the page.
fn hidden(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker)? + marker.len();
    Some(page[start..].split('"').next()?.to_owned())
}

/// Signs in as `handle` with a wrong password on `server`'s consent page,
/// from `from`.
async fn sign_in(server: &Served, client_id: &str, handle: &str, from: &str) -> reqwest::Response {
    let query = [
        ("response_type", "code".to_owned()),
        ("client_id", client_id.to_owned()),
        ("redirect_uri", REDIRECT.to_owned()),
        ("scope", "read".to_owned()),
        ("state", "st4te".to_owned()),
        ("code_challenge", lf_auth::pkce::s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")),
        ("code_challenge_method", "S256".to_owned()),
    ];
    let url = format!("{}/oauth/authorize", server.base);
    let page = client().get(&url).query(&query).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let cookie = page.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let html = page.text().await.unwrap();
    let mut form: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    form.push(("csrf".into(), hidden(&html, "csrf").unwrap()));
    form.push(("handle".into(), handle.into()));
    form.push(("password".into(), "not the password".into()));
    form.push(("decision".into(), "approve".into()));
    client()
        .post(&url)
        .header("cookie", cookie)
        .header("x-forwarded-for", from)
        .form(&form)
        .send()
        .await
        .unwrap()
}

async fn sign_in_failures_are_counted_together(servers: &[Served; 2]) {
    let r = client()
        .post(format!("{}/oauth/register", servers[0].base))
        .header("x-forwarded-for", "192.0.2.200")
        .json(&json!({ "client_name": "test", "redirect_uris": [REDIRECT] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let client_id = r.json::<Value>().await.unwrap()["client_id"].as_str().unwrap().to_owned();
    // No lenser has it: an unknown handle is counted like a known one.
    let handle = "nobody";
    for i in 1..=MAX_FAILURES {
        let r = sign_in(&servers[i % 2], &client_id, handle, &format!("192.0.2.{i}")).await;
        assert_eq!(r.status(), StatusCode::OK, "failure {i} is judged");
        assert!(r.text().await.unwrap().contains("do not match"));
    }
    for (n, server) in servers.iter().enumerate() {
        let r = sign_in(server, &client_id, handle, &format!("192.0.2.{}", 100 + n)).await;
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS, "the handle is locked on process {n} too");
        let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_sqlite_file_count_together() {
    let home = Home::new();
    let servers = two_servers(&home, &[]);
    hooks_are_counted_together(&servers).await;
    sign_in_failures_are_counted_together(&servers).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_postgres_count_together() {
    let Some(admin) = std::env::var("LENSERFIGHT_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()) else {
        eprintln!("skipped: LENSERFIGHT_TEST_POSTGRES_URL is not set");
        return;
    };
    // A database of its own, dropped at the end.
    let name = format!("lf_limits_{}", fresh().replace('-', ""));
    let base = admin.rsplit_once('/').expect("a URL with a database name").0.to_owned();
    let pool = sqlx::postgres::PgPool::connect(&admin).await.expect("the admin connection");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&pool).await.unwrap();
    let url = format!("{base}/{name}");
    let home = Home::new();
    let servers = two_servers(&home, &[("LENSERFIGHT_DATABASE_URL", &url)]);
    hooks_are_counted_together(&servers).await;
    sign_in_failures_are_counted_together(&servers).await;
    drop(servers);
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}
