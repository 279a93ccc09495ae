#![allow(dead_code)]

//! One lenser's slow runs and another's quick one on the built binary:
//! lenser A starts 20 runs whose `http_request` step waits on a slow
//! loopback service, then lenser B starts a one-step `logger` run, which
//! must end within 2 s while A's runs hold their slots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::process::{self, Home, Request, Served, Service, Session};

/// How long the slow service holds each request.
const HOLD: Duration = Duration::from_secs(5);
/// How long B's run may take.
const BOUND: Duration = Duration::from_secs(2);
/// A's runs.
const RUNS: usize = 20;
/// The default share of one starter's runs per server.
const SHARE: usize = 4;

/// Requests in flight and the most at once, per test (the `K` of [`slow`]).
static IN_FLIGHT: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
static MOST: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

/// Answers after [`HOLD`], counting the requests it holds.
fn slow<const K: usize>(_: &Request) -> process::Answer {
    let now = IN_FLIGHT[K].fetch_add(1, Ordering::SeqCst) + 1;
    MOST[K].fetch_max(now, Ordering::SeqCst);
    std::thread::sleep(HOLD);
    IN_FLIGHT[K].fetch_sub(1, Ordering::SeqCst);
    (200, vec![("content-type".into(), "application/json".into())], r#"{"ok":true}"#.into())
}

/// The slow service of test `K` (0 or 1; each test its own).
pub fn service<const K: usize>() -> Service {
    Service::start(slow::<K>)
}

/// A lenser named `handle` on `home` (with `env`): a write token.
pub fn lenser(home: &Home, handle: &str, env: &[(&str, &str)]) -> String {
    let mut log = Vec::new();
    home.admin(&["create-lenser", "--handle", handle], "a long password here\n", env, &mut log);
    let token = home.admin(&["issue-token", "--handle", handle, "--scope", "write"], "", env, &mut log);
    token.trim().to_owned()
}

/// The settings both servers run with: loopback let out, short timeouts.
pub const ENV: [(&str, &str); 2] =
    [("LENSERFIGHT_EGRESS_ALLOW", "127.0.0.1"), ("LENSERFIGHT_STEP_TIMEOUT", "30")];

/// A starts [`RUNS`] slow runs through `a_server`, then B a quick one
/// through `b_server`, with `servers` servers sharing the database: B's
/// run's time from start to end. Checks that A's runs held no more than
/// their share of each server's slots.
pub async fn quick_run_beside_slow_ones<const K: usize>(
    servers: &[&Served],
    service: &Service,
    a_token: &str,
    b_token: &str,
) -> Duration {
    let mut a = Session::open(&servers[0].base, a_token).await;
    let mut b = Session::open(&servers[servers.len() - 1].base, b_token).await;
    let slow_wf = a
        .ok(
            "create_workflow",
            json!({"title": "Slow", "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "get", "kind": "tool", "name": "Get", "node_type": "http_request",
                 "config": {"url": service.url("/slow")}}
            ], "connections": [{"from_step": "start", "to_step": "get", "input_parameter": "input"}]}),
        )
        .await;
    let quick_wf = b
        .ok(
            "create_workflow",
            json!({"title": "Quick", "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "note", "kind": "tool", "name": "Note", "node_type": "logger", "config": {"message": "hi"}}
            ], "connections": [{"from_step": "start", "to_step": "note", "input_parameter": "input"}]}),
        )
        .await;
    for _ in 0..RUNS {
        a.ok("run_workflow", json!({"workflow_id": slow_wf["id"]})).await;
    }
    // A's runs hold every place they may take before B comes.
    let held = (SHARE * servers.len()).min(RUNS);
    let deadline = Instant::now() + Duration::from_secs(10);
    while IN_FLIGHT[K].load(Ordering::SeqCst) < held {
        assert!(Instant::now() < deadline, "A's runs reach the slow service");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    let started = Instant::now();
    let run = b.ok("run_workflow", json!({"workflow_id": quick_wf["id"]})).await;
    let run = run["id"].as_str().unwrap().to_owned();
    let took = loop {
        let status = b.ok("get_workflow_run_status", json!({"run_id": run})).await;
        if ["completed", "failed", "cancelled"].contains(&status["status"].as_str().unwrap_or("")) {
            assert_eq!(status["status"], "completed", "{status}");
            break started.elapsed();
        }
        assert!(started.elapsed() < HOLD * 3, "B's run ends at the latest when A's first runs end: {status}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    eprintln!("B's one-step run took {took:?} beside A's {RUNS} slow runs on {} server(s)", servers.len());
    assert!(took < BOUND, "B's run took {took:?} (at most {BOUND:?}) while A's runs went on");
    let most = MOST[K].load(Ordering::SeqCst);
    assert!(
        most <= SHARE * servers.len(),
        "A's runs took {most} places, past their share of {SHARE} per server"
    );
    took
}
