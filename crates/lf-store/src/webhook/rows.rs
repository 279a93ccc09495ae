//! `workflow_webhooks` rows, as both backends read and write them (see the
//! `0010_webhooks.sql` / `0009_webhooks.sql` migrations): the hash is 32
//! bytes, checked again when read back.

use lf_core::{LfResult, Timestamp, WorkflowId};
use lf_workflow::hook::{HookHash, StoredHook};

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

/// A `workflow_webhooks` row, as `webhook::sql` selects it.
pub(crate) fn hook(row: &impl Columns) -> LfResult<StoredHook> {
    let bytes: Vec<u8> = row.value("secret_hash")?;
    Ok(StoredHook {
        workflow_id: WorkflowId::from_uuid(row.value("workflow_id")?),
        hash: HookHash::from_slice(&bytes)
            .ok_or_else(|| corrupt("workflow_webhooks.secret_hash is not 32 bytes"))?,
        created_at: row.time("created_at")?,
    })
}

/// Binds a `workflow_webhooks` row in the order of `webhook::sql`'s inserts.
pub(crate) fn bind_hook<Q: Bind>(q: Q, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> Q {
    q.put(workflow.as_uuid()).put(hash.as_bytes().to_vec()).put_time(at)
}
