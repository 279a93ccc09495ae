//! The Eval tools: datasets of cases, over [`lf_eval::dataset::DatasetService`].
//! What a case must be, whose a dataset is and what a version holds are
//! lf-eval's; these files adapt arguments and results. An opt-in group:
//! listed when named (`--toolsets default,eval`) or enabled.

mod shapes;

mod add_dataset_cases;
mod archive_dataset;
mod create_dataset;
mod get_dataset;
mod list_datasets;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "eval",
    title: "Eval",
    description: "Datasets: versioned cases (lens inputs or prompts, expected answers, assertions) that experiments ask contenders.",
    by_default: false,
    tools: |g| {
        vec![
            declare::<list_datasets::ListDatasets>(g),
            declare::<get_dataset::GetDataset>(g),
            declare::<create_dataset::CreateDataset>(g),
            declare::<add_dataset_cases::AddDatasetCases>(g),
            declare::<archive_dataset::ArchiveDataset>(g),
        ]
    },
};
