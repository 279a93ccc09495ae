//! lf-agent's contract suite, agent races and the one namespace of handles
//! on SQLite: a file (readers and a writer, several handles on one file)
//! and an in-memory database.

mod agent_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_agent::contract::suite(db.agent_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_agent::contract::suite(db.agent_store()).await;
    agent_common::racing_reservations(&[db.agent_store()]).await;
    agent_common::racing_creates(&[db.agent_store()]).await;
    agent_common::handles_are_one_namespace(&db).await;
    agent_common::racing_lenser_and_agent(&db, &db).await;
    agent_common::service_round_trip(&db).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_agent::contract::suite(db.agent_store()).await;
    agent_common::racing_reservations(&[db.agent_store()]).await;
    agent_common::racing_creates(&[db.agent_store()]).await;
    agent_common::handles_are_one_namespace(&db).await;
}

/// Two handles on one file, as two server processes would have: the suite
/// on each, and the races across both still never pass a limit (BEGIN
/// IMMEDIATE across connections).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_races_across_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    lf_agent::contract::suite(a.agent_store()).await;
    lf_agent::contract::suite(b.agent_store()).await;
    let stores = [a.agent_store(), b.agent_store()];
    agent_common::racing_reservations(&stores).await;
    agent_common::racing_creates(&stores).await;
    agent_common::racing_lenser_and_agent(&a, &b).await;
    a.close().await;
    b.close().await;
}
