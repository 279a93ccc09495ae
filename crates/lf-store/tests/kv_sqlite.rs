//! lf-workflow's kv contract suite and kv races on SQLite: a file (two
//! handles on it, as two processes would have) and an in-memory database.

mod kv_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_workflow::kv::contract::suite(db.kv_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_workflow::kv::contract::suite(db.kv_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_workflow::kv::contract::suite(db.kv_store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_races_across_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    let stores = [a.kv_store(), b.kv_store()];
    kv_common::racing_passes(&stores).await;
    kv_common::racing_writes(&stores).await;
    a.close().await;
    b.close().await;
}

/// lf-auth's throttle contract suite: the edge's limits live beside the
/// kv (small states under keys), on a file and in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn throttle_contract_suite() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_auth::throttle::contract::suite(&*db.throttle_store()).await;
    lf_auth::throttle::contract::suite(&*db.throttle_store()).await;
    db.close().await;
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_auth::throttle::contract::suite(&*db.throttle_store()).await;
}
