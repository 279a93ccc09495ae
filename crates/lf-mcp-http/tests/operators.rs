//! What operators ask of the built server on loopback: `GET /metrics`
//! counts exactly the calls made, needs no token and shows no secret;
//! `GET /ready` says whether the database serves; `--metrics-bind` moves
//! `/metrics` to an address of its own.

#[path = "common/process.rs"]
mod process;

use std::time::{Duration, Instant};

use process::Home;
use serde_json::{Value, json};

const HANDLE: &str = "metricsowner";
const PASSWORD: &str = "a long password here\n";

fn client() -> reqwest::Client {
    lf_model::client_builder().no_proxy().build().unwrap()
}

/// `GET {base}{path}`, with `token` as a bearer token when given: status,
/// content type and body.
async fn get(base: &str, path: &str, token: Option<&str>) -> (u16, String, String) {
    let mut request = client().get(format!("{base}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let kind =
        response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

/// The value of the sample `series` (name and labels, as written), or
/// `None` when the scrape has no such line.
fn sample(scrape: &str, series: &str) -> Option<f64> {
    scrape.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn count(scrape: &str, series: &str) -> f64 {
    sample(scrape, series).unwrap_or_else(|| panic!("no {series} in:\n{scrape}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_counts_exactly_the_calls_made_and_shows_no_secret() {
    let home = Home::new();
    let mut log = Vec::new();
    home.admin(&["create-lenser", "--handle", HANDLE], PASSWORD, &[], &mut log);
    let token = home.admin(&["issue-token", "--handle", HANDLE, "--scope", "write"], "", &[], &mut log);
    let token = token.trim().to_owned();
    let served = home.serve(&["--sessions", "--hooks-per-minute", "1"], &[]);
    let base = served.base.clone();

    let mut s = process::Session::open(&base, &token).await;
    let missing = "0193a7c4-0000-7000-8000-000000000000";
    for _ in 0..2 {
        let answer = s.call("get_lens", json!({"lens_id": missing})).await;
        assert_eq!(answer["isError"], json!(true), "{answer}");
    }
    let workflow = s
        .ok(
            "create_workflow",
            json!({"title": "Counted", "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "note", "kind": "tool", "name": "Note", "node_type": "logger", "config": {"message": "hi"}}
            ], "connections": [{"from_step": "start", "to_step": "note", "input_parameter": "input"}]}),
        )
        .await;
    let workflow_id = workflow["id"].as_str().unwrap().to_owned();
    let run = s.ok("run_workflow", json!({"workflow_id": workflow_id})).await;
    let run_id = run["id"].as_str().unwrap().to_owned();
    let mut polls = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        polls += 1;
        let status = s.ok("get_workflow_run_status", json!({"run_id": run_id})).await;
        if status["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "the run completes within 60 s: {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Two webhook calls from one address, one a minute allowed: the second is refused.
    for _ in 0..2 {
        client().post(format!("{base}/hooks/{missing}")).json(&json!({})).send().await.unwrap();
    }
    // A call without a token.
    let refused = client()
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);

    // No token, or a wrong one: /metrics answers all the same.
    let (status, kind, scrape) = get(&base, "/metrics", None).await;
    assert_eq!(status, 200, "{scrape}");
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let (status, _, _) = get(&base, "/metrics", Some("lf_mcp_not_a_token")).await;
    assert_eq!(status, 200);

    let tools = |tool: &str, outcome: &str| {
        count(&scrape, &format!("lenserfight_tool_calls_total{{tool=\"{tool}\",outcome=\"{outcome}\"}}"))
    };
    assert_eq!(tools("get_lens", "NOT_FOUND"), 2.0);
    assert_eq!(sample(&scrape, "lenserfight_tool_calls_total{tool=\"get_lens\",outcome=\"ok\"}"), None);
    assert_eq!(tools("create_workflow", "ok"), 1.0);
    assert_eq!(tools("run_workflow", "ok"), 1.0);
    assert_eq!(tools("get_workflow_run_status", "ok"), f64::from(polls));
    assert_eq!(count(&scrape, "lenserfight_tool_call_seconds_count{tool=\"get_lens\"}"), 2.0);
    let calls: f64 = scrape
        .lines()
        .filter(|l| l.starts_with("lenserfight_tool_calls_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(calls, f64::from(4 + polls), "no other tool call was counted:\n{scrape}");

    assert_eq!(count(&scrape, "lenserfight_workflow_runs_started_total"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_workflow_runs_ended_total{end=\"completed\"}"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_workflow_run_claim_wait_seconds_count"), 1.0);

    // The handshake (initialize, then the notification's 202), the calls,
    // and the one without a token.
    assert_eq!(
        count(&scrape, "lenserfight_http_requests_total{route=\"/mcp\",status=\"200\"}"),
        f64::from(5 + polls)
    );
    assert_eq!(count(&scrape, "lenserfight_http_requests_total{route=\"/mcp\",status=\"202\"}"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_http_requests_total{route=\"/mcp\",status=\"401\"}"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_http_requests_total{route=\"/hooks\",status=\"429\"}"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_http_refusals_total{reason=\"hooks_per_client\"}"), 1.0);
    assert!(count(&scrape, "lenserfight_http_open_connections") >= 1.0);

    // Nothing secret or personal: not the token, the handle, nor an id.
    for (what, secret) in [
        ("the token", token.as_str()),
        ("the handle", HANDLE),
        ("the workflow's id", &workflow_id),
        ("the run's id", &run_id),
        ("an id a call named", missing),
    ] {
        assert!(!scrape.contains(secret), "the scrape shows {what}:\n{scrape}");
    }
    drop(s);
    served.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_is_503_while_the_database_file_is_gone() {
    let home = Home::new();
    let served = home.serve(&[], &[]);
    let base = served.base.clone();
    let ready = async || {
        let (status, _, body) = get(&base, "/ready", None).await;
        (status, serde_json::from_str::<Value>(&body).unwrap())
    };
    // The runner starts with the server: ready once its loop runs.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut answer = ready().await;
    while answer.0 != 200 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        answer = ready().await;
    }
    assert_eq!(answer, (200, json!({"status": "ready"})));

    // Moved away (the server runs as root in CI, which reads any file
    // whatever its mode): a new connection cannot open it.
    let db = home.database();
    let away = db.with_extension("away");
    std::fs::rename(&db, &away).unwrap();
    let (status, body) = ready().await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "not_ready");
    let reason = body["reason"].as_str().unwrap();
    assert!(reason.contains("database"), "{reason}");
    assert!(!reason.contains(&*db.to_string_lossy()), "the reason names no path: {reason}");
    // Liveness is not readiness.
    let (status, _, _) = get(&base, "/health", None).await;
    assert_eq!(status, 200);

    std::fs::rename(&away, &db).unwrap();
    assert_eq!(ready().await, (200, json!({"status": "ready"})));
    served.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_bind_serves_metrics_on_an_address_of_their_own() {
    let home = Home::new();
    let own = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let served = home.serve(&["--metrics-bind", &own.to_string()], &[]);
    let (status, _, _) = get(&served.base, "/metrics", None).await;
    assert_eq!(status, 404, "not beside /mcp");
    let (status, kind, scrape) = get(&format!("http://{own}"), "/metrics", None).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/plain"), "{kind}");
    assert!(scrape.contains("\nlenserfight_workflow_runs_started_total 0\n"), "{scrape}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _, body) = get(&format!("http://{own}"), "/ready", None).await;
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "ready within 10 s: {body}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    served.stop();
}
