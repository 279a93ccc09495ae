//! lf-workflow's contract suites (workflows and saved connections) and
//! workflow races on SQLite: a file (readers and a writer, several handles
//! on one file) and an in-memory database.

mod workflow_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workflow_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_workflow::contract::suite(db.workflow_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_workflow::contract::suite(db.workflow_store()).await;
    workflow_common::racing_appends(&[db.workflow_store()]).await;
    workflow_common::the_largest_version(db.workflow_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workflow_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_workflow::contract::suite(db.workflow_store()).await;
    workflow_common::racing_appends(&[db.workflow_store()]).await;
}

/// Two handles on one file, as two server processes would have: the race
/// still has exactly one winner (BEGIN IMMEDIATE across connections).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workflow_races_across_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    workflow_common::racing_appends(&[a.workflow_store(), b.workflow_store()]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connection_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_workflow::connection::contract::suite(db.connection_store()).await;
    lf_workflow::connection::contract::suite(db.connection_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn model_profile_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_workflow::profile::contract::suite(db.profile_store()).await;
    lf_workflow::profile::contract::suite(db.profile_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connection_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_workflow::connection::contract::suite(db.connection_store()).await;
}
