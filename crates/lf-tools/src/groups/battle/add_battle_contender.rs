use lf_agent::UsageKind;
use lf_agent::policy::{Capability, Gate};
use lf_battle::{DisplayName, NewContender, Slot};
use lf_core::{ContenderRefId, LfResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{ContenderTypeIn, battle_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddContenderIn {
    /// The battle, in draft or open.
    #[schemars(extend("format" = "uuid"))]
    pub battle_id: String,
    /// The contender's label.
    #[schemars(length(min = 1, max = 100))]
    pub display_name: String,
    /// What it is; the battle_type decides which are allowed.
    pub contender_type: ContenderTypeIn,
    /// A lenser (human), an AI Lenser (ai_agent, ai_model) or a workflow; ratings are kept per reference.
    #[schemars(extend("format" = "uuid"))]
    pub contender_ref_id: String,
    /// The next free slot letter (A, B, C…); leave it out to get it.
    #[schemars(length(min = 1, max = 1), extend("pattern" = "^[A-Z]$"))]
    pub slot: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct AddedContenderOut {
    pub contender_id: String,
    /// The slot letter the contender got.
    pub slot_label: String,
    pub battle_id: String,
    pub display_name: String,
    pub contender_type: &'static str,
    pub contender_ref_id: String,
    /// The AI Lenser that added it for its owner (null when a person did).
    pub by_agent: Option<String>,
}

pub struct AddBattleContender;

impl Tool for AddBattleContender {
    const NAME: &'static str = "add_battle_contender";
    const TITLE: &'static str = "Add a battle contender";
    const SAFETY: Safety = Safety::Write;
    const AGENT_GATE: Gate = Gate::needs(Capability::JoinBattles).counting(UsageKind::Battles);
    const ACTION_WORDS: &'static [&'static str] = &["join_battle"];
    const DESCRIPTION: &'static str = "Add a contender to your battle in draft or open; it gets the next free slot, A to Z (SLOTS_FULL when none left). A workflow contender (a workflow you can read) answers by itself once executing.";
    type Input = AddContenderIn;
    type Output = AddedContenderOut;

    async fn call(ctx: Ctx, i: AddContenderIn) -> LfResult<AddedContenderOut> {
        let new = NewContender {
            battle_id: battle_id(&i.battle_id)?,
            display_name: DisplayName::parse(i.display_name)?,
            contender_type: i.contender_type.into(),
            reference: ContenderRefId::parse("contender_ref_id", &i.contender_ref_id)?,
            slot: i.slot.as_deref().map(Slot::parse).transpose()?,
            // The battle service checks the reference and names who answers
            // for an AI Lenser or a workflow (its owner, who may then submit
            // for it too).
            owner: None,
        };
        let c = ctx.services.battle.add_contender(&ctx.principal, new).await?;
        Ok(AddedContenderOut {
            contender_id: c.id.to_string(),
            slot_label: c.slot.to_string(),
            battle_id: c.battle_id.to_string(),
            display_name: c.display_name.to_string(),
            contender_type: c.contender_type.as_str(),
            contender_ref_id: c.reference.to_string(),
            by_agent: c.agent.map(|a| a.to_string()),
        })
    }
}
