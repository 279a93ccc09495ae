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

/// A token revoked through another handle on the file (as another server
/// process would) fails the very next request on this one, though this one
/// has just authenticated it (and keeps what it read while nothing changes).
#[tokio::test]
async fn a_token_revoked_by_another_process_fails_at_once() {
    use lf_auth::{AuthConfig, AuthFailure, AuthService, NewToken};
    use lf_core::{Scopes, SystemClock};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let (a, b) = (Database::connect(&url).await.unwrap(), Database::connect(&url).await.unwrap());
    let service =
        |db: &Database| AuthService::new(db.auth_store(), Arc::new(SystemClock), AuthConfig::default());
    let (here, there) = (service(&a), service(&b));
    let lenser = here.create_lenser("revoked_elsewhere", "a long enough password").await.unwrap();
    let new = NewToken { lenser: lenser.id, scopes: Scopes::READ, resource: None, ttl: None, label: None };
    let token = here.issue_token(new).await.unwrap();
    let resource = "http://127.0.0.1:8080/mcp";
    for _ in 0..3 {
        let ok = here.authenticate(&token.secret, resource).await.unwrap();
        assert_eq!(ok.map(|a| a.token_id), Ok(token.info.id));
    }
    there.revoke_token(token.info.id).await.unwrap();
    let refused = here.authenticate(&token.secret, resource).await.unwrap().err();
    assert_eq!(refused, Some(AuthFailure::Revoked));
    a.close().await;
    b.close().await;
}
