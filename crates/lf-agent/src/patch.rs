//! `update_ai_lenser`'s patch: every profile and policy field, each set
//! only when present (an optional field present as `None` clears it), and
//! what applying it changed. The original applied six profile keys and
//! silently ignored the rest; here every documented field applies, and the
//! answer names the fields whose value changed.

use lf_core::{LfError, LfResult};

use crate::model::{
    Agent, Bio, Cap, CreditLimit, DisplayName, Headline, ModelName, Persona, Policy, Profile, Runtime, WebUrl,
};

/// A change to an agent's profile and policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentPatch {
    pub display_name: Option<DisplayName>,
    pub bio: Option<Option<Bio>>,
    pub headline: Option<Option<Headline>>,
    pub persona: Option<Option<Persona>>,
    pub model: Option<Option<ModelName>>,
    pub runtime_pref: Option<Runtime>,
    pub avatar_url: Option<Option<WebUrl>>,
    pub website_url: Option<Option<WebUrl>>,
    pub can_join_battles: Option<bool>,
    pub can_vote: Option<bool>,
    pub can_create_battles: Option<bool>,
    pub can_move_protected_labels: Option<bool>,
    pub max_daily_battles: Option<Cap>,
    pub max_daily_votes: Option<Cap>,
    pub max_daily_team_runs: Option<Cap>,
    pub max_daily_tool_calls: Option<Cap>,
    pub spending_limit_credits: Option<CreditLimit>,
}

/// Every field a patch may set, profile fields first, as the tool names them.
pub const PATCH_FIELDS: &[&str] = &[
    "display_name",
    "bio",
    "headline",
    "persona",
    "model",
    "runtime_pref",
    "avatar_url",
    "website_url",
    "can_join_battles",
    "can_vote",
    "can_create_battles",
    "can_move_protected_labels",
    "max_daily_battles",
    "max_daily_votes",
    "max_daily_team_runs",
    "max_daily_tool_calls",
    "spending_limit_credits",
];

/// How many of [`PATCH_FIELDS`] are profile fields; the rest are policy.
const PROFILE_FIELDS: usize = 8;

/// Sets `*to = v` when given and different; notes `field` when it changed.
fn set<T: PartialEq>(to: &mut T, v: Option<T>, field: &'static str, changed: &mut Vec<&'static str>) {
    if let Some(v) = v
        && *to != v
    {
        *to = v;
        changed.push(field);
    }
}

impl AgentPatch {
    /// The fields it sets, changed or not, in [`PATCH_FIELDS`] order.
    pub fn fields(&self) -> Vec<&'static str> {
        let present = [
            self.display_name.is_some(),
            self.bio.is_some(),
            self.headline.is_some(),
            self.persona.is_some(),
            self.model.is_some(),
            self.runtime_pref.is_some(),
            self.avatar_url.is_some(),
            self.website_url.is_some(),
            self.can_join_battles.is_some(),
            self.can_vote.is_some(),
            self.can_create_battles.is_some(),
            self.can_move_protected_labels.is_some(),
            self.max_daily_battles.is_some(),
            self.max_daily_votes.is_some(),
            self.max_daily_team_runs.is_some(),
            self.max_daily_tool_calls.is_some(),
            self.spending_limit_credits.is_some(),
        ];
        PATCH_FIELDS.iter().zip(present).filter(|(_, p)| *p).map(|(f, _)| *f).collect()
    }

    /// Whether it sets a profile field.
    pub fn touches_profile(&self) -> bool {
        self.fields().iter().any(|f| PATCH_FIELDS[..PROFILE_FIELDS].contains(f))
    }

    /// Whether it sets a policy field (which only the owner may).
    pub fn touches_policy(&self) -> bool {
        self.fields().iter().any(|f| PATCH_FIELDS[PROFILE_FIELDS..].contains(f))
    }

    /// INVALID_ARGUMENT (field `patch`) for a patch that sets nothing.
    pub fn check_not_empty(&self) -> LfResult<()> {
        if self.fields().is_empty() {
            return Err(LfError::invalid_argument(format!(
                "patch must set at least one of {}.",
                PATCH_FIELDS.join(", ")
            ))
            .with_field("patch"));
        }
        Ok(())
    }

    /// Applies the patch to `agent`'s profile and policy; the fields whose
    /// value changed, in [`PATCH_FIELDS`] order.
    pub fn apply(self, agent: &mut Agent) -> Vec<&'static str> {
        let mut changed = Vec::new();
        let c = &mut changed;
        let Profile { display_name, bio, headline, persona, model, runtime, avatar_url, website_url } =
            &mut agent.profile;
        set(display_name, self.display_name, "display_name", c);
        set(bio, self.bio, "bio", c);
        set(headline, self.headline, "headline", c);
        set(persona, self.persona, "persona", c);
        set(model, self.model, "model", c);
        set(runtime, self.runtime_pref, "runtime_pref", c);
        set(avatar_url, self.avatar_url, "avatar_url", c);
        set(website_url, self.website_url, "website_url", c);
        let Policy {
            can_join_battles,
            can_vote,
            can_create_battles,
            can_move_protected_labels,
            max_daily_battles,
            max_daily_votes,
            max_daily_team_runs,
            max_daily_tool_calls,
            spending_limit_credits,
        } = &mut agent.policy;
        set(can_join_battles, self.can_join_battles, "can_join_battles", c);
        set(can_vote, self.can_vote, "can_vote", c);
        set(can_create_battles, self.can_create_battles, "can_create_battles", c);
        set(can_move_protected_labels, self.can_move_protected_labels, "can_move_protected_labels", c);
        set(max_daily_battles, self.max_daily_battles, "max_daily_battles", c);
        set(max_daily_votes, self.max_daily_votes, "max_daily_votes", c);
        set(max_daily_team_runs, self.max_daily_team_runs, "max_daily_team_runs", c);
        set(max_daily_tool_calls, self.max_daily_tool_calls, "max_daily_tool_calls", c);
        set(spending_limit_credits, self.spending_limit_credits, "spending_limit_credits", c);
        changed
    }
}
