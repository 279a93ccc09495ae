//! The public contract suite every [`WebhookStore`] runs: the in-memory
//! store here, SQLite and PostgreSQL in lf-store. Secrets name workflows,
//! so the suite makes its workflows in the paired [`WorkflowStore`].
//!
//! ```text
//! lf_workflow::hook::contract::suite(hooks, workflows).await;
//! ```
//!
//! Each check uses fresh workflows, so the suite runs against a store that
//! already holds data and may run several times.

use std::sync::Arc;

use lf_core::LenserId;

use super::secret::{HookHash, WebhookSecret};
use super::store::{StoredHook, WebhookStore};
use crate::contract::Fixture;
use crate::model::Visibility;
use crate::store::WorkflowStore;

/// Runs every check against `hooks`, making workflows in `workflows`.
pub async fn suite(hooks: Arc<dyn WebhookStore>, workflows: Arc<dyn WorkflowStore>) {
    let (h, w) = (hooks.as_ref(), workflows.as_ref());
    first_secret_is_kept(h, w).await;
    replacing(h, w).await;
    one_secret_per_workflow(h, w).await;
}

fn hash() -> HookHash {
    WebhookSecret::generate().expect("the OS random generator").1
}

/// A workflow has no secret until one is added; a second add changes
/// nothing and says so.
async fn first_secret_is_kept(h: &dyn WebhookStore, w: &dyn WorkflowStore) {
    let mut fx = Fixture::new();
    let (wf, _) = fx.create(w, LenserId::new(), Visibility::Private).await;
    assert_eq!(h.webhook(wf.id).await.unwrap(), None, "no secret before one is added");
    let (first, at) = (hash(), fx.tick());
    assert!(h.add_webhook(wf.id, &first, at).await.unwrap(), "the first secret is added");
    let stored = h.webhook(wf.id).await.unwrap().expect("the secret is stored");
    assert_eq!(stored, StoredHook { workflow_id: wf.id, hash: first, created_at: at });
    assert!(!stored.hash.ct_eq(&hash()), "another secret does not match");
    let second = hash();
    assert!(!h.add_webhook(wf.id, &second, fx.tick()).await.unwrap(), "a second add is refused");
    assert_eq!(h.webhook(wf.id).await.unwrap().unwrap().hash, first, "and changes nothing");
}

/// A replacement takes the old secret's place at once; replacing on a
/// workflow with none records it.
async fn replacing(h: &dyn WebhookStore, w: &dyn WorkflowStore) {
    let mut fx = Fixture::new();
    let (wf, _) = fx.create(w, LenserId::new(), Visibility::Public).await;
    let old = hash();
    h.add_webhook(wf.id, &old, fx.tick()).await.unwrap();
    let (new, at) = (hash(), fx.tick());
    h.replace_webhook(wf.id, &new, at).await.unwrap();
    let stored = h.webhook(wf.id).await.unwrap().unwrap();
    assert!(stored.hash.ct_eq(&new) && !stored.hash.ct_eq(&old), "the old secret no longer matches");
    assert_eq!(stored.created_at, at);

    let (bare, _) = fx.create(w, LenserId::new(), Visibility::Private).await;
    let first = hash();
    h.replace_webhook(bare.id, &first, fx.tick()).await.unwrap();
    assert_eq!(h.webhook(bare.id).await.unwrap().unwrap().hash, first);
    assert!(!h.add_webhook(bare.id, &hash(), fx.tick()).await.unwrap(), "it counts as the first");
}

/// Each workflow has its own secret.
async fn one_secret_per_workflow(h: &dyn WebhookStore, w: &dyn WorkflowStore) {
    let mut fx = Fixture::new();
    let owner = LenserId::new();
    let (a, _) = fx.create(w, owner, Visibility::Private).await;
    let (b, _) = fx.create(w, owner, Visibility::Private).await;
    let (ha, hb) = (hash(), hash());
    h.add_webhook(a.id, &ha, fx.tick()).await.unwrap();
    assert_eq!(h.webhook(b.id).await.unwrap(), None, "another workflow's secret is not b's");
    h.add_webhook(b.id, &hb, fx.tick()).await.unwrap();
    h.replace_webhook(a.id, &hash(), fx.tick()).await.unwrap();
    assert_eq!(h.webhook(b.id).await.unwrap().unwrap().hash, hb, "replacing a's leaves b's");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryWorkflowStore;
    use crate::hook::MemoryWebhookStore;

    #[test]
    fn memory_store_passes() {
        pollster::block_on(suite(Arc::new(MemoryWebhookStore::new()), Arc::new(MemoryWorkflowStore::new())));
    }
}
