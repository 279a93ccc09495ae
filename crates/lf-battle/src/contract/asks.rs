//! The contract every [`AskStore`] keeps: the in-memory store here, SQLite
//! and PostgreSQL in lf-store.
//!
//! ```text
//! lf_battle::contract::asks::suite(Arc::new(MyAskStore::open().await?)).await;
//! ```
//!
//! Fresh ids each run, so the suite runs against a store that holds data.

use std::sync::Arc;

use lf_core::{BattleId, ContenderId, Timestamp};

use crate::asks::{AskStore, Claim};

const SECOND: i64 = 1_000_000;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn AskStore>) {
    let s = store.as_ref();
    let (b, c) = (BattleId::new(), ContenderId::new());
    let t0 = Timestamp::from_micros(1_800_000_000 * SECOND);
    let at = |secs: i64| t0.plus_micros(secs * SECOND);
    assert_eq!(s.ask_record(b, c).await.unwrap(), None, "nothing before the first claim");

    assert_eq!(s.claim_ask(b, c, "one", at(0), at(10), 3).await.unwrap(), Claim::Attempt(1));
    let r = s.ask_record(b, c).await.unwrap().expect("recorded");
    assert_eq!((r.attempts, r.holder.as_str(), r.lease_until), (1, "one", at(10)));
    assert_eq!(
        s.claim_ask(b, c, "two", at(5), at(15), 3).await.unwrap(),
        Claim::Leased { until: at(10) },
        "another's unexpired lease keeps it out"
    );
    assert_eq!(
        s.claim_ask(b, c, "one", at(5), at(15), 3).await.unwrap(),
        Claim::Attempt(2),
        "the holder goes on"
    );
    assert!(s.renew_ask(b, c, "one", at(30)).await.unwrap());
    assert!(!s.renew_ask(b, c, "two", at(40)).await.unwrap(), "only the holder renews");
    assert_eq!(s.claim_ask(b, c, "two", at(20), at(50), 3).await.unwrap(), Claim::Leased { until: at(30) });

    // The holder died: once its lease expired another takes over.
    assert_eq!(s.claim_ask(b, c, "two", at(31), at(60), 3).await.unwrap(), Claim::Attempt(3));
    assert!(!s.renew_ask(b, c, "one", at(90)).await.unwrap(), "the old holder lost it");
    assert_eq!(s.claim_ask(b, c, "two", at(32), at(70), 3).await.unwrap(), Claim::Spent { attempts: 3 });
    assert_eq!(s.claim_ask(b, c, "three", at(61), at(90), 3).await.unwrap(), Claim::Spent { attempts: 3 });
    assert_eq!(s.ask_record(b, c).await.unwrap().unwrap().attempts, 3, "never more than the budget");

    // Another contender is another record; racing claims: one wins.
    let other = ContenderId::new();
    assert_eq!(s.ask_record(b, other).await.unwrap(), None);
    let names: Vec<String> = (0..8).map(|i| format!("racer{i}")).collect();
    let claims = names
        .iter()
        .map(|n| {
            Box::pin(async move { s.claim_ask(b, other, n, at(0), at(10), 3).await.unwrap() })
                as std::pin::Pin<Box<dyn std::future::Future<Output = Claim> + Send + '_>>
        })
        .collect();
    let won = lf_core::join_all(claims).await.into_iter().filter(|c| matches!(c, Claim::Attempt(_))).count();
    assert_eq!(won, 1, "one racer holds the lease");
    assert_eq!(s.ask_record(b, other).await.unwrap().unwrap().attempts, 1);
}
