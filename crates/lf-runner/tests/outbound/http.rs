//! http_request, webhook_sender and graphql_request, and the SSRF
//! refusals an executor shows.

use std::time::Duration;

use serde_json::json;

use super::fakes::{HttpFake, Reply};
use super::{World, egress, key, maps_statuses};

#[tokio::test]
async fn http_request_outputs_status_lowercase_headers_and_the_body_as_json_or_text() {
    let w = World::new();
    let fake = HttpFake::start().await;
    fake.answer(Reply::json(200, json!({"items": [1, 2]})).with_header("X-Trace", "abc"));
    let url = fake.url("/items?page=[[page]]");
    let job = w.job("http_request", json!({"url": url}), None, json!({"input": {"page": 2}})).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(out["status"], 200);
    assert_eq!(out["headers"]["x-trace"], "abc");
    assert_eq!(out["headers"]["content-type"], "application/json");
    assert_eq!(out["body"], json!({"items": [1, 2]}));
    let seen = fake.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("GET", "/items?page=2"), "placeholders filled");
    assert_eq!(seen.header("idempotency-key"), None, "a GET has no outside effect");

    fake.answer(Reply::text(200, "plain words"));
    assert_eq!(w.run(&job).await.unwrap()["body"], "plain words");
}

#[tokio::test]
async fn http_request_posts_its_input_with_an_idempotency_key() {
    let w = World::new();
    let fake = HttpFake::start().await;
    fake.answer(Reply::text(201, ""));
    let config = json!({"url": fake.url("/things"), "method": "POST", "headers": {"X-Client": "lf"}});
    let job = w.job("http_request", config, None, json!({"input": {"name": "ada"}})).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!((out["status"].clone(), out["body"].clone()), (json!(201), json!(null)));
    let seen = fake.one();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.json(), json!({"name": "ada"}));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("x-client"), Some("lf"));
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));

    let config = json!({"url": fake.url("/things/1"), "method": "PUT", "body": {"fixed": true}});
    let job = w.job("http_request", config, None, json!({"input": "ignored"})).await;
    fake.clear();
    w.run(&job).await.unwrap();
    assert_eq!(fake.one().json(), json!({"fixed": true}), "a configured body wins over the input");
}

#[tokio::test]
async fn http_request_maps_failures_to_retry_codes() {
    let w = World::new();
    let fake = HttpFake::start().await;
    let job = w.job("http_request", json!({"url": fake.url("/x"), "timeout_ms": 300}), None, json!({})).await;
    maps_statuses(&w, &fake, &job).await;
    fake.answer(Reply::text(200, "late").slow(Duration::from_secs(3)));
    w.fails(&job, "timeout").await;

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let job =
        w.job("http_request", json!({"url": format!("http://127.0.0.1:{closed}/")}), None, json!({})).await;
    w.fails(&job, "connect_error").await;
}

#[tokio::test]
async fn an_http_connection_adds_its_token_and_headers_for_its_origin_only() {
    let w = World::new();
    let fake = HttpFake::start().await;
    let other = HttpFake::start().await;
    w.connect("http", "api", json!({"url": fake.url("/"), "headers": {"X-Team": "core"}}), "tok-123").await;
    let job = w.job("http_request", json!({"url": fake.url("/v1/me")}), Some("api"), json!({})).await;
    w.run(&job).await.unwrap();
    let seen = fake.one();
    assert_eq!(seen.header("authorization"), Some("Bearer tok-123"));
    assert_eq!(seen.header("x-team"), Some("core"));

    let job = w.job("http_request", json!({"url": other.url("/steal")}), Some("api"), json!({})).await;
    let f = w.fails(&job, "invalid_input").await;
    assert!(f.message.contains("sends its credentials only to"), "{}", f.message);
    assert!(!f.message.contains("tok-123"));
    assert!(other.seen().is_empty(), "nothing went to the other origin");

    w.connect("http", "keyed", json!({"auth_header": "X-Api-Key"}), "k-9").await;
    let job = w.job("http_request", json!({"url": other.url("/")}), Some("keyed"), json!({})).await;
    w.run(&job).await.unwrap();
    let seen = other.one();
    assert_eq!((seen.header("x-api-key"), seen.header("authorization")), (Some("k-9"), None));
}

#[tokio::test]
async fn ssrf_metadata_and_loopback_are_blocked_without_the_allow_list() {
    let fake = HttpFake::start().await;
    let open = World::new();
    let closed = World::with(egress(""));
    for w in [&open, &closed] {
        let job = w
            .job("http_request", json!({"url": "http://169.254.169.254/latest/meta-data/"}), None, json!({}))
            .await;
        let f = w.fails(&job, "blocked").await;
        assert!(f.message.contains("cloud metadata address"), "{}", f.message);
    }
    let job = closed.job("http_request", json!({"url": fake.url("/")}), None, json!({})).await;
    let f = closed.fails(&job, "blocked").await;
    assert!(
        f.message.contains("loopback") && f.message.contains("LENSERFIGHT_EGRESS_ALLOW"),
        "{}",
        f.message
    );
    let job =
        closed.job("webhook_sender", json!({"url": fake.url("/hook")}), None, json!({"input": {}})).await;
    closed.fails(&job, "blocked").await;
    assert!(fake.seen().is_empty(), "the sink saw nothing: {:?}", fake.seen());
}

#[tokio::test]
async fn webhook_sender_posts_the_picked_payload_with_an_idempotency_key() {
    let w = World::new();
    let fake = HttpFake::start().await;
    fake.answer(Reply::text(202, ""));
    let input = json!({"input": {"title": "Weekly digest", "n": 3}});
    let job = w.job("webhook_sender", json!({"url": fake.url("/hook")}), None, input.clone()).await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(out, json!({"status": 202, "headers": out["headers"].clone(), "body": null}));
    let seen = fake.one();
    assert_eq!((seen.method.as_str(), seen.path.as_str()), ("POST", "/hook"));
    assert_eq!(seen.json(), json!({"title": "Weekly digest", "n": 3}));
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));

    let config = json!({"url": fake.url("/hook"), "payload_path": "$.title"});
    let job = w.job("webhook_sender", config, None, input.clone()).await;
    fake.clear();
    w.run(&job).await.unwrap();
    assert_eq!(fake.one().json(), json!("Weekly digest"));

    let config = json!({"url": fake.url("/hook"), "payload_path": "$.missing"});
    let job = w.job("webhook_sender", config, None, input).await;
    assert!(w.fails(&job, "invalid_input").await.message.contains("selects nothing"));
}

#[tokio::test]
async fn webhook_sender_posts_to_the_secret_url_of_its_connection() {
    let w = World::new();
    let fake = HttpFake::start().await;
    w.connect("http", "hook", json!({}), &fake.url("/secret/abc")).await;
    let job = w.job("webhook_sender", json!({}), Some("hook"), json!({"input": {"ok": true}})).await;
    w.run(&job).await.unwrap();
    let seen = fake.one();
    assert_eq!(seen.path, "/secret/abc");
    assert_eq!(seen.header("authorization"), None, "a secret URL is not a token");
    maps_statuses(&w, &fake, &job).await;
}

#[tokio::test]
async fn graphql_request_sends_the_filled_query_and_outputs_data_and_errors() {
    let w = World::new();
    let fake = HttpFake::start().await;
    let reply = json!({"data": {"viewer": {"login": "ada"}}, "errors": [{"message": "partial"}]});
    fake.answer(Reply::json(200, reply));
    w.connect("github", "gh", json!({"base_url": fake.url("/")}), "ghp_x").await;
    let config = json!({
        "url": fake.url("/graphql"),
        "query": "query { repository(name: \"[[name]]\") { id } }",
        "variables": {"owner": "[[owner]]", "n": 1},
    });
    let job = w
        .job("graphql_request", config, Some("gh"), json!({"input": {"name": "app", "owner": "acme"}}))
        .await;
    let out = w.run(&job).await.unwrap();
    assert_eq!(
        out,
        json!({"data": {"viewer": {"login": "ada"}}, "errors": [{"message": "partial"}], "status": 200})
    );
    let seen = fake.one();
    assert_eq!(
        seen.json(),
        json!({"query": "query { repository(name: \"app\") { id } }", "variables": {"owner": "acme", "n": 1}})
    );
    assert_eq!(seen.header("authorization"), Some("Bearer ghp_x"));
    assert_eq!(seen.header("idempotency-key"), Some(key(&job).as_str()));

    fake.answer(Reply::json(200, json!({"data": null})));
    assert_eq!(w.run(&job).await.unwrap()["errors"], json!([]));
    fake.answer(Reply::text(200, "<html>"));
    w.fails(&job, "invalid_response").await;
    maps_statuses(&w, &fake, &job).await;
}

#[tokio::test]
async fn a_token_an_answer_echoes_is_redacted_from_the_error_and_the_output() {
    let w = World::new();
    let fake = HttpFake::start().await;
    let token = "echoed-token-5e1f90";
    w.connect("http", "api", json!({"url": fake.url("/")}), token).await;
    let job = w.job("http_request", json!({"url": fake.url("/me")}), Some("api"), json!({})).await;
    let echo = format!(r#"{{"seen": {{"authorization": "Bearer {token}"}}}}"#);
    fake.answer(Reply::text(401, &echo));
    let f = w.fails(&job, "status_4xx").await;
    assert!(!f.message.contains(token) && f.message.contains("Bearer [redacted]"), "{}", f.message);
    // The quote is clipped in the middle of the token: its start goes too.
    fake.answer(Reply::text(400, &format!("{} {token}", "a".repeat(190))));
    let f = w.fails(&job, "status_4xx").await;
    assert!(f.message.ends_with(" [redacted]…") && !f.message.contains("echoed-to"), "{}", f.message);
    fake.answer(
        Reply::json(200, json!({"authorization": format!("Bearer {token}")})).with_header("x-echo", token),
    );
    let out = w.run(&job).await.unwrap();
    assert!(!out.to_string().contains(token), "{out}");
    assert_eq!(out["body"]["authorization"], "Bearer [redacted]");
    assert_eq!(out["headers"]["x-echo"], "[redacted]");
}
