//! The messages the transport answers because rmcp does not: one nested
//! too deeply to parse, and JSON-RPC batches.

mod common;

use common::{Client, LENSER, inline_meta};
use serde_json::{Value, json};

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

/// The answers to `lines`, each sent alone and waited for, in order (a
/// line whose message has no id gets no answer: a ping after it shows that
/// none came).
async fn alone(c: &mut Client, lines: &[String]) -> Vec<Value> {
    let mut answers = Vec::new();
    for line in lines {
        let id = serde_json::from_str::<Value>(line).ok().and_then(|m| m.get("id").cloned());
        c.send_line(line).await;
        c.send(json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"})).await;
        let (mut answered, mut pinged) = (false, false);
        while !(pinged && (answered || id.is_none())) {
            let answer = c.recv().await;
            if answer["id"] == "ping" {
                pinged = true;
            } else {
                answered = true;
                answers.push(answer);
            }
        }
    }
    answers
}

/// In a session of 2025-03-26 a batch gets one array line, each member's
/// answer exactly the answer it gets alone: direct and rmcp calls, broken
/// and too-deep members, notifications (no answer); a cancelled member is
/// not waited for.
#[tokio::test]
async fn batches_are_answered_in_2025_03_26() {
    let mut c = Client::initialized("2025-03-26").await;
    let lens = c.create_lens(1, "Essay").await;
    let members = vec![
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "get_lens", "arguments": {"lens_id": lens}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": "b", "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "no_such_tool"}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": "x"}).to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{}}}"#, nested(300)),
        "1".to_owned(),
        json!({"jsonrpc": "2.0", "id": 14, "method": "prompts/list"}).to_string(),
    ];
    let expected = alone(&mut c, &members).await;
    assert_eq!(expected.len(), 7, "every member but the notification has an answer: {expected:?}");
    c.send_line(&format!("[{}]", members.join(" , "))).await;
    let batch = c.recv_line().await;
    let answers: Vec<Value> = serde_json::from_str(&batch).unwrap_or_else(|e| panic!("{e}: {batch}"));
    assert_eq!(answers, expected);
    // Each answer as written alone: the line is their texts, joined.
    let texts: Vec<String> = expected.iter().map(Value::to_string).collect();
    assert_eq!(batch.trim_end(), format!("[{}]", texts.join(",")));

    // A write still running when its cancellation comes gets no answer,
    // and the batch does not wait for it.
    let create = json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "create_lens", "arguments": {"title": "Cancelled", "template_body": common::BODY}}});
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20}});
    let get = json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "get_lens", "arguments": {"lens_id": lens}}});
    c.send(json!([create, cancel, get])).await;
    let answers = c.recv().await;
    let ids: Vec<&Value> = answers.as_array().unwrap().iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(21)], "{answers}");

    // Notifications only: no answer at all.
    c.send(json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}])).await;
    let next = c.request(22, "ping", json!({})).await;
    assert_eq!(next["result"], json!({}));
}

#[tokio::test]
async fn batches_that_are_refused() {
    let mut c = Client::initialized("2025-03-26").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    c.send_line("[]").await;
    let empty = c.recv().await;
    assert_eq!(
        (empty["id"].clone(), empty["error"]["code"].clone()),
        (Value::Null, json!(-32600)),
        "{empty}"
    );
    let pings = |n: u64| (1..=n).map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).collect();
    c.send(Value::Array(pings(21))).await;
    let many = c.recv().await;
    assert_eq!(many["error"]["code"], -32600, "{many}");
    assert!(many["error"]["message"].as_str().unwrap().contains("at most 20"), "{many}");
    c.send(Value::Array(pings(20))).await;
    assert_eq!(c.recv().await.as_array().unwrap().len(), 20);

    // Later versions, and a session not yet opened, keep refusing them.
    for mut c in [Client::initialized("2025-06-18").await, Client::start(Some(LENSER)).await] {
        c.send(json!([ping])).await;
        let refused = c.recv().await;
        assert_eq!(refused["id"], Value::Null, "{refused}");
        assert_eq!(refused["error"]["message"], "Invalid Request: batches are not supported", "{refused}");
        let next = c.request(2, "ping", json!({})).await;
        assert_eq!(next["result"], json!({}));
    }
}
