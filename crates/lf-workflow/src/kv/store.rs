//! The storage contract of the kv store. Implementations: [`super::MemoryKv`]
//! here, SQLite and PostgreSQL in lf-store. All of them run
//! [`super::contract::suite`].

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp};
use serde_json::Value;

use super::model::{Bucket, EntryId, KvValue, Pass};

/// Where the entries and rate-limit windows of workflow owners live.
///
/// Every method names the owner: no method reads or counts another
/// owner's rows, and the two namespaces never see each other. `now` is
/// the caller's clock: an entry whose `expires_at` is at or before `now`
/// is absent.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - SLOTS_FULL from [`KvStore::put`] when the owner already keeps
///   `max_entries` live entries and the entry is not one of them
///   ([`super::store_full`]); then nothing is written.
#[async_trait]
pub trait KvStore: Send + Sync {
    /// The live entry's value, exactly as written; `None` when there is
    /// none or it has expired.
    async fn get(&self, entry: &EntryId, now: Timestamp) -> LfResult<Option<Value>>;

    /// Writes the entry (replacing its value and expiry), to expire at
    /// `expires_at` (never when `None`), unless the owner already keeps
    /// `max_entries` live entries and `entry` is not one of them (the steps
    /// pass [`super::MAX_ENTRIES`]). Purges the owner's expired entries
    /// first.
    async fn put(
        &self,
        entry: &EntryId,
        value: &KvValue,
        expires_at: Option<Timestamp>,
        now: Timestamp,
        max_entries: u64,
    ) -> LfResult<()>;

    /// Counts a pass through `bucket` for the attempt `attempt_key`, if
    /// fewer than `limit` (at least 1) passes went through in the `window_micros`
    /// before `now`. Atomic: of concurrent callers (also through other
    /// processes on one database) no more than `limit` go through per
    /// window. An attempt already let through is [`Pass::Again`], not
    /// counted again; a full window says when its oldest pass leaves it.
    async fn pass(
        &self,
        bucket: &Bucket,
        attempt_key: &str,
        limit: u32,
        window_micros: i64,
        now: Timestamp,
    ) -> LfResult<Pass>;
}
