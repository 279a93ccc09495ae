//! With `--sessions`: whose each session is, and which sessions negotiated
//! 2025-03-26, the one protocol version whose clients may send batches.
//!
//! A session belongs to the lenser who initialized it: a request or a
//! DELETE on it by anyone else is answered as rmcp answers an unknown
//! session (404), and reaches nothing. rmcp keeps a session's version to
//! itself, so it is read from rmcp's answer to the session's `initialize`
//! as that answer goes out.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures_util::StreamExt;
use lf_core::{LenserId, Principal};
use lf_tools::mcp::direct::known_version;
use lf_tools::mcp::jsonrpc;
use serde_json::Value;

/// The most sessions remembered; past that the oldest are forgotten (a
/// forgotten session's batches are refused as in any other version).
const MOST: usize = 10_000;

/// How much of an `initialize` answer is read for its version.
const READ_AT_MOST: usize = 64 * 1024;

/// Sessions whose owner is remembered at most; past that, those unused the
/// longest are forgotten (their requests are then refused as another's).
const MOST_OWNED: usize = 100_000;

/// How long an unused session's owner is kept when room is needed: much
/// longer than rmcp keeps an idle session (5 minutes).
const OWNER_IDLE: Duration = Duration::from_secs(3600);

#[derive(Default)]
pub(super) struct Sessions {
    batches: Mutex<Remembered>,
    owners: Mutex<HashMap<String, Owner>>,
}

/// Who initialized a session, and when it was last used.
struct Owner {
    lenser: Option<LenserId>,
    seen: Instant,
}

/// The lenser a principal acts for, which owns the sessions it starts.
fn lenser_of(principal: &Principal) -> Option<LenserId> {
    match principal {
        Principal::Lenser { id, .. } => Some(*id),
        _ => None,
    }
}

/// The sessions whose version has batches, oldest first.
#[derive(Default)]
struct Remembered {
    ids: HashSet<String>,
    order: VecDeque<String>,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `session` negotiated a version with batches.
    pub(super) fn allows_batches(&self, session: &str) -> bool {
        self.lock().ids.contains(session)
    }

    fn remember(&self, session: String) {
        let mut remembered = self.lock();
        if remembered.ids.insert(session.clone()) {
            remembered.order.push_back(session);
        }
        while remembered.order.len() > MOST {
            if let Some(oldest) = remembered.order.pop_front() {
                remembered.ids.remove(&oldest);
            }
        }
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, Owner>> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `principal` as the owner of the session rmcp's `response` to
    /// an `initialize` starts, if it starts one.
    pub(super) fn own(&self, response: &Response, principal: &Principal) {
        let Some(session) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return;
        };
        let now = Instant::now();
        let mut owners = self.owners();
        owners.insert(session.to_owned(), Owner { lenser: lenser_of(principal), seen: now });
        if owners.len() > MOST_OWNED {
            owners.retain(|_, o| now.duration_since(o.seen) < OWNER_IDLE);
        }
        while owners.len() > MOST_OWNED {
            let Some(oldest) = owners.iter().min_by_key(|(_, o)| o.seen).map(|(s, _)| s.clone()) else {
                break;
            };
            owners.remove(&oldest);
        }
    }

    /// Whether `session` was initialized by `principal`'s lenser (and so
    /// may be used by it).
    pub(super) fn belongs_to(&self, session: &str, principal: &Principal) -> bool {
        match self.owners().get_mut(session) {
            Some(owner) if owner.lenser.is_some() && owner.lenser == lenser_of(principal) => {
                owner.seen = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// The session ended.
    pub(super) fn forget(&self, session: &str) {
        self.owners().remove(session);
        let mut remembered = self.lock();
        if remembered.ids.remove(session) {
            remembered.order.retain(|s| s != session);
        }
    }

    /// `response` (rmcp's answer to an `initialize`), unchanged, noting the
    /// version it negotiates as its body goes out.
    pub(super) fn watch(self: &Arc<Self>, response: Response) -> Response {
        let Some(session) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
            return response;
        };
        let mut reading =
            Reading { sessions: self.clone(), session: session.to_owned(), seen: Vec::new(), done: false };
        let (parts, body) = response.into_parts();
        let stream = body.into_data_stream().map(move |chunk| {
            if let Ok(chunk) = &chunk {
                reading.feed(chunk);
            }
            chunk
        });
        Response::from_parts(parts, Body::from_stream(stream))
    }
}

/// An `initialize` answer being read for its version.
struct Reading {
    sessions: Arc<Sessions>,
    session: String,
    /// What has gone out so far, until the version is found.
    seen: Vec<u8>,
    done: bool,
}

impl Reading {
    fn feed(&mut self, chunk: &Bytes) {
        if self.done {
            return;
        }
        self.seen.extend_from_slice(chunk);
        if let Some(version) = negotiated(&self.seen) {
            self.done = true;
            if known_version(&version).is_some_and(|v| jsonrpc::allows_batches(&v)) {
                self.sessions.remember(std::mem::take(&mut self.session));
            }
        }
        if self.done || self.seen.len() >= READ_AT_MOST {
            self.done = true;
            self.seen = Vec::new();
        }
    }
}

/// The protocol version in the first complete event of an event stream
/// (or a JSON body) that answers an `initialize`.
fn negotiated(text: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(text).ok()?;
    let version = |data: &str| {
        let message: Value = serde_json::from_str(data).ok()?;
        Some(message.get("result")?.get("protocolVersion")?.as_str()?.to_owned())
    };
    if let Some(found) = version(text.trim()) {
        return Some(found);
    }
    // Events end with a blank line; their data lines hold the message.
    let complete = &text[..text.rfind("\n\n")?];
    complete.split("\n\n").find_map(|event| {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        version(&data.join("\n"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_the_answer() {
        let answer =
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{}}}"#;
        assert_eq!(negotiated(answer.as_bytes()).as_deref(), Some("2025-03-26"));
        let stream = format!("id: 0\nretry: 3000\ndata:\n\nevent: message\ndata: {answer}\n\n");
        assert_eq!(negotiated(stream.as_bytes()).as_deref(), Some("2025-03-26"));
        assert_eq!(negotiated(&stream.as_bytes()[..stream.len() - 1]), None, "not complete yet");
        assert_eq!(negotiated(b"data: {\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{}}\n\n"), None);
    }

    #[test]
    fn sessions_are_remembered_and_forgotten() {
        let sessions = Sessions::default();
        sessions.remember("a".into());
        assert!(sessions.allows_batches("a") && !sessions.allows_batches("b"));
        sessions.forget("a");
        assert!(!sessions.allows_batches("a"));
        for i in 0..=MOST {
            sessions.remember(i.to_string());
        }
        assert!(!sessions.allows_batches("0") && sessions.allows_batches(&MOST.to_string()));
    }
}
