//! Small HTTP answers shared by the routes, and the one place a domain
//! error becomes an HTTP status ([`status_of`], [`lf_error`]).

use std::time::Duration;

use axum::Json;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use http::{HeaderValue, StatusCode, header};
use lf_core::{Detail, ErrorCode, LfError};
use serde_json::json;

/// `{"error": code, "error_description": description}` with `status`: the
/// OAuth error shape, used for every non-MCP error this server answers.
pub fn json_error(status: StatusCode, code: &str, description: &str) -> Response {
    (status, Json(json!({ "error": code, "error_description": description }))).into_response()
}

/// 413 for a body over `limit` bytes: the one answer of every route, sent
/// as soon as a declared `Content-Length` is over, before the body is read.
pub fn too_large(limit: usize) -> Response {
    let size = if limit >= 1 << 20 { format!("{} MiB", limit >> 20) } else { format!("{} KiB", limit >> 10) };
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        &format!("a request's body may be {size} at most"),
    )
}

/// Whether `headers` declare a body of more than `limit` bytes.
pub fn declared_over(headers: &http::HeaderMap, limit: usize) -> bool {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > limit as u64)
}

/// A JSON-RPC error with no request id (the request could not be read), with
/// `status`.
pub fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    (status, Json(body)).into_response()
}

/// `response` with `Retry-After: wait`, in whole seconds rounded up, 1 at
/// least (a client told 0 would call again at once).
pub fn retry_after(mut response: Response, wait: Duration) -> Response {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
    response
}

/// The status and `error` name of a domain error's code: the one table
/// from [`ErrorCode`] to HTTP, for every route that answers an
/// [`LfError`]. The match has no catch-all, so a new code must be given
/// its line here.
///
/// No code means "not signed in": a route that checks a credential
/// answers 401 itself (the bearer token in [`crate::auth`], a webhook's
/// secret in `hooks.rs`). PERMISSION_DENIED past that check is a signed-in
/// caller refused an action (an agent without the grant, a read-only
/// token), so 403 like FORBIDDEN.
///
/// BUDGET_EXCEEDED is 429, not 402: a budget is an AI Lenser's daily
/// credits, which free up when the day resets (sent as `Retry-After`), not
/// a payment the caller can make; and a client, a webhook sender above
/// all, tries a 429 again later where it drops a 402 for good. Its
/// `error` name tells it from a rate limit.
pub fn status_of(code: ErrorCode) -> (StatusCode, &'static str) {
    match code {
        ErrorCode::InvalidArgument
        | ErrorCode::BadInput
        | ErrorCode::MissingParams
        | ErrorCode::ConfirmationRequired
        | ErrorCode::Declined => (StatusCode::BAD_REQUEST, "invalid_request"),
        ErrorCode::Forbidden | ErrorCode::PermissionDenied => (StatusCode::FORBIDDEN, "forbidden"),
        ErrorCode::NotFound => (StatusCode::NOT_FOUND, "not_found"),
        ErrorCode::Conflict | ErrorCode::InvalidTransition | ErrorCode::SlotsFull => {
            (StatusCode::CONFLICT, "conflict")
        }
        ErrorCode::Throttled => (StatusCode::TOO_MANY_REQUESTS, "too_many_requests"),
        ErrorCode::BudgetExceeded => (StatusCode::TOO_MANY_REQUESTS, "budget_exceeded"),
        // MISSING_LENSER: nobody is set to own what a call creates, which
        // the operator sets, not the caller.
        ErrorCode::MissingLenser | ErrorCode::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
    }
}

/// `e` as HTTP, for `what` (the route, in the log): its code's status
/// ([`status_of`]) and `{error, error_description}` with its message (the
/// caller's to read: INTERNAL's is generic, its cause only logged), with
/// `Retry-After` on a 429 whose error says when it frees up ([`wait_of`]).
/// Logged by the catalog's one rule ([`lf_tools::log_error`]).
pub fn lf_error(what: &str, e: &LfError) -> Response {
    lf_tools::log_error(what, e);
    let (status, error) = status_of(e.code());
    let response = json_error(status, error, e.message());
    match wait_of(e, Utc::now()) {
        Some(wait) if status == StatusCode::TOO_MANY_REQUESTS => retry_after(response, wait),
        _ => response,
    }
}

/// How long from `now` until what `e` refused frees up, as its details
/// say: `retry_after_seconds` (a model server's rate limit, lf-model) or
/// the RFC 3339 instant `resets_at` (an AI Lenser's daily caps, lf-agent).
fn wait_of(e: &LfError, now: DateTime<Utc>) -> Option<Duration> {
    e.details().iter().find_map(|(key, value)| match (key.as_str(), value) {
        ("retry_after_seconds", Detail::Int(secs)) => Some(Duration::from_secs(u64::try_from(*secs).ok()?)),
        ("resets_at", Detail::Str(at)) => {
            let at = DateTime::parse_from_rfc3339(at).ok()?;
            // An instant already past frees up at once ([`retry_after`] says 1 s).
            Some((at.to_utc() - now).to_std().unwrap_or_default())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-05-01T23:59:00Z").unwrap().to_utc()
    }

    #[test]
    fn each_code_has_a_client_or_server_status() {
        for code in ErrorCode::ALL {
            let (status, error) = status_of(code);
            let server_side = matches!(code, ErrorCode::Internal | ErrorCode::MissingLenser);
            assert_eq!(status.is_server_error(), server_side, "{code}");
            assert!(status.is_client_error() || status.is_server_error(), "{code}");
            assert!(error.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{code}: {error}");
            assert_ne!(status, StatusCode::UNAUTHORIZED, "{code}: 401 is the credential checks' own");
        }
    }

    #[test]
    fn the_wait_is_read_from_either_detail() {
        let provider = LfError::new(ErrorCode::Throttled, "slow down")
            .with_detail("retry_after_seconds", Detail::Int(7));
        assert_eq!(wait_of(&provider, now()), Some(Duration::from_secs(7)));
        let capped = LfError::new(ErrorCode::BudgetExceeded, "no credits left")
            .with_detail("cap", Detail::Str("max_daily_credits".into()))
            .with_detail("resets_at", Detail::Str("2026-05-02T00:00:00Z".into()));
        assert_eq!(wait_of(&capped, now()), Some(Duration::from_secs(60)));
        let past = LfError::new(ErrorCode::Throttled, "reset already")
            .with_detail("resets_at", Detail::Str("2026-05-01T00:00:00Z".into()));
        assert_eq!(wait_of(&past, now()), Some(Duration::ZERO));
        for unreadable in [
            LfError::new(ErrorCode::Throttled, "t").with_detail("resets_at", Detail::Str("tomorrow".into())),
            LfError::new(ErrorCode::Throttled, "t").with_detail("retry_after_seconds", Detail::Int(-1)),
            LfError::new(ErrorCode::Throttled, "no details"),
        ] {
            assert_eq!(wait_of(&unreadable, now()), None, "{unreadable:?}");
        }
    }

    #[test]
    fn retry_after_rounds_up_and_never_says_zero() {
        let header = |wait| {
            let response = retry_after(StatusCode::TOO_MANY_REQUESTS.into_response(), wait);
            response.headers()[header::RETRY_AFTER].to_str().unwrap().to_owned()
        };
        assert_eq!(header(Duration::ZERO), "1");
        assert_eq!(header(Duration::from_millis(1500)), "2");
        assert_eq!(header(Duration::from_secs(60)), "60");
    }
}
