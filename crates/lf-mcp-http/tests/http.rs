//! The HTTP transport end to end over a real socket: health, the MCP
//! endpoint in development mode, and everything refused before rmcp sees it.

mod common;

use common::raw::{answer, connect};
use common::{Options, Server, client, post_mcp, rpc};
use lf_mcp_http::{HttpConfig, ServeArgs};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

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

/// A server whose public URL is `https://mcp.example.com` (set past the
/// checks, which refuse it with development mode), still on loopback.
fn answer_for_a_public_host(config: &mut HttpConfig) {
    config.public_url = "https://mcp.example.com".into();
    config.public_url_set = true;
}

/// Development mode with a public URL (the usual setup behind a reverse
/// proxy, whose socket is loopback) does not start.
#[test]
fn development_mode_refuses_a_public_url_that_is_not_loopback() {
    let args = |public_url: &str, bind: &str| ServeArgs {
        common: lf_server::CommonArgs { database_url: Some("sqlite::memory:".into()), ..Default::default() },
        bind: bind.into(),
        public_url: Some(public_url.into()),
        dev_lenser: Some("alice".into()),
        ..ServeArgs::default()
    };
    for (public_url, bind) in
        [("https://mcp.example.com", "127.0.0.1:8612"), ("http://127.0.0.1:8612", "0.0.0.0:8612")]
    {
        let e = HttpConfig::from_args(&args(public_url, bind)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_DEV_LENSER") && e.contains("loopback"), "{public_url} {bind}: {e}");
    }
    assert!(HttpConfig::from_args(&args("http://localhost:8612", "127.0.0.1:8612")).is_ok());
}

/// Even if a development server answered for a host that is not loopback,
/// a request to that host without a token is not the development lenser's.
#[tokio::test]
async fn development_mode_acts_only_for_requests_to_a_loopback_host() {
    let s = Server::with(Options { config: Some(answer_for_a_public_host), ..Options::dev() }).await;
    let mcp = format!("http://{}/mcp", s.addr);
    let create = rpc(
        "tools/call",
        json!({ "name": "create_lens", "arguments": {
            "title": "Proxied", "template_body": "Nobody from outside may create this lens as the development lenser." } }),
    );
    let send = |host: String| {
        client()
            .post(&mcp)
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .json(&create)
            .send()
    };
    let r = send("mcp.example.com".into()).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().contains_key("www-authenticate"));
    let r = send(s.addr.to_string()).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["isError"], false, "{body}");
    s.stop().await;
}

/// An absolute-form request target names the host (RFC 9112 §3.2.2), so it
/// is the one checked; two Host headers are refused.
#[tokio::test]
async fn the_host_checked_is_the_target_s_and_there_is_one() {
    let s = Server::start(false).await;
    let own = s.addr;
    for (request, status) in [
        ("GET http://evil.example/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_owned(), "403"),
        (format!("GET http://{own}/health HTTP/1.1\r\nHost: evil.example\r\n\r\n"), "200"),
        ("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n".to_owned(), "403"),
        ("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".to_owned(), "200"),
    ] {
        let mut tcp = connect(&s).await;
        tcp.write_all(request.as_bytes()).await.unwrap();
        let answer = answer(&mut tcp).await;
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{request:?}: {answer}");
    }
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
    // Any loopback port is allowed, with a public URL too: never with
    // credentials, so a page there can do only what its own token allows.
    assert!(r.headers().get("access-control-allow-credentials").is_none());
    s.stop().await;

    let s = Server::with(Options { config: Some(answer_for_a_public_host), ..Options::default() }).await;
    for method in [reqwest::Method::OPTIONS, reqwest::Method::GET] {
        let r = client()
            .request(method.clone(), format!("http://{}/health", s.addr))
            .header("host", "mcp.example.com")
            .header("origin", "http://127.0.0.1:53999")
            .header("access-control-request-method", "GET")
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{method}: {}", r.status());
        assert_eq!(r.headers()["access-control-allow-origin"], "http://127.0.0.1:53999", "{method}");
        assert!(r.headers().get("access-control-allow-credentials").is_none(), "{method}");
    }
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

/// The JSON-RPC message of a response, whether sent as JSON or as an SSE
/// event on a stream that may stay open: read until the first message.
async fn message_of(mut r: reqwest::Response, what: &str) -> Value {
    let mut text = String::new();
    loop {
        if let Ok(v) = serde_json::from_str(&text) {
            return v;
        }
        for line in text.lines() {
            if let Some(data) = line.strip_prefix("data:").map(str::trim)
                && let Ok(v) = serde_json::from_str::<Value>(data)
            {
                return v;
            }
        }
        match tokio::time::timeout(Duration::from_secs(10), r.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            other => panic!("{what}: no JSON-RPC message in {text:?} ({other:?})"),
        }
    }
}

/// With --sessions, concurrent requests of one session that reuse a
/// JSON-RPC id are each answered: one is served, the others refused with
/// -32600 (rmcp 3.11 alone leaves some unanswered).
#[tokio::test]
async fn sessions_answer_concurrent_requests_that_share_an_id() {
    let s = Server::with(Options {
        lensers: vec!["dev_user"],
        dev: Some("dev_user"),
        sessions: true,
        ..Options::default()
    })
    .await;
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } } });
    let r = post_mcp(&s, &init).await;
    assert_eq!(r.status(), StatusCode::OK);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(message_of(r, "initialize").await["result"]["protocolVersion"], "2025-11-25");
    let send = |body: Value| {
        client()
            .post(s.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body)
            .send()
    };
    let r = send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    for round in 0..5 {
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..4 {
            let args = json!({ "limit": 1 + i });
            calls.spawn(send(json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": { "name": "list_lenses", "arguments": args } })));
        }
        let answers = tokio::time::timeout(Duration::from_secs(10), calls.join_all())
            .await
            .unwrap_or_else(|_| panic!("round {round}: a request with a reused id was left unanswered"));
        let mut answered = 0;
        for r in answers {
            let r = r.unwrap();
            let status = r.status();
            let m = message_of(r, &format!("round {round}")).await;
            assert_eq!(m["id"], if status == StatusCode::OK { json!(7) } else { Value::Null }, "{m}");
            match status {
                StatusCode::OK => {
                    assert_eq!(m["result"]["isError"], false, "{m}");
                    answered += 1;
                }
                StatusCode::BAD_REQUEST => assert_eq!(m["error"]["code"], -32600, "{m}"),
                other => panic!("round {round}: {other}: {m}"),
            }
        }
        assert!(answered >= 1, "round {round}: one of the requests is served");
    }
    // Used one after another, an id is fine.
    for _ in 0..3 {
        let r = send(json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": { "name": "list_lenses", "arguments": {} } }))
        .await
        .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(message_of(r, "sequential").await["id"], 8);
    }
    s.stop().await;
}

/// With --sessions a session is its initializer's: another lenser holding
/// its id gets what an unknown session gets (404), and the session is left
/// alone.
#[tokio::test]
async fn a_session_is_only_its_own_lenser_s() {
    let s =
        Server::with(Options { lensers: vec!["alice", "bob"], sessions: true, ..Options::default() }).await;
    let alice = s.token("alice", lf_core::Scopes::READ_WRITE).await;
    let bob = s.token("bob", lf_core::Scopes::READ_WRITE).await;
    let request = |method: reqwest::Method, token: &str, session: Option<&str>, body: Option<Value>| {
        let mut r = client()
            .request(method, s.url("/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(session) = session {
            r = r.header("mcp-session-id", session);
        }
        if let Some(body) = body {
            r = r.json(&body);
        }
        r.send()
    };
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } } });
    let r = request(reqwest::Method::POST, &alice, None, Some(init)).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    message_of(r, "initialize").await;
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let r = request(reqwest::Method::POST, &alice, Some(&session), Some(initialized)).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "list_lenses", "arguments": {} } });

    let unknown =
        request(reqwest::Method::POST, &bob, Some("no-such-session"), Some(call.clone())).await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let unknown = unknown.text().await.unwrap();
    for method in [reqwest::Method::POST, reqwest::Method::GET, reqwest::Method::DELETE] {
        let body = (method == reqwest::Method::POST).then(|| call.clone());
        let r = request(method.clone(), &bob, Some(&session), body).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{method}");
        assert_eq!(r.text().await.unwrap(), unknown, "{method}: as for an unknown session");
    }
    // Alice's session is untouched.
    let r = request(reqwest::Method::POST, &alice, Some(&session), Some(call.clone())).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(message_of(r, "alice's call").await["result"]["isError"], false);
    let r = request(reqwest::Method::DELETE, &alice, Some(&session), None).await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let r = request(reqwest::Method::POST, &alice, Some(&session), Some(call)).await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND, "ended by its owner");
    s.stop().await;
}
