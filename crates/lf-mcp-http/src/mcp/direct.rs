//! The HTTP half of the rmcp bypass ([`lf_tools::mcp::classify`] decides
//! which calls, [`lf_tools::mcp::direct`] gives their answers): without
//! sessions, rmcp serves each
//! request with a one-shot service of its own, which cost more than the
//! call, so a plain tool call whose headers rmcp's checks would pass as
//! they stand is answered here, as rmcp answers a stateless request in
//! JSON. From 2026-07-28 on, rmcp checks the standard headers and
//! per-request metadata: those requests stay rmcp's, as does everything
//! with sessions.

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode, header};
use lf_core::Principal;
use lf_tools::mcp::direct::{DirectCall, is_inline_era, known_version};
use rmcp::model::ProtocolVersion;

use crate::app::AppState;
use crate::responses::rpc_error;

/// The protocol version of a stateless request as rmcp takes it from the
/// `MCP-Protocol-Version` header: none means 2025-03-26; more than one, or
/// one rmcp does not know, is for rmcp to refuse.
pub(super) fn stateless_version(headers: &HeaderMap) -> Option<ProtocolVersion> {
    let mut versions = headers.get_all("mcp-protocol-version").iter();
    match (versions.next(), versions.next()) {
        (None, _) => Some(ProtocolVersion::V_2025_03_26),
        (Some(v), None) => known_version(v.to_str().ok()?),
        (Some(_), Some(_)) => None,
    }
}

/// The protocol version of a stateless request whose headers pass rmcp's
/// checks as they stand, for a direct answer: it accepts JSON and event
/// streams (listed plainly; a list with parameters or quotes is left to
/// rmcp's reading), sends JSON, and names one known version before the
/// inline era, or none. With dynamic toolsets, none: every stateless
/// request is a session of its own, which rmcp's factory makes, not this
/// shared server's.
pub(super) fn version(state: &AppState, headers: &HeaderMap) -> Option<ProtocolVersion> {
    if state.server.dynamic_toolsets() {
        return None;
    }
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        for entry in value.to_str().ok()?.split(',') {
            let entry = entry.trim();
            if entry.contains([';', '"']) {
                return None;
            }
            json |= entry.eq_ignore_ascii_case("application/json");
            sse |= entry.eq_ignore_ascii_case("text/event-stream");
        }
    }
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = content_type.split_once(';').map_or(content_type, |(essence, _)| essence);
    if !(json && sse && essence.trim().eq_ignore_ascii_case("application/json")) {
        return None;
    }
    stateless_version(headers).filter(|version| !is_inline_era(version))
}

/// rmcp's answer to `call` from `principal`, as rmcp sends a stateless one
/// in JSON (200, `application/json`).
pub(super) async fn answer(state: &AppState, principal: &Principal, call: DirectCall) -> Response {
    let answer = state.server.answer(principal.clone(), call).await;
    let mut body = Vec::with_capacity(4096);
    match answer.write(&mut body) {
        Ok(()) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "an answer could not be serialized");
            rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                -32603,
                "Internal error: the answer could not be written",
            )
        }
    }
}
