//! `POST /hooks/{workflow_id}` on a real server over SQLite, its runner
//! running: the secret (wrong, missing, rotated, never stored in clear,
//! shown once), replays with one Idempotency-Key, the body's limits, the
//! rate limit, a run started by a hook that completes; and the status of
//! each refusal past the secret, from a starter that refuses as told.

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Options, Server, call_tool, client};
use lf_core::{Detail, ErrorCode, LfError, Scopes};
use lf_mcp_http::{HookCall, HookCheck, HookRuns, HookStart};
use lf_workflow::hook::{HookHash, hook_refused, is_webhook_secret};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn steps(trigger: &str) -> Value {
    json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": trigger},
        {"key": "pick", "kind": "tool", "name": "Pick", "node_type": "extract_field", "config": {"path": "$.email"}}
    ])
}

fn connections() -> Value {
    json!([{"from_step": "start", "to_step": "pick", "input_parameter": "input"}])
}

struct Hooked {
    server: Server,
    token: String,
}

impl Hooked {
    async fn start(config: Option<fn(&mut lf_mcp_http::HttpConfig)>) -> Self {
        let server = Server::with(Options { lensers: vec!["alice"], config, ..Options::default() }).await;
        let token = server.token("alice", Scopes::READ_WRITE).await;
        Hooked { server, token }
    }

    /// A tool's structured result as alice, and the answer's text.
    async fn tool(&self, name: &str, arguments: Value) -> (Value, String) {
        let result = call_tool(&self.server, Some(&self.token), name, arguments).await;
        assert_ne!(result["isError"], json!(true), "{name}: {result}");
        (result["structuredContent"].clone(), result.to_string())
    }

    /// A workflow with this trigger: its id and its create_workflow answer.
    async fn workflow(&self, trigger: &str) -> (String, Value, String) {
        let (out, text) = self
            .tool(
                "create_workflow",
                json!({"title": "Signups", "steps": steps(trigger), "connections": connections()}),
            )
            .await;
        (out["id"].as_str().unwrap().to_owned(), out, text)
    }

    async fn post(
        &self,
        id: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (StatusCode, Value, Option<String>) {
        post(&self.server, id, headers, body).await
    }

    /// A workflow with a webhook trigger: its id and its secret.
    async fn hooked(&self) -> (String, String) {
        let (id, created, _) = self.workflow("webhook_trigger").await;
        (id, secret_of(&created))
    }

    async fn runs_of(&self, id: &str) -> Vec<Value> {
        let (out, _) = self.tool("list_workflow_runs", json!({"workflow_id": id})).await;
        out["items"].as_array().unwrap().clone()
    }
}

/// A webhook call to `server`: its status, its JSON body and its
/// `Retry-After`.
async fn post(
    server: &Server,
    id: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, Value, Option<String>) {
    let mut request = client()
        .post(server.url(&format!("/hooks/{id}")))
        .header("content-type", "application/json")
        .body(body.to_owned());
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let body: Value = response.json().await.expect("every answer is JSON");
    (status, body, retry)
}

fn secret_of(created: &Value) -> String {
    let hook = &created["webhook"];
    let secret = hook["secret"].as_str().expect("the answer shows the secret").to_owned();
    assert!(is_webhook_secret(&secret), "{secret}");
    assert_eq!(hook["header"], "X-Webhook-Secret");
    assert!(hook["note"].as_str().unwrap().contains("once"));
    secret
}

#[tokio::test]
async fn a_hook_starts_a_run_that_completes_and_replays_answer_the_first() {
    let h = Hooked::start(None).await;
    let (id, created, _) = h.workflow("webhook_trigger").await;
    let secret = secret_of(&created);
    assert_eq!(created["webhook"]["path"], format!("/hooks/{id}"));

    let body = r#"{"email": "ada@example.com", "plan": "pro"}"#;
    let key = [("x-webhook-secret", secret.as_str()), ("idempotency-key", "delivery-1")];
    let (status, first, _) = h.post(&id, &key, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    assert_eq!(
        (first["workflow_id"].as_str(), first["replayed"].as_bool()),
        (Some(id.as_str()), Some(false))
    );
    let run_id = first["run_id"].as_str().unwrap().to_owned();
    let (status, again, _) = h.post(&id, &key, body).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!((again["run_id"].as_str(), again["replayed"].as_bool()), (Some(run_id.as_str()), Some(true)));

    // The runner runs it to the end, with the body as its inputs.
    let deadline = Instant::now() + Duration::from_secs(20);
    let done = loop {
        let (run, _) = h.tool("get_workflow_run_status", json!({"run_id": run_id})).await;
        if run["status"] == "completed" || run["status"] == "failed" {
            break run;
        }
        assert!(Instant::now() < deadline, "the run did not end: {run}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert!(done["result"].to_string().contains("ada@example.com"), "{done}");
    let runs = h.runs_of(&id).await;
    assert_eq!(runs.len(), 1, "the replay started nothing: {runs:?}");
    assert_eq!(
        (runs[0]["origin"].as_str(), runs[0]["id"].as_str()),
        (Some("webhook"), Some(run_id.as_str()))
    );

    // Authorization: Bearer carries the secret too; a new key, a new run.
    let bearer = format!("Bearer {secret}");
    let (status, other, _) =
        h.post(&id, &[("authorization", &bearer), ("idempotency-key", "delivery-2")], body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{other}");
    assert_ne!(other["run_id"].as_str(), Some(run_id.as_str()));
    h.server.stop().await;
}

#[tokio::test]
async fn wrong_or_missing_secrets_and_other_workflows_get_one_401() {
    let h = Hooked::start(None).await;
    let (id, secret) = h.hooked().await;
    let (manual, plain, _) = h.workflow("manual_trigger").await;
    assert_eq!(plain["webhook"], Value::Null, "no webhook trigger, no secret");
    let wrong = format!("lfwh_{}", "0".repeat(64));
    let (status, refusal, _) = h.post(&id, &[("x-webhook-secret", &wrong)], "{}").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(refusal["error"], "unauthorized");
    let cases: Vec<(String, Vec<(&str, &str)>)> = vec![
        (id.clone(), vec![]),
        (id.clone(), vec![("authorization", "Bearer ")]),
        (id.clone(), vec![("authorization", "Basic YWxpY2U6cGFzcw==")]),
        (id.clone(), vec![("x-webhook-secret", "")]),
        (uuid(), vec![("x-webhook-secret", &secret)]),
        ("not-a-uuid".to_owned(), vec![("x-webhook-secret", &secret)]),
        (manual.clone(), vec![("x-webhook-secret", &secret)]),
    ];
    for (target, headers) in &cases {
        let (status, body, _) = h.post(target, headers, "{}").await;
        assert_eq!((status, &body), (StatusCode::UNAUTHORIZED, &refusal), "{target} {headers:?}");
    }
    // Archived: the same answer, even with the right secret.
    h.tool("archive_workflow", json!({"workflow_id": id, "confirm": true})).await;
    let (status, body, _) = h.post(&id, &[("x-webhook-secret", &secret)], "{}").await;
    assert_eq!((status, body), (StatusCode::UNAUTHORIZED, refusal));
    assert!(h.runs_of(&id).await.is_empty(), "no refused call started a run");
    h.server.stop().await;
}

fn uuid() -> String {
    lf_core::WorkflowId::new().to_string()
}

#[tokio::test]
async fn bodies_must_be_json_objects_within_the_limit() {
    let h = Hooked::start(None).await;
    let (id, secret) = h.hooked().await;
    let auth = [("x-webhook-secret", secret.as_str())];
    for body in ["[1, 2]", "\"text\"", "42", "null", "{not json", ""] {
        let (status, answer, _) = h.post(&id, &auth, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {answer}");
        assert_eq!(answer["error"], "invalid_request");
    }
    // Without the secret the body is not read: the one 401, whatever it is.
    let (status, _, _) = h.post(&uuid(), &[], "[1]").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let response = client()
        .post(h.server.url(&format!("/hooks/{id}")))
        .header("x-webhook-secret", &secret)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(
        response.json::<Value>().await.unwrap()["error_description"]
            .as_str()
            .unwrap()
            .contains("application/json")
    );
    let big = format!(r#"{{"text": "{}"}}"#, "x".repeat(300 * 1024));
    let (status, answer, _) = h.post(&id, &auth, &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    let (status, answer, _) = h.post(&id, &[auth[0], ("idempotency-key", "")], "{}").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "an empty Idempotency-Key: {answer}");
    // A secret-named input is refused by run_workflow's checks.
    let (status, answer, _) = h.post(&id, &auth, r#"{"password": "hunter2"}"#).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(h.runs_of(&id).await.is_empty());
    let (status, _, _) = h.post(&id, &auth, "{}").await;
    assert_eq!(status, StatusCode::ACCEPTED, "the same hook takes a good body");
    h.server.stop().await;
}

#[tokio::test]
async fn the_rate_limit_counts_every_call_per_workflow() {
    let h = Hooked::start(Some(|c| c.hooks_per_minute = std::num::NonZeroU32::new(3).unwrap())).await;
    let (id, secret) = h.hooked().await;
    let (status, _, _) = h.post(&id, &[("x-webhook-secret", &secret)], "{}").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    for _ in 0..2 {
        let (status, _, _) = h.post(&id, &[("x-webhook-secret", "lfwh_guess")], "{}").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, body, retry) = h.post(&id, &[("x-webhook-secret", &secret)], "{}").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "failed secrets count: {body}");
    assert_eq!(body["error"], "too_many_requests");
    assert!(retry.unwrap().parse::<u64>().unwrap() >= 1);
    assert_eq!(h.runs_of(&id).await.len(), 1);
    h.server.stop().await;
}

#[tokio::test]
async fn rotation_makes_the_old_secret_fail_and_no_secret_is_stored_or_shown_twice() {
    let h = Hooked::start(None).await;
    let (id, created, created_text) = h.workflow("webhook_trigger").await;
    let old = secret_of(&created);
    assert_eq!(created_text.matches(&old).count(), 2, "in the structured result and its text only");

    // Later answers never show it: reads, and a new version.
    for (tool, args) in [
        ("get_workflow", json!({"workflow_id": id})),
        ("get_workflow_graph", json!({"workflow_id": id})),
        ("describe_workflow", json!({"workflow_id": id})),
        (
            "update_workflow",
            json!({"workflow_id": id, "steps": steps("webhook_trigger"), "connections": connections()}),
        ),
    ] {
        let (out, text) = h.tool(tool, args).await;
        assert!(!text.contains(&old), "{tool} shows the secret");
        if tool == "update_workflow" {
            assert_eq!(out["webhook"], Value::Null, "the workflow had its secret already");
        }
    }
    // A workflow that first gets a webhook trigger in an update shows its secret there.
    let (manual, _, _) = h.workflow("manual_trigger").await;
    let (out, _) = h
        .tool(
            "update_workflow",
            json!({"workflow_id": manual, "steps": steps("webhook_trigger"), "connections": connections()}),
        )
        .await;
    let later = secret_of(&out);
    let (status, _, _) = h.post(&manual, &[("x-webhook-secret", &later)], "{}").await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (rotated, _) = h.tool("rotate_webhook_secret", json!({"workflow_id": id})).await;
    let new = secret_of(&rotated);
    assert_ne!(new, old);
    let (status, _, _) = h.post(&id, &[("x-webhook-secret", &old)], "{}").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the old secret fails at once");
    let (status, _, _) = h.post(&id, &[("x-webhook-secret", &new)], "{}").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let refused =
        call_tool(&h.server, Some(&h.token), "rotate_webhook_secret", json!({"workflow_id": uuid()})).await;
    assert_eq!(refused["isError"], json!(true));

    // The table holds each secret's SHA-256, and the database no secret in clear.
    let db = lf_server::Database::connect(&h.server.database_url).await.unwrap();
    let pool = db.sqlite_pool().unwrap();
    let rows: Vec<(Vec<u8>,)> =
        sqlx::query_as("SELECT secret_hash FROM workflow_webhooks ORDER BY created_at")
            .fetch_all(pool)
            .await
            .unwrap();
    let hashes: Vec<Vec<u8>> = rows.into_iter().map(|r| r.0).collect();
    assert_eq!(hashes.len(), 2, "one row per workflow");
    assert!(hashes.contains(&HookHash::of(&new).as_bytes().to_vec()));
    assert!(hashes.contains(&HookHash::of(&later).as_bytes().to_vec()));
    db.close().await;
    let dir = std::path::Path::new(h.server.database_url.trim_start_matches("sqlite:"))
        .parent()
        .unwrap()
        .to_owned();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for secret in [&old, &new, &later] {
            let hex = &secret["lfwh_".len()..];
            assert!(!bytes.windows(hex.len()).any(|w| w == hex.as_bytes()), "a secret is stored in clear");
        }
    }
    h.server.stop().await;
}

/// Starts no run: refuses a call without [`Refusing::SECRET`] as the
/// secret check does, and each other call with the next error queued.
#[derive(Default)]
struct Refusing {
    errors: Mutex<VecDeque<LfError>>,
}

impl Refusing {
    const SECRET: &str = "lfwh_the_right_one";

    fn queue(&self, e: LfError) {
        self.errors.lock().unwrap().push_back(e);
    }
}

impl HookRuns for Refusing {
    fn check<'a>(&'a self, _: lf_core::WorkflowId, secret: Option<&'a str>) -> HookCheck<'a> {
        let checked =
            if secret == Some(Refusing::SECRET) { Ok(lf_core::LenserId::new()) } else { Err(hook_refused()) };
        Box::pin(async move { checked })
    }

    fn start(&self, _: HookCall) -> HookStart<'_> {
        let refusal = self.errors.lock().unwrap().pop_front().expect("the test queued this call's refusal");
        Box::pin(async move { Err(refusal) })
    }
}

#[tokio::test]
async fn a_refusal_past_the_secret_answers_the_status_of_its_code() {
    let refusing = Arc::new(Refusing::default());
    let server = Server::with(Options { hook_runs: Some(refusing.clone()), ..Options::default() }).await;
    let id = uuid();
    let right = [("x-webhook-secret", Refusing::SECRET)];
    let refused = |e: LfError| {
        refusing.queue(e);
        post(&server, &id, &right, "{}")
    };

    // The secret check's refusal is still the one 401.
    let one_401 = json!({"error": "unauthorized", "error_description": hook_refused().message()});
    let (status, body, _) = post(&server, &id, &[("x-webhook-secret", "lfwh_wrong")], "{}").await;
    assert_eq!((status, &body), (StatusCode::UNAUTHORIZED, &one_401));
    let (status, body, _) = refused(LfError::not_found("workflow", &id)).await;
    assert_eq!((status, &body), (StatusCode::UNAUTHORIZED, &one_401), "a workflow gone since the check");

    // An AI Lenser's daily cap, as lf-agent words it: Retry-After until
    // the reset it names.
    let in_90s = (chrono::Utc::now() + chrono::TimeDelta::seconds(90)).to_rfc3339();
    let capped =
        LfError::new(ErrorCode::Throttled, "@ada_bot has reached its max_daily_runs of 3 for today.")
            .with_detail("cap", Detail::Str("max_daily_runs".into()))
            .with_detail("resets_at", Detail::Str(in_90s.clone()));
    let (status, body, retry) = refused(capped).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(
        body,
        json!({"error": "too_many_requests", "error_description": "@ada_bot has reached its max_daily_runs of 3 for today."})
    );
    let retry: u64 = retry.expect("a Retry-After").parse().unwrap();
    assert!((60..=90).contains(&retry), "until {in_90s}: {retry}");
    let provider = LfError::new(ErrorCode::Throttled, "The model server is rate-limiting requests.")
        .with_detail("retry_after_seconds", Detail::Int(7));
    let (status, _, retry) = refused(provider).await;
    assert_eq!((status, retry.as_deref()), (StatusCode::TOO_MANY_REQUESTS, Some("7")));
    let (status, _, retry) = refused(LfError::new(ErrorCode::Throttled, "slow down")).await;
    assert_eq!((status, retry), (StatusCode::TOO_MANY_REQUESTS, None), "no Retry-After it cannot tell");

    let budget =
        LfError::new(ErrorCode::BudgetExceeded, "This call needs 5 credits, but @ada_bot has 2 left.")
            .with_detail("resets_at", Detail::Str(in_90s));
    let (status, body, retry) = refused(budget).await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::TOO_MANY_REQUESTS, &json!("budget_exceeded")),
        "{body}"
    );
    assert!(retry.is_some(), "the budget frees up at the reset");

    let (status, body, _) = refused(LfError::forbidden("Only the battle's creator may do this.")).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::FORBIDDEN,
            json!({"error": "forbidden", "error_description": "Only the battle's creator may do this."})
        )
    );
    let not_granted = LfError::permission_denied("@ada_bot was not granted run_workflow.");
    let (status, body, _) = refused(not_granted).await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::FORBIDDEN, &json!("forbidden")),
        "not the secret's 401"
    );

    for (e, expected, error) in [
        (LfError::invalid_argument("inputs.n must be a number"), StatusCode::BAD_REQUEST, "invalid_request"),
        (LfError::conflict("the workflow was archived meanwhile"), StatusCode::CONFLICT, "conflict"),
        (LfError::missing_lenser(), StatusCode::INTERNAL_SERVER_ERROR, "server_error"),
    ] {
        let (status, body, _) = refused(e).await;
        assert_eq!((status, &body["error"]), (expected, &json!(error)), "{body}");
    }
    let (status, body, _) = refused(LfError::internal("relation \"runs\" does not exist")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["error"], "server_error");
    assert!(!body.to_string().contains("relation"), "the cause is only logged: {body}");
    assert!(refusing.errors.lock().unwrap().is_empty(), "every queued refusal was answered");
    server.stop().await;
}
