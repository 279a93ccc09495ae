//! The battle read that bypasses sqlx on SQLite (see `sqlite::direct` for
//! why): `closed_results`, the one large scan, on a blocking thread. It
//! runs the statement of `sql` on a direct reader and decodes each row with
//! `rows`, so that both paths answer alike; the test below holds it to the
//! sqlx path's answer.

use lf_battle::{BattleResult, BattleType};
use lf_core::LfResult;

use super::{rows, sql};
use crate::sqlite::{Connection, ToSql, rows as all_rows};

/// Every closed or published battle's results, of type `battle_type` when
/// given.
pub(crate) fn closed_results(
    conn: &Connection,
    battle_type: Option<BattleType>,
) -> LfResult<Vec<BattleResult>> {
    let (all, only) = (battle_type.is_none(), battle_type.map_or("", |t| t.as_str()));
    let params: &[(&str, &dyn ToSql)] = &[("$1", &all), ("$2", &only)];
    all_rows(conn, sql::CLOSED_RESULTS, params, |row| rows::battle_result(row))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::conns::Conns;
    use crate::sqlite::testing::on_a_new_file;

    /// The results of every battle the contract suite closed, of every
    /// type and of each: the direct read answers as the sqlx read does.
    #[tokio::test]
    async fn closed_results_answer_as_the_sqlx_read() {
        let (_dir, db) = on_a_new_file().await;
        lf_battle::contract::suite(Arc::new(super::super::SqlBattleStore::new(Conns::Sqlite(db.clone()))))
            .await;
        let mut seen = 0;
        for battle_type in std::iter::once(None).chain(BattleType::ALL.iter().copied().map(Some)) {
            let direct = db.direct_blocking(move |c| closed_results(c, battle_type)).await.unwrap();
            let sqlx = db.reading(async |c| sql::closed_results(c, battle_type).await).await.unwrap();
            assert_eq!(direct, sqlx, "{battle_type:?}");
            seen += direct.len();
        }
        assert!(seen > 0, "the suite leaves closed battles behind");
        db.close().await;
    }
}
