//! `fair_runs` with two built servers on one PostgreSQL database, 8
//! places each: one lenser's 20 slow runs take at most their share (4) of
//! each server's places, and another lenser's quick run ends within 2 s. Not built by `cargo test
//! --workspace` (`test = false`); `.ci/run` runs it with
//!
//! ```text
//! eval "$(bash .ci/postgres.sh | tail -n 1)"
//! cargo test -p lf-mcp-http --test fair_runs_postgres
//! ```
//!
//! It reads LENSERFIGHT_TEST_POSTGRES_URL and fails, never skips, when
//! that is unset; it works in a database of its own, dropped at the end.

#[path = "common/process.rs"]
mod process;

#[path = "common/fair.rs"]
mod fair;

use process::Home;

const URL_VAR: &str = "LENSERFIGHT_TEST_POSTGRES_URL";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_run_ends_within_2_s_beside_another_lensers_20_slow_runs_on_two_servers() {
    let admin = std::env::var(URL_VAR).ok().filter(|u| !u.is_empty()).unwrap_or_else(|| {
        panic!("{URL_VAR} is not set: start a server with `eval \"$(bash .ci/postgres.sh | tail -n 1)\"`")
    });
    let name = format!("lf_fair_{}", std::process::id());
    let base = admin.rsplit_once('/').expect("a URL with a database name").0.to_owned();
    let pool = sqlx::postgres::PgPool::connect(&admin).await.expect("the admin connection");
    let create = format!("CREATE DATABASE {name}");
    sqlx::query(sqlx::AssertSqlSafe(create)).execute(&pool).await.unwrap();
    let url = format!("{base}/{name}");

    // 8 places each: A's 20 runs would fill both servers' 16 without a share.
    let env = [
        ("LENSERFIGHT_DATABASE_URL", url.as_str()),
        ("LENSERFIGHT_RUNS_PER_PROCESS", "8"),
        fair::ENV[0],
        fair::ENV[1],
    ];
    let home = Home::new();
    let service = fair::service::<1>();
    let a = fair::lenser(&home, "slowlenser", &env);
    let b = fair::lenser(&home, "quicklenser", &env);
    let one = home.serve(&["--sessions"], &env);
    let two = home.serve(&["--sessions"], &env);
    fair::quick_run_beside_slow_ones::<1>(&[&one, &two], &service, &a, &b).await;
    drop((one, two));

    let drop_db = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
    sqlx::query(sqlx::AssertSqlSafe(drop_db)).execute(&pool).await.unwrap();
    pool.close().await;
}
