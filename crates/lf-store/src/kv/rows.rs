//! `kv_entries` and `rate_limit_passes` rows, as both backends read and
//! write them (see the `0009_kv.sql` / `0008_kv.sql` migrations): values
//! are JSON text, read back strictly.

use lf_core::{LfResult, Timestamp};
use lf_workflow::kv::{Bucket, EntryId, KvValue};
use serde_json::Value;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

/// The value of a `kv_entries` row, as `kv::sql::GET` selects it.
pub(crate) fn value(row: &impl Columns) -> LfResult<Value> {
    serde_json::from_str(row.text("value")?)
        .map_err(|e| corrupt(format!("kv_entries.value is not JSON ({e})")))
}

/// Binds an entry in the order of `kv::sql::UPSERT`.
pub(crate) fn bind_entry<Q: Bind>(
    q: Q,
    entry: &EntryId,
    value: &KvValue,
    expires_at: Option<Timestamp>,
    now: Timestamp,
) -> Q {
    bind_key(q, entry).put(value.as_str().to_owned()).put_opt_time(expires_at).put_time(now)
}

/// Binds an entry's key: `$1` to `$3`.
pub(crate) fn bind_key<Q: Bind>(q: Q, e: &EntryId) -> Q {
    q.put(e.owner.as_uuid()).put(e.namespace.as_str().to_owned()).put(e.key.as_str().to_owned())
}

/// Binds a bucket: `$1` to `$3`.
pub(crate) fn bind_bucket<Q: Bind>(q: Q, b: &Bucket) -> Q {
    q.put(b.owner.as_uuid()).put(b.workflow.as_uuid()).put(b.step.clone())
}
