use lf_core::LfResult;
use lf_workflow::WorkflowService;
use lf_workflow::catalog::{ConfigField, ConnectorUse, NodeTypeSpec, Port};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct DescribeWorkflowNodeType;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeTypeIn {
    /// A node type (or alias) from list_workflow_node_types, e.g. schedule_trigger.
    #[schemars(length(min = 1, max = 100))]
    pub r#type: String,
}

#[derive(Serialize, JsonSchema)]
pub struct PortOut {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub io: &'static str,
    pub description: &'static str,
}

impl From<&Port> for PortOut {
    fn from(p: &Port) -> Self {
        Self { name: p.name, io: p.io.as_str(), description: p.description }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct ConfigFieldOut {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub required: bool,
    pub default_value: Option<Value>,
    pub options: &'static [&'static str],
    pub description: &'static str,
    /// Other names the field is accepted under.
    pub aliases: &'static [&'static str],
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl From<&ConfigField> for ConfigFieldOut {
    fn from(f: &ConfigField) -> Self {
        Self {
            key: f.key,
            label: f.label,
            kind: f.kind.as_str(),
            required: f.required,
            default_value: f.default.clone(),
            options: f.options,
            description: f.description,
            aliases: f.aliases,
            min: f.min,
            max: f.max,
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct DownstreamOut {
    pub node_type: &'static str,
    /// output_key → input_parameter.
    pub mapping: &'static str,
}

#[derive(Serialize, JsonSchema)]
pub struct ExampleOut {
    pub scenario: &'static str,
    pub config: Value,
    pub expected_input: Value,
    pub expected_output: Value,
    pub downstream_connection: Option<DownstreamOut>,
}

#[derive(Serialize, JsonSchema)]
pub struct RetryOut {
    pub max_attempts: u32,
    pub backoff_ms: u64,
    pub retry_on: &'static [&'static str],
}

#[derive(Serialize, JsonSchema)]
pub struct ErrorBehaviorOut {
    pub default_policy: &'static str,
    pub supports_fallback: bool,
}

#[derive(Serialize, JsonSchema)]
pub struct ConnectorNeedOut {
    /// Whether a step of this type must name a saved connection.
    pub required: bool,
    /// The providers it takes.
    pub providers: &'static [&'static str],
}

#[derive(Serialize, JsonSchema)]
pub struct NodeTypeOut {
    #[serde(rename = "type")]
    pub node_type: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    pub category: &'static str,
    pub aliases: &'static [&'static str],
    pub capabilities: &'static [&'static str],
    pub inputs: Vec<PortOut>,
    pub outputs: Vec<PortOut>,
    pub required_config: Vec<ConfigFieldOut>,
    pub optional_config: Vec<ConfigFieldOut>,
    pub default_config: Map<String, Value>,
    pub example_config: ExampleOut,
    pub accepts_input_types: Vec<&'static str>,
    pub produces_output_type: &'static str,
    pub supported_funding_modes: &'static [&'static str],
    pub supported_execution_environments: &'static [&'static str],
    pub retry_behavior: RetryOut,
    pub error_behavior: ErrorBehaviorOut,
    pub side_effect_policy: &'static str,
    /// The saved connection a step of this type uses; null when none.
    pub connector: Option<ConnectorNeedOut>,
    pub example_use_case: &'static str,
    pub docs_link: String,
}

/// Nobody is billed on a self-hosted server: model calls go through the
/// provider its operator configured.
const FUNDING: &[&str] = &["self_hosted"];
/// Every node runs in this server's runner.
const ENVIRONMENTS: &[&str] = &["server"];

impl From<&NodeTypeSpec> for NodeTypeOut {
    fn from(e: &NodeTypeSpec) -> Self {
        let connector = match e.connector {
            ConnectorUse::None => None,
            ConnectorUse::Optional(p) => Some(ConnectorNeedOut { required: false, providers: p }),
            ConnectorUse::Required(p) => Some(ConnectorNeedOut { required: true, providers: p }),
        };
        let x = &e.example;
        Self {
            node_type: e.node_type,
            display_name: e.display_name,
            description: e.description,
            category: e.category.as_str(),
            aliases: e.aliases,
            capabilities: e.capabilities,
            inputs: e.inputs.iter().map(PortOut::from).collect(),
            outputs: e.outputs.iter().map(PortOut::from).collect(),
            required_config: e.required_config().map(ConfigFieldOut::from).collect(),
            optional_config: e.optional_config().map(ConfigFieldOut::from).collect(),
            default_config: e.default_config(),
            example_config: ExampleOut {
                scenario: x.scenario,
                config: x.config.clone(),
                expected_input: x.expected_input.clone(),
                expected_output: x.expected_output.clone(),
                downstream_connection: x
                    .downstream
                    .map(|(node_type, mapping)| DownstreamOut { node_type, mapping }),
            },
            accepts_input_types: e.accepts_input_types.iter().map(|t| t.as_str()).collect(),
            produces_output_type: e.produces_output_type.as_str(),
            supported_funding_modes: FUNDING,
            supported_execution_environments: ENVIRONMENTS,
            retry_behavior: RetryOut {
                max_attempts: e.retry_behavior.max_attempts,
                backoff_ms: e.retry_behavior.backoff_ms,
                retry_on: e.retry_behavior.retry_on,
            },
            error_behavior: ErrorBehaviorOut {
                default_policy: e.error_behavior.default_policy,
                supports_fallback: e.error_behavior.supports_fallback,
            },
            side_effect_policy: e.side_effect_policy.as_str(),
            connector,
            example_use_case: e.example_use_case,
            docs_link: e.docs_link(),
        }
    }
}

impl Tool for DescribeWorkflowNodeType {
    const NAME: &'static str = "describe_workflow_node_type";
    const TITLE: &'static str = "Describe a workflow node type";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "One node type's full catalog entry: config fields with kinds and defaults, inputs and outputs, an example config, retries, side effects and the connector it needs.";
    const DIFFERS_FROM_SPEC: &'static str = "supported_funding_modes is always [\"self_hosted\"] (nobody is billed: model calls go through the provider the operator configured) and supported_execution_environments always [\"server\"] (every node runs in this server's runner); `connector` says which saved connection a step of the type needs.";
    type Input = NodeTypeIn;
    type Output = NodeTypeOut;

    async fn call(_ctx: Ctx, i: NodeTypeIn) -> LfResult<NodeTypeOut> {
        lf_core::check_text("type", &i.r#type, 1, 100)?;
        WorkflowService::node_type(&i.r#type).map(NodeTypeOut::from)
    }
}
