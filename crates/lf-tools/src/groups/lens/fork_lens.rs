use lf_core::{LensId, LfResult};
use lf_lens::{TemplateBody, Title, Visibility};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::{LensWithVersionOut, VisibilityIn};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ForkLens;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkLensIn {
    /// The lens to fork: any lens you can read.
    #[schemars(extend("format" = "uuid"))]
    pub source_lens_id: String,
    /// Title of the fork (default "Fork of <source title>").
    #[schemars(length(min = 1, max = 200))]
    pub title: Option<String>,
    /// A template to use instead of the source's.
    #[schemars(length(min = 50, max = 100000))]
    pub template_body: Option<String>,
    /// Who may see the fork.
    #[schemars(extend("default" = "public"))]
    pub visibility: Option<VisibilityIn>,
}

#[derive(Serialize, JsonSchema)]
pub struct ForkOut {
    #[serde(flatten)]
    pub lens: LensWithVersionOut,
    /// The source lens.
    pub forked_from: String,
}

impl Tool for ForkLens {
    const NAME: &'static str = "fork_lens";
    const TITLE: &'static str = "Fork a lens";
    const SAFETY: Safety = Safety::Write;
    const DESCRIPTION: &'static str = "Copy a lens you can read (or its template with your changes) into a new lens you own, recording where it came from.";
    type Input = ForkLensIn;
    type Output = ForkOut;

    async fn call(ctx: Ctx, i: ForkLensIn) -> LfResult<ForkOut> {
        let fork = lf_lens::ForkLens {
            source: LensId::parse("source_lens_id", &i.source_lens_id)?,
            title: i.title.map(Title::parse).transpose()?,
            body: i.template_body.map(TemplateBody::parse).transpose()?,
            visibility: i.visibility.map_or(Visibility::Public, Into::into),
        };
        let source = fork.source;
        let view = ctx.services.lens.fork(&ctx.principal, fork).await?;
        Ok(ForkOut { lens: LensWithVersionOut::of(&view), forked_from: source.to_string() })
    }
}
