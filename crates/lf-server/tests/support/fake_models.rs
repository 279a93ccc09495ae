//! A scripted OpenAI-compatible server on 127.0.0.1, for tests that need
//! models to answer (std threads only, so any test binary can include it
//! with `#[path = ...] mod fake_models;`). Each model name has a script:
//! the steps its requests are answered by, in order, the last one
//! repeated. One server acts as any number of endpoints (its models), and
//! it counts the requests each model was sent and keeps their bodies, so
//! a test can assert on what was asked (and, later, on what it cost).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// How one request is answered.
#[derive(Clone, Debug)]
pub enum Step {
    /// 200 with `text`, after `delay`, with `usage` (prompt, completion
    /// tokens) when given.
    Answer { text: String, delay: Duration, usage: Option<(u64, u64)> },
    /// 429 with `Retry-After: secs`.
    Throttle { retry_after_secs: u64 },
    /// An error status (500, 503...).
    Status(u16),
    /// No answer for this long (past the client's timeout), then nothing.
    Hang(Duration),
    /// 200 with a body that is not a chat completion.
    Malformed,
}

impl Step {
    /// An answer of `text` at once, with usage of 10 prompt and 5 answer tokens.
    pub fn answer(text: &str) -> Step {
        Step::Answer { text: text.to_owned(), delay: Duration::ZERO, usage: Some((10, 5)) }
    }

    /// An answer of `text` after `ms` milliseconds.
    pub fn slow(text: &str, ms: u64) -> Step {
        Step::Answer { text: text.to_owned(), delay: Duration::from_millis(ms), usage: Some((10, 5)) }
    }
}

#[derive(Default)]
struct State {
    scripts: HashMap<String, (Vec<Step>, usize)>,
    /// Models answered by their request's last message instead.
    by_prompt: HashMap<String, fn(&str) -> Step>,
    /// The request bodies each model was sent, in order.
    asked: HashMap<String, Vec<Value>>,
    /// Count requests without keeping their bodies (benchmarks).
    forget_bodies: bool,
}

/// The server; it runs until the test process ends.
#[derive(Clone)]
pub struct FakeModels {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl FakeModels {
    /// Starts a server answering every model "Hello." unless scripted.
    pub fn start() -> FakeModels {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let fake = FakeModels { port, state: Arc::default() };
        let f = fake.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let f = f.clone();
                std::thread::spawn(move || f.serve(conn));
            }
        });
        fake
    }

    /// The base URL of the API (`http://127.0.0.1:<port>/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Answers `model`'s requests by `steps`, in order, the last repeated.
    pub fn script(&self, model: &str, steps: Vec<Step>) {
        self.state.lock().unwrap().scripts.insert(model.to_owned(), (steps, 0));
    }

    /// Answers `model`'s requests by `answer` of their last message (the
    /// user's prompt), whatever the order they come in.
    pub fn by_prompt(&self, model: &str, answer: fn(&str) -> Step) {
        self.state.lock().unwrap().by_prompt.insert(model.to_owned(), answer);
    }

    /// Counts requests from now on without keeping their bodies
    /// ([`FakeModels::requests`] then has nulls), so a long benchmark's
    /// memory is the server's, not the fake's.
    pub fn forget_bodies(&self) {
        self.state.lock().unwrap().forget_bodies = true;
    }

    /// How many requests asked for `model`.
    pub fn asked(&self, model: &str) -> usize {
        self.state.lock().unwrap().asked.get(model).map_or(0, Vec::len)
    }

    /// The bodies of the requests that asked for `model`.
    pub fn requests(&self, model: &str) -> Vec<Value> {
        self.state.lock().unwrap().asked.get(model).cloned().unwrap_or_default()
    }

    fn next(&self, model: &str, body: Value) -> Step {
        let mut s = self.state.lock().unwrap();
        let prompt = body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str());
        let by_prompt = s.by_prompt.get(model).map(|answer| answer(prompt.unwrap_or_default()));
        let kept = if s.forget_bodies { Value::Null } else { body };
        s.asked.entry(model.to_owned()).or_default().push(kept);
        if let Some(step) = by_prompt {
            return step;
        }
        match s.scripts.get_mut(model) {
            Some((steps, at)) if !steps.is_empty() => {
                let step = steps[(*at).min(steps.len() - 1)].clone();
                *at += 1;
                step
            }
            _ => Step::answer("Hello."),
        }
    }

    fn serve(&self, mut conn: TcpStream) {
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        let (status, headers, out) = match self.next(&model, body) {
            Step::Answer { text, delay, usage } => {
                std::thread::sleep(delay);
                let mut answer = json!({
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                });
                if let Some((prompt, completion)) = usage {
                    answer["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion});
                }
                (200, String::new(), answer.to_string())
            }
            Step::Throttle { retry_after_secs } => {
                (429, format!("retry-after: {retry_after_secs}\r\n"), r#"{"error":"slow down"}"#.to_owned())
            }
            Step::Status(code) => (code, String::new(), r#"{"error":"broken"}"#.to_owned()),
            Step::Hang(d) => {
                std::thread::sleep(d);
                return;
            }
            Step::Malformed => (200, String::new(), r#"{"choices": "not a list"}"#.to_owned()),
        };
        let response = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{out}",
            out.len()
        );
        let _ = conn.write_all(response.as_bytes());
    }
}
