//! The messages the transport answers because rmcp does not: one nested
//! too deeply to parse.

mod common;

use common::{Client, LENSER, inline_meta};
use serde_json::json;

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// A message nested deeper than the parser reads is answered with its own
/// id and an error naming the limit, so its sender does not wait; the
/// session goes on.
#[tokio::test]
async fn too_deep_messages_are_answered_with_their_id() {
    for mut c in [Client::initialized("2025-11-25").await, Client::start(Some(LENSER)).await] {
        let deep = nested(2_000);
        c.send_line(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"get_lens","arguments":{{"lens_id":{deep}}}}}}}"#
        ))
        .await;
        let answer = c.recv().await;
        assert_eq!(answer["id"], 5, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("more than 128 levels deep"), "{message}");
        // A notification that deep gets no answer; the next request does.
        c.send_line(&format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{deep}}}"#)).await;
        let listed = c.request(6, "tools/list", json!({"_meta": inline_meta()})).await;
        assert!(listed["result"]["tools"].is_array(), "{listed}");
    }
}
