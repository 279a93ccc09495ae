//! lf-store on a real PostgreSQL server. Not built by `cargo test --workspace`
//! (`test = false` in Cargo.toml); run it with
//!
//! ```text
//! eval "$(.ci/postgres.sh)"
//! cargo test -p lf-store --test postgres
//! ```
//!
//! It reads LENSERFIGHT_TEST_POSTGRES_URL and fails, never skips, when that is
//! unset or the server does not answer. The database may hold data from
//! earlier runs: every check uses fresh ids and words.

mod auth_common;
mod battle_common;
mod common;
mod workflow_common;

use lf_lens::contract;
use lf_store::{Backend, Database};

const URL_VAR: &str = "LENSERFIGHT_TEST_POSTGRES_URL";

fn url() -> String {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{URL_VAR} is not set: these tests need a PostgreSQL server. Start one with \
             `eval \"$(.ci/postgres.sh)\"` (it prints the variable) and run them again."
        ),
    }
}

async fn connect() -> Database {
    let db = Database::connect(&url()).await.unwrap_or_else(|e| {
        panic!(
            "opening PostgreSQL at {URL_VAR} failed: {e} (cause: {:?}). If no server is running, \
             `eval \"$(.ci/postgres.sh)\"` starts one.",
            e.cause()
        )
    });
    assert_eq!(db.backend(), Backend::Postgres);
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contract_suite_twice() {
    let db = connect().await;
    contract::suite(db.lens_store()).await;
    // Again on the data the first run left: the suite must not depend on an
    // empty database.
    contract::suite(db.lens_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_contract_suite_twice() {
    let db = connect().await;
    lf_auth::contract::suite(db.auth_store()).await;
    lf_auth::contract::suite(db.auth_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_races() {
    let (a, b) = (connect().await, connect().await);
    auth_common::racing_redeems(a.auth_store()).await;
    auth_common::racing_refreshes(a.auth_store()).await;
    // Two pools on one database, as two server processes would have.
    auth_common::racing_redeems_on_two(a.auth_store(), b.auth_store()).await;
}

/// The results migration, in a schema of its own: it drops and refills a
/// table that the other tests, running at the same time, write to.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_results_migration() {
    let admin = connect().await;
    let schema = format!("lf_results_{}", uuid::Uuid::new_v4().simple());
    let pool = admin.postgres_pool().unwrap();
    // The schema name is ours: letters, digits and underscores.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}"))).execute(pool).await.unwrap();
    let base = url();
    let separator = if base.contains('?') { '&' } else { '?' };
    let db = Database::connect(&format!("{base}{separator}options[search_path]={schema}")).await.unwrap();
    let current: String =
        sqlx::query_scalar("SELECT current_schema()").fetch_one(db.postgres_pool().unwrap()).await.unwrap();
    assert_eq!(current, schema, "the store works in the new schema");
    lf_battle::contract::suite(db.battle_store()).await;
    battle_common::results_migration_matches_the_store(&db).await;
    db.close().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE"))).execute(pool).await.unwrap();
    admin.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_contract_suite_twice() {
    let db = connect().await;
    lf_battle::contract::suite(db.battle_store()).await;
    lf_battle::contract::suite(db.battle_store()).await;
    battle_common::whole_battles(db.battle_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_races() {
    let (a, b) = (connect().await, connect().await);
    battle_common::racing_last_slot(&[a.battle_store()]).await;
    battle_common::racing_submissions(&[a.battle_store()]).await;
    // Two pools on one database, as two server processes would have.
    battle_common::racing_last_slot(&[a.battle_store(), b.battle_store()]).await;
    battle_common::racing_submissions(&[a.battle_store(), b.battle_store()]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workflow_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::contract::suite(db.workflow_store()).await;
    lf_workflow::contract::suite(db.workflow_store()).await;
    workflow_common::the_largest_version(db.workflow_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workflow_races() {
    let (a, b) = (connect().await, connect().await);
    workflow_common::racing_appends(&[a.workflow_store()]).await;
    // Two pools on one database, as two server processes would have.
    workflow_common::racing_appends(&[a.workflow_store(), b.workflow_store()]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connection_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::connection::contract::suite(db.connection_store()).await;
    lf_workflow::connection::contract::suite(db.connection_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn races_and_odd_input() {
    let db = connect().await;
    common::racing_appends(db.lens_store()).await;
    common::concurrent_creates(db.lens_store()).await;
    common::odd_search_input(db.lens_store()).await;
    common::past_the_ranked_window(db.lens_store()).await;
    common::search_follows_changes(db.lens_store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrations_apply_once_across_connects() {
    let applied = |db: &Database| {
        let pool = db.postgres_pool().expect("a PostgreSQL database has a PostgreSQL pool").clone();
        async move {
            sqlx::query_as::<_, (i64, chrono::DateTime<chrono::Utc>, bool)>(
                "SELECT version, installed_on, success FROM _sqlx_migrations ORDER BY version",
            )
            .fetch_all(&pool)
            .await
            .unwrap()
        }
    };
    let first = connect().await;
    let before = applied(&first).await;
    assert!(!before.is_empty() && before.iter().all(|m| m.2), "{before:?}");

    // Several servers starting at once on one database: the migrator's lock
    // lets each migration run once, and none of them fails.
    let more = futures_join(4).await;
    for db in &more {
        assert_eq!(applied(db).await, before, "connecting again applies nothing again");
    }
    let again = connect().await;
    assert_eq!(applied(&again).await, before);
}

async fn futures_join(n: usize) -> Vec<Database> {
    let tasks: Vec<_> = (0..n).map(|_| tokio::spawn(connect())).collect();
    let mut dbs = Vec::new();
    for task in tasks {
        dbs.push(task.await.expect("a concurrent connect"));
    }
    dbs
}
