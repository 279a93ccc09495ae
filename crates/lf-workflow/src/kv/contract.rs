//! The public contract suite every [`KvStore`] runs: [`super::MemoryKv`]
//! here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_workflow::kv::contract::suite(store).await;
//! ```
//!
//! Every check uses fresh owners and workflows and times of its own, so
//! the suite runs against a store that already holds data, and may run
//! several times.

use std::sync::Arc;

use lf_core::{ErrorCode, LenserId, Timestamp, WorkflowId};
use serde_json::{Value, json};

use super::model::{Bucket, EntryId, KvKey, KvValue, MAX_ENTRIES, Namespace, Pass};
use super::store::KvStore;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn KvStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    namespaces_and_owners(s).await;
    expiry(s).await;
    bounds_and_purge(s).await;
    passes(s).await;
    passes_per_bucket(s).await;
}

const SECOND: i64 = 1_000_000;

/// A moment of the suite: 2026-06-01 plus `seconds`.
fn at(seconds: i64) -> Timestamp {
    Timestamp::from_micros(1_780_272_000 * SECOND + seconds * SECOND)
}

fn id(owner: LenserId, namespace: Namespace, key: &str) -> EntryId {
    EntryId { owner, namespace, key: KvKey::parse(key).expect("a valid key") }
}

fn value(v: &Value) -> KvValue {
    KvValue::new(v).expect("a small value")
}

async fn put(
    s: &dyn KvStore,
    owner: LenserId,
    ns: Namespace,
    k: &str,
    v: Value,
    expires: Option<i64>,
    now: i64,
) {
    s.put(&id(owner, ns, k), &value(&v), expires.map(at), at(now), MAX_ENTRIES).await.expect("written");
}

async fn get(s: &dyn KvStore, owner: LenserId, ns: Namespace, k: &str, now: i64) -> Option<Value> {
    s.get(&id(owner, ns, k), at(now)).await.expect("read")
}

async fn round_trip(s: &dyn KvStore) {
    let owner = LenserId::new();
    assert_eq!(get(s, owner, Namespace::Kv, "nothing:here", 0).await, None, "an absent key reads as none");
    // Key order, nesting, numbers, unicode and every kind of JSON value.
    let v = json!({"zeta": 1, "alpha": [1.5, "two", null, true], "mid": {"b": "ß", "a": -3}});
    put(s, owner, Namespace::Kv, "digest:last", v.clone(), None, 0).await;
    let back = get(s, owner, Namespace::Kv, "digest:last", 1).await.expect("found");
    assert_eq!(back, v);
    assert_eq!(back.to_string(), v.to_string(), "read back with its key order");
    for scalar in [json!(null), json!("text"), json!(42), json!(false), json!([])] {
        put(s, owner, Namespace::Kv, "scalar", scalar.clone(), None, 2).await;
        assert_eq!(get(s, owner, Namespace::Kv, "scalar", 3).await, Some(scalar.clone()), "{scalar}");
    }
    // A write replaces the value and its expiry.
    put(s, owner, Namespace::Kv, "digest:last", json!("second"), Some(10), 4).await;
    put(s, owner, Namespace::Kv, "digest:last", json!("third"), None, 5).await;
    assert_eq!(get(s, owner, Namespace::Kv, "digest:last", 100).await, Some(json!("third")));
    // Keys are exact: case and spaces count.
    assert_eq!(get(s, owner, Namespace::Kv, "Digest:last", 6).await, None);
    assert_eq!(get(s, owner, Namespace::Kv, "digest:last ", 6).await, None);
    let long = "k".repeat(super::MAX_KEY_CHARS);
    put(s, owner, Namespace::Kv, &long, json!(1), None, 7).await;
    assert_eq!(get(s, owner, Namespace::Kv, &long, 7).await, Some(json!(1)), "a key of the longest length");
    let big = json!("x".repeat(super::MAX_VALUE_BYTES - 2));
    put(s, owner, Namespace::Kv, "big", big.clone(), None, 8).await;
    assert_eq!(get(s, owner, Namespace::Kv, "big", 8).await, Some(big), "a value of the largest size");
}

async fn namespaces_and_owners(s: &dyn KvStore) {
    let (a, b) = (LenserId::new(), LenserId::new());
    put(s, a, Namespace::Kv, "shared", json!("kv of a"), None, 0).await;
    assert_eq!(get(s, a, Namespace::Cache, "shared", 1).await, None, "the cache does not see kv entries");
    assert_eq!(get(s, b, Namespace::Kv, "shared", 1).await, None, "another owner does not see a's entry");
    put(s, a, Namespace::Cache, "shared", json!("cache of a"), None, 2).await;
    put(s, b, Namespace::Kv, "shared", json!("kv of b"), None, 3).await;
    assert_eq!(get(s, a, Namespace::Kv, "shared", 4).await, Some(json!("kv of a")));
    assert_eq!(get(s, a, Namespace::Cache, "shared", 4).await, Some(json!("cache of a")));
    assert_eq!(get(s, b, Namespace::Kv, "shared", 4).await, Some(json!("kv of b")));
    assert_eq!(get(s, b, Namespace::Cache, "shared", 4).await, None);
}

async fn expiry(s: &dyn KvStore) {
    let owner = LenserId::new();
    put(s, owner, Namespace::Cache, "fresh", json!({"hit": 1}), Some(60), 0).await;
    assert_eq!(get(s, owner, Namespace::Cache, "fresh", 59).await, Some(json!({"hit": 1})), "live before");
    assert_eq!(get(s, owner, Namespace::Cache, "fresh", 60).await, None, "absent from its expiry on");
    assert_eq!(get(s, owner, Namespace::Cache, "fresh", 6_000).await, None);
    // Written again after it expired: live again, for its new time.
    put(s, owner, Namespace::Cache, "fresh", json!(2), Some(200), 100).await;
    assert_eq!(get(s, owner, Namespace::Cache, "fresh", 150).await, Some(json!(2)));
    // An entry never written to expire lives on.
    put(s, owner, Namespace::Kv, "forever", json!(true), None, 0).await;
    assert_eq!(get(s, owner, Namespace::Kv, "forever", 100_000_000).await, Some(json!(true)));
}

async fn bounds_and_purge(s: &dyn KvStore) {
    let owner = LenserId::new();
    let max = 3;
    let write = |k: &'static str, expires: Option<i64>, now: i64| async move {
        s.put(&id(owner, Namespace::Kv, k), &value(&json!(k)), expires.map(at), at(now), max).await
    };
    write("a", Some(10), 0).await.expect("first");
    write("b", None, 0).await.expect("second");
    // The cache counts towards the same bound.
    s.put(&id(owner, Namespace::Cache, "c"), &value(&json!(1)), None, at(0), max).await.expect("third");
    let full = write("d", None, 1).await.expect_err("a fourth entry");
    assert_eq!(full.code(), ErrorCode::SlotsFull, "{full:?}");
    assert!(full.message().contains('3'), "the message names the limit: {}", full.message());
    assert_eq!(get(s, owner, Namespace::Kv, "d", 1).await, None, "nothing written");
    write("b", None, 2).await.expect("replacing a live entry is no new entry");
    // Once `a` expired it no longer counts: a fourth key fits.
    write("d", None, 10).await.expect("an expired entry makes room");
    assert_eq!(get(s, owner, Namespace::Kv, "a", 10).await, None);
    assert_eq!(write("e", None, 11).await.expect_err("full again").code(), ErrorCode::SlotsFull);
    // Another owner has a bound of their own.
    let other = LenserId::new();
    s.put(&id(other, Namespace::Kv, "a"), &value(&json!(1)), None, at(11), max).await.expect("another owner");
}

fn bucket(owner: LenserId, workflow: WorkflowId, step: &str) -> Bucket {
    Bucket { owner, workflow, step: step.to_owned() }
}

async fn passes(s: &dyn KvStore) {
    let b = bucket(LenserId::new(), WorkflowId::new(), "limit");
    let window = 60 * SECOND;
    let pass = |k: &'static str, now: i64| {
        let b = b.clone();
        async move { s.pass(&b, k, 2, window, at(now)).await.expect("counted") }
    };
    assert_eq!(pass("run1:limit:1", 0).await, Pass::Through);
    assert_eq!(pass("run2:limit:1", 10).await, Pass::Through);
    assert_eq!(
        pass("run3:limit:1", 20).await,
        Pass::Full { frees_at: at(60) },
        "frees when the oldest leaves"
    );
    // The same attempt again (a takeover): through, and not counted.
    assert_eq!(pass("run1:limit:1", 30).await, Pass::Again);
    assert_eq!(pass("run3:limit:1", 59).await, Pass::Full { frees_at: at(60) });
    // The window slides: at 60 the first pass has left it.
    assert_eq!(pass("run3:limit:1", 60).await, Pass::Through);
    assert_eq!(pass("run4:limit:1", 61).await, Pass::Full { frees_at: at(70) });
    assert_eq!(pass("run3:limit:1", 62).await, Pass::Again);
    // A later, larger window is empty.
    assert_eq!(pass("run4:limit:1", 500).await, Pass::Through);
    // A lower limit than the passes in the window: free once enough left.
    assert_eq!(pass("run5:limit:1", 501).await, Pass::Through);
    let lowered = s.pass(&b, "run6:limit:1", 1, window, at(502)).await.unwrap();
    assert_eq!(lowered, Pass::Full { frees_at: at(561) });
}

async fn passes_per_bucket(s: &dyn KvStore) {
    let (owner, workflow) = (LenserId::new(), WorkflowId::new());
    let window = 3_600 * SECOND;
    let one = bucket(owner, workflow, "one");
    assert_eq!(s.pass(&one, "r:one:1", 1, window, at(0)).await.unwrap(), Pass::Through);
    assert!(matches!(s.pass(&one, "r2:one:1", 1, window, at(1)).await.unwrap(), Pass::Full { .. }));
    // Another step, another workflow, another owner: their own windows.
    for other in [
        bucket(owner, workflow, "two"),
        bucket(owner, WorkflowId::new(), "one"),
        bucket(LenserId::new(), workflow, "one"),
    ] {
        assert_eq!(s.pass(&other, "r2:one:1", 1, window, at(2)).await.unwrap(), Pass::Through, "{other:?}");
    }
}
