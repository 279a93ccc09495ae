//! The messages the HTTP layer answers because rmcp does not: one nested
//! too deeply to parse, and JSON-RPC batches (protocol 2025-03-26).

mod common;

use common::{Options, Server, call_tool, client};
use lf_core::Scopes;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// POSTs `body` as it is, with `headers` besides the usual two.
async fn post(s: &Server, headers: &[(&str, &str)], body: String) -> reqwest::Response {
    let mut request = client()
        .post(s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// Status and body.
async fn answer(r: reqwest::Response) -> (StatusCode, String) {
    (r.status(), r.text().await.unwrap())
}

/// A message nested deeper than the parser reads is refused (400) with its
/// own id and an error that names the limit, with sessions or without.
#[tokio::test]
async fn too_deep_messages_are_answered_with_their_id() {
    for sessions in [false, true] {
        let s = Server::with(Options { sessions, ..Options::dev() }).await;
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_lens","arguments":{}}}}}"#,
            nested(2_000)
        );
        let (status, body) = answer(post(&s, &[], deep).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let message: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(message["id"], 7, "{message}");
        assert_eq!(message["error"]["code"], -32602, "{message}");
        assert!(
            message["error"]["message"].as_str().unwrap().contains("more than 128 levels deep"),
            "{message}"
        );
        s.stop().await;
    }
}

/// The answers to `bodies`, each POSTed alone with `headers`: status and body.
async fn alone(s: &Server, headers: &[(&str, &str)], bodies: &[String]) -> Vec<(StatusCode, String)> {
    let mut answers = Vec::new();
    for body in bodies {
        answers.push(answer(post(s, headers, body.clone()).await).await);
    }
    answers
}

/// The members every batch test sends, over a lens `lens`: a direct call,
/// rmcp's requests, an unknown tool, a notification, a method rmcp does not
/// know, and a member too deep to parse.
fn members(lens: &str) -> Vec<String> {
    vec![
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "get_lens", "arguments": {"lens_id": lens}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": "b", "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "no_such_tool"}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 12, "method": "prompts/list"}).to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{}}}"#, nested(300)),
    ]
}

/// Checks that a batch of `members` is answered with the JSON-RPC answers
/// each member gets alone, in order, as they were written.
async fn batch_answers_alike(s: &Server, headers: &[(&str, &str)], members: &[String]) {
    let expected = alone(s, headers, members).await;
    let (status, body) = answer(post(s, headers, format!("[{}]", members.join(" ,"))).await).await;
    let texts: Vec<&str> = expected
        .iter()
        .filter(|(status, _)| *status != StatusCode::ACCEPTED)
        .map(|(_, b)| b.as_str())
        .collect();
    assert_eq!(body, format!("[{}]", texts.join(",")), "{status}");
    let statuses: Vec<StatusCode> =
        expected.iter().map(|(s, _)| *s).filter(|s| *s != StatusCode::ACCEPTED).collect();
    let same = statuses.iter().all(|s| *s == statuses[0]);
    assert_eq!(status, if same { statuses[0] } else { StatusCode::OK });
}

/// A stateless client of 2025-03-26 (no version header, as rmcp assumes, or
/// that one) gets its batch answered; later versions keep refusing it.
#[tokio::test]
async fn stateless_batches_in_2025_03_26() {
    let s = Server::start(true).await;
    let lens = call_tool(&s, None, "create_lens", json!({"title": "Essay", "template_body": "Write about [[Topic]] for a curious reader, with examples."})).await;
    let lens = lens["structuredContent"]["id"].as_str().unwrap().to_owned();
    let members = members(&lens);
    batch_answers_alike(&s, &[], &members).await;
    batch_answers_alike(&s, &[("mcp-protocol-version", "2025-03-26")], &members).await;

    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let (status, body) = answer(post(&s, &[], "[]".into()).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], -32600, "{body}");
    let (status, body) = answer(post(&s, &[], Value::Array(vec![ping.clone(); 21]).to_string()).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("at most 20"), "{body}");
    let notifications = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]).to_string();
    let (status, body) = answer(post(&s, &[], notifications).await).await;
    assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
    // Headers every member would be refused for refuse the batch.
    let r = client()
        .post(s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(json!([ping]).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE);

    for version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let (status, body) =
            answer(post(&s, &[("mcp-protocol-version", version)], json!([ping]).to_string()).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{version}");
        let refused: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            refused["error"]["message"],
            "Invalid Request: JSON-RPC batches are not supported; send one message per request",
            "{version}"
        );
    }
    s.stop().await;
}

/// A read-only token is refused a batch that calls a write tool, before any
/// member runs, as it is refused that call alone.
#[tokio::test]
async fn batches_need_the_scope_of_every_tool_they_call() {
    let s = Server::with(Options { lensers: vec!["reader"], ..Options::default() }).await;
    let token = s.token("reader", Scopes::READ).await;
    let auth = format!("Bearer {token}");
    let create = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_lens", "arguments": {"title": "Essay", "template_body": "Write about [[Topic]] for a curious reader, with examples."}}});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_lenses", "arguments": {}}});
    let (status, _) =
        answer(post(&s, &[("authorization", &auth)], json!([list, create]).to_string()).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = answer(post(&s, &[("authorization", &auth)], json!([list]).to_string()).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()[0]["result"]["isError"], false, "{body}");
    s.stop().await;
}

/// With sessions, a session that negotiated 2025-03-26 may send batches;
/// one of a later version may not.
#[tokio::test]
async fn session_batches_in_2025_03_26() {
    let s = Server::with(Options { sessions: true, ..Options::dev() }).await;
    let open = |version: &'static str| {
        let s = &s;
        async move {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
            let r = post(s, &[], init.to_string()).await;
            assert_eq!(r.status(), StatusCode::OK);
            let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
            let body = r.text().await.unwrap();
            assert!(body.contains(version), "{body}");
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
            let r = post(s, &[("mcp-session-id", &session)], initialized).await;
            assert_eq!(r.status(), StatusCode::ACCEPTED);
            session
        }
    };
    let old = open("2025-03-26").await;
    let lens = {
        let create = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_lens", "arguments": {"title": "Essay", "template_body": "Write about [[Topic]] for a curious reader, with examples."}}});
        let (_, body) = answer(post(&s, &[("mcp-session-id", &old)], create.to_string()).await).await;
        let data = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .find(|data| !data.trim().is_empty())
            .unwrap_or_else(|| panic!("{body}"));
        let message: Value = serde_json::from_str(data.trim()).unwrap();
        message["result"]["structuredContent"]["id"].as_str().unwrap().to_owned()
    };
    let members = members(&lens);
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let (status, body) =
        answer(post(&s, &[("mcp-session-id", &old)], format!("[{}]", members.join(","))).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answers: Vec<Value> = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(10), &json!("b"), &json!(11), &json!(12), &json!(13)], "{body}");
    assert_eq!(answers[0]["result"]["structuredContent"]["id"], lens.as_str(), "{body}");
    assert!(answers[1]["result"]["tools"].is_array(), "{body}");
    assert_eq!(answers[2]["error"]["code"], -32602, "{body}");
    assert!(answers[4]["error"]["message"].as_str().unwrap().contains("128"), "{body}");

    let new = open("2025-11-25").await;
    let headers = [("mcp-session-id", new.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let (status, body) = answer(post(&s, &headers, json!([ping]).to_string()).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("batches are not supported"), "{body}");
    // Without a session, too.
    let (status, _) = answer(post(&s, &[], json!([ping]).to_string()).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // The session ends: it is unknown, batches included.
    let r = client().delete(s.url("/mcp")).header("mcp-session-id", &old).send().await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let (status, _) = answer(post(&s, &[("mcp-session-id", &old)], json!([ping]).to_string()).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    s.stop().await;
}
