//! Races on the kv store, shared by the SQLite and PostgreSQL targets:
//! several stores on one database, as several server processes would
//! have.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, Timestamp, WorkflowId};
use lf_workflow::kv::{Bucket, EntryId, KvKey, KvStore, KvValue, Namespace, Pass};
use serde_json::json;

/// 40 attempts race for the 5 places of one window, through `stores` in
/// turn, and each asks twice (a takeover): exactly 5 go through, each
/// once, and every other one hears when the window frees up.
pub async fn racing_passes(stores: &[Arc<dyn KvStore>]) {
    let bucket = Bucket { owner: LenserId::new(), workflow: WorkflowId::new(), step: "limit".into() };
    let now = Timestamp::from_micros(1_780_272_000_000_000);
    let window = 60_000_000;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let store = stores[i % stores.len()].clone();
        let bucket = bucket.clone();
        tasks.spawn(async move {
            let key = format!("run{i}:limit:1");
            let first = store.pass(&bucket, &key, 5, window, now).await.expect("counted");
            let again = store.pass(&bucket, &key, 5, window, now).await.expect("counted");
            (first, again)
        });
    }
    let mut through = 0;
    while let Some(done) = tasks.join_next().await {
        match done.expect("no panic") {
            (Pass::Through, Pass::Again) => through += 1,
            (Pass::Full { frees_at }, Pass::Full { frees_at: again }) => {
                assert_eq!((frees_at, again), (now.plus_micros(window), now.plus_micros(window)));
            }
            other => panic!("a pass answered {other:?}"),
        }
    }
    assert_eq!(through, 5, "exactly the limit goes through");
}

/// 30 new keys race for an owner's last 10 places: exactly 10 are
/// written.
pub async fn racing_writes(stores: &[Arc<dyn KvStore>]) {
    let owner = LenserId::new();
    let now = Timestamp::from_micros(1_780_272_000_000_000);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..30 {
        let store = stores[i % stores.len()].clone();
        tasks.spawn(async move {
            let entry =
                EntryId { owner, namespace: Namespace::Kv, key: KvKey::parse(&format!("k{i}")).unwrap() };
            store.put(&entry, &KvValue::new(&json!(i)).unwrap(), None, now, 10).await
        });
    }
    let (mut written, mut full) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        match done.expect("no panic") {
            Ok(()) => written += 1,
            Err(e) if e.code() == ErrorCode::SlotsFull => full += 1,
            Err(e) => panic!("a write failed: {e:?}"),
        }
    }
    assert_eq!((written, full), (10, 20));
}
