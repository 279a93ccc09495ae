//! The auth read that bypasses sqlx on SQLite (see `sqlite::direct` for
//! why): `token_by_hash`, which every authenticated HTTP request makes. It
//! runs the statement of `sql` on a direct reader and decodes the row with
//! `rows`, so that both paths answer alike; the test below holds it to the
//! sqlx path's answer.

use lf_auth::TokenRecord;
use lf_core::LfResult;

use super::{rows, sql};
use crate::sqlite::{Connection, first_row};

/// The access token whose secret hashes to `hash`.
pub(crate) fn token_by_hash(conn: &Connection, hash: &[u8; 32]) -> LfResult<Option<TokenRecord>> {
    first_row(conn, sql::TOKEN_BY_HASH, [hash], |row| rows::token_record(row))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use lf_auth::SecretHash;

    use super::*;
    use crate::conns::Conns;
    use crate::sqlite::testing::{on_a_new_file, shown, tables_that_move_the_generation};

    /// Every token the contract suite left, and one that is not there:
    /// the direct read answers as the sqlx read does.
    #[tokio::test]
    async fn token_by_hash_answers_as_the_sqlx_read() {
        let (_dir, db) = on_a_new_file().await;
        lf_auth::contract::suite(Arc::new(super::super::SqlAuthStore::new(Conns::Sqlite(db.clone())))).await;
        let hashes: Vec<Vec<u8>> = sqlx::query_scalar("SELECT token_hash FROM access_tokens")
            .fetch_all(db.diagnostics_pool())
            .await
            .unwrap();
        assert!(hashes.len() > 3, "the suite leaves tokens behind");
        let unknown = SecretHash::of("lf_mcp_not_a_token").as_bytes().to_vec();
        for bytes in hashes.into_iter().chain([unknown]) {
            let hash = SecretHash::from_slice(&bytes).unwrap();
            let key = *hash.as_bytes();
            let direct = db.direct_blocking(move |c| token_by_hash(c, &key)).await;
            let sqlx = db.reading(async |c| sql::token_by_hash(c, &hash).await).await;
            assert_eq!(shown(direct), shown(sqlx));
        }
        db.close().await;
    }

    /// The table the cached `token_by_hash` reads moves the cached reads'
    /// generation when a row of it changes.
    #[tokio::test]
    async fn the_table_token_by_hash_reads_moves_the_generation() {
        let (_dir, db) = on_a_new_file().await;
        let read = tables_that_move_the_generation(&db, &[sql::TOKEN_BY_HASH]).await;
        assert_eq!(read.iter().map(String::as_str).collect::<Vec<_>>(), ["access_tokens"]);
        db.close().await;
    }
}
