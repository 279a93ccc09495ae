//! The state workflow steps keep between runs, per workflow owner: the
//! entries of `kv_store_read` / `kv_store_write` and `cache_read` /
//! `cache_write`, and the windows of `rate_limit`.
//!
//! - Entries live in two [`Namespace`]s (`kv`, `cache`) that do not see
//!   each other, keyed by owner and [`KvKey`] (1 to [`MAX_KEY_CHARS`]
//!   characters). A value is a JSON value of at most [`MAX_VALUE_BYTES`]
//!   bytes as text ([`KvValue`]), read back exactly as written, key order
//!   included. An entry may expire: from its `expires_at` on it reads as
//!   absent, and a store purges an owner's expired entries when it next
//!   writes for them. An owner keeps at most [`MAX_ENTRIES`] live entries
//!   over both namespaces.
//! - A rate-limit [`Bucket`] (owner, workflow, step) lets at most `limit`
//!   passes through in any window of `window` microseconds
//!   ([`KvStore::pass`]); a pass names the attempt it is for, so the same
//!   attempt asking again (after a takeover) is not counted twice.
//!
//! Time comes in with each call (`now`): a store reads no clock, so tests
//! fix it.
//!
//! - `model.rs`: the checked key, value and bucket, the bounds;
//! - `store.rs`: [`KvStore`] and its contract;
//! - `memory.rs`: [`MemoryKv`];
//! - `contract.rs`: the suite every store runs.

pub mod contract;
mod memory;
mod model;
mod store;

pub use memory::MemoryKv;
pub use model::{
    Bucket, EntryId, KvKey, KvValue, MAX_ENTRIES, MAX_KEY_CHARS, MAX_VALUE_BYTES, Namespace, Pass, store_full,
};
pub use store::KvStore;
