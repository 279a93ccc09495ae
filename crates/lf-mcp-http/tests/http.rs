//! The HTTP transport end to end over a real socket: health, the MCP
//! endpoint in development mode, and everything refused before rmcp sees it.

mod common;

use common::{Server, client, post_mcp, rpc};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn health_answers() {
    let s = Server::start(false).await;
    let r = client().get(s.url("/health")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    assert_eq!(body["server"], "lenserfight-mcp");
    assert!(body["version"].is_string());
    let r = client().get(s.url("/nope")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    s.stop().await;
}

#[tokio::test]
async fn development_mode_serves_tools_without_a_token() {
    let s = Server::start(true).await;
    let r = post_mcp(&s, &rpc("tools/list", json!({}))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.unwrap();
    let tools = body["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "create_lens"), "{body}");

    let create = rpc(
        "tools/call",
        json!({ "name": "create_lens", "arguments": {
            "title": "Greeter",
            "template_body": "Say hello to [[Name]] in a friendly way, then ask how their day is going."
        }}),
    );
    let body: Value = post_mcp(&s, &create).await.json().await.unwrap();
    let result = &body["result"];
    assert_eq!(result["isError"], false, "{body}");
    let id = result["structuredContent"]["id"].as_str().unwrap().to_owned();
    let run = rpc(
        "tools/call",
        json!({ "name": "run_lens", "arguments": { "lens_id": id, "param_values": { "Name": "Ada" } } }),
    );
    let body: Value = post_mcp(&s, &run).await.json().await.unwrap();
    assert!(
        body["result"]["structuredContent"]["resolved_prompt"].as_str().unwrap().contains("Ada"),
        "{body}"
    );
    s.stop().await;
}

#[tokio::test]
async fn without_a_token_the_client_is_sent_to_sign_in() {
    let s = Server::start(false).await;
    let r = post_mcp(&s, &rpc("tools/list", json!({}))).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"", s.base)
    );
    let r = client()
        .post(s.url("/mcp?access_token=lf_mcp_0000"))
        .json(&rpc("tools/list", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    s.stop().await;
}

#[tokio::test]
async fn other_hosts_and_origins_are_refused() {
    let s = Server::start(true).await;
    let body = rpc("tools/list", json!({}));
    for (name, value) in [
        ("host", "evil.example"),
        ("host", "evil.example:80"),
        ("origin", "http://evil.example"),
        ("origin", "null"),
    ] {
        let r = client().post(s.url("/mcp")).header(name, value).json(&body).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{name}: {value}");
        let r = client().get(s.url("/health")).header(name, value).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{name}: {value}");
    }
    let r = client()
        .post(s.url("/mcp"))
        .header("origin", "http://localhost:6274")
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["access-control-allow-origin"], "http://localhost:6274");
    let r = client()
        .request(reqwest::Method::OPTIONS, s.url("/mcp"))
        .header("origin", "http://localhost:6274")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(r.headers()["access-control-allow-headers"].to_str().unwrap().contains("authorization"));
    s.stop().await;
}

#[tokio::test]
async fn oversize_deep_and_wrong_method_requests_are_refused() {
    let s = Server::start(true).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2 << 20)
    );
    let r = client()
        .post(s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get_lens","arguments":{}{}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let r = client()
        .post(s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(deep)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    let r = client().get(s.url("/mcp")).header("accept", "text/event-stream").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    // Still serving.
    let r = post_mcp(&s, &rpc("tools/list", json!({}))).await;
    assert_eq!(r.status(), StatusCode::OK);
    s.stop().await;
}
