//! The statements of [`lf_workflow::hook::WebhookStore`] and the code that
//! runs them, the same on both backends. A first secret and a replacement
//! are each one upsert on the workflow's row (`ON CONFLICT`, spelled alike
//! by both), so racing first secrets keep one and a rotation is whole.

use lf_core::{LfResult, Timestamp, WorkflowId};
use lf_workflow::hook::{HookHash, StoredHook};

use super::rows::{bind_hook, hook};
use crate::dialect::{Bind, Conn, execute, query, row_of};

const GET: &str = "SELECT workflow_id, secret_hash, created_at FROM workflow_webhooks WHERE workflow_id = $1";
const ADD: &str = "INSERT INTO workflow_webhooks (workflow_id, secret_hash, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (workflow_id) DO NOTHING";
const REPLACE: &str = "INSERT INTO workflow_webhooks (workflow_id, secret_hash, created_at) VALUES ($1, $2, $3) \
     ON CONFLICT (workflow_id) DO UPDATE SET secret_hash = excluded.secret_hash, created_at = excluded.created_at";

pub(crate) async fn get<C: Conn>(conn: &mut C, workflow: WorkflowId) -> LfResult<Option<StoredHook>> {
    row_of(conn, query(GET).put(workflow.as_uuid()), hook).await
}

pub(crate) async fn add<C: Conn>(
    conn: &mut C,
    w: WorkflowId,
    hash: &HookHash,
    at: Timestamp,
) -> LfResult<bool> {
    Ok(execute(conn, bind_hook(query(ADD), w, hash, at)).await? == 1)
}

pub(crate) async fn replace<C: Conn>(
    conn: &mut C,
    w: WorkflowId,
    hash: &HookHash,
    at: Timestamp,
) -> LfResult<()> {
    execute(conn, bind_hook(query(REPLACE), w, hash, at)).await.map(|_| ())
}
