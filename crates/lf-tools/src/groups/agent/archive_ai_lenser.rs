use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::ai_lenser_id;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchiveAiLenserIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// true, once the user has agreed.
    #[schemars(extend("const" = true))]
    pub confirm: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct ArchivedAgentOut {
    pub ai_lenser_id: String,
    pub status: &'static str,
    pub archived_at: Option<String>,
}

pub struct ArchiveAiLenser;

impl Tool for ArchiveAiLenser {
    const NAME: &'static str = "archive_ai_lenser";
    const TITLE: &'static str = "Archive an AI Lenser";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str = "Retire your AI Lenser: it acts no more, frees a slot, its unfinished team runs are cancelled; profile, grants and logs stay readable. Needs confirm: true.";
    const DIFFERS_FROM_SPEC: &'static str = "Answers {ai_lenser_id, status, archived_at}.";
    type Input = ArchiveAiLenserIn;
    type Output = ArchivedAgentOut;

    async fn call(ctx: Ctx, i: ArchiveAiLenserIn) -> LfResult<ArchivedAgentOut> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        let a = ctx.services.agents.archive(&ctx.principal, id, i.confirm == Some(true)).await?;
        Ok(ArchivedAgentOut {
            ai_lenser_id: a.id.to_string(),
            status: a.status.as_str(),
            archived_at: a.archived_at.map(|t| t.to_rfc3339()),
        })
    }
}
