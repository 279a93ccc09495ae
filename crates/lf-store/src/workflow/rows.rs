//! Conversions between stored workflow values and lf-workflow's types,
//! shared by both backends. Reading back is strict: a value lf-workflow
//! would refuse is a corrupt row (INTERNAL). The JSON helpers here serve
//! the connection rows too.
//!
//! Both backends store the same columns (see the `0007_workflows.sql` /
//! `0006_workflows.sql` migrations, and `0015_row_agents.sql` /
//! `0014_row_agents.sql` for the `agent_id`s); ids, texts, numbers and positions
//! bind and read as sqlx does, times as each backend's
//! [`crate::dialect::Dialect`] spells them. Parameters, config, settings
//! and conditions are JSON text on both.

use lf_core::{LensId, LenserId, LfResult, VersionId, WorkflowId};
use lf_workflow::{
    Capability, Condition, ConnectionRef, Connector, Description, Edge, EdgeId, InputParameter, JsonObject,
    LensBinding, MergeStrategy, Node, NodeId, NodeKind, NodeTypeName, Pick, Position, Provider, StepKey,
    StepName, Title, VersionSummary, Visibility, Workflow, WorkflowPatch, WorkflowVersionId,
};
use uuid::Uuid;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;

/// A value read back that lf-workflow refuses: a corrupt row.
pub(crate) fn valid<T, E: std::fmt::Display>(r: Result<T, E>, column: &str) -> LfResult<T> {
    r.map_err(|e| corrupt(format!("{column}: {e}")))
}

fn number(n: i64, column: &str) -> LfResult<u32> {
    u32::try_from(n).map_err(|_| corrupt(format!("{column}: {n} is out of range")))
}

/// A JSON object column.
pub(crate) fn object(text: &str, column: &str) -> LfResult<JsonObject> {
    valid(serde_json::from_str(text), column)
}

pub(crate) fn object_text(o: &JsonObject) -> String {
    serde_json::to_string(o).unwrap_or_else(|_| "{}".to_owned())
}

/// The columns of `workflows` (as `w`), in the order [`bind_workflow`]
/// binds them and [`workflow`] reads them.
macro_rules! workflow_columns {
    () => {
        "w.id, w.owner_id, w.title, w.description, w.visibility, w.head_version_id, w.head_version, \
         w.created_at, w.updated_at, w.archived_at, w.agent_id, w.public_runs"
    };
}
pub(crate) use workflow_columns;

/// How many columns [`workflow_columns`] names: a row's columns after them
/// start here.
pub(crate) const WORKFLOW_COLUMNS: usize = 12;

/// The workflow in the first [`workflow_columns`] of `row`.
pub(crate) fn workflow(row: &impl Columns) -> LfResult<Workflow> {
    Ok(Workflow {
        id: WorkflowId::from_uuid(row.value(0)?),
        owner: LenserId::from_uuid(row.value(1)?),
        title: valid(Title::parse(row.value::<String>(2)?), "workflows.title")?,
        description: valid(
            row.value::<Option<String>>(3)?.map(Description::parse).transpose(),
            "workflows.description",
        )?,
        visibility: valid(Visibility::parse(row.text(4)?), "workflows.visibility")?,
        head_version_id: WorkflowVersionId::from_uuid(row.value(5)?),
        head_version: number(row.value(6)?, "workflows.head_version")?,
        created_at: row.time(7)?,
        updated_at: row.time(8)?,
        archived_at: row.opt_time(9)?,
        agent: row.value::<Option<Uuid>>(10)?.map(LenserId::from_uuid),
        public_runs: row.value(11)?,
    })
}

/// Binds a `workflows` row, `$1`..`$12` in [`workflow_columns`] order.
pub(crate) fn bind_workflow<Q: Bind>(q: Q, w: &Workflow) -> Q {
    q.put(w.id.as_uuid())
        .put(w.owner.as_uuid())
        .put(w.title.as_str().to_owned())
        .put(w.description.as_ref().map(|d| d.as_str().to_owned()))
        .put(w.visibility.as_str().to_owned())
        .put(w.head_version_id.as_uuid())
        .put(i64::from(w.head_version))
        .put_time(w.created_at)
        .put_time(w.updated_at)
        .put_opt_time(w.archived_at)
        .put(w.agent.map(|a| a.as_uuid()))
        .put(w.public_runs)
}

/// Binds a [`WorkflowPatch`] as `sql::PATCH_SET` takes it, `$2`..`$9`.
pub(crate) fn bind_patch<Q: Bind>(q: Q, p: &WorkflowPatch) -> Q {
    q.put(p.title.as_ref().map(|t| t.as_str().to_owned()))
        .put(p.description.is_some())
        .put(p.description.as_ref().and_then(|d| d.as_ref()).map(|d| d.as_str().to_owned()))
        .put(p.visibility.map(|v| v.as_str().to_owned()))
        .put(p.archived_at.is_some())
        .put_opt_time(p.archived_at.flatten())
        .put_opt_time(p.updated_at)
        .put(p.public_runs)
}

/// The columns of `workflow_versions` (as `v`) that [`version_head`] reads,
/// in its order.
macro_rules! version_columns {
    () => {
        "v.id, v.number, v.changelog, v.created_by, v.created_at, v.agent_id"
    };
}
pub(crate) use version_columns;

/// A version's own fields, from [`version_columns`] starting at column
/// `at`; `None` for the NULLs of a LEFT JOIN that found no version.
pub(crate) fn version_head(row: &impl Columns, at: usize) -> LfResult<Option<VersionHead>> {
    let Some(id) = row.value::<Option<Uuid>>(at)? else {
        return Ok(None);
    };
    Ok(Some(VersionHead {
        id: WorkflowVersionId::from_uuid(id),
        number: number(row.value(at + 1)?, "workflow_versions.number")?,
        changelog: row.value(at + 2)?,
        created_by: LenserId::from_uuid(row.value(at + 3)?),
        created_at: row.time(at + 4)?,
        agent: row.value::<Option<Uuid>>(at + 5)?.map(LenserId::from_uuid),
    }))
}

/// A version without its graph, as [`version_head`] reads it.
pub(crate) struct VersionHead {
    pub(crate) id: WorkflowVersionId,
    pub(crate) number: u32,
    pub(crate) changelog: String,
    pub(crate) created_by: LenserId,
    pub(crate) created_at: lf_core::Timestamp,
    pub(crate) agent: Option<LenserId>,
}

/// A row of `sql::LIST_VERSIONS`: [`version_columns`], then the counts.
pub(crate) fn summary(row: &impl Columns) -> LfResult<VersionSummary> {
    let head = version_head(row, 0)?.ok_or_else(|| corrupt("workflow_versions.id: NULL"))?;
    Ok(VersionSummary {
        id: head.id,
        number: head.number,
        changelog: head.changelog,
        created_by: head.created_by,
        agent: head.agent,
        created_at: head.created_at,
        node_count: number(row.value(6)?, "node_count")?,
        edge_count: number(row.value(7)?, "edge_count")?,
    })
}

/// A `workflow_nodes` row, as `sql::NODES` selects it.
pub(crate) fn node(row: &impl Columns) -> LfResult<Node> {
    let lens = match (row.value::<Option<Uuid>>("lens_id")?, row.value::<Option<Uuid>>("lens_version_id")?) {
        (Some(lens), version) => Some(LensBinding {
            lens_id: LensId::from_uuid(lens),
            version_id: version.map(VersionId::from_uuid),
        }),
        (None, None) => None,
        (None, Some(_)) => return Err(corrupt("workflow_nodes.lens_version_id: a version without a lens")),
    };
    let connector = match row.value::<Option<String>>("connector_provider")? {
        None => None,
        Some(provider) => Some(Connector {
            provider: valid(Provider::parse("provider", &provider), "workflow_nodes.connector_provider")?,
            connection_ref: valid(
                ConnectionRef::parse("connection_ref", row.text("connector_ref")?),
                "workflow_nodes.connector_ref",
            )?,
            capability: valid(
                row.value::<Option<String>>("connector_capability")?
                    .map(|c| Capability::parse("capability", &c))
                    .transpose(),
                "workflow_nodes.connector_capability",
            )?,
        }),
    };
    Ok(Node {
        id: NodeId::from_uuid(row.value("id")?),
        key: valid(StepKey::parse("key", row.text("step_key")?), "workflow_nodes.step_key")?,
        kind: valid(NodeKind::parse(row.text("kind")?), "workflow_nodes.kind")?,
        name: valid(StepName::parse("name", row.text("name")?), "workflow_nodes.name")?,
        node_type: valid(
            NodeTypeName::parse("node_type", row.text("node_type")?),
            "workflow_nodes.node_type",
        )?,
        lens,
        parameters: object(row.text("parameters")?, "workflow_nodes.parameters")?,
        config: object(row.text("config")?, "workflow_nodes.config")?,
        connector,
        position: Position { x: row.value("position_x")?, y: row.value("position_y")? },
        ordinal: number(row.value("ordinal")?, "workflow_nodes.ordinal")?,
    })
}

/// Binds a `workflow_nodes` row of version `version_id`, in the order of
/// `sql::INSERT_NODE`.
pub(crate) fn bind_node<Q: Bind>(q: Q, version_id: WorkflowVersionId, n: &Node) -> Q {
    let connector = n.connector.as_ref();
    q.put(n.id.as_uuid())
        .put(version_id.as_uuid())
        .put(i64::from(n.ordinal))
        .put(n.key.as_str().to_owned())
        .put(n.kind.as_str().to_owned())
        .put(n.name.as_str().to_owned())
        .put(n.node_type.as_str().to_owned())
        .put(n.lens.map(|l| l.lens_id.as_uuid()))
        .put(n.lens.and_then(|l| l.version_id).map(|v| v.as_uuid()))
        .put(object_text(&n.parameters))
        .put(object_text(&n.config))
        .put(connector.map(|c| c.provider.as_str().to_owned()))
        .put(connector.map(|c| c.connection_ref.as_str().to_owned()))
        .put(connector.and_then(|c| c.capability.as_ref()).map(|c| c.as_str().to_owned()))
        .put(n.position.x)
        .put(n.position.y)
}

/// A `workflow_edges` row, as `sql::EDGES` selects it.
pub(crate) fn edge(row: &impl Columns) -> LfResult<Edge> {
    let condition = match row.value::<Option<String>>("condition")? {
        None => None,
        Some(text) => {
            let v: serde_json::Value = valid(serde_json::from_str(&text), "workflow_edges.condition")?;
            Some(valid(Condition::parse(&v), "workflow_edges.condition")?)
        }
    };
    Ok(Edge {
        id: EdgeId::from_uuid(row.value("id")?),
        from: NodeId::from_uuid(row.value("from_node_id")?),
        output_key: valid(Pick::parse("output_key", row.text("output_key")?), "workflow_edges.output_key")?,
        to: NodeId::from_uuid(row.value("to_node_id")?),
        input_parameter: valid(
            InputParameter::parse("input_parameter", row.text("input_parameter")?),
            "workflow_edges.input_parameter",
        )?,
        condition,
        merge_strategy: valid(
            row.value::<Option<String>>("merge_strategy")?.as_deref().map(MergeStrategy::parse).transpose(),
            "workflow_edges.merge_strategy",
        )?,
        ordinal: number(row.value("ordinal")?, "workflow_edges.ordinal")?,
    })
}

/// Binds a `workflow_edges` row of version `version_id`, in the order of
/// `sql::INSERT_EDGE`.
pub(crate) fn bind_edge<Q: Bind>(q: Q, version_id: WorkflowVersionId, e: &Edge) -> Q {
    q.put(e.id.as_uuid())
        .put(version_id.as_uuid())
        .put(i64::from(e.ordinal))
        .put(e.from.as_uuid())
        .put(e.output_key.as_str().to_owned())
        .put(e.to.as_uuid())
        .put(e.input_parameter.as_str().to_owned())
        .put(e.condition.as_ref().map(|c| c.to_json().to_string()))
        .put(e.merge_strategy.map(|m| m.as_str().to_owned()))
}
