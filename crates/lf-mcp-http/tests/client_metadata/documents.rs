//! A loopback web server of client metadata documents: answers each path
//! as told, counting its requests.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What a path answers.
#[derive(Clone)]
pub struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    delay: Duration,
}

impl Answer {
    pub fn json(document: &Value) -> Self {
        Self::raw(200, "application/json", &document.to_string())
    }

    pub fn raw(status: u16, content_type: &str, body: &str) -> Self {
        Answer {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.as_bytes().to_vec(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

#[derive(Default)]
struct State {
    answers: HashMap<String, Answer>,
    hits: HashMap<String, usize>,
}

pub struct Documents {
    base: String,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Documents {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Documents {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else { return };
                let state = shared.clone();
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let text = String::from_utf8_lossy(&request);
                    let path = text.split(' ').nth(1).unwrap_or("/").to_owned();
                    let answer = {
                        let mut state = state.lock().unwrap();
                        *state.hits.entry(path.clone()).or_default() += 1;
                        state.answers.get(&path).cloned()
                    };
                    let answer = answer.unwrap_or_else(|| Answer::raw(404, "text/plain", "no such document"));
                    tokio::time::sleep(answer.delay).await;
                    let mut head = format!(
                        "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                        answer.status,
                        answer.body.len()
                    );
                    for (name, value) in &answer.headers {
                        head.push_str(&format!("{name}: {value}\r\n"));
                    }
                    head.push_str("\r\n");
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&answer.body).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Documents { base, state, task }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// From now on `path` answers `answer`.
    pub fn serve(&self, path: &str, answer: Answer) {
        self.state.lock().unwrap().answers.insert(path.into(), answer);
    }

    /// Requests for `path` so far.
    pub fn hits(&self, path: &str) -> usize {
        self.state.lock().unwrap().hits.get(path).copied().unwrap_or(0)
    }
}
