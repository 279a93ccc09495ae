use lf_core::LfResult;
use lf_workflow::profile::ProfileUpdate;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{ParametersIn, ProfileOut, VisibilityIn, profile_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateModelProfileIn {
    /// The profile.
    #[schemars(extend("format" = "uuid"))]
    pub profile_id: String,
    /// A new name.
    pub name: Option<String>,
    /// As on create.
    pub endpoint: Option<String>,
    /// The model the endpoint serves.
    pub model: Option<String>,
    /// Replaces all parameters.
    pub parameters: Option<ParametersIn>,
    /// Per million input tokens.
    #[schemars(range(min = 0))]
    pub price_per_million_input: Option<f64>,
    /// Per million output tokens.
    #[schemars(range(min = 0))]
    pub price_per_million_output: Option<f64>,
    /// Who may read and use it besides you.
    pub visibility: Option<VisibilityIn>,
}

pub struct UpdateModelProfile;

impl Tool for UpdateModelProfile {
    const NAME: &'static str = "update_model_profile";
    const TITLE: &'static str = "Update a model profile";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str =
        "Change your model profile: what you give replaces what it had, checked as on creation.";
    type Input = UpdateModelProfileIn;
    type Output = ProfileOut;

    async fn call(ctx: Ctx, i: UpdateModelProfileIn) -> LfResult<ProfileOut> {
        let id = profile_id(&i.profile_id)?;
        let update = ProfileUpdate {
            name: i.name,
            endpoint: i.endpoint,
            model: i.model,
            parameters: i.parameters.map(ParametersIn::parse).transpose()?,
            price_per_million_input: i.price_per_million_input,
            price_per_million_output: i.price_per_million_output,
            visibility: i.visibility.map(|v| v.as_str().to_owned()),
        };
        Ok(ProfileOut::saved(ctx.services.profiles.update(&ctx.principal, id, update).await?))
    }
}
