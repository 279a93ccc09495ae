//! lf-battle's contract suite and battle races on SQLite: a file (readers
//! and a writer, several handles on one file) and an in-memory database.

mod battle_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_battle::contract::suite(db.battle_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_battle::contract::suite(db.battle_store()).await;
    battle_common::racing_last_slot(&[db.battle_store()]).await;
    battle_common::racing_submissions(&[db.battle_store()]).await;
    battle_common::whole_battles(db.battle_store()).await;
    battle_common::results_migration_matches_the_store(&db).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_battle::contract::suite(db.battle_store()).await;
    battle_common::racing_last_slot(&[db.battle_store()]).await;
    battle_common::racing_submissions(&[db.battle_store()]).await;
}

/// Two handles on one file, as two server processes would have: the races
/// still have exactly one winner (BEGIN IMMEDIATE across connections).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_races_across_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    let stores = [a.battle_store(), b.battle_store()];
    battle_common::racing_last_slot(&stores).await;
    battle_common::racing_submissions(&stores).await;
}

/// lf-battle's ask contract on a file, twice, and across two handles.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ask_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let db = Database::connect(&url).await.unwrap();
    lf_battle::contract::asks::suite(db.ask_store()).await;
    lf_battle::contract::asks::suite(db.ask_store()).await;
    let other = Database::connect(&url).await.unwrap();
    lf_battle::contract::asks::suite(other.ask_store()).await;
    db.close().await;
}
