//! What a workflow asks of lenses, answered by lf-lens: lf-workflow does
//! not depend on lf-lens (see `lf_workflow::LensLookup`), so the
//! composition root joins them.

use async_trait::async_trait;
use lf_core::{LabelName, LensId, LfResult, Reach, VersionId};
use lf_lens::{LensService, VersionSelector};
use lf_workflow::{LensFacts, LensLookup, LensParam};

/// [`LensLookup`] over the lens store: the lens and version as `reach`
/// reads them, so a workflow step can only name a lens its author can
/// read (NOT_FOUND otherwise, as for any lens read).
#[derive(Clone)]
pub struct WorkflowLenses(LensService);

impl WorkflowLenses {
    pub fn new(lenses: LensService) -> Self {
        Self(lenses)
    }
}

#[async_trait]
impl LensLookup for WorkflowLenses {
    async fn lens(&self, reach: Reach, lens_id: LensId, version: Option<VersionId>) -> LfResult<LensFacts> {
        let which = version.map_or(VersionSelector::Head, VersionSelector::Id);
        let (lens, v) = self.0.store().get_lens_and_version(reach, lens_id, which).await?;
        Ok(LensFacts {
            lens_id,
            version_id: v.id,
            title: lens.title.to_string(),
            // A parameter with a default needs no value either.
            params: v
                .params
                .iter()
                .map(|p| LensParam { label: p.label.clone(), optional: p.optional || p.default.is_some() })
                .collect(),
            missing_label: None,
        })
    }

    async fn labels(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<(LabelName, VersionId)>> {
        let labels = self.0.store().list_labels(reach, lens_id).await?;
        Ok(labels.into_iter().map(|l| (l.name, l.version.id)).collect())
    }
}
