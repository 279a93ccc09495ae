//! github_read and github_issue_create against a fake GitHub API, which
//! the saved connection's base_url points at.

use serde_json::json;

use super::fakes::{HttpFake, Reply};
use super::{World, key, maps_statuses};

async fn github() -> (World, HttpFake) {
    let w = World::new();
    let api = HttpFake::start().await;
    w.connect("github", "gh", json!({"base_url": api.url("/api/v3")}), "ghp_token").await;
    (w, api)
}

#[tokio::test]
async fn github_read_reads_a_repository_with_the_connections_token() {
    let (w, api) = github().await;
    api.answer(Reply::json(
        200,
        json!({"full_name": "acme/app", "description": "An app", "html_url": "https://github.com/acme/app",
               "default_branch": "main", "stargazers_count": 5, "forks_count": 1, "open_issues_count": 2,
               "language": "Rust", "topics": ["cli"], "archived": false, "private": true,
               "pushed_at": "2026-05-01T00:00:00Z", "owner": {"login": "acme"}}),
    ));
    let job = w.job("github_read", json!({"repository": "acme/app"}), Some("gh"), json!({})).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(out["full_name"], "acme/app");
    assert_eq!((out["stars"].clone(), out["url"].clone()), (json!(5), json!("https://github.com/acme/app")));
    assert!(out.get("owner").is_none(), "only the chosen fields");
    let seen = api.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("GET", "/api/v3/repos/acme/app"));
    assert_eq!(seen.header("authorization"), Some("Bearer ghp_token"));
    assert_eq!(seen.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(seen.header("x-github-api-version"), Some("2022-11-28"));
    assert!(seen.header("user-agent").is_some_and(|ua| ua.starts_with("lenserfight/")));
    assert_eq!(seen.header("idempotency-key"), None, "a read has no outside effect");
}

#[tokio::test]
async fn github_read_lists_issues_without_pull_requests() {
    let (w, api) = github().await;
    let issue = |n: u64| {
        json!({"number": n, "title": format!("Issue {n}"), "state": "open", "html_url": format!("https://github.com/acme/app/issues/{n}"),
               "user": {"login": "ada"}, "labels": [{"name": "bug"}], "comments": 0,
               "created_at": "2026-05-01T00:00:00Z", "updated_at": "2026-05-02T00:00:00Z", "body": "Steps"})
    };
    let mut pr = issue(2);
    pr["pull_request"] = json!({"url": "…"});
    api.answer(Reply::json(200, json!([issue(1), pr, issue(3), issue(4)])));
    let config = json!({"repository": "acme/app", "resource": "issues", "state": "all", "limit": 2});
    let job = w.job("github_read", config, Some("gh"), json!({})).await;
    let out = w.run(&job).await.unwrap();
    let items = out["items"].as_array().unwrap();
    assert_eq!(items.iter().map(|i| i["number"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(items[0]["author"], "ada");
    assert_eq!(items[0]["labels"], json!(["bug"]));
    assert_eq!(api.one().path, "/api/v3/repos/acme/app/issues?state=all&per_page=100");
}

#[tokio::test]
async fn github_read_reads_a_file_as_text() {
    let (w, api) = github().await;
    api.answer(Reply::text(200, "fn main() {}\n"));
    let config = json!({"repository": "acme/app", "resource": "file", "path": "src/main.rs"});
    let job = w.job("github_read", config, Some("gh"), json!({})).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(
        out,
        json!({"content": "fn main() {}\n", "size": 13, "truncated": false, "path": "src/main.rs"})
    );
    let seen = api.one();
    assert_eq!(seen.path, "/api/v3/repos/acme/app/contents/src/main.rs");
    assert_eq!(seen.header("accept"), Some("application/vnd.github.raw"));

    let config = json!({"repository": "acme/app", "resource": "file", "path": "../secrets"});
    let job = w.job("github_read", config, Some("gh"), json!({})).await;
    w.fails(&job, "config_invalid").await;
}

#[tokio::test]
async fn github_read_maps_missing_limited_and_failed_answers() {
    let (w, api) = github().await;
    let job = w
        .job("github_read", json!({"repository": "acme/app", "resource": "readme"}), Some("gh"), json!({}))
        .await;
    api.answer(Reply::json(404, json!({"message": "Not Found"})));
    assert!(w.fails(&job, "not_found").await.message.contains("acme/app"));
    api.answer(
        Reply::json(403, json!({"message": "API rate limit exceeded"}))
            .with_header("x-ratelimit-remaining", "0"),
    );
    assert!(w.fails(&job, "rate_limit").await.message.contains("rate limit exceeded"));
    api.answer(Reply::json(403, json!({"message": "Resource not accessible"})));
    w.fails(&job, "status_4xx").await;
    maps_statuses(&w, &api, &job).await;
}

#[tokio::test]
async fn github_issue_create_opens_an_issue_with_an_idempotency_key() {
    let (w, api) = github().await;
    api.answer(Reply::json(201, json!({"number": 42, "html_url": "https://github.com/acme/app/issues/42"})));
    let config = json!({"repository": "acme/app", "title": "Broken link: [[url]]", "body": "Found by a run.", "labels": ["bug", "bot"]});
    let job = w
        .job("github_issue_create", config, Some("gh"), json!({"input": {"url": "https://acme.example/x"}}))
        .await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(out, json!({"number": 42, "url": "https://github.com/acme/app/issues/42"}));
    let seen = api.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/api/v3/repos/acme/app/issues"));
    assert_eq!(
        seen.json(),
        json!({"title": "Broken link: https://acme.example/x", "body": "Found by a run.", "labels": ["bug", "bot"]})
    );
    assert_eq!(seen.header("authorization"), Some("Bearer ghp_token"));
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));
    maps_statuses(&w, &api, &job).await;
}
