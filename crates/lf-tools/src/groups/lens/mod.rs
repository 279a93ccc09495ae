//! The Lens tools: reusable prompt templates with `[[Parameter]]` tokens,
//! immutable semver versions, forks, visibility and search, over
//! [`lf_lens::LensService`]. One file per tool; `shapes` holds what several
//! of them share.

mod shapes;

mod archive_lens;
mod create_lens;
mod delete_lens;
mod diff_lens_versions;
mod extract_lens_params;
mod find_and_run_lens;
mod fork_lens;
mod get_lens;
mod get_lens_version;
mod list_lens_labels;
mod list_lens_versions;
mod list_lenses;
mod remove_lens_label;
mod restore_lens;
mod run_lens;
mod search_lenses;
mod set_lens_label;
mod set_lens_visibility;
mod update_lens;
mod validate_lens_params;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "lens",
    title: "Lens",
    description: "Reusable prompt templates: find, inspect, create, version, label, fork and run lenses.",
    by_default: true,
    tools: |g| {
        vec![
            declare::<list_lenses::ListLenses>(g),
            declare::<search_lenses::SearchLenses>(g),
            declare::<get_lens::GetLens>(g),
            declare::<list_lens_versions::ListLensVersions>(g),
            declare::<get_lens_version::GetLensVersion>(g),
            declare::<extract_lens_params::ExtractLensParams>(g),
            declare::<validate_lens_params::ValidateLensParams>(g),
            declare::<create_lens::CreateLens>(g),
            declare::<update_lens::UpdateLens>(g),
            declare::<fork_lens::ForkLens>(g),
            declare::<set_lens_visibility::SetLensVisibility>(g),
            declare::<run_lens::RunLens>(g),
            declare::<find_and_run_lens::FindAndRunLens>(g),
            declare::<archive_lens::ArchiveLens>(g),
            declare::<delete_lens::DeleteLens>(g),
            declare::<restore_lens::RestoreLens>(g),
            declare::<diff_lens_versions::DiffLensVersions>(g),
            declare::<list_lens_labels::ListLensLabels>(g),
            declare::<set_lens_label::SetLensLabel>(g),
            declare::<remove_lens_label::RemoveLensLabel>(g),
        ]
    },
};
