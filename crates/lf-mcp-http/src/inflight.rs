//! Sessions (`--sessions`) only: a request whose JSON-RPC id is already in
//! flight in the same session is refused (-32600) instead of being handed to
//! rmcp, which would leave one of the two unanswered. MCP forbids reusing a
//! request id within a session anyway.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::response::Response;
use futures_util::StreamExt;

/// The (session, id) pairs whose answers have not been fully sent.
#[derive(Default)]
pub struct InFlight {
    pairs: Mutex<HashSet<(String, String)>>,
}

/// Removes its pair when the answer's body is done or dropped.
pub struct Claim {
    inflight: Arc<InFlight>,
    pair: (String, String),
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Ok(mut pairs) = self.inflight.pairs.lock() {
            pairs.remove(&self.pair);
        }
    }
}

impl InFlight {
    /// Claims `id` in `session`; `None` when it is already in flight.
    pub fn claim(self: &Arc<Self>, session: &str, id: &serde_json::Value) -> Option<Claim> {
        // `id.to_string()` keeps 7 and "7" apart, as JSON-RPC does.
        let pair = (session.to_owned(), id.to_string());
        let mut pairs = self.pairs.lock().ok()?;
        pairs.insert(pair.clone()).then(|| Claim { inflight: self.clone(), pair })
    }
}

/// `response` with `claim` released when its body has been sent (or the
/// client went away).
pub fn hold_until_sent(response: Response, claim: Claim) -> Response {
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _held = &claim;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}
