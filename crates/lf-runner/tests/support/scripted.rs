//! A scripted OpenAI-compatible model on loopback: it answers each chat
//! completion with the next reply of its script (after that reply's
//! delay) and keeps every request it was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use lf_model::{EndpointConfig, OpenAiCompatible, parse_base_url};
use serde_json::{Value, json};

#[derive(Clone, Default)]
pub struct Model {
    /// What is left of the script: each reply and how long it waits.
    pub replies: Arc<Mutex<VecDeque<(Value, Duration)>>>,
    /// The requests sent, in order.
    pub seen: Arc<Mutex<Vec<Value>>>,
}

async fn completions(State(m): State<Model>, body: axum::body::Bytes) -> axum::Json<Value> {
    m.seen.lock().unwrap().push(serde_json::from_slice(&body).unwrap());
    let (reply, delay) = m.replies.lock().unwrap().pop_front().expect("the script has a reply");
    tokio::time::sleep(delay).await;
    axum::Json(reply)
}

impl Model {
    /// The model with `replies` (each at once) and its base URL.
    pub async fn start(replies: Vec<Value>) -> (Model, String) {
        let m = Model::default();
        m.then(replies);
        let app = Router::new().route("/v1/chat/completions", post(completions)).with_state(m.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (m, base)
    }

    /// Adds `replies` (each at once) to the end of the script.
    pub fn then(&self, replies: impl IntoIterator<Item = Value>) {
        self.replies.lock().unwrap().extend(replies.into_iter().map(|r| (r, Duration::ZERO)));
    }

    /// How many requests it was sent.
    pub fn asked(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The tool results sent in request `n`: call id, content.
    pub fn results(&self, n: usize) -> Vec<(String, Value)> {
        let seen = self.seen.lock().unwrap();
        seen[n]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|msg| msg["role"] == "tool")
            .map(|msg| {
                let content = serde_json::from_str(msg["content"].as_str().unwrap()).unwrap();
                (msg["tool_call_id"].as_str().unwrap().to_owned(), content)
            })
            .collect()
    }
}

/// A client of the model at `base`, asking for `agent-model`.
pub fn client(base: &str) -> OpenAiCompatible {
    let mut config = EndpointConfig::new(parse_base_url(base).unwrap(), None, "agent-model".into());
    config.timeout = Duration::from_secs(10);
    OpenAiCompatible::new(config).unwrap()
}

/// A reply asking for `calls` (id, tool name; each with `{"lens_id":"L"}`),
/// with `content` beside them, counting `tokens`.
pub fn tool_calls(calls: &[(&str, &str)], content: Option<&str>, tokens: u64) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": "{\"lens_id\":\"L\"}"}}))
        .collect();
    json!({"model": "agent-model", "choices": [{"message": {"role": "assistant", "content": content, "tool_calls": calls}}],
        "usage": {"total_tokens": tokens}})
}

/// A reply answering `text`, counting `tokens`.
pub fn answer(text: &str, tokens: u64) -> Value {
    json!({"model": "agent-model", "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"total_tokens": tokens}})
}
