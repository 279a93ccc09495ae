//! The Workflow tools: the spec's seven reads and create_workflow, and
//! update_workflow and archive_workflow, over [`lf_workflow::WorkflowService`],
//! and list_connections over [`lf_workflow::ConnectionService`].
//! The blueprint's checks, the validator, the node catalog and what a
//! reader of someone else's workflow sees are lf-workflow's; these files
//! adapt arguments and results. Runs (run_workflow and the run reads) are
//! part 2.

mod shapes;

mod archive_workflow;
mod create_workflow;
mod describe_workflow;
mod describe_workflow_node_type;
mod get_workflow;
mod get_workflow_graph;
mod list_connections;
mod list_workflow_node_types;
mod list_workflows;
mod update_workflow;
mod validate_workflow;

use crate::group::Group;
use crate::tool::declare;

pub static GROUP: Group = Group {
    id: "workflow",
    title: "Workflow",
    description: "Multi-step pipelines of a trigger, lens steps and tool steps: create, version, inspect and validate them against the node catalog.",
    tools: |g| {
        vec![
            declare::<list_workflows::ListWorkflows>(g),
            declare::<get_workflow::GetWorkflow>(g),
            declare::<get_workflow_graph::GetWorkflowGraph>(g),
            declare::<describe_workflow::DescribeWorkflow>(g),
            declare::<list_workflow_node_types::ListWorkflowNodeTypes>(g),
            declare::<describe_workflow_node_type::DescribeWorkflowNodeType>(g),
            declare::<validate_workflow::ValidateWorkflow>(g),
            declare::<create_workflow::CreateWorkflow>(g),
            declare::<update_workflow::UpdateWorkflow>(g),
            declare::<archive_workflow::ArchiveWorkflow>(g),
            declare::<list_connections::ListConnections>(g),
        ]
    },
};
