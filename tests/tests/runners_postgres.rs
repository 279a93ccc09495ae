//! Workflow runners on a real PostgreSQL server, as several server
//! processes would run them: each runner has its own tokio runtime and its
//! own connection pool; and two HTTP servers on one database serving the
//! same users. Not built by `cargo test --workspace` (`test =
//! false`); `.ci/run` runs it with
//!
//! ```text
//! eval "$(.ci/postgres.sh)"
//! cargo test -p lf-tests --test runners_postgres
//! ```
//!
//! It reads LENSERFIGHT_TEST_POSTGRES_URL and fails, never skips, when
//! that is unset. Each test works in a database of its own (a claim takes
//! every due run of its database), dropped at the end.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use lf_core::{LenserId, Principal, Scopes, WorkflowId};
use lf_runner::{Done, Executor, Executors, Job, Runner, RunnerConfig};
use lf_store::Database;
use lf_workflow::engine::{Failure, RunStatus};
use lf_workflow::run::{NoSignal, RunFilter, RunId, RunService, StartRun};
use lf_workflow::{MemoryConnections, MemoryLenses, NewWorkflow, RawBlueprint, WorkflowService};
use serde_json::json;

const URL_VAR: &str = "LENSERFIGHT_TEST_POSTGRES_URL";

fn url() -> String {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{URL_VAR} is not set: these tests need a PostgreSQL server. Start one with \
             `eval \"$(.ci/postgres.sh)\"` (it prints the variable) and run them again."
        ),
    }
}

/// A database of its own on the test server, and its URL.
struct Scratch {
    admin: String,
    name: String,
    url: String,
}

impl Scratch {
    async fn new() -> Scratch {
        let admin = url();
        let name = format!("lf_runners_{}", RunId::new().as_uuid().simple());
        let base = admin.rsplit_once('/').expect("a URL with a database name").0.to_owned();
        let pool = sqlx::postgres::PgPool::connect(&admin).await.expect("the admin connection");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&pool).await.unwrap();
        pool.close().await;
        Scratch { admin, url: format!("{base}/{name}"), name }
    }

    async fn connect(&self) -> Database {
        Database::connect(&self.url).await.expect("the scratch database opens")
    }

    async fn remove(self) {
        let pool = sqlx::postgres::PgPool::connect(&self.admin).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
}

/// Records every attempt's idempotency key, as an outside service would.
#[derive(Default)]
struct Sink {
    keys: Mutex<HashMap<String, usize>>,
    calls: AtomicUsize,
}

#[async_trait]
impl Executor for Sink {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        // A little outside latency, so that runs overlap.
        tokio::time::sleep(Duration::from_millis(2)).await;
        *self.keys.lock().unwrap().entry(job.idempotency_key.clone().unwrap_or_default()).or_default() += 1;
        Ok(Done::output(json!({"posted": true})))
    }
}

fn me() -> (LenserId, Principal) {
    let id = LenserId::new();
    (id, Principal::Lenser { id, scopes: Scopes::READ_WRITE })
}

async fn workflow(db: &Database, me: &Principal) -> (Arc<WorkflowService>, WorkflowId) {
    let service = Arc::new(WorkflowService::new(
        db.workflow_store(),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    ));
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Three steps, the last one posting",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "pick", "kind": "tool", "name": "Pick", "node_type": "extract_field", "config": {"path": "n"}},
            {"key": "post", "kind": "tool", "name": "Post", "node_type": "webhook_sender", "config": {"url": "https://hooks.example.com/in"}},
        ],
        "connections": [
            {"from_step": "start", "to_step": "pick", "input_parameter": "input"},
            {"from_step": "pick", "to_step": "post", "input_parameter": "input"},
        ]
    }))
    .unwrap();
    let id = service.create(me, NewWorkflow { blueprint, owner: None }).await.expect("created").workflow.id;
    (service, id)
}

/// A runner "process": its own runtime and pool.
struct Process {
    rt: tokio::runtime::Runtime,
    runner: Runner,
}

fn process(url: &str, sink: Arc<Sink>, lease: Duration) -> Process {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // Off the test's own runtime, which may not block.
    let runner = std::thread::scope(|s| {
        s.spawn(|| {
            rt.block_on(async {
                let db = Database::connect(url).await.unwrap();
                let executors = Executors::pure().with("webhook_sender", sink);
                let config = RunnerConfig { lease, max_runs: 16, ..RunnerConfig::default() };
                let runner = Runner::new(db.run_store(), db.workflow_store(), executors, config);
                runner.start();
                runner
            })
        })
        .join()
        .unwrap()
    });
    Process { rt, runner }
}

async fn completed(runs: &RunService, me: &Principal, wf: WorkflowId) -> u64 {
    let page = lf_core::PageRequest::new(Some(1), Some(0)).unwrap();
    let filter =
        RunFilter { workflow_id: Some(wf), status: Some(RunStatus::Completed), ..Default::default() };
    runs.list(me, filter, page).await.unwrap().total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runners_share_a_thousand_runs_and_the_survivor_finishes_the_dead_ones() {
    let scratch = Scratch::new().await;
    let db = scratch.connect().await;
    let (_, me) = me();
    let (workflows, wf) = workflow(&db, &me).await;
    // Nobody is woken by this service: the runners find the runs by
    // LISTEN/NOTIFY and by their claims.
    let runs = RunService::new(workflows, db.run_store(), Arc::new(NoSignal));
    let sink = Arc::new(Sink::default());
    let lease = Duration::from_secs(2);
    let a = process(&scratch.url, sink.clone(), lease);
    let b = process(&scratch.url, sink.clone(), lease);
    let mut ids = Vec::new();
    for n in 0..1_000 {
        let s = StartRun {
            workflow_id: Some(wf),
            inputs: json!({"n": n}).as_object().unwrap().clone(),
            ..Default::default()
        };
        ids.push(runs.start(&me, s).await.unwrap().run.id);
    }
    // Kill one mid-way: its runtime goes without a word, leases held.
    while completed(&runs, &me, wf).await < 300 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let held_by_a = a.runner.active();
    a.rt.shutdown_background();
    let deadline = Instant::now() + Duration::from_secs(180);
    while completed(&runs, &me, wf).await < 1_000 {
        assert!(Instant::now() < deadline, "the survivor did not finish the runs in 3 minutes");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for id in &ids {
        let run = runs.get(&me, *id).await.unwrap();
        assert_eq!(run.status(), RunStatus::Completed, "{id}: {:?}", run.state.error);
    }
    let keys = sink.keys.lock().unwrap().clone();
    let expected: Vec<String> = ids.iter().map(|id| format!("{id}:post:1")).collect();
    assert_eq!(keys.len(), 1_000, "every run posted under its own key");
    assert!(expected.iter().all(|k| keys.contains_key(k)), "each with the key of its first attempt");
    let repeats: usize = keys.values().map(|n| n - 1).sum();
    assert!(
        repeats <= held_by_a,
        "only the posts the dead runner had in flight may be sent again, under the same key: {repeats} repeats, {held_by_a} runs held"
    );
    b.runner.shutdown_in(&b.rt);
    b.rt.shutdown_background();
    db.close().await;
    scratch.remove().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_made_by_another_process_wakes_an_idle_runner_at_once() {
    let scratch = Scratch::new().await;
    let db = scratch.connect().await;
    let (_, me) = me();
    let (workflows, wf) = workflow(&db, &me).await;
    let runs = RunService::new(workflows, db.run_store(), Arc::new(NoSignal));
    let sink = Arc::new(Sink::default());
    // A lease of ten minutes: without a notification the idle runner would
    // not look again for that long.
    let idle = process(&scratch.url, sink.clone(), Duration::from_secs(600));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let s = StartRun {
        workflow_id: Some(wf),
        inputs: json!({"n": 1}).as_object().unwrap().clone(),
        ..Default::default()
    };
    let id = runs.start(&me, s).await.unwrap().run.id;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let run = runs.get(&me, id).await.unwrap();
        if run.status() == RunStatus::Completed {
            break;
        }
        assert!(Instant::now() < deadline, "the idle runner was not woken: {:?}", run.state);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(sink.calls.load(Ordering::SeqCst), 1);
    idle.runner.shutdown_in(&idle.rt);
    idle.rt.shutdown_background();
    db.close().await;
    scratch.remove().await;
}

trait ShutdownIn {
    fn shutdown_in(&self, rt: &tokio::runtime::Runtime);
}

impl ShutdownIn for Runner {
    fn shutdown_in(&self, rt: &tokio::runtime::Runtime) {
        let r = self.clone();
        std::thread::scope(|s| {
            s.spawn(|| rt.block_on(r.shutdown()));
        });
    }
}

/// lf-mcp-http serving `url`, as a process of its own would; its MCP URL
/// and its accounts.
async fn http_server(url: &str) -> (String, Arc<lf_auth::AuthService>, tokio::sync::oneshot::Sender<()>) {
    let args = lf_mcp_http::ServeArgs {
        common: lf_server::CommonArgs { database_url: Some(url.to_owned()), ..Default::default() },
        bind: "127.0.0.1:0".into(),
        ..Default::default()
    };
    let config = lf_mcp_http::HttpConfig::from_args(&args).expect("a valid HTTP configuration");
    let prepared = lf_mcp_http::prepare(config).await.expect("the HTTP server starts");
    let mcp = prepared.state.resource.to_string();
    let auth = prepared.state.auth.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(lf_mcp_http::serve(prepared, async move {
        let _ = stopped.await;
    }));
    (mcp, auth, stop)
}

/// The status of an MCP initialize sent to `mcp` with `token`.
async fn initialize(client: &reqwest::Client, mcp: &str, token: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    client
        .post(mcp)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .expect("the server answers")
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_http_servers_on_one_database_serve_the_same_users_and_a_revoked_token_is_refused_by_both() {
    let scratch = Scratch::new().await;
    let (a_url, a_auth, a_stop) = http_server(&scratch.url).await;
    let (b_url, _b_auth, b_stop) = http_server(&scratch.url).await;
    let lenser = a_auth.create_lenser("sharedlenser", "a long enough password").await.expect("an account");
    let token = a_auth
        .issue_token(lf_auth::NewToken {
            lenser: lenser.id,
            scopes: Scopes::READ_WRITE,
            resource: None,
            ttl: None,
            label: None,
        })
        .await
        .expect("a token");
    let client = lf_model::client_builder().build().unwrap();
    assert_eq!(initialize(&client, &a_url, &token.secret).await, 200, "the server that issued it");
    assert_eq!(
        initialize(&client, &b_url, &token.secret).await,
        200,
        "the other server, on the same database"
    );
    a_auth.revoke_token(token.info.id).await.expect("revoked through the first");
    assert_eq!(initialize(&client, &a_url, &token.secret).await, 401);
    assert_eq!(initialize(&client, &b_url, &token.secret).await, 401, "refused by the other at once");
    let _ = (a_stop.send(()), b_stop.send(()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    scratch.remove().await;
}

#[path = "shared/schedules.rs"]
mod schedules;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_fire_each_tick_of_a_schedule_once() {
    let scratch = Scratch::new().await;
    let (a, b) = (scratch.connect().await, scratch.connect().await);
    schedules::each_tick_fires_once(&a, &b, 5).await;
    drop((a, b));
    scratch.remove().await;
}
