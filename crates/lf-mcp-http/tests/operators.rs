//! What operators ask of the built server on loopback: `GET /metrics`
//! counts exactly the calls made (tools, HTTP, runs, model and agent
//! calls), needs no token and shows no secret;
//! `GET /ready` says whether the database serves with this build's
//! migrations; `--metrics-bind` moves
//! `/metrics` to an address of its own.

#[path = "common/process.rs"]
mod process;

use std::time::{Duration, Instant};

use process::{Home, Request, Service};
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

/// A chat completion of 7 tokens in and 5 out; a 400 for a prompt that
/// asks for one.
fn model(r: &Request) -> process::Answer {
    if !r.path.ends_with("/chat/completions") {
        return (404, vec![], String::new());
    }
    let json = vec![("content-type".to_owned(), "application/json".to_owned())];
    if r.head.contains("Refuse this") {
        return (400, json, json!({"error": {"message": "refused"}}).to_string());
    }
    let body = json!({"id": "c", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Fine."}, "finish_reason": "stop"}
    ], "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}});
    (200, json, body.to_string())
}

/// The sum of every sample of `name` whose labels hold all of `labels`.
fn sum(scrape: &str, name: &str, labels: &[&str]) -> f64 {
    scrape
        .lines()
        .filter(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with('{')))
        .filter(|l| labels.iter().all(|label| l.contains(label)))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

/// A workflow of a trigger and model steps in a row, one per template.
fn asking(templates: &[&str]) -> Value {
    let mut steps =
        vec![json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})];
    let mut connections = Vec::new();
    let mut before = "start".to_owned();
    for (n, template) in templates.iter().enumerate() {
        let key = format!("ask{n}");
        steps.push(json!({"key": key, "kind": "tool", "name": key, "node_type": "prompt_template",
            "config": {"template": template}}));
        connections.push(json!({"from_step": before, "to_step": key, "input_parameter": "input"}));
        before = key;
    }
    json!({"title": "Asks", "steps": steps, "connections": connections})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_counts_exactly_the_model_and_agent_calls_made() {
    let home = Home::new();
    let service = Service::start(model);
    let mut log = Vec::new();
    home.admin(&["create-lenser", "--handle", HANDLE], PASSWORD, &[], &mut log);
    let token = home.admin(&["issue-token", "--handle", HANDLE, "--scope", "write"], "", &[], &mut log);
    let base_url = service.url("/v1");
    let served = home.serve(
        &["--sessions"],
        &[("LENSERFIGHT_MODEL_BASE_URL", base_url.as_str()), ("LENSERFIGHT_MODEL_NAME", "m")],
    );
    let mut s = process::Session::open(&served.base, token.trim()).await;

    // Two model calls answered, then one refused, which fails its run.
    for (templates, end) in
        [(&["Say one thing.", "Say another."][..], "completed"), (&["Refuse this."][..], "failed")]
    {
        let made = s.ok("create_workflow", asking(templates)).await;
        let run = s.ok("run_workflow", json!({"workflow_id": made["id"]})).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let status = s.ok("get_workflow_run_status", json!({"run_id": run["id"]})).await;
            if status["status"] == end {
                break;
            }
            assert!(Instant::now() < deadline, "the run ends {end} within 60 s: {status}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // An agent granted get_lens: one call passes its checks, one of a tool
    // it was not granted is refused.
    let agent = s.ok("create_ai_lenser", json!({"handle": "counted_scout", "display_name": "Scout"})).await;
    let agent = agent["ai_lenser_id"].as_str().unwrap().to_owned();
    s.ok("assign_agent_tool", json!({"ai_lenser_id": agent, "tool_id": "get_lens"})).await;
    let missing = "0193a7c4-0000-7000-8000-000000000000";
    let act =
        |tool: &str| json!({"ai_lenser_id": agent, "action_type": tool, "metadata": {"lens_id": missing}});
    let found = s.call("run_agent_action", act("get_lens")).await;
    assert_eq!(
        found["structuredContent"]["code"], "NOT_FOUND",
        "the checks passed, the lens is missing: {found}"
    );
    let refused = s.call("run_agent_action", act("delete_lens")).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let code = refused["structuredContent"]["code"].as_str().unwrap().to_owned();

    let (status, _, scrape) = get(&served.base, "/metrics", None).await;
    assert_eq!(status, 200);
    let at = format!("endpoint=\"{}\",model=\"m\"", service.addr);
    assert_eq!(sum(&scrape, "lenserfight_model_calls_total", &[&at, "outcome=\"ok\""]), 2.0, "{scrape}");
    // The refused one is asked again as its step's retries say; each
    // attempt is a call, timed.
    let calls = sum(&scrape, "lenserfight_model_calls_total", &[]);
    assert!(calls > 2.0, "{scrape}");
    assert_eq!(count(&scrape, &format!("lenserfight_model_tokens_total{{{at}}}")), 24.0);
    assert_eq!(count(&scrape, &format!("lenserfight_model_call_seconds_count{{{at}}}")), calls);
    assert_eq!(count(&scrape, "lenserfight_workflow_runs_ended_total{end=\"completed\"}"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_workflow_runs_ended_total{end=\"failed\"}"), 1.0);
    assert_eq!(count(&scrape, "lenserfight_agent_calls_total{tool=\"get_lens\",outcome=\"ok\"}"), 1.0);
    let refusal = format!("lenserfight_agent_calls_total{{tool=\"delete_lens\",outcome=\"{code}\"}}");
    assert_eq!(count(&scrape, &refusal), 1.0);
    assert_eq!(sum(&scrape, "lenserfight_agent_calls_total", &[]), 2.0, "{scrape}");
    assert!(!scrape.contains(&agent) && !scrape.contains("counted_scout"), "no agent is named: {scrape}");
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

    // Migrations not this build's: one missing, then one applied from
    // another text.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    let (version, checksum): (i64, Vec<u8>) =
        sqlx::query_as("SELECT version, checksum FROM _sqlx_migrations ORDER BY version DESC LIMIT 1")
            .fetch_one(&pool)
            .await
            .unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = $1")
        .bind(version)
        .execute(&pool)
        .await
        .unwrap();
    let (status, body) = ready().await;
    assert_eq!((status, &body["reason"]), (503, &json!(format!("migration {version} is not applied"))));
    let put = "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
               VALUES ($1, 'put back', TRUE, $2, 0)";
    sqlx::query(put).bind(version).bind(vec![0u8; checksum.len()]).execute(&pool).await.unwrap();
    let (status, body) = ready().await;
    assert_eq!(
        (status, &body["reason"]),
        (503, &json!(format!("migration {version} was applied from another text")))
    );
    sqlx::query("UPDATE _sqlx_migrations SET checksum = $2 WHERE version = $1")
        .bind(version)
        .bind(checksum)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(ready().await, (200, json!({"status": "ready"})));
    pool.close().await;
    served.stop();
}

/// Waits until `base` answers `/ready` 200 (ten seconds at most).
async fn until_ready(base: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _, body) = get(base, "/ready", None).await;
        if status == 200 {
            return;
        }
        assert!(Instant::now() < deadline, "ready within 10 s: {body}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
    until_ready(&format!("http://{own}")).await;
    served.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_metrics_serves_no_metrics_and_still_answers() {
    let home = Home::new();
    let mut log = Vec::new();
    home.admin(&["create-lenser", "--handle", HANDLE], PASSWORD, &[], &mut log);
    let token = home.admin(&["issue-token", "--handle", HANDLE, "--scope", "write"], "", &[], &mut log);
    let own = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap()
    };
    let served = home
        .serve(&["--sessions", "--metrics-bind", &own.to_string()], &[("LENSERFIGHT_NO_METRICS", "true")]);
    let mut s = process::Session::open(&served.base, token.trim()).await;
    let answer = s.call("get_lens", json!({"lens_id": "0193a7c4-0000-7000-8000-000000000000"})).await;
    assert_eq!(answer["isError"], json!(true), "the catalog answers: {answer}");
    for base in [served.base.clone(), format!("http://{own}")] {
        let (status, _, _) = get(&base, "/metrics", None).await;
        assert_eq!(status, 404, "no /metrics at {base}");
    }
    until_ready(&format!("http://{own}")).await;
    served.stop();
}
