//! What lf-store adds to lf-eval's experiment contract on both backends:
//! the back-fill of `judge_cost_usd` (SQLite 0038, PostgreSQL 0034).

/// The back-fill part of the judge's dollars migration (from its UPDATE to
/// the end of that statement).
fn back_fill(migration: &'static str) -> &'static str {
    let at = migration.find("UPDATE experiment_results SET judge_cost_usd").expect("the back-fill");
    let end = migration[at..].find("';\n").expect("its end") + 3;
    &migration[at..at + end]
}

/// On a database where judged cells were written (the contract suite ran),
/// the migration's back-fill gives every cell the judge's dollars the store
/// wrote with it.
pub async fn judge_dollars_are_back_filled_as_written(db: &lf_store::Database) {
    macro_rules! on {
        ($pool:expr, $migration:expr) => {{
            let sum = "SELECT CAST(sum(judge_cost_usd) AS double precision) AS s, count(*) AS n \
                 FROM experiment_results";
            let (written, n): (f64, i64) = sqlx::query_as(sum).fetch_one($pool).await.unwrap();
            assert!(written > 0.0 && n > 0, "judged cells to back-fill");
            sqlx::query("UPDATE experiment_results SET judge_cost_usd = 0").execute($pool).await.unwrap();
            sqlx::raw_sql(back_fill($migration)).execute($pool).await.unwrap();
            let (filled, _): (f64, i64) = sqlx::query_as(sum).fetch_one($pool).await.unwrap();
            assert!((filled - written).abs() < 1e-9, "{filled} against {written}");
        }};
    }
    if let Some(pool) = db.sqlite_pool() {
        on!(pool, include_str!("../../migrations/sqlite/0038_experiment_matchups.sql"));
    } else if let Some(pool) = db.postgres_pool() {
        on!(pool, include_str!("../../migrations/postgres/0034_experiment_matchups.sql"));
    } else {
        panic!("neither SQLite nor PostgreSQL");
    }
}
