//! Calling a tool in a test as an assistant would, through the catalog:
//! `call` answers whether it failed and its structured answer; `ok` and
//! `err` assert which; `until` reads an experiment until it is as asked.
//! Included with `#[path = ...] mod calls;`.
#![allow(dead_code)]

use lf_tools::LfServer;
use serde_json::Value;

pub async fn call(s: &LfServer, tool: &str, args: Value) -> (bool, Value) {
    let r = s.call(tool, args.as_object().unwrap().clone()).await.expect("a known tool");
    (r.is_error == Some(true), r.structured_content.clone().unwrap())
}

pub async fn ok(s: &LfServer, tool: &str, args: Value) -> Value {
    let (failed, out) = call(s, tool, args).await;
    assert!(!failed, "{tool}: {out}");
    out
}

pub async fn err(s: &LfServer, tool: &str, args: Value) -> Value {
    let (failed, out) = call(s, tool, args).await;
    assert!(failed, "{tool} should fail: {out}");
    out
}

/// A dataset `name` of `cases` that `visibility` says who reads, made by
/// `s`: its id.
pub async fn new_dataset(s: &LfServer, name: &str, visibility: &str, cases: Vec<Value>) -> String {
    let args = serde_json::json!({"name": name, "visibility": visibility, "cases": cases});
    let made = ok(s, "create_dataset", args).await;
    made["dataset"]["dataset_id"].as_str().unwrap().to_owned()
}

/// Reads experiment `id` as `s` until `done` holds of it (two minutes at
/// most, else the test fails saying it was never `what`).
pub async fn until(s: &LfServer, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = std::time::Instant::now();
    loop {
        let e = ok(s, "get_experiment", serde_json::json!({"experiment_id": id})).await;
        if done(&e) {
            return e;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(120), "never {what}: {e:#}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
