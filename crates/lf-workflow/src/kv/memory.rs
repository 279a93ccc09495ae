//! The kv store in memory, for tests and for apps that embed the engine.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp};
use serde_json::Value;

use super::model::{Bucket, EntryId, KvValue, Pass, store_full};
use super::store::KvStore;

struct Entry {
    value: Value,
    expires_at: Option<Timestamp>,
}

impl Entry {
    fn live(&self, now: Timestamp) -> bool {
        self.expires_at.is_none_or(|e| e > now)
    }
}

#[derive(Default)]
struct Tables {
    entries: HashMap<EntryId, Entry>,
    /// Each bucket's passes: the attempt key and when it went through.
    passes: HashMap<Bucket, Vec<(String, Timestamp)>>,
}

/// [`KvStore`] in memory.
#[derive(Default)]
pub struct MemoryKv {
    tables: Mutex<Tables>,
}

impl MemoryKv {
    pub fn new() -> Self {
        Self::default()
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl KvStore for MemoryKv {
    async fn get(&self, entry: &EntryId, now: Timestamp) -> LfResult<Option<Value>> {
        let t = self.tables();
        Ok(t.entries.get(entry).filter(|e| e.live(now)).map(|e| e.value.clone()))
    }

    async fn put(
        &self,
        entry: &EntryId,
        value: &KvValue,
        expires_at: Option<Timestamp>,
        now: Timestamp,
        max_entries: u64,
    ) -> LfResult<()> {
        let mut t = self.tables();
        let owner = entry.owner;
        t.entries.retain(|id, e| id.owner != owner || e.live(now));
        if !t.entries.contains_key(entry)
            && t.entries.keys().filter(|id| id.owner == owner).count() as u64 >= max_entries
        {
            return Err(store_full(max_entries));
        }
        // Read back as the SQL stores do: from the text written.
        let value = serde_json::from_str(value.as_str()).map_err(lf_core::LfError::internal)?;
        t.entries.insert(entry.clone(), Entry { value, expires_at });
        Ok(())
    }

    async fn pass(
        &self,
        bucket: &Bucket,
        attempt_key: &str,
        limit: u32,
        window_micros: i64,
        now: Timestamp,
    ) -> LfResult<Pass> {
        let limit = limit.max(1);
        let mut t = self.tables();
        let passes = t.passes.entry(bucket.clone()).or_default();
        if passes.iter().any(|(k, _)| k == attempt_key) {
            return Ok(Pass::Again);
        }
        let start = now.plus_micros(-window_micros);
        passes.retain(|(_, at)| *at > start);
        if (passes.len() as u64) < u64::from(limit) {
            passes.push((attempt_key.to_owned(), now));
            return Ok(Pass::Through);
        }
        let mut times: Vec<Timestamp> = passes.iter().map(|(_, at)| *at).collect();
        times.sort();
        // With more passes than `limit` (a lowered limit), the window frees
        // up once enough of them have left it.
        let frees = times[passes.len() - limit as usize];
        Ok(Pass::Full { frees_at: frees.plus_micros(window_micros) })
    }
}
