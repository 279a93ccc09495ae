//! The blueprint of `create_workflow` (and of `update_workflow`'s new
//! versions): readable step keys and connections by key, exactly as the
//! spec gives it, plus two optional fields of a connection, `condition`
//! and `merge_strategy`, which the original's tables have and its
//! blueprint could not set.
//!
//! [`GraphDraft::parse`] checks the shape (counts, lengths, key syntax,
//! sizes), then the original's creation checks in its order with its
//! messages (reference §4.2), first failure first, plus one the original
//! skipped: a tool's `node_type` must be in the catalog. Whether lenses
//! are readable and the graph validates is the service's next step.

use std::collections::{HashMap, VecDeque};

use lf_core::{LensId, LenserId, LfError, LfResult, Timestamp, VersionId, WorkflowId};
use serde::Deserialize;
use serde_json::Value;

use crate::catalog::{Catalog, Category};
use crate::condition::Condition;
use crate::model::{
    Capability, ConnectionRef, Connector, Description, Edge, EdgeId, InputParameter, JsonObject, LensBinding,
    MergeStrategy, Node, NodeId, NodeKind, NodeTypeName, Position, Provider, StepKey, StepName, Title,
    Visibility, WorkflowVersion, WorkflowVersionId,
};
use crate::path::Pick;
use crate::secrets::{find_credential_name, find_secret_field, shape};

/// Most steps of a blueprint.
pub const MAX_STEPS: usize = 100;
/// Most connections of a blueprint.
pub const MAX_CONNECTIONS: usize = 300;
/// Deepest nesting of a step's `config` or `parameters`.
pub const MAX_JSON_DEPTH: usize = 32;
/// Most bytes (as JSON, roughly) of one step's `config` and `parameters` together.
pub const MAX_STEP_JSON_BYTES: usize = 64 * 1024;

/// `create_workflow`'s arguments, as the spec names them (the owner,
/// `lenser_id`, is the caller's business: see `NewWorkflow`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawBlueprint {
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub visibility: Option<String>,
    #[serde(default)]
    pub steps: Vec<RawStep>,
    #[serde(default)]
    pub connections: Vec<RawConnection>,
}

/// One step of a blueprint.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    pub key: String,
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub node_type: Option<String>,
    #[serde(default)]
    pub lens_id: Option<String>,
    #[serde(default)]
    pub version_id: Option<String>,
    #[serde(default)]
    pub parameters: Option<JsonObject>,
    #[serde(default)]
    pub config: Option<JsonObject>,
    #[serde(default)]
    pub connector: Option<RawConnector>,
}

/// `{provider, connection_ref, capability?}`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConnector {
    pub provider: String,
    pub connection_ref: String,
    #[serde(default)]
    pub capability: Option<String>,
}

/// `{from_step, output_key?, to_step, input_parameter}`, and optionally
/// `condition` and `merge_strategy`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConnection {
    pub from_step: String,
    #[serde(default)]
    pub output_key: Option<String>,
    pub to_step: String,
    pub input_parameter: String,
    #[serde(default)]
    pub condition: Option<Value>,
    #[serde(default)]
    pub merge_strategy: Option<String>,
}

/// A parsed blueprint: the workflow's metadata and its graph.
#[derive(Clone, Debug)]
pub struct Blueprint {
    pub title: Title,
    pub description: Option<Description>,
    pub visibility: Visibility,
    pub graph: GraphDraft,
}

impl Blueprint {
    pub fn parse(raw: RawBlueprint, catalog: &Catalog) -> LfResult<Self> {
        Ok(Blueprint {
            title: Title::parse(raw.title)?,
            description: raw
                .description
                .map(Description::parse)
                .transpose()?
                .filter(|d| !d.as_str().is_empty()),
            visibility: raw.visibility.as_deref().map(Visibility::parse).transpose()?.unwrap_or_default(),
            graph: GraphDraft::parse(raw.steps, raw.connections, catalog)?,
        })
    }
}

/// A step, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub key: StepKey,
    pub kind: NodeKind,
    pub name: StepName,
    /// Canonical: `lens` for lens steps, an alias resolved to its type.
    pub node_type: NodeTypeName,
    pub lens: Option<LensBinding>,
    pub parameters: JsonObject,
    pub config: JsonObject,
    pub connector: Option<Connector>,
}

/// A connection, parsed: its ends are step positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    pub from: usize,
    pub output_key: Pick,
    pub to: usize,
    pub input_parameter: InputParameter,
    pub condition: Option<Condition>,
    pub merge_strategy: Option<MergeStrategy>,
}

/// A graph as a blueprint describes it, before the server gives it ids.
/// Empty for a workflow created as a container.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphDraft {
    pub steps: Vec<Step>,
    pub connections: Vec<Connection>,
}

fn invalid(message: String) -> LfError {
    LfError::invalid_argument(message)
}

impl GraphDraft {
    /// Parses and checks steps and connections (see the module docs).
    pub fn parse(steps: Vec<RawStep>, connections: Vec<RawConnection>, catalog: &Catalog) -> LfResult<Self> {
        if steps.len() > MAX_STEPS {
            return Err(invalid(format!("steps may hold at most {MAX_STEPS} steps, got {}. Split the work into several workflows (sub_workflow runs one from another).", steps.len())).with_field("steps"));
        }
        if connections.len() > MAX_CONNECTIONS {
            return Err(invalid(format!(
                "connections may hold at most {MAX_CONNECTIONS} connections, got {}.",
                connections.len()
            ))
            .with_field("connections"));
        }
        let mut keys: HashMap<String, usize> = HashMap::new();
        let mut parsed = Vec::with_capacity(steps.len());
        for (i, raw) in steps.into_iter().enumerate() {
            let step = parse_step(i, raw, catalog, &keys)?;
            keys.insert(step.key.as_str().to_owned(), i);
            parsed.push(step);
        }
        if !parsed.is_empty() {
            let triggers = parsed.iter().filter(|s| s.kind == NodeKind::Trigger).count();
            if triggers != 1 {
                return Err(invalid(format!(
                    "A complete workflow requires exactly one trigger step; received {triggers}."
                ))
                .with_field("steps"));
            }
        }
        let mut conns = Vec::with_capacity(connections.len());
        for (j, raw) in connections.into_iter().enumerate() {
            conns.push(parse_connection(j, raw, &keys)?);
        }
        let draft = GraphDraft { steps: parsed, connections: conns };
        draft.check_reachable()?;
        Ok(draft)
    }

    /// Every step reachable from the trigger along connections.
    fn check_reachable(&self) -> LfResult<()> {
        let Some(trigger) = self.steps.iter().position(|s| s.kind == NodeKind::Trigger) else {
            return Ok(());
        };
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); self.steps.len()];
        for c in &self.connections {
            next[c.from].push(c.to);
        }
        let mut seen = vec![false; self.steps.len()];
        seen[trigger] = true;
        let mut queue = VecDeque::from([trigger]);
        while let Some(v) = queue.pop_front() {
            for &w in &next[v] {
                if !seen[w] {
                    seen[w] = true;
                    queue.push_back(w);
                }
            }
        }
        let unreachable: Vec<&str> =
            self.steps.iter().zip(&seen).filter(|(_, s)| !**s).map(|(s, _)| s.key.as_str()).collect();
        if unreachable.is_empty() {
            return Ok(());
        }
        Err(invalid(format!(
            "Every step must be connected from trigger \"{}\". Unreachable: {}.",
            self.steps[trigger].key,
            unreachable.join(", ")
        ))
        .with_field("connections"))
    }

    /// The version these steps make, with fresh node and edge ids, laid out
    /// as the original builder does; its `agent` is `None` (the caller sets
    /// it when an agent wrote the version).
    pub fn into_version(
        self,
        workflow_id: WorkflowId,
        number: u32,
        changelog: String,
        created_by: LenserId,
        created_at: Timestamp,
    ) -> WorkflowVersion {
        let nodes: Vec<Node> = self
            .steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| Node {
                id: NodeId::new(),
                key: s.key,
                kind: s.kind,
                name: s.name,
                node_type: s.node_type,
                lens: s.lens,
                parameters: s.parameters,
                config: s.config,
                connector: s.connector,
                position: Position::of_ordinal(i as u32),
                ordinal: i as u32,
            })
            .collect();
        let edges = self
            .connections
            .into_iter()
            .enumerate()
            .map(|(j, c)| Edge {
                id: EdgeId::new(),
                from: nodes[c.from].id,
                output_key: c.output_key,
                to: nodes[c.to].id,
                input_parameter: c.input_parameter,
                condition: c.condition,
                merge_strategy: c.merge_strategy,
                ordinal: j as u32,
            })
            .collect();
        WorkflowVersion {
            id: WorkflowVersionId::new(),
            workflow_id,
            number,
            changelog,
            created_by,
            agent: None,
            created_at,
            nodes,
            edges,
        }
    }
}

fn parse_step(i: usize, raw: RawStep, catalog: &Catalog, keys: &HashMap<String, usize>) -> LfResult<Step> {
    let at = |f: &str| format!("steps[{i}].{f}");
    let key = StepKey::parse(&at("key"), &raw.key)?;
    let kind = NodeKind::parse(&raw.kind)
        .map_err(|e| invalid(format!("{}: {}", at("kind"), e.message())).with_field(&at("kind")))?;
    let name = StepName::parse(&at("name"), &raw.name)?;
    let node_type = raw.node_type.as_deref().map(|t| NodeTypeName::parse(&at("node_type"), t)).transpose()?;
    let lens_id = raw.lens_id.as_deref().map(|s| LensId::parse(&at("lens_id"), s)).transpose()?;
    let version_id = raw.version_id.as_deref().map(|s| VersionId::parse(&at("version_id"), s)).transpose()?;
    let parameters = raw.parameters.unwrap_or_default();
    let config = raw.config.unwrap_or_default();
    for (what, o) in [("parameters", &parameters), ("config", &config)] {
        let (depth, _) = shape(o, MAX_STEP_JSON_BYTES);
        if depth > MAX_JSON_DEPTH {
            return Err(invalid(format!(
                "{} nests deeper than {MAX_JSON_DEPTH} levels: flatten it.",
                at(what)
            ))
            .with_field(&at(what)));
        }
    }
    let (_, p) = shape(&parameters, MAX_STEP_JSON_BYTES);
    let (_, c) = shape(&config, MAX_STEP_JSON_BYTES);
    if p + c > MAX_STEP_JSON_BYTES {
        return Err(invalid(format!("steps[{i}]'s config and parameters take more than {} KiB: keep large data out of the workflow (pass it as run inputs).", MAX_STEP_JSON_BYTES / 1024)).with_field(&at("config")));
    }
    let connector = raw
        .connector
        .map(|c| -> LfResult<Connector> {
            Ok(Connector {
                provider: Provider::parse(&at("connector.provider"), &c.provider)?,
                connection_ref: ConnectionRef::parse(&at("connector.connection_ref"), &c.connection_ref)?,
                capability: c
                    .capability
                    .as_deref()
                    .map(|s| Capability::parse(&at("connector.capability"), s))
                    .transpose()?,
            })
        })
        .transpose()?;

    // The original's checks, in its order.
    let k = key.as_str();
    if keys.contains_key(k) {
        return Err(invalid(format!("Step key \"{k}\" is duplicated.")).with_field(&at("key")));
    }
    let spec = node_type.as_ref().and_then(|t| catalog.get(t.as_str()));
    let category = spec.map(|s| s.category);
    let lens = match kind {
        NodeKind::Lens => {
            let Some(lens_id) = lens_id else {
                return Err(invalid(format!(
                    "Lens step \"{k}\" requires lens_id. Call create_lens first when needed."
                ))
                .with_field(&at("lens_id")));
            };
            if node_type.is_some() && category != Some(Category::Lens) {
                return Err(invalid(format!("Lens step \"{k}\" takes no node_type (or \"lens\"): to run a lens as a tool step, use node_type lens_execute with config.lens_id.")).with_field(&at("node_type")));
            }
            Some(LensBinding { lens_id, version_id })
        }
        NodeKind::Trigger => {
            if category != Some(Category::Trigger) {
                return Err(invalid(format!("Trigger step \"{k}\" requires a supported trigger node_type."))
                    .with_field(&at("node_type")));
            }
            None
        }
        NodeKind::Tool => {
            let Some(t) = &node_type else {
                return Err(invalid(format!("Tool step \"{k}\" requires a palette node_type."))
                    .with_field(&at("node_type")));
            };
            match category {
                None => {
                    let closest = catalog.closest(t.as_str(), 3);
                    let hint = if closest.is_empty() {
                        String::new()
                    } else {
                        format!(" Closest: {}.", closest.join(", "))
                    };
                    return Err(invalid(format!("Tool step \"{k}\" uses node_type \"{t}\", which is not in the node catalog.{hint} Call list_workflow_node_types for the types this server runs.")).with_field(&at("node_type")));
                }
                Some(Category::Trigger) => {
                    return Err(invalid(format!(
                        "Tool step \"{k}\" names trigger type \"{t}\": make it kind trigger."
                    ))
                    .with_field(&at("kind")));
                }
                Some(Category::Lens) => {
                    return Err(invalid(format!("Tool step \"{k}\" names node_type \"{t}\": make it kind lens with a lens_id, or use lens_execute.")).with_field(&at("kind")));
                }
                Some(_) => None,
            }
        }
    };
    if kind != NodeKind::Lens && (lens_id.is_some() || version_id.is_some()) {
        return Err(invalid(format!(
            "Step \"{k}\" is a {kind} step: lens_id and version_id belong to lens steps."
        ))
        .with_field(&at("lens_id")));
    }
    if let Some(field) = find_secret_field([&config, &parameters]) {
        return Err(invalid(format!(
            "Step \"{k}\" includes forbidden secret field \"{}\". Use connector.connection_ref instead.",
            lf_core::clip(field, 60)
        ))
        .with_field(&at("config")));
    }
    if let Some((field, name)) = find_credential_name(&config) {
        return Err(invalid(format!(
            "Step \"{k}\" sends {} \"{}\", which names a credential: a workflow's config is shown to its readers. Save the credential as a connection (`connection add`; an http connection's auth_header setting names its header) and name it in connector.connection_ref.",
            if field == "headers" { "the header" } else { "the query parameter" },
            lf_core::clip(name, 60)
        ))
        .with_field(&at(&format!("config.{field}"))));
    }
    let node_type = match (kind, spec) {
        (NodeKind::Lens, _) => NodeTypeName::parse("node_type", "lens")?,
        (_, Some(s)) => NodeTypeName::parse("node_type", s.node_type)?,
        (_, None) => unreachable!("triggers and tools without a catalog type were refused above"),
    };
    Ok(Step { key, kind, name, node_type, lens, parameters, config, connector })
}

fn parse_connection(j: usize, raw: RawConnection, keys: &HashMap<String, usize>) -> LfResult<Connection> {
    let at = |f: &str| format!("connections[{j}].{f}");
    let output_key = raw
        .output_key
        .as_deref()
        .map(|k| Pick::parse(&at("output_key"), k))
        .transpose()?
        .unwrap_or(Pick::Whole);
    let input_parameter = InputParameter::parse(&at("input_parameter"), &raw.input_parameter)?;
    let condition = raw
        .condition
        .as_ref()
        .map(|c| {
            Condition::parse(c)
                .map_err(|e| invalid(format!("{}: {e}", at("condition"))).with_field(&at("condition")))
        })
        .transpose()?;
    let merge_strategy = raw
        .merge_strategy
        .as_deref()
        .map(|s| {
            MergeStrategy::parse(s).map_err(|e| {
                invalid(format!("{}: {}", at("merge_strategy"), e.message()))
                    .with_field(&at("merge_strategy"))
            })
        })
        .transpose()?;
    let from = *keys.get(&raw.from_step).ok_or_else(|| {
        invalid(format!("Connection references unknown from_step \"{}\".", lf_core::clip(&raw.from_step, 64)))
            .with_field(&at("from_step"))
    })?;
    let to = *keys.get(&raw.to_step).ok_or_else(|| {
        invalid(format!("Connection references unknown to_step \"{}\".", lf_core::clip(&raw.to_step, 64)))
            .with_field(&at("to_step"))
    })?;
    if from == to {
        return Err(invalid(format!("Connection cannot link step \"{}\" to itself.", raw.from_step))
            .with_field(&at("to_step")));
    }
    Ok(Connection { from, output_key, to, input_parameter, condition, merge_strategy })
}
