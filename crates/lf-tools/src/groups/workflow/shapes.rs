//! What several Workflow tools share: the blueprint's steps and
//! connections as the schema lists them (converted to lf-workflow's raw
//! blueprint, which checks them), ids and version numbers, and the
//! workflow, version and issue shapes they answer. What the run tools
//! answer is in `run_shapes.rs`.

use lf_core::{LfError, LfResult, WorkflowId};
use lf_workflow::hook::{IssuedWebhook, WEBHOOK_SECRET_HEADER};
use lf_workflow::run::RunId;
use lf_workflow::{
    Issue, NodeSummary, RawConnection, RawConnector, RawStep, Report, VersionSelector, VersionSummary,
    Visibility, Workflow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// ---------------------------------------------------------------- inputs

/// Who may read a workflow: public (everyone, listed), unlisted (anyone with its id, listed to its owner only) or private (its owner).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VisibilityIn {
    Public,
    Private,
    Unlisted,
}

impl From<VisibilityIn> for Visibility {
    fn from(v: VisibilityIn) -> Self {
        match v {
            VisibilityIn::Public => Visibility::Public,
            VisibilityIn::Private => Visibility::Private,
            VisibilityIn::Unlisted => Visibility::Unlisted,
        }
    }
}

impl VisibilityIn {
    /// The wire word lf-workflow's blueprint parses.
    pub fn as_str(self) -> &'static str {
        Visibility::from(self).as_str()
    }
}

/// A workflow by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowIdIn {
    /// The workflow.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
}

pub fn workflow_id(s: &str) -> LfResult<WorkflowId> {
    WorkflowId::parse("workflow_id", s)
}

/// A run by id.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunIdIn {
    /// The run (run_workflow and list_workflow_runs give its id).
    #[schemars(extend("format" = "uuid"))]
    pub run_id: String,
}

pub fn run_id(s: &str) -> LfResult<RunId> {
    RunId::parse("run_id", s)
}

/// The highest version number a caller may ask for: far beyond any real
/// history, and within the store's `u32`.
pub const MAX_VERSION: i64 = 1_000_000;

/// A version by number (`version`), or the head when none is given.
pub fn version(n: Option<i64>) -> LfResult<VersionSelector> {
    version_number(n).map(VersionSelector::from_number)
}

/// A version number (`version`), checked; `None` stands for the head.
pub fn version_number(n: Option<i64>) -> LfResult<Option<u32>> {
    match n {
        None => Ok(None),
        Some(n) if (1..=MAX_VERSION).contains(&n) => Ok(Some(n as u32)),
        Some(n) => Err(LfError::invalid_argument(format!(
            "version must be a version number from 1 to {MAX_VERSION} (get_workflow lists them); got {n}. Leave it out for the head version."
        ))
        .with_field("version")),
    }
}

/// A version of a workflow: the one numbered `version`, or the head.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowVersionIn {
    /// The workflow.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
    /// A version number (get_workflow lists them); omit for the head.
    #[schemars(range(min = 1, max = 1000000))]
    pub version: Option<i64>,
}

impl WorkflowVersionIn {
    pub fn parse(&self) -> LfResult<(WorkflowId, VersionSelector)> {
        Ok((workflow_id(&self.workflow_id)?, version(self.version)?))
    }
}

/// What a step is responsible for.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KindIn {
    Trigger,
    Lens,
    Tool,
}

/// How values wired into one input parameter combine.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeStrategyIn {
    LastWriteWins,
    Concat,
    Array,
    JsonObject,
}

// A saved connection a step uses, named by its ref: never a secret.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectorIn {
    /// The kind of service (slack, smtp, http, github…).
    #[schemars(length(min = 1, max = 64))]
    pub provider: String,
    /// The ref of a connection the workflow's owner saved (list_connections shows them).
    #[schemars(length(min = 1, max = 200))]
    pub connection_ref: String,
    /// What it is used for (channel, database…).
    #[schemars(length(min = 1, max = 100))]
    pub capability: Option<String>,
}

// One step of a blueprint.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepIn {
    /// A readable local reference, unique in the workflow (start, research).
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-z][a-z0-9_-]*$"))]
    pub key: String,
    /// trigger (exactly one), lens (runs a lens) or tool (a node type of the catalog).
    pub kind: KindIn,
    /// A human-readable label.
    #[schemars(length(min = 1, max = 200))]
    pub name: String,
    /// Trigger and tool steps: a type from list_workflow_node_types.
    #[schemars(length(min = 1, max = 100))]
    pub node_type: Option<String>,
    /// Lens steps: a lens you can read (search_lenses finds them).
    #[schemars(extend("format" = "uuid"))]
    pub lens_id: Option<String>,
    /// Lens steps: pins a version of the lens; omit for its head at run time.
    #[schemars(extend("format" = "uuid"))]
    pub version_id: Option<String>,
    /// Lens parameter values by label, or a tool's input values; wired inputs win over them.
    pub parameters: Option<Map<String, Value>>,
    /// The node type's non-secret settings (describe_workflow_node_type lists them).
    pub config: Option<Map<String, Value>>,
    /// The saved connection the step uses, for outside services.
    pub connector: Option<ConnectorIn>,
}

// One connection: a part of one step's output fed to an input of another.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionIn {
    /// The upstream step's key.
    #[schemars(length(min = 1, max = 64))]
    pub from_step: String,
    /// The part of the upstream output to carry: a field name or $ JSONPath; output (default) is all.
    #[schemars(length(min = 1, max = 500), extend("default" = "output"))]
    pub output_key: Option<String>,
    /// The downstream step's key.
    #[schemars(length(min = 1, max = 64))]
    pub to_step: String,
    /// The downstream input it feeds: a lens parameter's label, or a tool input (input by convention).
    #[schemars(length(min = 1, max = 200))]
    pub input_parameter: String,
    /// Carries a value only when this holds on the upstream output: {"path", "op", "value"}, {"all": [...]}, {"any": [...]} or {"not": {...}}.
    pub condition: Option<Map<String, Value>>,
    /// How values wired into one parameter combine.
    #[schemars(extend("default" = "last_write_wins"))]
    pub merge_strategy: Option<MergeStrategyIn>,
}

impl From<StepIn> for RawStep {
    fn from(s: StepIn) -> Self {
        let kind = match s.kind {
            KindIn::Trigger => "trigger",
            KindIn::Lens => "lens",
            KindIn::Tool => "tool",
        };
        RawStep {
            key: s.key,
            kind: kind.to_owned(),
            name: s.name,
            node_type: s.node_type,
            lens_id: s.lens_id,
            version_id: s.version_id,
            parameters: s.parameters,
            config: s.config,
            connector: s.connector.map(|c| RawConnector {
                provider: c.provider,
                connection_ref: c.connection_ref,
                capability: c.capability,
            }),
        }
    }
}

impl From<ConnectionIn> for RawConnection {
    fn from(c: ConnectionIn) -> Self {
        let merge = c.merge_strategy.map(|m| match m {
            MergeStrategyIn::LastWriteWins => "last_write_wins",
            MergeStrategyIn::Concat => "concat",
            MergeStrategyIn::Array => "array",
            MergeStrategyIn::JsonObject => "json_object",
        });
        RawConnection {
            from_step: c.from_step,
            output_key: c.output_key,
            to_step: c.to_step,
            input_parameter: c.input_parameter,
            condition: c.condition.map(Value::Object),
            merge_strategy: merge.map(str::to_owned),
        }
    }
}

pub fn raw_steps(steps: Option<Vec<StepIn>>) -> Option<Vec<RawStep>> {
    steps.map(|s| s.into_iter().map(Into::into).collect())
}

pub fn raw_connections(connections: Option<Vec<ConnectionIn>>) -> Option<Vec<RawConnection>> {
    connections.map(|c| c.into_iter().map(Into::into).collect())
}

// ---------------------------------------------------------------- outputs

/// A webhook's secret, shown this once.
#[derive(Serialize, JsonSchema)]
pub struct WebhookOut {
    /// POST a JSON object here on the HTTP server: it becomes the run's inputs.
    pub path: String,
    pub secret: String,
    /// Where the secret goes (Authorization: Bearer works too).
    pub header: &'static str,
    pub note: &'static str,
}

impl From<IssuedWebhook> for WebhookOut {
    fn from(w: IssuedWebhook) -> Self {
        Self {
            path: w.path(),
            secret: w.secret.expose().to_owned(),
            header: WEBHOOK_SECRET_HEADER,
            note: "Shown once: keep it now. rotate_webhook_secret makes a new one.",
        }
    }
}

/// A workflow's record, without its graph.
#[derive(Serialize, JsonSchema)]
pub struct WorkflowOut {
    pub id: String,
    /// The owning lenser.
    pub lenser_id: String,
    pub title: String,
    pub description: Option<String>,
    /// public, unlisted or private.
    pub visibility: &'static str,
    /// The newest version.
    pub head_version_id: String,
    /// Its number (1, 2, 3…).
    pub head_version: u32,
    pub created_at: String,
    pub updated_at: String,
    /// Archived workflows are left out of lists.
    pub archived_at: Option<String>,
    /// The AI Lenser that created it for its owner (null when a person did).
    pub by_agent: Option<String>,
}

impl From<&Workflow> for WorkflowOut {
    fn from(w: &Workflow) -> Self {
        Self {
            id: w.id.to_string(),
            lenser_id: w.owner.to_string(),
            title: w.title.as_str().to_owned(),
            description: w.description.as_ref().map(|d| d.as_str().to_owned()),
            visibility: w.visibility.as_str(),
            head_version_id: w.head_version_id.to_string(),
            head_version: w.head_version,
            created_at: w.created_at.to_rfc3339(),
            updated_at: w.updated_at.to_rfc3339(),
            archived_at: w.archived_at.map(|t| t.to_rfc3339()),
            by_agent: w.agent.map(|a| a.to_string()),
        }
    }
}

/// One immutable version, without its graph.
#[derive(Serialize, JsonSchema)]
pub struct VersionOut {
    pub id: String,
    pub number: u32,
    pub changelog: String,
    /// The lenser who made it.
    pub created_by: String,
    /// The AI Lenser that wrote it for its owner (null when a person did).
    pub by_agent: Option<String>,
    pub created_at: String,
    pub node_count: u32,
    pub edge_count: u32,
}

impl From<&VersionSummary> for VersionOut {
    fn from(v: &VersionSummary) -> Self {
        Self {
            id: v.id.to_string(),
            number: v.number,
            changelog: v.changelog.clone(),
            created_by: v.created_by.to_string(),
            by_agent: v.agent.map(|a| a.to_string()),
            created_at: v.created_at.to_rfc3339(),
            node_count: v.node_count,
            edge_count: v.edge_count,
        }
    }
}

/// One error or warning of a validation: what is wrong, what to change,
/// and where.
#[derive(Serialize, JsonSchema)]
pub struct IssueOut {
    pub code: &'static str,
    pub message: String,
    /// What to change.
    pub hint: String,
    /// The step it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The connection it is about: its id (get_workflow_graph's edges).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<String>,
    /// The config field (or connector) it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// WORKFLOW_CYCLE: the steps on the cycle, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<String>,
}

/// The readable name of report node `i`: its step key (every stored node
/// has one), else its graph id.
fn step_of(r: &Report, i: usize) -> String {
    let n = &r.nodes[i];
    n.key.clone().unwrap_or_else(|| n.id.clone())
}

impl IssueOut {
    pub fn of(i: &Issue, r: &Report) -> Self {
        Self {
            code: i.code.as_str(),
            message: i.message.clone(),
            hint: i.hint.clone(),
            step: i.node.map(|n| step_of(r, n)),
            edge: i.edge.clone(),
            field: i.field.clone(),
            cycle: i.cycle.iter().map(|&n| step_of(r, n)).collect(),
        }
    }
}

/// The warnings of a report (creation and updates refuse what has errors).
pub fn warnings(r: &Report) -> Vec<IssueOut> {
    r.warnings.iter().map(|i| IssueOut::of(i, r)).collect()
}

/// One step as validation reads it.
#[derive(Serialize, JsonSchema)]
pub struct NodeSummaryOut {
    /// The node's id.
    pub node_id: Option<String>,
    pub key: String,
    pub name: String,
    /// trigger, lens or tool; null when unknown.
    pub kind: Option<&'static str>,
    pub node_type: Option<String>,
    /// The names its `parameters` assign, sorted.
    pub configured_parameters: Vec<String>,
    /// The input parameters connections feed, sorted.
    pub wired_parameters: Vec<String>,
}

impl From<&NodeSummary> for NodeSummaryOut {
    fn from(n: &NodeSummary) -> Self {
        Self {
            node_id: n.node_id.map(|id| id.to_string()),
            key: n.key.clone().unwrap_or_else(|| n.id.clone()),
            name: n.name.clone(),
            kind: n.kind.map(|k| k.as_str()),
            node_type: n.node_type.clone(),
            configured_parameters: n.configured_parameters.clone(),
            wired_parameters: n.wired_parameters.clone(),
        }
    }
}

/// A validation, as validate_workflow answers it.
#[derive(Serialize, JsonSchema)]
pub struct ReportOut {
    /// No errors.
    pub valid: bool,
    /// Valid, exactly one trigger, and its lenses and connections checked: run_workflow will take it.
    pub run_ready: bool,
    pub errors: Vec<IssueOut>,
    pub warnings: Vec<IssueOut>,
    /// Step keys in dependency order.
    pub execution_order: Vec<String>,
    /// Step keys of the steps nothing feeds.
    pub root_nodes: Vec<String>,
    /// Every step with its configured and wired parameters, in blueprint order.
    pub nodes: Vec<NodeSummaryOut>,
}

impl From<&Report> for ReportOut {
    fn from(r: &Report) -> Self {
        let keys = |idx: &[usize]| idx.iter().map(|&i| step_of(r, i)).collect();
        Self {
            valid: r.valid,
            run_ready: r.run_ready,
            errors: r.errors.iter().map(|i| IssueOut::of(i, r)).collect(),
            warnings: warnings(r),
            execution_order: keys(&r.execution_order),
            root_nodes: keys(&r.root_nodes),
            nodes: r.nodes.iter().map(NodeSummaryOut::from).collect(),
        }
    }
}
