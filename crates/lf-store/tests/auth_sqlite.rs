//! lf-auth's contract suite and OAuth races on SQLite: a file (readers and a
//! writer, several handles on one file) and an in-memory database.

mod auth_common;

use lf_store::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    lf_auth::contract::suite(db.auth_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_auth::contract::suite(db.auth_store()).await;
    auth_common::racing_redeems(db.auth_store()).await;
    auth_common::racing_refreshes(db.auth_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auth_contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_auth::contract::suite(db.auth_store()).await;
    auth_common::racing_redeems(db.auth_store()).await;
}

/// Two handles on one file, as two server processes would have: racing
/// redeems through both still have exactly one winner (BEGIN IMMEDIATE and
/// the conditional update, across connections).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_redeems_across_two_handles() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    auth_common::racing_redeems_on_two(a.auth_store(), b.auth_store()).await;
}

#[tokio::test]
async fn secrets_are_stored_only_as_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::connect(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    let secrets = auth_common::issue_everything(db.auth_store()).await;
    let pool = db.sqlite_pool().unwrap();
    let mut dump = Vec::<String>::new();
    // Every text column of every row, read back as text.
    for (table, cols) in [
        ("lensers", "handle || password_hash"),
        ("access_tokens", "coalesce(resource, '') || coalesce(label, '') || hex(token_hash)"),
        ("oauth_codes", "redirect_uri || code_challenge || hex(code_hash)"),
        ("refresh_tokens", "hex(token_hash)"),
    ] {
        let rows: Vec<String> =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {cols} FROM {table}")))
                .fetch_all(pool)
                .await
                .unwrap();
        assert!(!rows.is_empty(), "{table} has rows");
        dump.extend(rows);
    }
    let dump = dump.join(" ").to_lowercase();
    for s in &secrets {
        let body = s.rsplit('_').next().unwrap();
        assert!(!dump.contains(body), "a secret is stored in clear");
    }
    assert!(dump.contains("$argon2id$"), "the password hash is there");
}
