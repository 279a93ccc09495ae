//! `POST /hooks/{workflow_id}`: an outside system starts a run of a
//! workflow whose trigger is a webhook trigger. No OAuth token: the
//! credential is the workflow's webhook secret, in `X-Webhook-Secret` or
//! `Authorization: Bearer`. lf-workflow checks it
//! ([`lf_workflow::run::RunService::start_from_webhook`]) and starts the run
//! as the workflow's owner; the runner is woken as for `run_workflow`.
//!
//! In order, before the body is read: a declared `Content-Length` over
//! [`HOOK_MAX_BODY`] (413, at once), the rate limits (per client address,
//! then per workflow; every call counts, refused ones too), then the secret
//! and the workflow: a missing or wrong secret, an unknown or archived
//! workflow and a head whose trigger is not a webhook's are all the same
//! 401, so a caller without the secret cannot make the server wait for a
//! body. Then the `Idempotency-Key` header (400 when malformed) and the
//! body (at most [`HOOK_MAX_BODY`], else 413; `application/json` holding an
//! object, else 400). A run started answers 202 `{run_id, workflow_id,
//! status, replayed: false}`; a repeated `Idempotency-Key` (24 hours, per
//! workflow) answers the first run with 200 and `replayed: true`, starting
//! nothing. A start refused past the secret answers its error code's
//! status, as every route does ([`crate::responses::status_of`]).

use std::future::Future;
use std::pin::Pin;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use http::{HeaderMap, StatusCode, header};
use lf_core::{ErrorCode, LenserId, LfError, LfResult, WorkflowId};
use lf_workflow::JsonObject;
use lf_workflow::hook::{WEBHOOK_SECRET_HEADER, hook_refused};
use lf_workflow::run::{IdempotencyKey, RunService, Started};
use serde_json::{Value, json};

use crate::app::AppState;
use crate::limits::ClientIp;
use crate::responses::{json_error, lf_error, too_large};

/// The largest webhook body, in bytes (a run's inputs are at most 256 KiB
/// of JSON too).
pub const HOOK_MAX_BODY: usize = 256 * 1024;

/// One webhook call whose secret [`HookRuns::check`] let through, as the
/// route hands it on once its body and headers are read.
pub struct HookCall {
    pub workflow_id: WorkflowId,
    /// The workflow's owner, the run's starter, from the check.
    pub owner: LenserId,
    pub inputs: JsonObject,
    pub idempotency_key: Option<IdempotencyKey>,
}

/// What checks a webhook call and starts its run: the server's run service
/// ([`RunService::check_webhook`], [`RunService::start_from_checked_webhook`]);
/// a test gives the route another ([`AppState::with_hook_runs`]) to see
/// each refusal answered.
pub trait HookRuns: Send + Sync {
    /// Checks the secret presented for `workflow_id`, before the body is
    /// read: the owner the run would be started as.
    fn check<'a>(&'a self, workflow_id: WorkflowId, secret: Option<&'a str>) -> HookCheck<'a>;
    fn start(&self, call: HookCall) -> HookStart<'_>;
}

/// What [`HookRuns::check`] answers, in time.
pub type HookCheck<'a> = Pin<Box<dyn Future<Output = LfResult<LenserId>> + Send + 'a>>;
/// What [`HookRuns::start`] answers, in time.
pub type HookStart<'a> = Pin<Box<dyn Future<Output = LfResult<Started>> + Send + 'a>>;

impl HookRuns for RunService {
    fn check<'a>(&'a self, workflow_id: WorkflowId, secret: Option<&'a str>) -> HookCheck<'a> {
        Box::pin(self.check_webhook(workflow_id, secret))
    }

    fn start(&self, call: HookCall) -> HookStart<'_> {
        Box::pin(self.start_from_checked_webhook(
            call.workflow_id,
            call.owner,
            call.inputs,
            call.idempotency_key,
        ))
    }
}

pub async fn call(
    State(state): State<AppState>,
    client: ClientIp,
    Path(workflow_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let workflow_id = WorkflowId::parse("workflow_id", &workflow_id).ok();
    if let Some(refused) = state.limits.hook(client, workflow_id).await {
        return refused;
    }
    let Some(workflow_id) = workflow_id else { return refused() };
    let owner = match state.hook_runs.check(workflow_id, secret(&headers)).await {
        Ok(owner) => owner,
        Err(e) => return failed(&e),
    };
    let idempotency_key = match idempotency_key(&headers) {
        Ok(key) => key,
        Err(e) => return failed(&e),
    };
    let body = match read_body(body).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let inputs = match inputs(&headers, &body) {
        Ok(inputs) => inputs,
        Err(why) => return json_error(StatusCode::BAD_REQUEST, "invalid_request", why),
    };
    let call = HookCall { workflow_id, owner, inputs, idempotency_key };
    match state.hook_runs.start(call).await {
        Ok(started) => {
            let run = started.run;
            let status = if started.created { StatusCode::ACCEPTED } else { StatusCode::OK };
            let body = json!({
                "run_id": run.id.to_string(),
                "workflow_id": run.workflow_id.to_string(),
                "status": run.status().as_str(),
                "replayed": !started.created,
            });
            (status, Json(body)).into_response()
        }
        Err(e) => failed(&e),
    }
}

/// The body, up to [`HOOK_MAX_BODY`] (413 past it; 400 when it fails).
async fn read_body(body: Body) -> Result<Vec<u8>, Response> {
    let mut stream = body.into_data_stream();
    let mut read = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| json_error(StatusCode::BAD_REQUEST, "invalid_request", &e.to_string()))?;
        if read.len() + chunk.len() > HOOK_MAX_BODY {
            return Err(too_large(HOOK_MAX_BODY));
        }
        read.extend_from_slice(&chunk);
    }
    Ok(read)
}

/// The run's inputs: a JSON object sent as `application/json`.
fn inputs(headers: &HeaderMap, body: &[u8]) -> Result<JsonObject, &'static str> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err("send the run's inputs as Content-Type: application/json");
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(inputs)) => Ok(inputs),
        Ok(_) => Err("the body must be a JSON object: it becomes the run's inputs"),
        Err(_) => Err("the body is not JSON; send a JSON object, such as {}"),
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<IdempotencyKey>, LfError> {
    let Some(value) = headers.get("idempotency-key") else { return Ok(None) };
    let text = value.to_str().map_err(|_| {
        LfError::invalid_argument("Idempotency-Key must be visible ASCII, such as a delivery id")
    })?;
    IdempotencyKey::parse("Idempotency-Key", text).map(Some)
}

/// The secret of `X-Webhook-Secret`, else of `Authorization: Bearer`.
fn secret(headers: &HeaderMap) -> Option<&str> {
    if let Some(v) = headers.get(WEBHOOK_SECRET_HEADER) {
        return v.to_str().ok();
    }
    crate::auth::bearer_token(headers.get(header::AUTHORIZATION)?.to_str().ok()?)
}

/// The one 401 of a webhook call, whatever was wrong.
fn refused() -> Response {
    failed(&hook_refused())
}

/// A refused call as HTTP. The secret check's refusal ([`hook_refused`])
/// and NOT_FOUND (a workflow gone since the check) are the one 401,
/// whatever was wrong, so a caller learns nothing of which workflows
/// exist. Past the secret, an error answers its code's status
/// ([`lf_error`]): a FORBIDDEN 403, a THROTTLED 429 with `Retry-After`.
fn failed(e: &LfError) -> Response {
    let refusal = hook_refused();
    // hook_refused is the secret check's only PERMISSION_DENIED; another
    // one comes from a check past it.
    let secret_refused = e.code() == ErrorCode::PermissionDenied && e.message() == refusal.message();
    if secret_refused || e.code() == ErrorCode::NotFound {
        lf_tools::log_error("webhook", e);
        return json_error(StatusCode::UNAUTHORIZED, "unauthorized", refusal.message());
    }
    lf_error("webhook", e)
}
