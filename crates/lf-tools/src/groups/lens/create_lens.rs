use lf_core::LfResult;
use lf_lens::{NewLens, TemplateBody, Title, Visibility};
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{LensWithVersionOut, ParamIn, VisibilityIn, optional_description};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct CreateLens;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLensIn {
    /// Display name.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// The prompt template: [[Name]] is a required parameter, [[Name!]] an optional one, [[Name:type]] a typed one; \[[ is a literal [[.
    #[schemars(length(min = 50, max = 100000))]
    pub template_body: String,
    /// What the lens is for.
    #[schemars(length(max = 2000))]
    pub description: Option<String>,
    /// Who may see it.
    #[schemars(extend("default" = "public"))]
    pub visibility: Option<VisibilityIn>,
    /// Refinements of the parameters inferred from the template.
    #[schemars(length(max = 500))]
    pub params: Option<Vec<ParamIn>>,
}

impl Tool for CreateLens {
    const NAME: &'static str = "create_lens";
    const TITLE: &'static str = "Create a lens";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Create a lens from a prompt template whose [[Name]], [[Name!]] (optional) and [[Name:type]] tokens are its parameters. The first version is 1.0.0.";
    type Input = CreateLensIn;
    type Output = LensWithVersionOut;

    async fn call(ctx: Ctx, i: CreateLensIn) -> LfResult<LensWithVersionOut> {
        let new = NewLens {
            title: Title::parse(i.title)?,
            description: optional_description(i.description)?,
            body: TemplateBody::parse(i.template_body)?,
            visibility: i.visibility.map_or(Visibility::Public, Into::into),
            params: i.params.unwrap_or_default().into_iter().map(Into::into).collect(),
        };
        let view = ctx.services.lens.create(&ctx.principal, new).await?;
        Ok(LensWithVersionOut::of(&view))
    }
}
