use lf_core::LfResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shapes::lens_id;
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct DeleteLens;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteLensIn {
    /// The lens to delete.
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: String,
    /// true, once the user has agreed to the deletion.
    #[schemars(required, extend("const" = true))]
    pub confirm: Option<bool>,
}

#[derive(Serialize, JsonSchema)]
pub struct DeleteOut {
    pub deleted: bool,
    pub lens_id: String,
    pub deleted_at: String,
}

impl Tool for DeleteLens {
    const NAME: &'static str = "delete_lens";
    const TITLE: &'static str = "Delete a lens";
    const SAFETY: Safety = Safety::Destructive;
    const DESCRIPTION: &'static str =
        "Delete your lens: it disappears from every read. Needs confirm: true once the user has agreed.";
    type Input = DeleteLensIn;
    type Output = DeleteOut;

    async fn call(ctx: Ctx, i: DeleteLensIn) -> LfResult<DeleteOut> {
        let id = lens_id(&i.lens_id)?;
        let (lens, at) = ctx.services.lens.delete(&ctx.principal, id, i.confirm == Some(true)).await?;
        Ok(DeleteOut { deleted: true, lens_id: lens.id.to_string(), deleted_at: at.to_rfc3339() })
    }
}
