//! The storage contract of the HTTP edge's rate limits and sign-in
//! lockouts: small states under keys, kept where every process serving
//! one database reads and writes them, so that processes behind one
//! balancer count together. Implementations: [`MemoryThrottleStore`]
//! here (one process), SQLite and PostgreSQL in lf-store.
//!
//! The store knows no limit: what a state means and how it changes is the
//! caller's (the HTTP transport's limits), handed over as a step.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp};

/// What a [`ThrottleStore::update`] step does to a key's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Leaves the state as it is (nothing is written).
    Keep,
    /// Replaces the state; it reads as absent from `expires_at` on.
    Set { state: String, expires_at: Timestamp },
    /// Forgets the key.
    Remove,
}

/// A step of [`ThrottleStore::update`]: the key's live state (`None` when
/// it has none, or it expired) to what becomes of it. It runs once.
pub type Step<'a> = dyn FnMut(Option<&str>) -> Change + Send + 'a;

/// Where the edge's counts live.
///
/// Every implementation MUST run an update's read, step and write under
/// the key's lock, so that of concurrent updates of one key, from any
/// process on the database, each step sees the state the previous one
/// left: two callers never both take the last place.
#[async_trait]
pub trait ThrottleStore: Send + Sync {
    /// Reads `key`'s state live at `now`, runs `step` on it and stores
    /// what it answers, all under the key's lock.
    async fn update(&self, key: &str, now: Timestamp, step: &mut Step<'_>) -> LfResult<()>;

    /// Deletes the states expired at `now`; answers how many.
    async fn forget_expired(&self, now: Timestamp) -> LfResult<u64>;
}

/// [`ThrottleStore`] in this process's memory.
#[derive(Default)]
pub struct MemoryThrottleStore {
    states: Mutex<HashMap<String, (String, Timestamp)>>,
}

impl MemoryThrottleStore {
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl ThrottleStore for MemoryThrottleStore {
    async fn update(&self, key: &str, now: Timestamp, step: &mut Step<'_>) -> LfResult<()> {
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let live = states.get(key).filter(|(_, expires_at)| *expires_at > now).map(|(s, _)| s.as_str());
        match step(live) {
            Change::Keep => {}
            Change::Set { state, expires_at } => {
                states.insert(key.to_owned(), (state, expires_at));
            }
            Change::Remove => {
                states.remove(key);
            }
        }
        Ok(())
    }

    async fn forget_expired(&self, now: Timestamp) -> LfResult<u64> {
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let before = states.len();
        states.retain(|_, (_, expires_at)| *expires_at > now);
        Ok((before - states.len()) as u64)
    }
}

/// The contract every [`ThrottleStore`] passes.
pub mod contract {
    use super::*;

    /// Panics when `store` breaks the contract.
    pub async fn suite(store: &dyn ThrottleStore) {
        let t0 = Timestamp::from_micros(1_700_000_000_000_000);
        let read = async |key: &str, now: Timestamp| {
            let mut seen = None;
            store
                .update(key, now, &mut |s| {
                    seen = s.map(str::to_owned);
                    Change::Keep
                })
                .await
                .unwrap();
            seen
        };
        // What a run stopped half way may have left.
        for key in ["a", "b", "count"] {
            store.update(key, t0, &mut |_| Change::Remove).await.unwrap();
        }
        assert_eq!(read("a", t0).await, None);
        let set = |state: &str, until: Timestamp| Change::Set { state: state.into(), expires_at: until };
        store.update("a", t0, &mut |_| set("1", t0.plus_micros(10))).await.unwrap();
        store.update("b", t0, &mut |_| set("2", t0.plus_micros(20))).await.unwrap();
        assert_eq!(read("a", t0).await.as_deref(), Some("1"));
        store.update("a", t0, &mut |s| set(&format!("{}+", s.unwrap()), t0.plus_micros(10))).await.unwrap();
        assert_eq!(read("a", t0.plus_micros(9)).await.as_deref(), Some("1+"));
        assert_eq!(read("a", t0.plus_micros(10)).await, None, "expired at its time");
        assert_eq!(store.forget_expired(t0.plus_micros(15)).await.unwrap(), 1);
        assert_eq!(read("b", t0.plus_micros(15)).await.as_deref(), Some("2"));
        store.update("b", t0, &mut |_| Change::Remove).await.unwrap();
        assert_eq!(read("b", t0).await, None);
        assert_eq!(store.forget_expired(t0.plus_micros(100)).await.unwrap(), 0);

        // Concurrent updates of one key each see the last one's state: a
        // count of them loses none.
        let far = t0.plus_micros(1_000_000);
        let bump = |_: usize| -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            Box::pin(async move {
                store
                    .update("count", t0, &mut |s| {
                        let n = s.and_then(|s| s.parse::<u32>().ok()).unwrap_or(0);
                        set(&(n + 1).to_string(), far)
                    })
                    .await
                    .unwrap()
            })
        };
        lf_core::join_all((0..20).map(bump).collect()).await;
        assert_eq!(read("count", t0).await.as_deref(), Some("20"));
        store.update("count", t0, &mut |_| Change::Remove).await.unwrap();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_memory_store_keeps_the_contract() {
        pollster::block_on(super::contract::suite(&super::MemoryThrottleStore::new()));
    }
}
