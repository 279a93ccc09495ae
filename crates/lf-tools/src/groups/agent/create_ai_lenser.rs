use lf_agent::{AgentHandle, NewAgent};
use lf_core::{LenserId, LfError, LfResult, Principal};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{RuntimeIn, bio, display_name, headline, model, opt, persona};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAiLenserIn {
    /// 4 to 24 of a-z, 0-9 and _, unique among all lensers and agents.
    pub handle: String,
    /// 1 to 60 characters.
    pub display_name: String,
    /// Up to 500 characters.
    pub bio: Option<String>,
    /// Up to 120 characters.
    pub headline: Option<String>,
    /// Who it is when it answers (its system prompt), up to 4000 characters.
    pub persona: Option<String>,
    /// The model it asks for (default: the server's).
    pub model: Option<String>,
    /// cloud (default), local or hybrid.
    pub runtime_pref: Option<RuntimeIn>,
    /// Yourself (the default); the service may name any lenser.
    #[schemars(extend("format" = "uuid"))]
    pub owner_lenser_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct CreatedOut {
    pub ai_lenser_id: String,
    /// Its lenser profile (the same id).
    pub profile_id: String,
    pub handle: String,
    pub owner_lenser_id: String,
    pub status: &'static str,
}

pub struct CreateAiLenser;

impl Tool for CreateAiLenser {
    const NAME: &'static str = "create_ai_lenser";
    const TITLE: &'static str = "Create an AI Lenser";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Create an AI Lenser you own (at most 5 active). It does nothing until you grant it tools (assign_agent_tool) and, for battles, turn on its policy (update_ai_lenser).";
    const DIFFERS_FROM_SPEC: &'static str = "Takes bio, headline, persona, model and runtime_pref instead of ai_model_id; owner_lenser_id must be the caller unless the service calls.";
    type Input = CreateAiLenserIn;
    type Output = CreatedOut;

    async fn call(ctx: Ctx, i: CreateAiLenserIn) -> LfResult<CreatedOut> {
        let mut new = NewAgent::new(AgentHandle::parse(&i.handle)?, display_name(i.display_name)?);
        new.profile.bio = opt(i.bio, bio)?;
        new.profile.headline = opt(i.headline, headline)?;
        new.profile.persona = opt(i.persona, persona)?;
        new.profile.model = opt(i.model, model)?;
        if let Some(r) = i.runtime_pref {
            new.profile.runtime = r.into();
        }
        let owner =
            i.owner_lenser_id.as_deref().map(|s| LenserId::parse("owner_lenser_id", s)).transpose()?;
        let principal = match (owner, &ctx.principal) {
            (Some(o), Principal::Service { .. }) => Principal::Service { acting_as: Some(o) },
            (Some(o), p) if p.lenser() != Some(o) => {
                return Err(LfError::permission_denied(
                    "You create AI Lensers for yourself: leave owner_lenser_id out, or give your own id.",
                )
                .with_field("owner_lenser_id"));
            }
            (_, p) => p.clone(),
        };
        let a = ctx.services.agents.create(&principal, new).await?;
        Ok(CreatedOut {
            ai_lenser_id: a.id.to_string(),
            profile_id: a.id.to_string(),
            handle: a.handle.as_str().to_owned(),
            owner_lenser_id: a.owner.to_string(),
            status: "created",
        })
    }
}
