//! The storage contract of webhook secrets. Implementations:
//! [`super::MemoryWebhookStore`] here, SQLite and PostgreSQL in lf-store.
//! All of them run [`super::contract::suite`].

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp, WorkflowId};

use super::secret::HookHash;

/// A workflow's webhook secret, as stored: its hash.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredHook {
    pub workflow_id: WorkflowId,
    pub hash: HookHash,
    /// When this secret was made (at creation or the last rotation).
    pub created_at: Timestamp,
}

/// Where each workflow's webhook secret is kept: one per workflow, as its
/// hash only. Callers name workflows of the paired [`crate::WorkflowStore`];
/// who may read or change a secret is the service's business.
///
/// Errors every implementation MUST return: none of its own (a failure of
/// the database is INTERNAL).
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// The workflow's secret, if it has one.
    async fn webhook(&self, workflow: WorkflowId) -> LfResult<Option<StoredHook>>;

    /// Records a workflow's first secret. `false`, and nothing written,
    /// when it already has one: of racing first secrets one is kept.
    async fn add_webhook(&self, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> LfResult<bool>;

    /// Replaces the workflow's secret (or records its first): the old one
    /// no longer matches from this write on.
    async fn replace_webhook(&self, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> LfResult<()>;
}
