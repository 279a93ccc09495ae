use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;

use super::shapes::{LensIdIn, VersionSummaryOut, lens_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ListLensVersions;

#[derive(Serialize, JsonSchema)]
pub struct VersionListOut {
    pub lens_id: String,
    /// Newest first.
    pub versions: Vec<VersionSummaryOut>,
    pub count: usize,
}

impl Tool for ListLensVersions {
    const NAME: &'static str = "list_lens_versions";
    const TITLE: &'static str = "List lens versions";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str =
        "List a lens's versions, newest first, with semver, changelog and parameters.";
    const DIFFERS_FROM_SPEC: &'static str = "The spec answers a bare array of versions; MCP's structured content is one object, so the array is `versions`, beside `lens_id` and `count`.";
    type Input = LensIdIn;
    type Output = VersionListOut;

    async fn call(ctx: Ctx, i: LensIdIn) -> LfResult<VersionListOut> {
        let id = lens_id(&i.lens_id)?;
        let versions = ctx.services.lens.versions(&ctx.principal, id).await?;
        Ok(VersionListOut {
            lens_id: id.to_string(),
            count: versions.len(),
            versions: versions.iter().map(VersionSummaryOut::from).collect(),
        })
    }
}
