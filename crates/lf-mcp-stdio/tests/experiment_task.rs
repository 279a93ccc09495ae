//! `run_experiment` as an MCP task (SEP-2663) over the built binary's
//! stdio, its models on a scripted OpenAI-compatible server on loopback: a
//! session that declared the extension gets a task whose id is the
//! experiment's, `tasks/get` follows it to get_experiment's view once
//! every cell has its result, and `tasks/cancel` stops a slow one (the
//! task then `cancelled`, a second cancel acknowledged alike); an unknown
//! task id is refused as the extension says. A session that did not
//! declare it gets the experiment itself (tests/experiment_kill.rs).

#[path = "../../lf-server/tests/support/fake_models.rs"]
mod fake_models;
mod piped;

use std::time::{Duration, Instant};

use fake_models::{FakeModels, Step};
use piped::{Piped, models_home, start_on};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The case number of a prompt `Question 7?`.
fn number(prompt: &str) -> u64 {
    prompt.trim_start_matches("Question ").trim_end_matches('?').parse().unwrap_or(0)
}

/// A dataset of `n` cases `Question i?` expecting `Answer i`: its id.
fn dataset(s: &mut Piped, n: u64) -> Value {
    let cases: Vec<Value> = (1..=n)
        .map(|i| json!({"prompt": format!("Question {i}?"), "expected": format!("Answer {i}")}))
        .collect();
    s.tool("create_dataset", json!({"name": format!("qa {n}"), "cases": cases}))["dataset"]["dataset_id"]
        .clone()
}

/// `run_experiment` as a task: its id.
fn started(s: &mut Piped, args: Value) -> String {
    let task = s.call("tools/call", json!({"name": "run_experiment", "arguments": args}));
    assert_eq!(task["result"]["resultType"], "task", "{task}");
    assert_eq!(task["result"]["status"], "working", "{task}");
    task["result"]["taskId"].as_str().unwrap_or_else(|| panic!("{task}")).to_owned()
}

/// `tasks/get` until the task is no longer working (a minute at most).
fn until_ended(s: &mut Piped, task: &str) -> Value {
    let start = Instant::now();
    loop {
        let got = s.call("tasks/get", json!({"taskId": task}));
        let status = got["result"]["status"].as_str().unwrap_or_else(|| panic!("{got}"));
        if status != "working" {
            return got["result"].clone();
        }
        assert!(start.elapsed() < Duration::from_secs(60), "task {task} never ended: {got}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_client_of_the_extension_follows_an_experiment_as_a_task() {
    let fake = FakeModels::start();
    fake.by_prompt("t-right", |p| Step::answer(&format!("Answer {}", number(p))));
    fake.by_prompt("t-slow", |p| Step::slow(&format!("Answer {}", number(p)), 1_000));
    let dir = tempfile::tempdir().unwrap();
    let config = models_home(dir.path(), &fake.base_url());
    let db = format!("sqlite:{}", dir.path().join("tasks.db").display());
    let mut s = start_on(&db, &config, "experiment-task", json!({"extensions": {TASKS: {}}}));
    for m in ["t-right", "t-slow"] {
        s.tool("create_model_profile", json!({"name": m, "endpoint": "fake", "model": m}));
    }
    let data = dataset(&mut s, 6);

    // To its end: the result is get_experiment's view.
    let id = started(
        &mut s,
        json!({"dataset_id": data, "contenders": ["t-right"], "repeats": 2, "assertions": [{"type": "equals"}]}),
    );
    let done = until_ended(&mut s, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["taskId"], id.as_str());
    let view = &done["result"]["structuredContent"];
    assert_eq!(view["experiment"]["experiment_id"], id.as_str(), "the task id is the experiment's: {done}");
    assert_eq!(view["experiment"]["status"], "completed", "{done}");
    assert_eq!((view["done"].as_u64(), view["contenders"][0]["passed"].as_u64()), (Some(12), Some(12)));
    assert_ne!(done["result"]["isError"], true, "{done}");
    assert_eq!(view, &s.tool("get_experiment", json!({"experiment_id": id})), "as get_experiment reads it");
    assert_eq!(fake.asked("t-right"), 12);

    // Cancelled: one cell at a time, each a second.
    let id = started(&mut s, json!({"dataset_id": data, "contenders": ["t-slow"], "concurrency": 1}));
    let got = s.call("tasks/get", json!({"taskId": id}));
    assert_eq!(got["result"]["status"], "working", "{got}");
    let cancelled = s.call("tasks/cancel", json!({"taskId": id}));
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    let ended = until_ended(&mut s, &id);
    assert_eq!(ended["status"], "cancelled", "{ended}");
    let e = s.tool("get_experiment", json!({"experiment_id": id}));
    assert_eq!(e["experiment"]["status"], "cancelled", "{e}");
    assert!(e["done"].as_u64().unwrap() < 6, "{e}");
    let again = s.call("tasks/cancel", json!({"taskId": id}));
    assert!(again.get("error").is_none(), "a task that has ended is acknowledged: {again}");

    // Neither a run nor an experiment.
    let unknown = s.call("tasks/get", json!({"taskId": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c00"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let unknown = s.call("tasks/cancel", json!({"taskId": "not an id"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    drop(s);
}
