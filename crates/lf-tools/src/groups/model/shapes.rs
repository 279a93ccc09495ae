//! What the Model tools share: a profile as answered, its parameters as given.

use lf_core::{LfError, LfResult, ModelProfileId};
use lf_workflow::profile::{MAX_TOKENS, ModelProfile, Parameters, ProfileView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A profile by id.
pub fn profile_id(s: &str) -> LfResult<ModelProfileId> {
    ModelProfileId::parse("profile_id", s)
}

/// Who may read a profile besides its owner.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VisibilityIn {
    Private,
    Public,
}

impl VisibilityIn {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Public => "public",
        }
    }
}

/// Sampling parameters; each unset one is the endpoint's default.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParametersIn {
    /// 0 to 2.
    #[schemars(range(min = 0, max = 2))]
    pub temperature: Option<f64>,
    /// Above 0, at most 1.
    #[schemars(range(max = 1))]
    pub top_p: Option<f64>,
    /// Most tokens an answer takes.
    #[schemars(range(min = 1, max = 1000000))]
    pub max_tokens: Option<i64>,
    /// For endpoints that sample reproducibly.
    pub seed: Option<i64>,
    /// Up to 4 stop sequences.
    pub stop: Option<Vec<String>>,
}

impl ParametersIn {
    pub fn parse(self) -> LfResult<Parameters> {
        let max_tokens = match self.max_tokens {
            None => None,
            Some(n) => {
                Some(u32::try_from(n).ok().filter(|n| (1..=MAX_TOKENS).contains(n)).ok_or_else(|| {
                    LfError::invalid_argument(format!(
                        "parameters.max_tokens must be between 1 and {MAX_TOKENS}."
                    ))
                    .with_field("parameters")
                })?)
            }
        };
        Parameters {
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens,
            seed: self.seed,
            stop: self.stop.unwrap_or_default(),
        }
        .check()
    }
}

/// A model profile. Never a connection's secret.
#[derive(Serialize, JsonSchema)]
pub struct ProfileOut {
    /// What a model field (agent, judge, model step) may name, as may its name.
    pub profile_id: String,
    pub name: String,
    /// Its owner; null for the operator's.
    pub owner_id: Option<String>,
    /// An operator endpoint's name, or connection:<ref>.
    pub endpoint: String,
    /// Null: the endpoint's configured model.
    pub model: Option<String>,
    pub parameters: Map<String, Value>,
    pub price_per_million_input: f64,
    pub price_per_million_output: f64,
    pub visibility: &'static str,
    pub archived_at: Option<String>,
}

impl ProfileOut {
    pub fn saved(p: ModelProfile) -> Self {
        Self {
            profile_id: p.id.to_string(),
            name: p.name.as_str().to_owned(),
            owner_id: Some(p.owner.to_string()),
            endpoint: p.endpoint.as_wire(),
            model: Some(p.model),
            parameters: p.parameters.to_object(),
            price_per_million_input: p.prices.per_million_input,
            price_per_million_output: p.prices.per_million_output,
            visibility: p.visibility.as_str(),
            archived_at: p.archived_at.map(|t| t.to_rfc3339()),
        }
    }

    pub fn of(view: ProfileView) -> Self {
        match view {
            ProfileView::Saved(p) => Self::saved(p),
            ProfileView::Operator(o) => Self {
                profile_id: o.profile_id().to_string(),
                name: o.name.clone(),
                owner_id: None,
                endpoint: o.name,
                model: o.model,
                parameters: Map::new(),
                price_per_million_input: 0.0,
                price_per_million_output: 0.0,
                visibility: "public",
                archived_at: None,
            },
        }
    }
}
