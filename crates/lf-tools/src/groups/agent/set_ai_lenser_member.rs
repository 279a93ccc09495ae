use lf_agent::Role;
use lf_core::{LenserId, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{MemberOut, ai_lenser_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

/// co_owner: edits the profile, grants tools, decides approvals. operator: runs it. none: removes them.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberRoleIn {
    CoOwner,
    Operator,
    None,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAiLenserMemberIn {
    /// The AI Lenser (yours).
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// The person.
    #[schemars(extend("format" = "uuid"))]
    pub lenser_id: String,
    /// co_owner, operator, or none to remove them.
    pub role: MemberRoleIn,
}

#[derive(Serialize, JsonSchema)]
pub struct MembersOut {
    pub ai_lenser_id: String,
    pub members: Vec<MemberOut>,
}

pub struct SetAiLenserMember;

impl Tool for SetAiLenserMember {
    const NAME: &'static str = "set_ai_lenser_member";
    const TITLE: &'static str = "Set an AI Lenser's member";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str =
        "Make a person a co_owner or operator of your AI Lenser, change their role, or remove them (none).";
    const DIFFERS_FROM_SPEC: &'static str = "Not in the hosted original's reference documents.";
    type Input = SetAiLenserMemberIn;
    type Output = MembersOut;

    async fn call(ctx: Ctx, i: SetAiLenserMemberIn) -> LfResult<MembersOut> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        let lenser = LenserId::parse("lenser_id", &i.lenser_id)?;
        let agents = &ctx.services.agents;
        let role = match i.role {
            MemberRoleIn::CoOwner => Some(Role::CoOwner),
            MemberRoleIn::Operator => Some(Role::Operator),
            MemberRoleIn::None => None,
        };
        let agent = match role {
            Some(role) => agents.add_member(&ctx.principal, id, lenser, role).await?,
            None => {
                agents.remove_member(&ctx.principal, id, lenser).await?;
                agents.get(&ctx.principal, id).await?.agent
            }
        };
        Ok(MembersOut { ai_lenser_id: id.to_string(), members: MemberOut::of(&agent) })
    }
}
