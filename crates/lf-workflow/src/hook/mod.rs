//! Webhooks: how an outside system starts a run of a workflow whose head
//! version's trigger is a `webhook_trigger`, by `POST /hooks/{workflow_id}`
//! on the HTTP server (the stdio server has no HTTP, hence no webhooks).
//! The credential is the workflow's webhook secret, never an OAuth token.
//!
//! - `secret.rs`: [`WebhookSecret`] (made from 32 bytes of the OS random
//!   generator, `lfwh_` + 64 lowercase hex digits, wiped on drop, never
//!   printed) and [`HookHash`], its SHA-256, the only form stored,
//!   compared in constant time;
//! - `store.rs`: [`WebhookStore`] and its contract; `memory.rs`:
//!   [`MemoryWebhookStore`]; `contract.rs`: the suite every store runs.
//!
//! The use cases are the services': [`crate::WorkflowService`] issues a
//! secret when a workflow first gets a webhook trigger (in the result of
//! create or update, the only time it is shown), rotates it for the owner,
//! and checks a presented one; [`crate::run::RunService::start_from_webhook`]
//! starts the run as the workflow's owner.
//!
//! A wrong or missing secret, an unknown or archived workflow, and a head
//! version whose trigger is not a webhook trigger are one refusal
//! ([`hook_refused`]): a caller cannot learn which workflow ids exist.

pub mod contract;
mod memory;
mod secret;
mod store;

use lf_core::{ErrorCode, LfError, WorkflowId};

pub use memory::MemoryWebhookStore;
pub use secret::{HookHash, WEBHOOK_SECRET_PREFIX, WebhookSecret, is_webhook_secret};
pub use store::{StoredHook, WebhookStore};

/// The node type whose workflows have a webhook.
pub const WEBHOOK_TRIGGER: &str = "webhook_trigger";

/// The request header that carries the secret (`Authorization: Bearer` is
/// accepted too).
pub const WEBHOOK_SECRET_HEADER: &str = "X-Webhook-Secret";

/// The path of a workflow's webhook on the HTTP server.
pub fn hook_path(id: WorkflowId) -> String {
    format!("/hooks/{id}")
}

/// A secret just made: shown to the owner once, in the answer that made it.
#[derive(Clone, Debug, PartialEq)]
pub struct IssuedWebhook {
    pub workflow_id: WorkflowId,
    pub secret: WebhookSecret,
}

impl IssuedWebhook {
    pub fn path(&self) -> String {
        hook_path(self.workflow_id)
    }
}

/// The one refusal of a webhook call (PERMISSION_DENIED), whatever was
/// wrong: the secret, the workflow, or its trigger.
pub fn hook_refused() -> LfError {
    LfError::new(
        ErrorCode::PermissionDenied,
        "The webhook secret is missing or wrong, or this URL starts no workflow. Send the workflow's secret in X-Webhook-Secret (or Authorization: Bearer); its owner can make a new one with rotate_webhook_secret.",
    )
}
