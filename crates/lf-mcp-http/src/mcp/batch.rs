//! JSON-RPC batches over HTTP. A client of 2025-03-26, the one MCP version
//! that has them, may POST an array of messages (at most
//! [`jsonrpc::MAX_BATCH`]); rmcp reads none, so each member is answered here
//! as if it had been POSTed alone, one after the other, with the same
//! headers, and the answers to its requests are sent together as a JSON
//! array. The version is the session's with `--sessions` (see
//! [`super::sessions`]), else the `MCP-Protocol-Version` header's (none
//! means 2025-03-26, as rmcp takes it); other versions are refused.
//!
//! Each member is read once (`LfServer::classify`, as a stdio line is). A
//! member that is not a message rmcp reads gets the error a stdio client
//! would get for it; one whose answer alone would not be a JSON-RPC message
//! (406 for the Accept header, 404 for an unknown session) makes that the
//! answer to the whole batch, as it would be the same for every member; a
//! token that may not call one of the batch's tools is refused (403) before
//! any member runs. The batch's status is its answers' status when they all
//! share one, else 200; a batch of notifications is answered 202 with no
//! body.

use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use http::request::Parts;
use http::{HeaderMap, StatusCode, header};
use lf_core::Principal;
use lf_tools::mcp::{Classified, Envelope, Refusal, jsonrpc};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;

use super::{Mcp, NO_BATCHES, direct, rpc_answer};

/// What one member of a batch contributes to its answer.
enum Member {
    /// This JSON-RPC message, which came alone with this status.
    Answer(StatusCode, Vec<u8>),
    /// Nothing (a notification, a response).
    Nothing,
    /// An answer that is not a JSON-RPC message: the batch's.
    Refused(Response),
}

impl Mcp {
    /// Whether the protocol version of the request with `headers` has batches.
    fn batches_allowed(&self, headers: &HeaderMap) -> bool {
        match &self.sessions {
            Some(sessions) => headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|session| sessions.allows_batches(session)),
            None => direct::stateless_version(headers).is_some_and(|v| jsonrpc::allows_batches(&v)),
        }
    }

    /// The answer to a POST of `bytes` when it is a batch (a well-formed
    /// JSON array); `None` when it is not one.
    pub(super) async fn batch(
        &self,
        principal: &Principal,
        parts: &Parts,
        bytes: &Bytes,
    ) -> Option<Response> {
        if jsonrpc::first_byte(bytes) != Some(b'[') {
            return None;
        }
        let members = match jsonrpc::batch(bytes, self.batches_allowed(&parts.headers))? {
            Ok(members) => members,
            Err(refusal) => return Some(rpc_answer(StatusCode::BAD_REQUEST, refusal.answer(NO_BATCHES))),
        };
        // Each member read once, all before any runs: a token that may not
        // call one of the batch's tools is refused the whole batch.
        let version = self.direct_version(&parts.headers);
        let mut reads = Vec::with_capacity(members.len());
        for member in members {
            match self.state.server.classify(member, principal, version.as_ref()) {
                Classified::Refused(refusal @ Refusal::Scope { .. }) => return Some(self.refused(refusal)),
                read => reads.push((bytes.slice_ref(member), read)),
            }
        }
        let mut answers = Vec::with_capacity(reads.len());
        for (member, read) in reads {
            match self.member(principal, parts.clone(), member, read).await {
                Member::Answer(status, answer) => answers.push((status, answer)),
                Member::Nothing => {}
                Member::Refused(response) => return Some(response),
            }
        }
        let Some((first, _)) = answers.first() else {
            return Some(StatusCode::ACCEPTED.into_response());
        };
        let status = if answers.iter().all(|(status, _)| status == first) { *first } else { StatusCode::OK };
        let mut body = Vec::with_capacity(answers.iter().map(|(_, a)| a.len() + 1).sum::<usize>() + 1);
        body.push(b'[');
        for (i, (_, answer)) in answers.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(answer);
        }
        body.push(b']');
        Some((status, [(header::CONTENT_TYPE, "application/json")], body).into_response())
    }

    /// One member, read as `read`, answered as if it had come alone.
    async fn member(
        &self,
        principal: &Principal,
        parts: Parts,
        bytes: Bytes,
        read: Classified<ClientJsonRpcMessage>,
    ) -> Member {
        let response = match read {
            Classified::Direct(call) => direct::answer(&self.state, principal, call).await,
            Classified::Rmcp(message) => self.to_rmcp(principal, parts, bytes, &Envelope::of(&message)).await,
            Classified::Refused(refusal) => {
                return match refusal.answer() {
                    Some(answer) => Member::Answer(StatusCode::BAD_REQUEST, answer.to_string().into_bytes()),
                    None => Member::Nothing,
                };
            }
        };
        let status = response.status();
        let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let (json, events) = match content_type {
            Some(t) => (t.starts_with("application/json"), t.starts_with("text/event-stream")),
            None => (false, false),
        };
        if status == StatusCode::ACCEPTED && !json && !events {
            return Member::Nothing;
        }
        if !(json || events) || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return Member::Refused(response);
        }
        let body = response.into_body();
        let answer = if json {
            axum::body::to_bytes(body, usize::MAX).await.ok().map(|b| b.to_vec())
        } else {
            answer_in_stream(body).await
        };
        answer.map_or(Member::Nothing, |answer| Member::Answer(status, answer))
    }
}

/// The data of the first event of an event stream that answers a request
/// (server requests and notifications before it are not part of a batch's
/// answer).
async fn answer_in_stream(body: Body) -> Option<Vec<u8>> {
    let mut stream = body.into_data_stream();
    let mut seen = Vec::new();
    // Where the events not yet looked at begin.
    let mut from = 0;
    while let Some(chunk) = stream.next().await {
        seen.extend_from_slice(&chunk.ok()?);
        while let Some(end) = seen[from..].windows(2).position(|w| w == b"\n\n") {
            let event = &seen[from..from + end];
            from += end + 2;
            if let Some(data) = event_data(event)
                && serde_json::from_slice::<Value>(&data).is_ok_and(|m| {
                    m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
                })
            {
                return Some(data);
            }
        }
    }
    None
}

/// The data of one event, its data lines joined.
fn event_data(event: &[u8]) -> Option<Vec<u8>> {
    let mut data: Option<Vec<u8>> = None;
    for line in event.split(|b| *b == b'\n') {
        let Some(value) = line.strip_prefix(b"data:") else { continue };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match &mut data {
            Some(data) => {
                data.push(b'\n');
                data.extend_from_slice(value);
            }
            None => data = Some(value.to_vec()),
        }
    }
    data.filter(|d| !d.is_empty())
}
