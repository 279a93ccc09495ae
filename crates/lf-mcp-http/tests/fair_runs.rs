//! One lenser's runs do not stall another's: the built server claims due
//! runs in turns by starter and gives one starter at most its share of its
//! places (LENSERFIGHT_RUNS_PER_STARTER, 4 of 16 by default). On SQLite
//! here; `fair_runs_postgres` runs the same with two servers on one
//! PostgreSQL database.

#[path = "common/process.rs"]
mod process;

#[path = "common/fair.rs"]
mod fair;

use process::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_run_ends_within_2_s_beside_another_lensers_20_slow_runs() {
    let home = Home::new();
    let service = fair::service::<0>();
    let a = fair::lenser(&home, "slowlenser", &[]);
    let b = fair::lenser(&home, "quicklenser", &[]);
    let served = home.serve(&["--sessions"], &fair::ENV);
    fair::quick_run_beside_slow_ones::<0>(&[&served], &service, &a, &b).await;
}
