use lf_core::LfResult;
use lf_workflow::profile::NewProfile;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{ParametersIn, ProfileOut, VisibilityIn};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateModelProfileIn {
    /// Unique among yours: letters, digits, . _ - : /
    pub name: String,
    /// An operator endpoint (list_model_profiles) or connection:<ref>, a saved openai_compatible connection of yours.
    #[schemars(extend("default" = "default"))]
    pub endpoint: Option<String>,
    /// The model the endpoint serves, e.g. gpt-4o-mini.
    pub model: String,
    /// Sampling parameters.
    pub parameters: Option<ParametersIn>,
    /// Per million input tokens.
    #[schemars(range(min = 0), extend("default" = 0))]
    pub price_per_million_input: Option<f64>,
    /// Per million output tokens.
    #[schemars(range(min = 0), extend("default" = 0))]
    pub price_per_million_output: Option<f64>,
    /// Who may read and use it besides you.
    #[schemars(extend("default" = "private"))]
    pub visibility: Option<VisibilityIn>,
}

pub struct CreateModelProfile;

impl Tool for CreateModelProfile {
    const NAME: &'static str = "create_model_profile";
    const TITLE: &'static str = "Create a model profile";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Save a model profile: what to ask and where. Its name or id then names a model wherever one is asked for (an agent's model, ai_judge_model_key, ai_model contenders).";
    type Input = CreateModelProfileIn;
    type Output = ProfileOut;

    async fn call(ctx: Ctx, i: CreateModelProfileIn) -> LfResult<ProfileOut> {
        let new = NewProfile {
            name: i.name,
            endpoint: i.endpoint.unwrap_or_else(|| lf_workflow::profile::DEFAULT_ENDPOINT.to_owned()),
            model: i.model,
            parameters: i.parameters.map(ParametersIn::parse).transpose()?.unwrap_or_default(),
            price_per_million_input: i.price_per_million_input.unwrap_or(0.0),
            price_per_million_output: i.price_per_million_output.unwrap_or(0.0),
            visibility: i.visibility.map(|v| v.as_str().to_owned()),
        };
        Ok(ProfileOut::saved(ctx.services.profiles.create(&ctx.principal, new).await?))
    }
}
