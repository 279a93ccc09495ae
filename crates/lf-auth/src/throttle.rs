//! The storage contract of the HTTP edge's rate limits and sign-in
//! lockouts: small states under keys, kept where every process serving
//! one database reads and writes them, so that processes behind one
//! balancer count together. Implementations: [`MemoryThrottleStore`]
//! here (one process), SQLite and PostgreSQL in lf-store.
//!
//! The store knows no limit: what a state means and how it changes is the
//! caller's, handed over as a step. The rules the HTTP transport's limits
//! step with are here: a [`Rate`] (a GCRA bucket) and a handle's failed
//! sign-ins ([`Failures`]: after [`MAX_FAILURES`] within
//! [`FAILURE_WINDOW`], locked for [`FIRST_LOCK`], then twice as long after
//! each further failure, up to [`LONGEST_LOCK`]).

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

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

/// Failed sign-ins of one handle that lock it.
pub const MAX_FAILURES: usize = 10;
/// Within this time.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);
/// The first lock.
pub const FIRST_LOCK: Duration = Duration::from_secs(60);
/// The longest lock.
pub const LONGEST_LOCK: Duration = Duration::from_secs(60 * 60);
/// How long a handle's failures are remembered after the last one.
pub const REMEMBERED: Duration = Duration::from_secs(24 * 60 * 60);

/// A rate: one call every `every`, after a burst of `burst`, as a GCRA
/// bucket whose state is its theoretical arrival time.
#[derive(Clone, Copy, Debug)]
pub struct Rate {
    every: i64,
    burst: i64,
}

impl Rate {
    pub fn new(period: Duration, n: NonZeroU32, burst: NonZeroU32) -> Self {
        Rate { every: (micros(period) / i64::from(n.get())).max(1), burst: i64::from(burst.get()) }
    }

    pub fn per_minute(n: u32, burst: u32) -> Self {
        let nz = |n| NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN);
        Self::new(Duration::from_secs(60), nz(n), nz(burst))
    }

    /// A call at `now` on `state` (the theoretical arrival time, in
    /// microseconds): the new state, or how long until a call may pass.
    pub fn take(self, state: Option<&str>, now: Timestamp) -> (Change, Result<(), Duration>) {
        let now = now.as_micros();
        let tat = state.and_then(|s| s.parse::<i64>().ok()).unwrap_or(now).max(now);
        let tolerance = self.every.saturating_mul(self.burst - 1);
        if tat - now > tolerance {
            return (Change::Keep, Err(duration(tat - tolerance - now)));
        }
        let tat = tat.saturating_add(self.every);
        (Change::Set { state: tat.to_string(), expires_at: Timestamp::from_micros(tat) }, Ok(()))
    }
}

pub fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

pub fn duration(micros: i64) -> Duration {
    Duration::from_micros(u64::try_from(micros).unwrap_or(0))
}

/// A handle's failed sign-ins, as its state keeps them: `locks
/// locked_until last recent...`, microseconds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Failures {
    /// Locks so far.
    pub locks: u32,
    /// Until when it is locked (0: it is not).
    pub locked_until: i64,
    /// The last failure.
    pub last: i64,
    /// The last [`MAX_FAILURES`] failures within the window, oldest first.
    pub recent: Vec<i64>,
}

impl Failures {
    /// A state as [`Failures::attempt`] writes it (a state it cannot read
    /// counts as none).
    pub fn read(state: Option<&str>) -> Self {
        let Some(state) = state else { return Self::default() };
        let numbers: Option<Vec<i64>> = state.split(' ').map(|n| n.parse().ok()).collect();
        match numbers.as_deref() {
            Some([locks, locked_until, last, recent @ ..]) => Failures {
                locks: u32::try_from(*locks).unwrap_or(0),
                locked_until: *locked_until,
                last: *last,
                recent: recent.to_vec(),
            },
            _ => Self::default(),
        }
    }

    /// A sign-in at `now`: `Err(wait)` while locked (nothing changes);
    /// otherwise a failure recorded, locking the handle when it is one too
    /// many.
    pub fn attempt(mut self, now: Timestamp) -> (Change, Result<(), Duration>) {
        let now = now.as_micros();
        if self.locked_until > now {
            return (Change::Keep, Err(duration(self.locked_until - now)));
        }
        self.recent.retain(|t| now - t < micros(FAILURE_WINDOW));
        self.recent.push(now);
        if self.recent.len() > MAX_FAILURES {
            self.recent.remove(0);
        }
        self.last = now;
        if self.locks > 0 || self.recent.len() >= MAX_FAILURES {
            let lock = FIRST_LOCK.saturating_mul(1 << self.locks.min(16)).min(LONGEST_LOCK);
            self.locks += 1;
            self.locked_until = now + micros(lock);
        }
        let expires_at = self.locked_until.max(self.last.saturating_add(micros(REMEMBERED)));
        let mut state = format!("{} {} {}", self.locks, self.locked_until, self.last);
        for t in &self.recent {
            state.push_str(&format!(" {t}"));
        }
        (Change::Set { state, expires_at: Timestamp::from_micros(expires_at) }, Ok(()))
    }
}

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
    use super::*;

    #[test]
    fn the_memory_store_keeps_the_contract() {
        pollster::block_on(super::contract::suite(&super::MemoryThrottleStore::new()));
    }

    #[test]
    fn a_rate_passes_its_burst_then_one_call_every_interval() {
        let rate = Rate::per_minute(6, 3);
        let t0 = Timestamp::from_micros(1_000_000_000_000);
        let mut state = None;
        let at = |now: Timestamp, state: &mut Option<String>| {
            let (change, result) = rate.take(state.as_deref(), now);
            if let Change::Set { state: s, expires_at } = change {
                assert!(expires_at > now);
                *state = Some(s);
            }
            result
        };
        for i in 0..3 {
            assert_eq!(at(t0, &mut state), Ok(()), "{i}");
        }
        assert_eq!(at(t0, &mut state), Err(Duration::from_secs(10)), "the fourth waits one interval");
        assert_eq!(
            at(t0.plus_micros(micros(Duration::from_secs(4))), &mut state),
            Err(Duration::from_secs(6))
        );
        assert_eq!(at(t0.plus_micros(micros(Duration::from_secs(10))), &mut state), Ok(()));
        assert!(at(t0.plus_micros(micros(Duration::from_secs(10))), &mut state).is_err());
    }

    #[test]
    fn a_state_that_cannot_be_read_is_no_failures() {
        assert_eq!(Failures::read(Some("x")), Failures::default());
        assert_eq!(Failures::read(Some("1 2")), Failures::default());
        let (change, _) = Failures::default().attempt(Timestamp::from_micros(5));
        let Change::Set { state, .. } = change else { panic!("a failure is written") };
        assert_eq!(
            Failures::read(Some(&state)),
            Failures { locks: 0, locked_until: 0, last: 5, recent: vec![5] }
        );
    }
}
