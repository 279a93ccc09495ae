//! The Model tools: model profiles, over [`lf_workflow::profile::ProfileService`].
//! What a profile must be, whose it is and what a model name means are
//! lf-workflow's; these files adapt arguments and results. An opt-in
//! group: listed when named (`--toolsets default,model`) or enabled.

mod shapes;

mod archive_model_profile;
mod create_model_profile;
mod list_model_profiles;
mod update_model_profile;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "model",
    title: "Model",
    description: "Model profiles: what to ask and where (an endpoint, a model, its parameters and prices), named wherever a model is.",
    by_default: false,
    tools: |g| {
        vec![
            declare::<list_model_profiles::ListModelProfiles>(g),
            declare::<create_model_profile::CreateModelProfile>(g),
            declare::<update_model_profile::UpdateModelProfile>(g),
            declare::<archive_model_profile::ArchiveModelProfile>(g),
        ]
    },
};
