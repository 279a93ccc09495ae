use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{WebhookOut, workflow_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct RotateWebhookSecret;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateWebhookSecretIn {
    /// Your workflow whose trigger is a webhook_trigger.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct RotatedOut {
    pub workflow_id: String,
    pub webhook: WebhookOut,
}

impl Tool for RotateWebhookSecret {
    const NAME: &'static str = "rotate_webhook_secret";
    const TITLE: &'static str = "Rotate a webhook secret";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str =
        "Make a new secret for your workflow's webhook, shown once; the old one stops working at once.";
    const DIFFERS_FROM_SPEC: &'static str = "Not in the hosted original's reference documents.";
    type Input = RotateWebhookSecretIn;
    type Output = RotatedOut;

    async fn call(ctx: Ctx, i: RotateWebhookSecretIn) -> LfResult<RotatedOut> {
        let id = workflow_id(&i.workflow_id)?;
        let issued = ctx.services.workflow.rotate_webhook_secret(&ctx.principal, id).await?;
        Ok(RotatedOut { workflow_id: id.to_string(), webhook: WebhookOut::from(issued) })
    }
}
