//! [`KvStore`] over either backend: the tables of `0009_kv.sql` (SQLite)
//! and `0008_kv.sql` (PostgreSQL), through the statements of `sql`, the
//! same on both. A read is one statement; a write and a rate-limit pass
//! are one write transaction each (see [`crate::conns`]). Why concurrent
//! writes keep the bounds is in `sql`.

pub(crate) mod rows;
pub(crate) mod sql;

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp};
use lf_workflow::kv::{Bucket, EntryId, KvStore, KvValue, Pass};
use serde_json::Value;

use crate::conns::{Conns, on};

/// [`KvStore`] over either backend.
pub(crate) struct SqlKvStore {
    conns: Conns,
}

impl SqlKvStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl KvStore for SqlKvStore {
    async fn get(&self, entry: &EntryId, now: Timestamp) -> LfResult<Option<Value>> {
        on!(&self.conns, reading, |conn| sql::get(conn, entry, now))
    }

    async fn put(
        &self,
        entry: &EntryId,
        value: &KvValue,
        expires_at: Option<Timestamp>,
        now: Timestamp,
        max_entries: u64,
    ) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::put(conn, entry, value, expires_at, now, max_entries))
    }

    async fn pass(
        &self,
        bucket: &Bucket,
        attempt_key: &str,
        limit: u32,
        window_micros: i64,
        now: Timestamp,
    ) -> LfResult<Pass> {
        on!(&self.conns, write, |conn| sql::pass(conn, bucket, attempt_key, limit, window_micros, now))
    }
}
