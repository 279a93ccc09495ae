//! lf-workflow's run contract suite and run races on SQLite: a file
//! (readers and a writer, several handles on one file) and an in-memory
//! database.

mod run_common;
mod workflow_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_workflow::run::contract::suite(db.run_store(), db.workflow_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_workflow::run::contract::suite(db.run_store(), db.workflow_store()).await;
    lf_workflow::run::contract::wake_suite(db.run_store(), db.workflow_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_workflow::run::contract::suite(db.run_store(), db.workflow_store()).await;
}

/// Two handles on one file, as two server processes would have: one run
/// per key, each run claimed once, and the bounds of runs events start
/// held exactly (BEGIN IMMEDIATE across connections).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_races_across_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    let stores = [a.run_store(), b.run_store()];
    run_common::racing_creates_with_one_key(&stores, a.workflow_store().as_ref()).await;
    run_common::racing_claims(&stores, a.workflow_store().as_ref()).await;
    run_common::racing_caused(&stores, a.workflow_store().as_ref()).await;
    a.close().await;
    b.close().await;
}
