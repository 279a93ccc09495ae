//! [`WebhookStore`] over either backend: the `workflow_webhooks` table of
//! `0010_webhooks.sql` (SQLite) and `0009_webhooks.sql` (PostgreSQL), one
//! row per workflow holding its secret's SHA-256, through the statements
//! of `sql`, the same on both. Every method is one statement.

pub(crate) mod rows;
pub(crate) mod sql;

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp, WorkflowId};
use lf_workflow::hook::{HookHash, StoredHook, WebhookStore};

use crate::conns::{Conns, on};

/// [`WebhookStore`] over either backend.
pub(crate) struct SqlWebhookStore {
    conns: Conns,
}

impl SqlWebhookStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl WebhookStore for SqlWebhookStore {
    async fn webhook(&self, workflow: WorkflowId) -> LfResult<Option<StoredHook>> {
        on!(&self.conns, reading, |conn| sql::get(conn, workflow))
    }

    async fn add_webhook(&self, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> LfResult<bool> {
        on!(&self.conns, write_one, |conn| sql::add(conn, workflow, hash, at))
    }

    async fn replace_webhook(&self, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::replace(conn, workflow, hash, at))
    }
}
