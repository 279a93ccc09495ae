//! Webhook secrets in memory, for tests and for apps that embed the
//! services.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use lf_core::{LfResult, Timestamp, WorkflowId};

use super::secret::HookHash;
use super::store::{StoredHook, WebhookStore};

/// A [`WebhookStore`] in a mutex.
#[derive(Default)]
pub struct MemoryWebhookStore {
    hooks: Mutex<HashMap<WorkflowId, StoredHook>>,
}

impl MemoryWebhookStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn hooks(&self) -> std::sync::MutexGuard<'_, HashMap<WorkflowId, StoredHook>> {
        self.hooks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl WebhookStore for MemoryWebhookStore {
    async fn webhook(&self, workflow: WorkflowId) -> LfResult<Option<StoredHook>> {
        Ok(self.hooks().get(&workflow).cloned())
    }

    async fn add_webhook(&self, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> LfResult<bool> {
        let mut hooks = self.hooks();
        if hooks.contains_key(&workflow) {
            return Ok(false);
        }
        hooks.insert(workflow, StoredHook { workflow_id: workflow, hash: *hash, created_at: at });
        Ok(true)
    }

    async fn replace_webhook(&self, workflow: WorkflowId, hash: &HookHash, at: Timestamp) -> LfResult<()> {
        self.hooks().insert(workflow, StoredHook { workflow_id: workflow, hash: *hash, created_at: at });
        Ok(())
    }
}
