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

/// A server's call ledger on a file: each call is in the log as another
/// handle on the file reads it when the call answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ledgered_calls_are_committed_when_they_answer() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    agent_common::calls_are_committed_when_they_answer(&a, &b).await;
    a.close().await;
    b.close().await;
}

/// A database file at `dir` whose action log the contract suite wrote.
async fn logged_file(dir: &std::path::Path) -> Database {
    let db = Database::connect(&format!("sqlite://{}", dir.join("lf.db").display())).await.unwrap();
    lf_agent::contract::suite(db.agent_store()).await;
    let logged = log_rows(db.sqlite_pool().expect("SQLite")).await.len();
    assert!(logged >= 10, "the suite logs calls: {logged}");
    db
}

/// Every row of the action log, each as one text with every column in it.
async fn log_rows(pool: &sqlx::SqlitePool) -> Vec<String> {
    let all = "SELECT quote(id) || quote(agent_id) || quote(action) || quote(tool_id) || quote(tool_name) \
               || quote(tool_group) || quote(tool_safety) || quote(arguments) || quote(outcome) || quote(code) \
               || quote(message) || quote(actor_id) || quote(at) FROM agent_actions ORDER BY id";
    sqlx::query_scalar(all).fetch_all(pool).await.unwrap()
}

/// Migration `0017` moves the action log into one B-tree keyed by agent
/// and time: on a file whose log was written (the contract suite) and then
/// put back in the table of `0014` (a rowid table, its key on id, its
/// index of an agent's entries), the migration keeps every row as it was,
/// leaves no rowid, reads an agent's log newest first from its key with
/// no sort, and still refuses a second write of one entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_log_migration_keeps_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let db = logged_file(dir.path()).await;
    let pool = db.sqlite_pool().expect("SQLite");
    let rows = async || log_rows(pool).await;
    let logged = rows().await;

    // The table as 0014 made it, from 0014's own text, holding the rows.
    let first = include_str!("../migrations/sqlite/0014_agents.sql");
    let start = first.find("CREATE TABLE agent_actions (").unwrap();
    let index = "CREATE INDEX agent_actions_newest ON agent_actions (agent_id, at DESC, id DESC);";
    let end = first.find(index).unwrap() + index.len();
    let old = format!(
        "ALTER TABLE agent_actions RENAME TO agent_actions_kept; {} \
         INSERT INTO agent_actions SELECT * FROM agent_actions_kept; DROP TABLE agent_actions_kept;",
        &first[start..end]
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(old)).execute(pool).await.unwrap();
    let rowid = || sqlx::query_scalar::<_, i64>("SELECT count(rowid) FROM agent_actions").fetch_one(pool);
    assert_eq!(rowid().await.unwrap(), logged.len() as i64, "the old table has rowids");

    let migration = include_str!("../migrations/sqlite/0017_agent_actions_by_agent.sql");
    sqlx::raw_sql(migration).execute(pool).await.unwrap();
    assert_eq!(rows().await, logged, "every entry as it was");
    assert!(rowid().await.is_err(), "WITHOUT ROWID");
    let others: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pragma_index_list('agent_actions') WHERE origin <> 'pk'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(others, 0, "one B-tree: no index besides the key");
    let listed: Vec<String> = sqlx::query(
        "EXPLAIN QUERY PLAN SELECT id FROM agent_actions WHERE agent_id = x'00' \
         ORDER BY at DESC, id DESC LIMIT 20",
    )
    .fetch_all(pool)
    .await
    .unwrap()
    .iter()
    .map(|row| sqlx::Row::get::<String, _>(row, "detail"))
    .collect();
    assert!(listed.iter().any(|d| d.contains("PRIMARY KEY")), "{listed:?}");
    assert!(!listed.iter().any(|d| d.contains("TEMP B-TREE")), "no sort: {listed:?}");
    let again = "INSERT INTO agent_actions SELECT * FROM agent_actions LIMIT 1";
    assert!(sqlx::query(again).execute(pool).await.is_err(), "one entry is written once");
    // And the store goes on with the new table.
    lf_agent::contract::suite(db.agent_store()).await;
    db.close().await;
}

/// Migration `0018` spells the action log's CHECKs of a word among several
/// as CASEs: inside a CHECK, SQLite builds a lookup table for each
/// `IN (…)` for every row written, and a CASE builds none. On a file whose
/// log was written (the contract suite) and put back in the table of
/// `0017`, migrating keeps every row as it was, writing a row builds no
/// lookup table, and the checks still refuse what they refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_log_checks_build_no_table_per_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = logged_file(dir.path()).await;
    let pool = db.sqlite_pool().expect("SQLite");
    let rows = async || log_rows(pool).await;
    let logged = rows().await;
    let agent: Vec<u8> =
        sqlx::query_scalar("SELECT agent_id FROM agent_actions LIMIT 1").fetch_one(pool).await.unwrap();
    let agent = format!("x'{}'", agent.iter().map(|b| format!("{b:02x}")).collect::<String>());
    // A row with its tool's safety and its outcome as given.
    let row = |safety: &str, outcome: &str| {
        format!(
            "INSERT INTO agent_actions (id, agent_id, action, tool_id, tool_name, tool_group, tool_safety, \
             arguments, outcome, code, message, actor_id, at) VALUES (randomblob(16), {agent}, 'get_lens', \
             randomblob(16), 'get_lens', 'lens', {safety}, '{{}}', {outcome}, NULL, NULL, NULL, 1)"
        )
    };
    let ephemeral = async || -> usize {
        // Not kept: EXPLAIN lists a kept statement's program as it was
        // prepared, before the migration.
        let plan = sqlx::query(sqlx::AssertSqlSafe(format!("EXPLAIN {}", row("'read'", "'succeeded'"))))
            .persistent(false)
            .fetch_all(pool)
            .await
            .unwrap();
        plan.iter().filter(|op| sqlx::Row::get::<String, _>(*op, "opcode") == "OpenEphemeral").count()
    };

    // The table as 0017 made it, from 0017's own text, holding the rows.
    let before = include_str!("../migrations/sqlite/0017_agent_actions_by_agent.sql");
    let start = before.find("CREATE TABLE agent_actions_by_agent (").unwrap();
    let end = before[start..].find("WITHOUT ROWID;").unwrap() + start + "WITHOUT ROWID;".len();
    let old = format!(
        "ALTER TABLE agent_actions RENAME TO agent_actions_kept; {} \
         INSERT INTO agent_actions_by_agent SELECT * FROM agent_actions_kept; DROP TABLE agent_actions_kept; \
         ALTER TABLE agent_actions_by_agent RENAME TO agent_actions;",
        &before[start..end]
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(old)).execute(pool).await.unwrap();
    assert_eq!(rows().await, logged);
    assert_eq!(ephemeral().await, 2, "0017's checks build a table for each IN of a row");

    let migration = include_str!("../migrations/sqlite/0018_agent_actions_checks.sql");
    sqlx::raw_sql(migration).execute(pool).await.unwrap();
    assert_eq!(rows().await, logged, "every entry as it was");
    assert_eq!(ephemeral().await, 0, "a row's checks build nothing");
    let write = async |sql: String| sqlx::query(sqlx::AssertSqlSafe(sql)).execute(pool).await;
    for safety in ["'read'", "'write'", "'execute'", "'destructive'"] {
        write(row(safety, "'failed'")).await.unwrap_or_else(|e| panic!("{safety}: {e}"));
    }
    for outcome in ["'succeeded'", "'refused'"] {
        write(row("'read'", outcome)).await.unwrap_or_else(|e| panic!("{outcome}: {e}"));
    }
    for (safety, outcome) in [
        ("'readonly'", "'failed'"),
        ("'read'", "'ok'"),
        ("'READ'", "'failed'"),
        ("'read'", "NULL"),
        ("1", "'failed'"),
    ] {
        assert!(write(row(safety, outcome)).await.is_err(), "{safety} {outcome} is refused");
    }
    let rowid = sqlx::query_scalar::<_, i64>("SELECT count(rowid) FROM agent_actions").fetch_one(pool).await;
    assert!(rowid.is_err(), "still WITHOUT ROWID");
    lf_agent::contract::suite(db.agent_store()).await;
    db.close().await;
}
