//! Scheduled workflows on one SQLite file opened by two processes: each
//! tick fires once. (The PostgreSQL case is in `runners_postgres.rs`.)

#[path = "shared/schedules.rs"]
mod shared;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_sqlite_file_fire_each_tick_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("lf.db").display());
    let a = lf_store::Database::connect(&url).await.unwrap();
    let b = lf_store::Database::connect(&url).await.unwrap();
    shared::each_tick_fires_once(&a, &b, 5).await;
}
