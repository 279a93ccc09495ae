//! The built binary killed with SIGKILL mid-experiment (two model
//! profiles on a scripted OpenAI-compatible server on loopback that
//! answers slowly and counts the requests for each prompt), then started
//! again on the same SQLite file: the new process takes the experiment up
//! (and, once their leases expire, the cells the dead one held), and
//! - every cell has exactly one result;
//! - no cell that had written its result was asked again;
//! - the endpoint saw at most the retry rule's extra calls: an attempt is
//!   counted (`experiment_cells.attempts`) before its request, so a cell
//!   is sent at most as many requests as its result's `attempts`
//!   (`CELL_ATTEMPTS`, 3, at most); with every answer right, only the
//!   cells claimed and not written at the kill (at most `concurrency` of
//!   them) are asked twice, so the endpoint saw at most
//!   `cells + claimed-and-unwritten` requests, and those are at most
//!   `cells + concurrency`.

#[path = "../../lf-server/tests/support/fake_models.rs"]
mod fake_models;
mod piped;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use fake_models::{FakeModels, Step};
use piped::{Piped, models_home, start_on};
use serde_json::{Value, json};

const MODELS: [&str; 2] = ["e1", "e2"];
const CASES: u64 = 12;
const CONCURRENCY: u64 = 4;
const CELLS: u64 = CASES * MODELS.len() as u64;

/// A cell: (case position, contender index).
type Cell = (u64, u64);

fn start(db: &str, config: &Path) -> Piped {
    start_on(db, config, "experiment-kill", json!({}))
}

/// The case number of a prompt `Question 7?`.
fn number(prompt: &str) -> u64 {
    prompt.trim_start_matches("Question ").trim_end_matches('?').parse().unwrap_or(0)
}

/// The requests the endpoint was sent, per cell.
fn calls(fake: &FakeModels) -> BTreeMap<Cell, u64> {
    let mut out = BTreeMap::new();
    for (contender, m) in MODELS.iter().enumerate() {
        for body in fake.requests(m) {
            let prompt =
                body["messages"].as_array().and_then(|ms| ms.last()).and_then(|m| m["content"].as_str());
            *out.entry((number(prompt.unwrap_or_default()), contender as u64)).or_default() += 1;
        }
    }
    out
}

/// The cells with a result and the cells claimed, with their attempts,
/// read straight from the database file (between the two processes).
fn on_file(db: &Path) -> (BTreeSet<Cell>, BTreeMap<Cell, u64>) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}", db.display());
        let db = lf_server::Database::connect(&url).await.unwrap();
        let pool = db.sqlite_pool().unwrap();
        let written: Vec<(i64, i64)> = sqlx::query_as("SELECT position, contender FROM experiment_results")
            .fetch_all(pool)
            .await
            .unwrap();
        let claimed: Vec<(i64, i64, i64)> =
            sqlx::query_as("SELECT position, contender, attempts FROM experiment_cells")
                .fetch_all(pool)
                .await
                .unwrap();
        db.close().await;
        (
            written.into_iter().map(|(p, c)| (p as u64, c as u64)).collect(),
            claimed.into_iter().map(|(p, c, a)| ((p as u64, c as u64), a as u64)).collect(),
        )
    })
}

#[test]
fn a_killed_server_writes_each_cell_once_and_asks_no_written_cell_again() {
    let fake = FakeModels::start();
    for m in MODELS {
        fake.by_prompt(m, |p| Step::slow(&format!("Answer {}", number(p)), 400));
    }
    let dir = tempfile::tempdir().unwrap();
    let config = models_home(dir.path(), &fake.base_url());
    let file = dir.path().join("experiments.db");
    let db = format!("sqlite:{}", file.display());

    let mut first = start(&db, &config);
    for m in MODELS {
        first.tool("create_model_profile", json!({"name": m, "endpoint": "fake", "model": m}));
    }
    let cases: Vec<Value> = (1..=CASES)
        .map(|i| json!({"prompt": format!("Question {i}?"), "expected": format!("Answer {i}")}))
        .collect();
    let data = first.tool("create_dataset", json!({"name": "qa", "cases": cases}));
    let started = first.tool(
        "run_experiment",
        json!({"dataset_id": data["dataset"]["dataset_id"], "contenders": MODELS,
               "concurrency": CONCURRENCY, "assertions": [{"type": "equals"}]}),
    );
    assert_eq!(started["cells"], CELLS, "{started:#}");
    let id = started["experiment_id"].as_str().unwrap().to_owned();

    // Some cells written, not all: SIGKILL, no shutdown.
    let asked = Instant::now();
    loop {
        let e = first.tool("get_experiment", json!({"experiment_id": id}));
        let done = e["done"].as_u64().unwrap();
        assert!(done < CELLS, "finished before the kill; slow the fake down: {e:#}");
        if done >= CELLS / 4 {
            break;
        }
        assert!(asked.elapsed() < Duration::from_secs(60), "no cell was written: {e:#}");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    // Requests already sent reach the fake's threads.
    std::thread::sleep(Duration::from_millis(200));
    let (written, claimed) = on_file(&file);
    let before = calls(&fake);
    assert!(!written.is_empty() && (written.len() as u64) < CELLS, "{written:?}");
    let unwritten: BTreeSet<Cell> = claimed.keys().filter(|c| !written.contains(c)).copied().collect();
    assert!(unwritten.len() as u64 <= CONCURRENCY, "at most `concurrency` cells in flight: {unwritten:?}");
    for c in &written {
        assert_eq!(before.get(c), Some(&1), "a written cell was asked once: {c:?}");
    }

    let mut second = start(&db, &config);
    let restarted = Instant::now();
    let e = loop {
        let e = second.tool("get_experiment", json!({"experiment_id": id}));
        if e["experiment"]["status"] != "running" {
            break e;
        }
        assert!(restarted.elapsed() < Duration::from_secs(90), "never completed: {e:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(e["experiment"]["status"], "completed", "{e:#}");
    assert_eq!(e["done"], CELLS, "{e:#}");
    for i in 0..MODELS.len() {
        let c = &e["contenders"][i];
        assert_eq!((c["cells"].as_u64(), c["passed"].as_u64()), (Some(CASES), Some(CASES)), "{e:#}");
    }

    // Every cell exactly one result (read back by the tool, one page).
    let all = second.tool("list_experiment_results", json!({"experiment_id": id, "limit": 100}));
    assert_eq!(all["total"], CELLS);
    let items = all["items"].as_array().unwrap();
    let keys: BTreeSet<Cell> =
        items.iter().map(|r| (r["position"].as_u64().unwrap(), r["contender"].as_u64().unwrap())).collect();
    assert_eq!((items.len() as u64, keys.len() as u64), (CELLS, CELLS), "one result a cell");
    let attempts: BTreeMap<Cell, u64> = items
        .iter()
        .map(|r| {
            (
                (r["position"].as_u64().unwrap(), r["contender"].as_u64().unwrap()),
                r["attempts"].as_u64().unwrap(),
            )
        })
        .collect();
    drop(second);

    let after = calls(&fake);
    for c in &written {
        assert_eq!(after.get(c), before.get(c), "a cell that wrote its result was asked again: {c:?}");
    }
    for (c, n) in &after {
        assert!(*n <= attempts[c] && attempts[c] <= 3, "{c:?}: {n} requests, {} attempts", attempts[c]);
        if !claimed.contains_key(c) {
            assert_eq!(*n, 1, "a cell not begun at the kill is asked once: {c:?}");
        }
    }
    assert_eq!(after.len() as u64, CELLS, "every cell was asked");
    let total: u64 = after.values().sum();
    let extra = total - CELLS;
    assert!(
        extra <= unwritten.len() as u64,
        "{extra} requests past one a cell, but only {} cells were in flight at the kill",
        unwritten.len()
    );
}
