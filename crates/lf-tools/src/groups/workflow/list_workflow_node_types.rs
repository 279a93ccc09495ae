use lf_core::LfResult;
use lf_workflow::WorkflowService;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct ListWorkflowNodeTypes;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListNodeTypesIn {
    /// Only this category: lens, trigger, logic, data, ai_primitive, battle, storage, communication, integration, media or utility.
    #[schemars(length(min = 1, max = 100))]
    pub category: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct NodeTypeItemOut {
    #[serde(rename = "type")]
    pub node_type: &'static str,
    pub category: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    pub capabilities: &'static [&'static str],
}

#[derive(Serialize, JsonSchema)]
pub struct NodeTypesOut {
    pub items: Vec<NodeTypeItemOut>,
    pub total: usize,
    /// Every category, whatever was asked for.
    pub categories: Vec<&'static str>,
}

impl Tool for ListWorkflowNodeTypes {
    const NAME: &'static str = "list_workflow_node_types";
    const TITLE: &'static str = "List workflow node types";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "List the node types this server runs (what create_workflow checks node_type against); an unknown category lists none and names every category.";
    type Input = ListNodeTypesIn;
    type Output = NodeTypesOut;

    async fn call(_ctx: Ctx, i: ListNodeTypesIn) -> LfResult<NodeTypesOut> {
        if let Some(c) = &i.category {
            lf_core::check_text("category", c, 1, 100)?;
        }
        let list = WorkflowService::node_types(i.category.as_deref());
        Ok(NodeTypesOut {
            items: list
                .items
                .iter()
                .map(|e| NodeTypeItemOut {
                    node_type: e.node_type,
                    category: e.category.as_str(),
                    display_name: e.display_name,
                    description: e.description,
                    capabilities: e.capabilities,
                })
                .collect(),
            total: list.total,
            categories: list.categories.iter().map(|c| c.as_str()).collect(),
        })
    }
}
