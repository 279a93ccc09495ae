//! The Eval tools: datasets of cases, over [`lf_eval::dataset::DatasetService`],
//! and experiments over them, over [`lf_eval::experiment::ExperimentService`].
//! What a case must be, whose a dataset is and what a version holds are
//! lf-eval's; these files adapt arguments and results. An opt-in group:
//! listed when named (`--toolsets default,eval`) or enabled.

pub(crate) mod experiment_shapes;
mod shapes;

mod add_dataset_cases;
mod archive_dataset;
mod cancel_experiment;
mod compare_experiments;
mod create_dataset;
mod get_dataset;
mod get_experiment;
mod list_datasets;
mod list_experiment_results;
mod run_experiment;

pub use compare_experiments::compare_changes;
pub(crate) use experiment_shapes::ExperimentViewOut;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "eval",
    title: "Eval",
    description: "Datasets: versioned cases; experiments ask model profiles every case and score the answers.",
    by_default: false,
    tools: |g| {
        vec![
            declare::<list_datasets::ListDatasets>(g),
            declare::<get_dataset::GetDataset>(g),
            declare::<create_dataset::CreateDataset>(g),
            declare::<add_dataset_cases::AddDatasetCases>(g),
            declare::<archive_dataset::ArchiveDataset>(g),
            declare::<run_experiment::RunExperiment>(g),
            declare::<get_experiment::GetExperiment>(g),
            declare::<list_experiment_results::ListExperimentResults>(g),
            declare::<cancel_experiment::CancelExperiment>(g),
            declare::<compare_experiments::CompareExperiments>(g),
        ]
    },
};
