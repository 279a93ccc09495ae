//! lf-eval's experiment contract suite on SQLite: a file and an in-memory
//! database.

mod experiment_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn experiment_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_eval::experiment::contract::suite(db.experiment_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_eval::experiment::contract::suite(db.experiment_store()).await;
    experiment_common::judge_dollars_are_back_filled_as_written(&db).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn experiment_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_eval::experiment::contract::suite(db.experiment_store()).await;
}
