//! What the kv store keeps, checked once: keys, values, buckets.

use lf_core::{ErrorCode, LenserId, LfError, LfResult, Timestamp, WorkflowId};
use serde_json::Value;

/// The longest key, in characters (after a step fills its placeholders).
pub const MAX_KEY_CHARS: usize = 256;
/// The largest value, in bytes of its JSON text.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// The most live entries one owner keeps, over both namespaces.
pub const MAX_ENTRIES: u64 = 10_000;

lf_core::word_enum!(
    /// Which steps an entry belongs to: the kv steps' or the cache steps'.
    /// The two never see each other's entries.
    Namespace, "namespace", [
        Kv = "kv",
        Cache = "cache",
    ]
);

/// An entry's key: 1 to [`MAX_KEY_CHARS`] characters, no control
/// characters.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KvKey(String);

impl KvKey {
    pub fn parse(key: &str) -> LfResult<KvKey> {
        let chars = key.chars().count();
        if chars == 0 {
            return Err(
                LfError::invalid_argument("key is empty once its placeholders are filled").with_field("key")
            );
        }
        if chars > MAX_KEY_CHARS {
            return Err(LfError::invalid_argument(format!(
                "key is {chars} characters once its placeholders are filled, more than {MAX_KEY_CHARS}: {}",
                lf_core::clip(key, 60)
            ))
            .with_field("key"));
        }
        if key.chars().any(char::is_control) {
            return Err(LfError::invalid_argument("key holds a control character (a newline, a tab...)")
                .with_field("key"));
        }
        Ok(KvKey(key.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A value as stored: the JSON text of a value of at most
/// [`MAX_VALUE_BYTES`] bytes. Reading it gives back the value written,
/// its objects' key order included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvValue(String);

impl KvValue {
    pub fn new(value: &Value) -> LfResult<KvValue> {
        let text = value.to_string();
        if text.len() > MAX_VALUE_BYTES {
            return Err(LfError::invalid_argument(format!(
                "the value is {} bytes as JSON, more than {MAX_VALUE_BYTES}; store a smaller part of the input",
                text.len()
            ))
            .with_field("value_path"));
        }
        Ok(KvValue(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Which entry: an owner's key in one namespace.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId {
    pub owner: LenserId,
    pub namespace: Namespace,
    pub key: KvKey,
}

/// Whose passes a `rate_limit` step counts: one step of one workflow of
/// one owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bucket {
    pub owner: LenserId,
    pub workflow: WorkflowId,
    pub step: String,
}

/// What [`crate::kv::KvStore::pass`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Let through, and counted.
    Through,
    /// This attempt was let through before: let through again, not counted.
    Again,
    /// The window is full: the earliest moment a pass may go through.
    Full { frees_at: Timestamp },
}

/// SLOTS_FULL: the owner already keeps `max_entries` live entries.
pub fn store_full(max_entries: u64) -> LfError {
    LfError::new(
        ErrorCode::SlotsFull,
        format!(
            "the workflow owner's key-value store holds {max_entries} entries, its limit; \
             let some expire (ttl_seconds) or reuse keys"
        ),
    )
}
