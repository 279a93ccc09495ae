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

mod agent_common;
mod auth_common;
mod battle_common;
mod common;
mod experiment_common;
mod kv_common;
mod run_common;
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

/// A schema of its own, for a test that must not share tables with the
/// others running at the same time; [`Scratch::remove`] drops it.
struct Scratch {
    admin: Database,
    schema: String,
}

impl Scratch {
    /// A new schema named `{prefix}_…`.
    async fn new(prefix: &str) -> Scratch {
        let admin = connect().await;
        let schema = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        // The schema name is ours: letters, digits and underscores.
        let create = sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}"));
        sqlx::raw_sql(create).execute(admin.postgres_pool().unwrap()).await.unwrap();
        Scratch { admin, schema }
    }

    /// The database in this schema, migrated: each call a pool of its own,
    /// as a server process would have.
    async fn connect(&self) -> Database {
        let base = url();
        let separator = if base.contains('?') { '&' } else { '?' };
        let db = Database::connect(&format!("{base}{separator}options[search_path]={}", self.schema))
            .await
            .unwrap();
        let current: String = sqlx::query_scalar("SELECT current_schema()")
            .fetch_one(db.postgres_pool().unwrap())
            .await
            .unwrap();
        assert_eq!(current, self.schema, "the store works in the new schema");
        db
    }

    /// Closes `dbs` and drops the schema.
    async fn remove(self, dbs: &[Database]) {
        for db in dbs {
            db.close().await;
        }
        let drop = sqlx::AssertSqlSafe(format!("DROP SCHEMA {} CASCADE", self.schema));
        sqlx::raw_sql(drop).execute(self.admin.postgres_pool().unwrap()).await.unwrap();
        self.admin.close().await;
    }
}

/// The results migration, in a schema of its own: it drops and refills a
/// table that the other tests, running at the same time, write to.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn battle_results_migration() {
    let scratch = Scratch::new("lf_results").await;
    let db = scratch.connect().await;
    lf_battle::contract::suite(db.battle_store()).await;
    battle_common::results_migration_matches_the_store(&db).await;
    scratch.remove(&[db]).await;
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
async fn agent_contract_suite_twice() {
    let db = connect().await;
    lf_agent::contract::suite(db.agent_store()).await;
    lf_agent::contract::suite(db.agent_store()).await;
    agent_common::handles_are_one_namespace(&db).await;
    agent_common::service_round_trip(&db).await;
    db.close().await;
}

/// Reservations against a cap, creations against the owner's limit, one
/// handle asked for by several agents, and by a lenser and an agent, on one
/// pool and then on two: never past a limit, one holder of a handle (the
/// agent's row lock, the advisory locks on owner and handle). And a
/// server's agent calls, committed when they answer as the other pool
/// reads them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_races_on_two_pools() {
    let (a, b) = (connect().await, connect().await);
    agent_common::racing_reservations(&[a.agent_store()]).await;
    agent_common::racing_creates(&[a.agent_store()]).await;
    agent_common::racing_reservations(&[a.agent_store(), b.agent_store()]).await;
    agent_common::racing_creates(&[a.agent_store(), b.agent_store()]).await;
    agent_common::racing_lenser_and_agent(&a, &a).await;
    agent_common::racing_lenser_and_agent(&a, &b).await;
    agent_common::calls_are_committed_when_they_answer(&a, &b).await;
    a.close().await;
    b.close().await;
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

/// In the shared schema: no other test makes runs there (the races below
/// have schemas of their own), so the suite's claims see only its runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::run::contract::suite(db.run_store(), db.workflow_store()).await;
    lf_workflow::run::contract::suite(db.run_store(), db.workflow_store()).await;
    lf_workflow::run::contract::wake_suite(db.run_store(), db.workflow_store()).await;
    db.close().await;
}

/// Twenty creations with one idempotency key at once, on one pool and then
/// on two: one run each time (the advisory lock on workflow and key).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_creates_with_one_key() {
    let scratch = Scratch::new("lf_run_keys").await;
    let (a, b) = (scratch.connect().await, scratch.connect().await);
    let workflows = a.workflow_store();
    run_common::racing_creates_with_one_key(&[a.run_store()], workflows.as_ref()).await;
    run_common::racing_creates_with_one_key(&[a.run_store(), b.run_store()], workflows.as_ref()).await;
    scratch.remove(&[a, b]).await;
}

/// Runs that events start, racing on two pools as two server processes:
/// a tree's bound and a starter's bound hold exactly (the advisory locks
/// on tree and starter).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_caused_runs() {
    let scratch = Scratch::new("lf_run_causes").await;
    let (a, b) = (scratch.connect().await, scratch.connect().await);
    let workflows = a.workflow_store();
    run_common::racing_caused(&[a.run_store(), b.run_store()], workflows.as_ref()).await;
    scratch.remove(&[a, b]).await;
}

/// Claim loops on two pools, as two server processes, over 200 pending
/// runs: each run claimed exactly once (FOR UPDATE SKIP LOCKED).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_claims_on_two_pools() {
    let scratch = Scratch::new("lf_run_claims").await;
    let (a, b) = (scratch.connect().await, scratch.connect().await);
    run_common::racing_claims(&[a.run_store(), b.run_store()], a.workflow_store().as_ref()).await;
    scratch.remove(&[a, b]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connection_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::connection::contract::suite(db.connection_store()).await;
    lf_workflow::connection::contract::suite(db.connection_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ask_contract_suite_twice() {
    let db = connect().await;
    lf_battle::contract::asks::suite(db.ask_store()).await;
    lf_battle::contract::asks::suite(db.ask_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn model_profile_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::profile::contract::suite(db.profile_store()).await;
    lf_workflow::profile::contract::suite(db.profile_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dataset_contract_suite_twice() {
    let db = connect().await;
    lf_eval::dataset::contract::suite(db.dataset_store()).await;
    lf_eval::dataset::contract::suite(db.dataset_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn experiment_contract_suite_twice() {
    let db = connect().await;
    lf_eval::experiment::contract::suite(db.experiment_store()).await;
    lf_eval::experiment::contract::suite(db.experiment_store()).await;
    experiment_common::judge_dollars_are_back_filled_as_written(&db).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::kv::contract::suite(db.kv_store()).await;
    lf_workflow::kv::contract::suite(db.kv_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn throttle_contract_suite_twice() {
    let db = connect().await;
    lf_auth::throttle::contract::suite(&*db.throttle_store()).await;
    lf_auth::throttle::contract::suite(&*db.throttle_store()).await;
    db.close().await;
}

/// Passes for a window's last places and writes for an owner's last
/// entries, on one pool and then on two: never past the bound (the
/// advisory locks on bucket and owner).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kv_races_on_two_pools() {
    let (a, b) = (connect().await, connect().await);
    kv_common::racing_passes(&[a.kv_store()]).await;
    kv_common::racing_passes(&[a.kv_store(), b.kv_store()]).await;
    kv_common::racing_writes(&[a.kv_store(), b.kv_store()]).await;
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhook_contract_suite_twice() {
    let db = connect().await;
    lf_workflow::hook::contract::suite(db.webhook_store(), db.workflow_store()).await;
    lf_workflow::hook::contract::suite(db.webhook_store(), db.workflow_store()).await;
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
