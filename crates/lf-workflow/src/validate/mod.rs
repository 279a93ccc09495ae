//! The validator: a pure, deterministic function from a graph, the node
//! catalog and [`Facts`] to a [`Report`], linear in nodes plus edges.
//!
//! It reads a loose [`Graph`], not a [`WorkflowVersion`]: a parsed version
//! cannot hold a missing id or a dangling edge, but rows read back from a
//! database, an import or a test can, and the original's codes for those
//! (NODE_ID_MISSING, EDGE_SOURCE_MISSING, …) are kept. A stored version is
//! viewed as a graph with [`Graph::of_version`], which copies nothing but
//! edge endpoints that name no node.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::catalog::{Catalog, Category, ConnectorUse, FieldKind, check_config};
use crate::connection::ToolMode;
use crate::dag::Dag;
use crate::graph::{FastMap, blank};
pub use crate::graph::{Graph, GraphEdge, GraphNode};
use crate::lookup::{Facts, LensFacts, SavedConnection};
#[cfg(doc)]
use crate::model::WorkflowVersion;

use crate::model::{JsonObject, MergeStrategy, NodeId, NodeKind};
use crate::path::{MAX_PICK_CHARS, Pick, WHOLE};

mod uses;
use uses::lens_of;
pub use uses::{connection_refs, lens_uses, mcp_tool_refs};

/// The output every node has besides its own: its error, when it fails
/// (what `error_catch` is connected from).
pub const ERROR_OUTPUT: &str = "error";

lf_core::word_enum!(
    /// What an issue is about. Stable: clients match on these.
    IssueCode, "code", [
        WorkflowEmpty = "WORKFLOW_EMPTY",
        NodeIdMissing = "NODE_ID_MISSING",
        NodeIdDuplicate = "NODE_ID_DUPLICATE",
        NodeKindUnknown = "NODE_KIND_UNKNOWN",
        NodeTypeUnknown = "NODE_TYPE_UNKNOWN",
        ConfigInvalid = "CONFIG_INVALID",
        EdgeSourceMissing = "EDGE_SOURCE_MISSING",
        EdgeTargetMissing = "EDGE_TARGET_MISSING",
        EdgeParameterMissing = "EDGE_PARAMETER_MISSING",
        EdgeOutputKeyInvalid = "EDGE_OUTPUT_KEY_INVALID",
        EdgeIntoTrigger = "EDGE_INTO_TRIGGER",
        MergeStrategyConflict = "MERGE_STRATEGY_CONFLICT",
        WorkflowCycle = "WORKFLOW_CYCLE",
        UnreachableNode = "UNREACHABLE_NODE",
        LensNotFound = "LENS_NOT_FOUND",
        LensParamUnbound = "LENS_PARAM_UNBOUND",
        ConnectionUnknown = "CONNECTION_UNKNOWN",
        TriggerMissing = "TRIGGER_MISSING",
        MultipleTriggers = "MULTIPLE_TRIGGERS",
        LensParamUnknown = "LENS_PARAM_UNKNOWN",
        ConfigFieldUnknown = "CONFIG_FIELD_UNKNOWN",
        ConnectorUnused = "CONNECTOR_UNUSED",
        OutputKeyUnknown = "OUTPUT_KEY_UNKNOWN",
        EgressRefused = "EGRESS_REFUSED",
        LensLabelMissing = "LENS_LABEL_MISSING",
    ]
);

impl IssueCode {
    /// Whether the code is a warning: the workflow still validates.
    pub const fn is_warning(self) -> bool {
        matches!(
            self,
            IssueCode::TriggerMissing
                | IssueCode::MultipleTriggers
                | IssueCode::LensParamUnknown
                | IssueCode::ConfigFieldUnknown
                | IssueCode::ConnectorUnused
                | IssueCode::OutputKeyUnknown
                | IssueCode::EgressRefused
                | IssueCode::LensLabelMissing
        )
    }
}

/// One error or warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub code: IssueCode,
    pub message: String,
    /// What to change.
    pub hint: String,
    /// The node it is about: an index into [`Report::nodes`].
    pub node: Option<usize>,
    /// The edge it is about: its id, or `edge-<position from 1>`.
    pub edge: Option<String>,
    /// The config field (or `connector`) it is about.
    pub field: Option<String>,
    /// For WORKFLOW_CYCLE: the nodes on the cycle, in order.
    pub cycle: Vec<usize>,
}

/// One node of the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSummary {
    pub id: String,
    pub node_id: Option<NodeId>,
    pub key: Option<String>,
    pub name: String,
    /// `None`: unknown (NODE_KIND_UNKNOWN).
    pub kind: Option<NodeKind>,
    /// Canonical when the catalog knows it, else as written.
    pub node_type: Option<String>,
    /// The names the node's `parameters` assign, sorted.
    pub configured_parameters: Vec<String>,
    /// The input parameters of the connections into it, sorted, once each.
    pub wired_parameters: Vec<String>,
}

/// What the validator found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// No errors.
    pub valid: bool,
    /// Valid, exactly one trigger, and the lenses and connections were
    /// checked (a run starts from one trigger, and a check not made is not
    /// a check passed).
    pub run_ready: bool,
    pub errors: Vec<Issue>,
    pub warnings: Vec<Issue>,
    /// Indices into `nodes`, in dependency order (Kahn's, roots in node
    /// order). Every node with a usable id once when there is no cycle;
    /// nodes on a cycle and downstream of one are left out.
    pub execution_order: Vec<usize>,
    /// Indices into `nodes` of the nodes with no incoming connection.
    pub root_nodes: Vec<usize>,
    /// One per input node, in input order.
    pub nodes: Vec<NodeSummary>,
}

struct Check<'g, 'a> {
    graph: &'g Graph<'a>,
    catalog: &'g Catalog,
    facts: &'g Facts,
    /// Per node, once asked: the output fields its type declares (`None`:
    /// open, or an unknown type).
    outputs: Vec<Option<Option<Vec<String>>>>,
    errors: Vec<Issue>,
    warnings: Vec<Issue>,
}

fn issue(code: IssueCode, message: String, hint: impl Into<String>) -> Issue {
    Issue { code, message, hint: hint.into(), node: None, edge: None, field: None, cycle: Vec::new() }
}

impl Issue {
    fn at_node(mut self, i: usize) -> Self {
        self.node = Some(i);
        self
    }
    fn at_edge(mut self, label: String) -> Self {
        self.edge = Some(label);
        self
    }
    fn at_field(mut self, f: &str) -> Self {
        self.field = Some(f.to_owned());
        self
    }
}

impl Check<'_, '_> {
    fn push(&mut self, i: Issue) {
        if i.code.is_warning() { self.warnings.push(i) } else { self.errors.push(i) }
    }
}

/// Validates `graph` against `catalog`, checking lenses and connections
/// as far as `facts` allow.
pub fn validate(graph: &Graph<'_>, catalog: &Catalog, facts: &Facts) -> Report {
    let n = graph.nodes.len();
    let mut c =
        Check { graph, catalog, facts, outputs: vec![None; n], errors: Vec::new(), warnings: Vec::new() };
    if n == 0 {
        c.push(issue(
            IssueCode::WorkflowEmpty,
            "Add at least one node before running the workflow.".into(),
            "Give the workflow a trigger and at least one step (update_workflow with steps).",
        ));
    }

    // Ids: the first node with an id holds it; later ones are left out.
    let mut index: FastMap<&str, usize> = FastMap::with_capacity_and_hasher(n, Default::default());
    let mut included = vec![false; n];
    for (i, node) in graph.nodes.iter().enumerate() {
        if blank(&node.id) {
            c.push(
                issue(
                    IssueCode::NodeIdMissing,
                    format!("Step {} has no node id.", i + 1),
                    "Give every node an id.",
                )
                .at_node(i),
            );
        } else if index.contains_key(node.id.as_ref()) {
            c.push(
                issue(
                    IssueCode::NodeIdDuplicate,
                    format!("Node id {} is duplicated.", node.id),
                    "Give each node its own id; the later one is ignored.",
                )
                .at_node(i),
            );
        } else {
            index.insert(node.id.as_ref(), i);
            included[i] = true;
        }
    }

    let kinds: Vec<Option<NodeKind>> = graph.nodes.iter().map(|node| kind_of(node, catalog)).collect();
    let mut summaries: Vec<NodeSummary> =
        graph.nodes.iter().enumerate().map(|(i, node)| summary(node, i, kinds[i], catalog)).collect();
    for i in 0..n {
        if included[i] {
            c.node(i, kinds[i], &summaries[i].name);
        }
    }

    // Edges: those with both ends are the graph's.
    let mut links: Vec<(u32, u32)> = Vec::with_capacity(graph.edges.len());
    let mut wired: Vec<Vec<&str>> = vec![Vec::new(); n];
    let mut strategies: HashMap<(usize, String), MergeStrategy> = HashMap::new();
    let mut conflicts: HashSet<(usize, String)> = HashSet::new();
    for (j, e) in graph.edges.iter().enumerate() {
        let label = || {
            e.id.as_deref().map_or_else(
                || e.edge_id.map_or_else(|| format!("edge-{}", j + 1), |id| id.to_string()),
                str::to_owned,
            )
        };
        let from = index.get(e.from.as_ref()).copied();
        let to = index.get(e.to.as_ref()).copied();
        if from.is_none() {
            c.push(
                issue(
                    IssueCode::EdgeSourceMissing,
                    format!("Connection {} references a missing source node.", label()),
                    format!("Connect from a step that exists (not \"{}\").", lf_core::clip(&e.from, 60)),
                )
                .at_edge(label()),
            );
        }
        if to.is_none() {
            c.push(
                issue(
                    IssueCode::EdgeTargetMissing,
                    format!("Connection {} references a missing target node.", label()),
                    format!("Connect to a step that exists (not \"{}\").", lf_core::clip(&e.to, 60)),
                )
                .at_edge(label()),
            );
        }
        let param = if blank(e.input_parameter) { "" } else { e.input_parameter.trim() };
        if param.is_empty() {
            c.push(
                issue(
                    IssueCode::EdgeParameterMissing,
                    format!("Connection {} does not name a target parameter.", label()),
                    "Set input_parameter to the input it feeds: a lens parameter, or `input`.",
                )
                .at_edge(label()),
            );
        }
        // The field a connection picks, when it picks one by name.
        let field = match e.output_key {
            None | Some(WHOLE) => None,
            Some(k) if k.starts_with('$') => {
                if !e.output_key_parsed
                    && let Err(err) = Pick::parse("output_key", k)
                {
                    c.push(
                        issue(
                            IssueCode::EdgeOutputKeyInvalid,
                            format!("Connection {}: {}", label(), err.message()),
                            "Use a field name, `output`, or a JSONPath such as $.items[0].",
                        )
                        .at_edge(label()),
                    );
                }
                None
            }
            Some(k) if k.is_empty() || k.chars().nth(MAX_PICK_CHARS).is_some() || k.contains('\0') => {
                let err =
                    Pick::parse("output_key", k).err().map(|e| e.message().to_owned()).unwrap_or_default();
                c.push(
                    issue(
                        IssueCode::EdgeOutputKeyInvalid,
                        format!("Connection {}: {err}", label()),
                        "Use a field name, `output`, or a JSONPath such as $.items[0].",
                    )
                    .at_edge(label()),
                );
                None
            }
            Some(k) => Some(k),
        };
        let (Some(from), Some(to)) = (from, to) else { continue };
        links.push((from as u32, to as u32));
        if kinds[to] == Some(NodeKind::Trigger) {
            c.push(
                issue(
                    IssueCode::EdgeIntoTrigger,
                    format!(
                        "Connection {} feeds trigger \"{}\": a trigger starts the run and takes no input.",
                        label(),
                        summaries[to].name
                    ),
                    "Remove the connection, or connect to a step after the trigger.",
                )
                .at_edge(label())
                .at_node(to),
            );
        }
        if let Some(field) = field {
            c.output_key(from, field, &summaries[from].name, label);
        }
        if !param.is_empty() {
            wired[to].push(param);
            if let Some(s) = e.merge_strategy {
                let slot = (to, param.to_lowercase());
                match strategies.get(&slot) {
                    Some(prev) if *prev != s && conflicts.insert(slot.clone()) => c.push(
                        issue(
                            IssueCode::MergeStrategyConflict,
                            format!(
                                "Connections into \"{param}\" of \"{}\" ask for both {prev} and {s}.",
                                summaries[to].name
                            ),
                            "Give every connection into one parameter the same merge_strategy.",
                        )
                        .at_node(to)
                        .at_edge(label()),
                    ),
                    Some(_) => {}
                    None => {
                        strategies.insert(slot, s);
                    }
                }
            }
        }
    }
    for (i, w) in wired.iter_mut().enumerate() {
        w.sort_unstable();
        w.dedup();
        summaries[i].wired_parameters = w.iter().map(|s| (*s).to_owned()).collect();
    }

    let dag = Dag::new(n, &links);
    let order: Vec<usize> =
        dag.topological_order().into_iter().map(|v| v as usize).filter(|v| included[*v]).collect();
    for cycle in dag.cycles() {
        let names: Vec<&str> = cycle.iter().map(|v| summaries[*v as usize].name.as_str()).collect();
        let mut i = issue(
            IssueCode::WorkflowCycle,
            "The workflow contains a cycle and cannot be executed in dependency order.".into(),
            format!("{} → {} form a cycle: remove one of these connections.", names.join(" → "), names[0]),
        )
        .at_node(cycle[0] as usize);
        i.cycle = cycle.into_iter().map(|v| v as usize).collect();
        c.push(i);
    }

    let triggers: Vec<u32> =
        (0..n).filter(|i| included[*i] && kinds[*i] == Some(NodeKind::Trigger)).map(|i| i as u32).collect();
    let live = included.iter().filter(|x| **x).count();
    match triggers.len() {
        0 if live > 0 => c.push(issue(IssueCode::TriggerMissing, "No explicit trigger node was found. Add a trigger if this workflow should start from the canvas.".into(), "Add one trigger step (manual_trigger to start runs with run_workflow).")),
        0 | 1 => {}
        t => c.push(issue(IssueCode::MultipleTriggers, format!("The workflow has {t} trigger nodes. Confirm that every trigger is intentional."), "Keep one trigger: a run starts from exactly one.")),
    }
    if !triggers.is_empty() {
        let reached = dag.reachable_from(&triggers);
        let first = &summaries[triggers[0] as usize].name;
        for i in (0..n).filter(|i| included[*i] && !reached[*i]) {
            c.push(
                issue(
                    IssueCode::UnreachableNode,
                    format!(
                        "Step \"{}\" is not connected from trigger \"{first}\", so it never runs.",
                        summaries[i].name
                    ),
                    "Connect it from an upstream step, or remove it.",
                )
                .at_node(i),
            );
        }
    }

    for i in (0..n).filter(|i| included[*i]) {
        c.lens(i, &summaries[i], &summaries[i].wired_parameters);
        c.connection(i, &summaries[i].name);
        c.mcp_tool(i, &summaries[i]);
        c.egress(i, &summaries[i]);
    }

    let valid = c.errors.is_empty();
    Report {
        valid,
        run_ready: valid && triggers.len() == 1 && facts.complete(),
        errors: c.errors,
        warnings: c.warnings,
        root_nodes: dag.roots().into_iter().map(|v| v as usize).filter(|v| included[*v]).collect(),
        execution_order: order,
        nodes: summaries,
    }
}

/// The original's rule: a trigger type makes a trigger; else a lens makes
/// a lens step; else a node type makes a tool. A `lens` type without a
/// lens is nothing.
fn kind_of(node: &GraphNode<'_>, catalog: &Catalog) -> Option<NodeKind> {
    let spec = node.node_type.and_then(|t| catalog.get(t));
    match (node.node_type, spec.map(|s| s.category)) {
        (_, Some(Category::Trigger)) => Some(NodeKind::Trigger),
        _ if node.lens.is_some() => Some(NodeKind::Lens),
        (_, Some(Category::Lens)) | (None, _) => None,
        (Some(_), _) => Some(NodeKind::Tool),
    }
}

fn summary(node: &GraphNode<'_>, i: usize, kind: Option<NodeKind>, catalog: &Catalog) -> NodeSummary {
    let name = node
        .name
        .filter(|s| !s.trim().is_empty())
        .or(node.node_type)
        .map_or_else(|| format!("Step {}", i + 1), str::to_owned);
    let mut configured: Vec<String> =
        node.parameters.map(|p| p.keys().cloned().collect()).unwrap_or_default();
    configured.sort_unstable();
    let node_type = match (kind, node.node_type) {
        (Some(NodeKind::Lens), _) => Some("lens".to_owned()),
        (_, Some(t)) => Some(catalog.get(t).map_or(t, |s| s.node_type).to_owned()),
        (_, None) => None,
    };
    NodeSummary {
        id: node.id.clone().into_owned(),
        node_id: node.node_id,
        key: node.key.map(str::to_owned),
        name,
        kind,
        node_type,
        configured_parameters: configured,
        wired_parameters: Vec::new(),
    }
}

impl Check<'_, '_> {
    /// The node's kind, type and config.
    fn node(&mut self, i: usize, kind: Option<NodeKind>, name: &str) {
        let node = &self.graph.nodes[i];
        let Some(kind) = kind else {
            self.push(issue(IssueCode::NodeKindUnknown, format!("Node {name} has neither a Lens nor a supported node type."), "Give it a lens_id (a lens step) or a node_type of the catalog (call list_workflow_node_types).").at_node(i));
            return;
        };
        let type_name = if kind == NodeKind::Lens { "lens" } else { node.node_type.unwrap_or_default() };
        let Some(spec) = self.catalog.get(type_name) else {
            let closest = self.catalog.closest(type_name, 3);
            let hint = if closest.is_empty() {
                "Call list_workflow_node_types for the types this server runs.".to_owned()
            } else {
                format!(
                    "Did you mean {}? Call describe_workflow_node_type for its config.",
                    closest.join(", ")
                )
            };
            self.push(
                issue(
                    IssueCode::NodeTypeUnknown,
                    format!(
                        "Node {name} uses node type \"{}\", which is not in the node catalog.",
                        lf_core::clip(type_name, 100)
                    ),
                    hint,
                )
                .at_node(i),
            );
            return;
        };
        let empty = JsonObject::new();
        for p in check_config(spec, node.config.unwrap_or(&empty), node.connector.is_some()) {
            let code = if p.unknown { IssueCode::ConfigFieldUnknown } else { IssueCode::ConfigInvalid };
            let hint = format!(
                "Call describe_workflow_node_type with type {} for its config fields.",
                spec.node_type
            );
            self.push(
                issue(code, format!("Step \"{name}\" ({}): {}", spec.node_type, p.message), hint)
                    .at_node(i)
                    .at_field(&p.field),
            );
        }
        let providers = spec.connector.providers().join(" or ");
        match (spec.connector, node.connector) {
            (ConnectorUse::Required(_), None) => self.push(
                issue(IssueCode::ConfigInvalid, format!("Step \"{name}\" ({}) needs a saved {providers} connection.", spec.node_type), format!("Set connector to {{\"provider\": \"{}\", \"connection_ref\": \"<your saved connection>\"}} (list_connections shows them).", spec.connector.providers()[0]))
                    .at_node(i)
                    .at_field("connector"),
            ),
            (ConnectorUse::None, Some(_)) => self.push(
                issue(IssueCode::ConnectorUnused, format!("Step \"{name}\" ({}) uses no connection; its connector is ignored.", spec.node_type), "Remove the connector.").at_node(i).at_field("connector"),
            ),
            (use_, Some(conn)) if !use_.providers().contains(&conn.provider.as_str()) => self.push(
                issue(IssueCode::ConfigInvalid, format!("Step \"{name}\" ({}) takes a {providers} connection, not {}.", spec.node_type, conn.provider), format!("Set connector.provider to {providers} and name a connection of that provider."))
                    .at_node(i)
                    .at_field("connector"),
            ),
            _ => {}
        }
    }

    /// A connection's `output_key` against the fields the upstream type outputs.
    fn output_key(&mut self, from: usize, field: &str, from_name: &str, label: impl Fn() -> String) {
        let (graph, catalog) = (self.graph, self.catalog);
        let names = self.outputs[from].get_or_insert_with(|| {
            let node = &graph.nodes[from];
            let spec = match kind_of(node, catalog) {
                Some(NodeKind::Lens) => catalog.get("lens"),
                _ => node.node_type.and_then(|t| catalog.get(t)),
            };
            let empty = JsonObject::new();
            spec.and_then(|s| s.output_names(node.config.unwrap_or(&empty)))
        });
        let Some(names) = names.as_ref() else { return };
        if field == ERROR_OUTPUT || names.iter().any(|n| n == field) {
            return;
        }
        let names = names.join(", ");
        self.push(
            issue(
                IssueCode::OutputKeyUnknown,
                format!(
                    "Connection {}: step \"{from_name}\" outputs {names}, not \"{}\"; nothing would flow.",
                    label(),
                    lf_core::clip(field, 60)
                ),
                format!("Set output_key to one of {names}, or to {WHOLE} for the whole output."),
            )
            .at_node(from)
            .at_edge(label()),
        );
    }

    /// A lens step's lens, version or label, and parameters.
    fn lens(&mut self, i: usize, s: &NodeSummary, wired: &[String]) {
        let node = &self.graph.nodes[i];
        let Some(binding) = lens_of(node, s) else { return };
        if let Some(label) = &binding.label
            && binding.version_id.is_some()
        {
            self.push(
                issue(
                    IssueCode::ConfigInvalid,
                    format!("Step \"{}\" pins version_id and follows label {label}: it can do one.", s.name),
                    "Remove version_id to run the version the label points at when the step runs, or remove label to keep the pinned version.",
                )
                .at_node(i)
                .at_field("label"),
            );
            return;
        }
        let Some(lenses) = &self.facts.lenses else { return };
        let Some(found) = lenses.get(&binding) else { return };
        let Some(facts) = found else {
            let what = binding.version_id.map_or_else(
                || format!("Lens {}", binding.lens_id),
                |v| format!("Version {v} of lens {}", binding.lens_id),
            );
            self.push(
                issue(
                    IssueCode::LensNotFound,
                    format!("{what} of step \"{}\" was not found, or you cannot see it.", s.name),
                    "Use a lens you can read (search_lenses, or create_lens first).",
                )
                .at_node(i),
            );
            return;
        };
        if let Some(has) = &facts.missing_label {
            let label = binding.label.as_ref().map_or("", |l| l.as_str());
            let has = if has.is_empty() {
                "no labels yet".to_owned()
            } else {
                format!("labels {}", has.join(", "))
            };
            self.push(
                issue(
                    IssueCode::LensLabelMissing,
                    format!(
                        "Lens \"{}\" of step \"{}\" has no label {label} yet (it has {has}): the step fails until it does.",
                        facts.title, s.name
                    ),
                    format!("Set label {label} on the lens (set_lens_label), or name one of its labels."),
                )
                .at_node(i)
                .at_field("label"),
            );
            // Which version will run is not known yet: its parameters are
            // checked once the label exists.
            return;
        }
        self.lens_params(i, s, wired, facts);
    }

    fn lens_params(&mut self, i: usize, s: &NodeSummary, wired: &[String], facts: &LensFacts) {
        let given: HashSet<String> =
            s.configured_parameters.iter().chain(wired).map(|p| p.to_lowercase()).collect();
        let known: HashSet<String> = facts.params.iter().map(|p| p.label.to_lowercase()).collect();
        for p in facts.params.iter().filter(|p| !p.optional && !given.contains(&p.label.to_lowercase())) {
            self.push(
                issue(IssueCode::LensParamUnbound, format!("Step \"{}\" needs parameter \"{}\" of lens \"{}\", which is neither assigned nor connected.", s.name, p.label, facts.title), format!("Give \"{}\" in the step's parameters, or connect an upstream output to input_parameter \"{}\".", p.label, p.label))
                    .at_node(i)
                    .at_field(&p.label),
            );
        }
        let mut seen = HashSet::new();
        let unknown = s.configured_parameters.iter().chain(wired).filter(|p| {
            let k = p.to_lowercase();
            !known.contains(&k) && seen.insert(k)
        });
        for p in unknown.collect::<Vec<_>>() {
            let labels: Vec<&str> = facts.params.iter().map(|p| p.label.as_str()).collect();
            self.push(
                issue(
                    IssueCode::LensParamUnknown,
                    format!(
                        "Step \"{}\" sets \"{}\", which lens \"{}\" does not have; the value is not used.",
                        s.name,
                        lf_core::clip(p, 60),
                        facts.title
                    ),
                    format!(
                        "Its parameters are: {}.",
                        if labels.is_empty() { "none".to_owned() } else { labels.join(", ") }
                    ),
                )
                .at_node(i)
                .at_field(p),
            );
        }
    }

    /// A connector against the owner's saved connections.
    fn connection(&mut self, i: usize, name: &str) {
        let (Some(conn), Some(saved)) = (self.graph.nodes[i].connector, &self.facts.connections) else {
            return;
        };
        let r = conn.connection_ref.as_str();
        let found = saved.iter().find(|s| s.connection_ref == r);
        let message = match found {
            Some(SavedConnection { provider, .. }) if *provider == conn.provider.as_str() => return,
            Some(SavedConnection { provider, .. }) => format!(
                "Step \"{name}\" uses connection \"{r}\" as {}, but it is a {provider} connection.",
                conn.provider
            ),
            None => {
                format!("Step \"{name}\" uses connection \"{r}\" ({}), which is not saved.", conn.provider)
            }
        };
        self.push(
            issue(IssueCode::ConnectionUnknown, message, format!("Save it with `connection add --provider {} --ref {r}` (list_connections shows what is saved), or name a saved one.", conn.provider))
                .at_node(i)
                .at_field("connector"),
        );
    }
}

/// The node type calling a tool of an outside MCP server.
const MCP_TOOL: &str = "mcp_tool";

impl Check<'_, '_> {
    /// An `mcp_tool` step's `tool` against the tools saved with its
    /// connection (when they were looked up): one it does not have, or one
    /// that is `off`, is an error.
    fn mcp_tool(&mut self, i: usize, s: &NodeSummary) {
        if s.node_type.as_deref() != Some(MCP_TOOL) {
            return;
        }
        let node = &self.graph.nodes[i];
        let Some(conn) = node.connector else { return };
        let r = conn.connection_ref.as_str();
        let Some(tools) = self.facts.mcp_tools.get(r) else { return };
        let Some(tool) = node.config.and_then(|c| c.get("tool")).and_then(Value::as_str) else { return };
        let name = &s.name;
        let shown = lf_core::clip(tool, 100);
        let (message, hint) = match tools.iter().find(|(n, _)| n == tool) {
            Some((_, ToolMode::Off)) => (
                format!(
                    "Step \"{name}\" calls tool \"{shown}\" of connection \"{r}\", which is off: it is never called."
                ),
                format!(
                    "Turn it on with set_connection_tool_mode (connection_ref \"{r}\", tool \"{shown}\", mode on), or call another tool."
                ),
            ),
            Some(_) => return,
            None => {
                let mut names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
                names.truncate(20);
                (
                    format!(
                        "Step \"{name}\" calls tool \"{shown}\", which connection \"{r}\" does not have."
                    ),
                    format!(
                        "Its tools are: {}. list_connection_tools shows them; refresh_connection_tools lists them again from the server.",
                        if names.is_empty() { "none".to_owned() } else { names.join(", ") }
                    ),
                )
            }
        };
        self.push(issue(IssueCode::ConfigInvalid, message, hint).at_node(i).at_field("tool"));
    }

    /// Each URL of a step that the egress policy in force refuses whatever
    /// DNS answers: the run would fail on it. A URL with a `[[...]]`
    /// placeholder is only known once the run fills it, and is not judged.
    fn egress(&mut self, i: usize, s: &NodeSummary) {
        let (facts, catalog) = (self.facts, self.catalog);
        let Some(policy) = &facts.egress else { return };
        let Some(config) = self.graph.nodes[i].config else { return };
        let Some(spec) = s.node_type.as_deref().and_then(|t| catalog.get(t)) else { return };
        for f in spec.fields.iter().filter(|f| f.kind == FieldKind::Url) {
            let given = std::iter::once(f.key).chain(f.aliases.iter().copied()).find_map(|k| config.get(k));
            let Some(url) = given.and_then(Value::as_str) else { continue };
            if url.contains("[[") {
                continue;
            }
            let Some(refusal) = policy.refusal(url) else { continue };
            let hint = match &refusal.opened_by {
                Some(setting) => format!(
                    "If the server should reach it, its operator opens the host with {setting} (beside any entries already there) and restarts it; otherwise use another URL."
                ),
                None => format!("Nothing opens a {} address; use another URL.", refusal.reason),
            };
            self.push(
                issue(
                    IssueCode::EgressRefused,
                    format!(
                        "Step \"{}\" ({}) sends to {}, which this server's egress policy refuses ({}): the step will fail when it runs.",
                        s.name,
                        spec.node_type,
                        lf_core::clip(url, 100),
                        refusal.reason
                    ),
                    hint,
                )
                .at_node(i)
                .at_field(f.key),
            );
        }
    }
}
