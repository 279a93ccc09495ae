use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Deserialize;

use super::shapes::{ProfileOut, profile_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchiveModelProfileIn {
    /// The profile.
    #[schemars(extend("format" = "uuid"))]
    pub profile_id: String,
    /// true, once the user has agreed.
    #[schemars(extend("const" = true))]
    pub confirm: Option<bool>,
}

pub struct ArchiveModelProfile;

impl Tool for ArchiveModelProfile {
    const NAME: &'static str = "archive_model_profile";
    const TITLE: &'static str = "Archive a model profile";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str = "Retire your model profile: it is no longer listed, named or used; what recorded it keeps its id. Needs confirm: true.";
    type Input = ArchiveModelProfileIn;
    type Output = ProfileOut;

    async fn call(ctx: Ctx, i: ArchiveModelProfileIn) -> LfResult<ProfileOut> {
        let id = profile_id(&i.profile_id)?;
        let p = ctx.services.profiles.archive(&ctx.principal, id, i.confirm == Some(true)).await?;
        Ok(ProfileOut::saved(p))
    }
}
