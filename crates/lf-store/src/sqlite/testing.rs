//! What the tests of the stores' direct statements share.

use std::collections::BTreeSet;

use lf_core::{ErrorCode, LfResult};

use super::Handle;

/// A database in a new file (an in-memory one has no direct readers of
/// its own), and the directory that holds it.
pub(crate) async fn on_a_new_file() -> (tempfile::TempDir, Handle) {
    let dir = tempfile::tempdir().unwrap();
    let db = Handle::open(&format!("sqlite://{}", dir.path().join("lf.db").display())).await.unwrap();
    (dir, db)
}

/// An error as a client would see it.
pub(crate) fn shown<T>(r: LfResult<T>) -> Result<T, (ErrorCode, String)> {
    r.map_err(|e| (e.code(), e.message().to_owned()))
}

/// The tables the cached read `statements` read (`FROM` or `JOIN` a table
/// of `db`'s schema), each held to move the cached reads' generation when
/// a row of it is inserted, updated or deleted (migration 0016): a table
/// added to a cached read without its triggers would leave answers kept
/// past a change.
pub(crate) async fn tables_that_move_the_generation(db: &Handle, statements: &[&str]) -> BTreeSet<String> {
    let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
        .fetch_all(db.diagnostics_pool())
        .await
        .unwrap();
    let triggers: Vec<(String, String)> =
        sqlx::query_as("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'")
            .fetch_all(db.diagnostics_pool())
            .await
            .unwrap();
    let mut read = BTreeSet::new();
    for sql in statements {
        let words: Vec<&str> = sql.split_whitespace().collect();
        for pair in words.windows(2) {
            if matches!(pair[0], "FROM" | "JOIN") && tables.iter().any(|t| t == pair[1]) {
                read.insert(pair[1].to_owned());
            }
        }
    }
    for table in &read {
        for event in ["INSERT", "UPDATE", "DELETE"] {
            let moves = triggers.iter().any(|(on, sql)| {
                on == table
                    && sql.contains(&format!("AFTER {event} ON {table}"))
                    && sql.contains("UPDATE cached_reads_generation SET n = n + 1")
            });
            assert!(moves, "no trigger moves the cached reads' generation after {event} on {table}");
        }
    }
    read
}
