//! A saved connection's secret appears nowhere a run leaves a trace: the
//! built server, logging at trace, runs steps whose services echo the
//! bearer token they were sent (in a 200 and in a 400 answer) and redirect
//! a Slack webhook more often than allowed to URLs holding its secret
//! path; an event-triggered workflow logs the failed runs' events. Neither
//! canary is in a run's status or logs, in those events, in the database
//! file (with its WAL) or in the server's log.

#[path = "common/process.rs"]
mod process;

use std::time::{Duration, Instant};

use process::{Answer, Home, Request, Service, Session, database_bytes, holds};
use serde_json::{Value, json};

/// The `http` connection's bearer token.
const TOKEN: &str = "canary-token-3f9a1c7e52d84b60";
/// The secret segment of the Slack connection's webhook URL.
const HOOK_PATH: &str = "canarypath5d2e8f1a9b3c7d40";

/// Answers with the request it read, headers included: 400 on `/fail`,
/// else 200.
fn echo(r: &Request) -> Answer {
    let status = if r.path.starts_with("/fail") { 400 } else { 200 };
    (status, vec![("content-type".into(), "text/plain".into())], r.head.clone())
}

/// Redirects every request to a URL holding the webhook's secret path.
fn redirect(_: &Request) -> Answer {
    let to = format!("/services/T0A1B2C3D/B9Z8Y7X6W/{HOOK_PATH}/next?again={HOOK_PATH}");
    (302, vec![("location".into(), to)], String::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_secrets_appear_nowhere_a_run_leaves_a_trace() {
    let home = Home::new();
    let echoing = Service::start(echo);
    let redirecting = Service::start(redirect);
    let mut log = Vec::new();
    let trace = [("LENSERFIGHT_LOG", "trace")];
    home.admin(&["create-lenser", "--handle", "ops"], "a long password here\n", &trace, &mut log);
    let token = home.admin(&["issue-token", "--handle", "ops", "--scope", "write"], "", &trace, &mut log);
    let url_setting = format!("url={}", echoing.url("/"));
    let add = |provider: &str, r: &str, settings: &[&str], secret: &str, log: &mut Vec<u8>| {
        let mut args = vec!["connection", "add", "--handle", "ops", "--provider", provider, "--ref", r];
        args.extend(settings);
        home.admin(&args, secret, &trace, log);
    };
    add("http", "api", &["--setting", &url_setting], TOKEN, &mut log);
    let hook = redirecting.url(&format!("/services/T0A1B2C3D/B9Z8Y7X6W/{HOOK_PATH}"));
    add("slack", "team", &[], &hook, &mut log);

    let served = home
        .serve(&["--sessions"], &[("LENSERFIGHT_LOG", "trace"), ("LENSERFIGHT_EGRESS_ALLOW", "127.0.0.1")]);
    let mut s = Session::open(&served.base, token.trim()).await;
    let watch = create(
        &mut s,
        "Watch",
        json!([
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "event_trigger",
             "config": {"event_type": "workflow.run.failed"}},
            {"key": "note", "kind": "tool", "name": "Note", "node_type": "logger"}
        ]),
        &[("start", "note")],
    )
    .await;
    let api = json!({"provider": "http", "connection_ref": "api"});
    let fetch = create(
        &mut s,
        "Fetch",
        json!([
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "ok", "kind": "tool", "name": "Ok", "node_type": "http_request",
             "config": {"url": echoing.url("/ok")}, "connector": api},
            {"key": "note", "kind": "tool", "name": "Note", "node_type": "logger"},
            {"key": "fail", "kind": "tool", "name": "Fail", "node_type": "http_request",
             "config": {"url": echoing.url("/fail")}, "connector": api}
        ]),
        &[("start", "ok"), ("ok", "note"), ("note", "fail")],
    )
    .await;
    let notify = create(
        &mut s,
        "Notify",
        json!([
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "send", "kind": "tool", "name": "Send", "node_type": "slack_notify",
             "config": {"text": "hi"}, "connector": {"provider": "slack", "connection_ref": "team"}}
        ]),
        &[("start", "send")],
    )
    .await;

    let mut seen = String::new();
    let fetched = s.run(&fetch).await;
    let status = s.ok("get_workflow_run_status", json!({"run_id": fetched})).await;
    assert_eq!(status["status"], "failed", "{status}");
    let logs = s.ok("get_workflow_run_logs", json!({"run_id": fetched})).await;
    let text = logs.to_string();
    assert!(!text.contains(TOKEN), "the bearer token is in the run's logs:\n{}", around(&text, TOKEN));
    assert!(
        text.contains("answered 400") && text.contains("Bearer [redacted]"),
        "the echo was quoted: {text}"
    );
    seen.push_str(&format!("{status}{logs}"));

    let notified = s.run(&notify).await;
    let status = s.ok("get_workflow_run_status", json!({"run_id": notified})).await;
    let text = status.to_string();
    assert!(
        !text.contains(HOOK_PATH),
        "the secret path is in the run's status:\n{}",
        around(&text, HOOK_PATH)
    );
    assert!(
        text.contains("after 5 redirects") && text.contains("[redacted]"),
        "the next URL was quoted: {text}"
    );
    let logs = s.ok("get_workflow_run_logs", json!({"run_id": notified})).await;
    seen.push_str(&format!("{status}{logs}"));

    // The two failures' events, as the watching workflow heard and logged them.
    let deadline = Instant::now() + Duration::from_secs(30);
    let heard = loop {
        let runs = s.ok("list_workflow_runs", json!({"workflow_id": watch, "status": "completed"})).await;
        let items = runs["items"].as_array().cloned().unwrap_or_default();
        if items.len() >= 2 {
            break items;
        }
        assert!(Instant::now() < deadline, "the watcher heard both failures within 30 s: {runs}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for run in heard {
        let logs = s.ok("get_workflow_run_logs", json!({"run_id": run["id"]})).await;
        assert!(logs.to_string().contains("workflow.run.failed"), "{logs}");
        seen.push_str(&logs.to_string());
    }
    for (what, canary) in [("the bearer token", TOKEN), ("the webhook's secret path", HOOK_PATH)] {
        assert!(
            !seen.contains(canary),
            "{what} is in a run's status, logs or events:\n{}",
            around(&seen, canary)
        );
    }
    drop(s);
    log.extend(served.stop());

    let db = database_bytes(&home.database());
    let text = String::from_utf8_lossy(&log);
    assert!(text.contains(" TRACE "), "the log is at trace level");
    for (what, canary) in [("the bearer token", TOKEN), ("the webhook's secret path", HOOK_PATH)] {
        assert!(!holds(&db, canary), "{what} is in the database file");
        assert!(!holds(&log, canary), "{what} is in the server's log:\n{}", around(&text, canary));
    }
}

/// Creates the workflow `title` of `steps`, each pair of `edges` feeding
/// the first step's output to the second's input: its id.
async fn create(s: &mut Session, title: &str, steps: Value, edges: &[(&str, &str)]) -> String {
    let connections: Vec<Value> = edges
        .iter()
        .map(|(from, to)| json!({"from_step": from, "to_step": to, "input_parameter": "input"}))
        .collect();
    let made =
        s.ok("create_workflow", json!({"title": title, "steps": steps, "connections": connections})).await;
    made["id"].as_str().expect("an id").to_owned()
}

/// Where `text` holds `secret`, with some of what surrounds it, for the
/// failure message.
fn around(text: &str, secret: &str) -> String {
    let Some(at) = text.find(secret) else { return String::new() };
    let start = text[..at].char_indices().rev().nth(300).map_or(0, |(i, _)| i);
    let end = text[at..].char_indices().nth(300).map_or(text.len(), |(i, _)| at + i);
    text[start..end].to_owned()
}
