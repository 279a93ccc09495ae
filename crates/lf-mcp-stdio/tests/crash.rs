//! The built binary killed with SIGKILL:
//! - during 200 runs of a three-step workflow whose last step posts to a
//!   sink on loopback, then started again on the same database: every run
//!   ends completed, and the sink applied each idempotency key's effect
//!   once (a post the dead process had in flight may arrive again, under
//!   the same key);
//! - right after 200 answered `run_agent_action` calls, one at a time and
//!   pipelined: the database holds exactly their 200 action log rows.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod piped;
use piped::{BIN, Piped};

const RUNS: usize = 200;
/// The agent calls answered before the kill, half one at a time and half
/// pipelined.
const ACTIONS: usize = 200;
const LENSER: &str = "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d";

/// An HTTP sink on loopback: what each Idempotency-Key delivered, counted.
#[derive(Default)]
struct Sink {
    seen: Mutex<HashMap<String, usize>>,
}

impl Sink {
    fn start() -> (Arc<Sink>, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sink = Arc::new(Sink::default());
        let s = sink.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn.try_clone().unwrap());
                    loop {
                        let (mut key, mut length) = (None, 0usize);
                        let mut line = String::new();
                        // The request line, then headers up to the blank line.
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let l = line.trim_end();
                            if l.is_empty() {
                                break;
                            }
                            let (name, value) = l.split_once(':').unwrap_or((l, ""));
                            match name.to_ascii_lowercase().as_str() {
                                "idempotency-key" => key = Some(value.trim().to_owned()),
                                "content-length" => length = value.trim().parse().unwrap_or(0),
                                _ => {}
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        // A little outside latency, so that the kill finds posts in flight.
                        std::thread::sleep(Duration::from_millis(3));
                        *s.seen.lock().unwrap().entry(key.unwrap_or_default()).or_default() += 1;
                        if conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (sink, port)
    }

    fn delivered(&self) -> usize {
        self.seen.lock().unwrap().values().sum()
    }
}

/// The server over pipes.
struct Server(Piped);

impl std::ops::Deref for Server {
    type Target = Piped;
    fn deref(&self) -> &Piped {
        &self.0
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Piped {
        &mut self.0
    }
}

impl Server {
    fn start(db: &str, lenser: &str) -> Server {
        let config = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(BIN);
        cmd.env("LENSERFIGHT_DATABASE_URL", db)
            .env("LENSERFIGHT_LENSER_ID", lenser)
            .env("LENSERFIGHT_EGRESS_ALLOW", "127.0.0.1")
            .env("LENSERFIGHT_LOG", "warn")
            .env_remove("LENSERFIGHT_CONFIG")
            .env("XDG_CONFIG_HOME", config.path());
        Server(Piped::start(cmd, "crash"))
    }

    fn count(&mut self, workflow: &str, status: &str) -> u64 {
        let page =
            self.tool("list_workflow_runs", json!({"workflow_id": workflow, "status": status, "limit": 1}));
        page["total"].as_u64().unwrap()
    }
}

#[test]
fn a_killed_server_loses_no_run_and_applies_no_post_twice() {
    let (sink, port) = Sink::start();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("runs.db").display());
    let lenser = LENSER;

    let mut first = Server::start(&db, lenser);
    let workflow = first.tool(
        "create_workflow",
        json!({
            "title": "Post each item",
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "pick", "kind": "tool", "name": "Pick", "node_type": "extract_field", "config": {"path": "item"}},
                {"key": "post", "kind": "tool", "name": "Post", "node_type": "webhook_sender",
                 "config": {"url": format!("http://127.0.0.1:{port}/in")}}
            ],
            "connections": [
                {"from_step": "start", "to_step": "pick", "input_parameter": "input"},
                {"from_step": "pick", "to_step": "post", "input_parameter": "input"}
            ]
        }),
    );
    let workflow = workflow["id"].as_str().unwrap().to_owned();
    let ids: Vec<u64> = (0..RUNS)
        .map(|n| first.send("tools/call", json!({"name": "run_workflow", "arguments": {"workflow_id": workflow, "inputs": {"item": n}}})))
        .collect();
    let mut runs = Vec::new();
    for id in ids {
        let answer = first.wait(id);
        runs.push(answer["result"]["structuredContent"]["id"].as_str().expect("a run id").to_owned());
    }
    // Kill it mid-way: SIGKILL, no shutdown.
    let deadline = Instant::now() + Duration::from_secs(60);
    while sink.delivered() < RUNS / 4 {
        assert!(Instant::now() < deadline, "the first server posted nothing");
        std::thread::sleep(Duration::from_millis(5));
    }
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let at_kill = sink.delivered();
    assert!(at_kill < RUNS, "the kill came too late to test anything: {at_kill} posts already");

    // Started again on the same file, it resumes what was left: pending
    // runs at once, the dead process's held runs when their leases end.
    let mut second = Server::start(&db, lenser);
    let deadline = Instant::now() + Duration::from_secs(120);
    while second.count(&workflow, "completed") < RUNS as u64 {
        assert!(Instant::now() < deadline, "the runs did not all complete after the restart");
        assert_eq!(second.count(&workflow, "failed"), 0, "no run fails");
        std::thread::sleep(Duration::from_millis(200));
    }
    let seen = sink.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), RUNS, "one key per run: {:?}", seen.keys().take(3).collect::<Vec<_>>());
    for run in &runs {
        assert!(
            seen.contains_key(&format!("{run}:post:1")),
            "run {run} posted under the key of its first attempt"
        );
    }
    let again: usize = seen.values().map(|n| n - 1).sum();
    eprintln!("killed after {at_kill} posts of {RUNS}; {again} posts arrived again, under their first key");
    assert!(
        again <= 16,
        "only posts in flight at the kill may arrive twice (the runner holds 16 runs): {again}"
    );
    second.0.finish();
}

/// The ids of every row of the action log in the SQLite file at `path`, as
/// a server started after the kill would find them.
fn logged_ids(path: &std::path::Path) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let db = lf_server::Database::connect(&format!("sqlite://{}", path.display())).await.unwrap();
        let ids: Vec<String> = sqlx::query_scalar("SELECT lower(hex(id)) FROM agent_actions")
            .fetch_all(db.sqlite_pool().unwrap())
            .await
            .unwrap();
        db.close().await;
        ids
    })
}

#[test]
fn a_killed_server_keeps_the_log_of_every_agent_call_it_answered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agents.db");
    let mut server = Server::start(&format!("sqlite:{}", path.display()), LENSER);
    let agent =
        server.tool("create_ai_lenser", json!({"handle": "crash_scout", "display_name": "Crash Scout"}));
    let agent = agent["ai_lenser_id"].as_str().unwrap().to_owned();
    server.tool("update_ai_lenser", json!({"ai_lenser_id": agent, "patch": {"max_daily_tool_calls": 1000}}));
    server.tool("assign_agent_tool", json!({"ai_lenser_id": agent, "tool_id": "list_lenses"}));
    let action = json!({"name": "run_agent_action", "arguments": {"ai_lenser_id": agent, "action_type": "list_lenses"}});
    let logged = |answer: Value| {
        assert_ne!(answer["result"]["isError"], true, "{answer}");
        let id = answer["result"]["structuredContent"]["action_log_id"].as_str().expect("an entry id");
        id.replace('-', "")
    };

    let mut answered: Vec<String> =
        (0..ACTIONS / 2).map(|_| logged(server.call("tools/call", action.clone()))).collect();
    let pipelined: Vec<u64> = (0..ACTIONS / 2).map(|_| server.send("tools/call", action.clone())).collect();
    answered.extend(pipelined.into_iter().map(|id| logged(server.wait(id))));
    // At once after the last answer: SIGKILL, no shutdown, no flush.
    server.child.kill().unwrap();
    server.child.wait().unwrap();

    let mut kept = logged_ids(&path);
    eprintln!("{} answered agent calls, {} log rows kept after the kill", answered.len(), kept.len());
    answered.sort();
    kept.sort();
    assert_eq!(kept.len(), ACTIONS, "one row per answered call, none lost");
    assert_eq!(kept, answered, "the rows are those of the answered calls");
}
