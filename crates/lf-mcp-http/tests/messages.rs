//! The messages the HTTP layer answers because rmcp does not: one nested
//! too deeply to parse.

mod common;

use common::{Options, Server, client};
use reqwest::StatusCode;
use serde_json::Value;

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
        let s = Server::with(Options {
            lensers: vec!["dev_user"],
            dev: Some("dev_user"),
            sessions,
            ..Options::default()
        })
        .await;
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
