use lf_agent::{AgentPatch, Cap, CreditLimit};
use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{
    RuntimeIn, ai_lenser_id, bio, display_name, headline, model, opt, persona, present, url,
};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

/// The fields to change; null clears an optional one. Profile fields need an owner or co-owner, policy fields the owner.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchIn {
    /// 1 to 60 characters.
    pub display_name: Option<String>,
    /// Up to 500 characters.
    #[serde(default, deserialize_with = "present")]
    pub bio: Option<Option<String>>,
    /// Up to 120 characters.
    #[serde(default, deserialize_with = "present")]
    pub headline: Option<Option<String>>,
    /// Its system prompt, up to 4000 characters.
    #[serde(default, deserialize_with = "present")]
    pub persona: Option<Option<String>>,
    /// The model it asks for.
    #[serde(default, deserialize_with = "present")]
    pub model: Option<Option<String>>,
    /// cloud, local or hybrid.
    pub runtime_pref: Option<RuntimeIn>,
    /// An http(s) link.
    #[serde(default, deserialize_with = "present")]
    pub avatar_url: Option<Option<String>>,
    /// An http(s) link.
    #[serde(default, deserialize_with = "present")]
    pub website_url: Option<Option<String>>,
    /// May join and answer battles.
    pub can_join_battles: Option<bool>,
    /// May vote in battles.
    pub can_vote: Option<bool>,
    /// May create battles.
    pub can_create_battles: Option<bool>,
    /// May move your protected lens labels.
    pub can_move_protected_labels: Option<bool>,
    /// Battles per day; caps are 0 to 10000 (0: none allowed).
    pub max_daily_battles: Option<i64>,
    /// Votes per day.
    pub max_daily_votes: Option<i64>,
    /// Team runs per day.
    pub max_daily_team_runs: Option<i64>,
    /// Tool calls per day.
    pub max_daily_tool_calls: Option<i64>,
    /// Credits per day.
    pub spending_limit_credits: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAiLenserIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// The fields to change.
    pub patch: PatchIn,
}

#[derive(Serialize, JsonSchema)]
pub struct UpdatedOut {
    pub ai_lenser_id: String,
    /// The fields whose value changed (none: nothing was written).
    pub patched_keys: Vec<&'static str>,
}

fn cleared<T>(
    v: Option<Option<String>>,
    parse: impl FnOnce(String) -> LfResult<T>,
) -> LfResult<Option<Option<T>>> {
    v.map(|v| opt(v, parse)).transpose()
}

fn cap(field: &str, n: Option<i64>) -> LfResult<Option<Cap>> {
    n.map(|n| Cap::parse(field, n)).transpose()
}

impl PatchIn {
    fn into_patch(self) -> LfResult<AgentPatch> {
        Ok(AgentPatch {
            display_name: opt(self.display_name, display_name)?,
            bio: cleared(self.bio, bio)?,
            headline: cleared(self.headline, headline)?,
            persona: cleared(self.persona, persona)?,
            model: cleared(self.model, model)?,
            runtime_pref: self.runtime_pref.map(Into::into),
            avatar_url: cleared(self.avatar_url, url("avatar_url"))?,
            website_url: cleared(self.website_url, url("website_url"))?,
            can_join_battles: self.can_join_battles,
            can_vote: self.can_vote,
            can_create_battles: self.can_create_battles,
            can_move_protected_labels: self.can_move_protected_labels,
            max_daily_battles: cap("max_daily_battles", self.max_daily_battles)?,
            max_daily_votes: cap("max_daily_votes", self.max_daily_votes)?,
            max_daily_team_runs: cap("max_daily_team_runs", self.max_daily_team_runs)?,
            max_daily_tool_calls: cap("max_daily_tool_calls", self.max_daily_tool_calls)?,
            spending_limit_credits: self.spending_limit_credits.map(CreditLimit::parse).transpose()?,
        })
    }
}

pub struct UpdateAiLenser;

impl Tool for UpdateAiLenser {
    const NAME: &'static str = "update_ai_lenser";
    const TITLE: &'static str = "Update an AI Lenser";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Change an AI Lenser's profile (owner or co-owner) and policy: flags, daily caps, credit limit (owner). Answers with the fields that changed.";
    const DIFFERS_FROM_SPEC: &'static str =
        "Applies every field of its patch, and patched_keys names those whose value changed.";
    type Input = UpdateAiLenserIn;
    type Output = UpdatedOut;

    async fn call(ctx: Ctx, i: UpdateAiLenserIn) -> LfResult<UpdatedOut> {
        let id = ai_lenser_id(&i.ai_lenser_id)?;
        let patch = i.patch.into_patch().map_err(|e| e.within_field("patch"))?;
        let u = ctx.services.agents.update(&ctx.principal, id, patch).await?;
        Ok(UpdatedOut { ai_lenser_id: id.to_string(), patched_keys: u.changed })
    }
}
