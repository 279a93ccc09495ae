//! The Workflow tools: the spec's thirteen (its reads, create_workflow,
//! run_workflow and retry_workflow) and update_workflow, archive_workflow,
//! list_workflow_runs, cancel_workflow_run and rotate_webhook_secret, over
//! [`lf_workflow::WorkflowService`] and [`lf_workflow::run::RunService`],
//! and list_connections over [`lf_workflow::ConnectionService`].
//! The blueprint's checks, the validator, the node catalog, who may read,
//! start, cancel and retry what, and what a reader of someone else's
//! workflow sees are lf-workflow's; the runner runs what run_workflow
//! starts. These files adapt arguments and results.

mod run_shapes;
mod shapes;

/// A run's log in the order get_workflow_run_logs gives it (the pages' too).
pub use run_shapes::{Entry, entries};

mod archive_workflow;
mod cancel_workflow_run;
mod create_workflow;
mod describe_workflow;
mod describe_workflow_node_type;
mod get_workflow;
mod get_workflow_graph;
mod get_workflow_run_logs;
mod get_workflow_run_status;
mod list_connections;
mod list_workflow_node_types;
mod list_workflow_runs;
mod list_workflows;
mod retry_workflow;
mod rotate_webhook_secret;
mod run_workflow;
mod summarize_workflow;
mod update_workflow;
mod validate_workflow;

pub(crate) use get_workflow_run_status::RunStatusOut;

use crate::catalog::group::Group;
use crate::catalog::tool::declare;

pub static GROUP: Group = Group {
    id: "workflow",
    title: "Workflow",
    description: "Multi-step pipelines of a trigger, lens steps and tool steps: create, version, inspect and validate them against the node catalog, run them and follow their runs.",
    by_default: true,
    tools: |g| {
        vec![
            declare::<list_workflows::ListWorkflows>(g),
            declare::<get_workflow::GetWorkflow>(g),
            declare::<get_workflow_graph::GetWorkflowGraph>(g),
            declare::<describe_workflow::DescribeWorkflow>(g),
            declare::<list_workflow_node_types::ListWorkflowNodeTypes>(g),
            declare::<describe_workflow_node_type::DescribeWorkflowNodeType>(g),
            declare::<validate_workflow::ValidateWorkflow>(g),
            declare::<get_workflow_run_status::GetWorkflowRunStatus>(g),
            declare::<get_workflow_run_logs::GetWorkflowRunLogs>(g),
            declare::<summarize_workflow::SummarizeWorkflow>(g),
            declare::<create_workflow::CreateWorkflow>(g),
            declare::<run_workflow::RunWorkflow>(g),
            declare::<retry_workflow::RetryWorkflow>(g),
            declare::<update_workflow::UpdateWorkflow>(g),
            declare::<archive_workflow::ArchiveWorkflow>(g),
            declare::<list_connections::ListConnections>(g),
            declare::<list_workflow_runs::ListWorkflowRuns>(g),
            declare::<cancel_workflow_run::CancelWorkflowRun>(g),
            declare::<rotate_webhook_secret::RotateWebhookSecret>(g),
        ]
    },
};
