//! A version laid out for running: nodes by index, their connections, the
//! retry rule of each, loop bodies and try scopes. Made once per run from
//! the pinned version; the engine reads nothing else of the workflow.

use serde_json::Value;

use crate::catalog::{Category, RetryBehavior, SideEffect, catalog, normalize_config};
use crate::condition::Condition;
use crate::dag::Dag;
use crate::model::{Connector, LensBinding, MergeStrategy, NodeKind, WorkflowVersion};
use crate::path::Pick;

/// The output every node has when it fails: `{code, message, node}`.
pub const ERROR_PORT: &str = "error";

/// Retries of a lens step: the model's.
const LENS_RETRY: RetryBehavior = RetryBehavior {
    max_attempts: 3,
    backoff_ms: 1_000,
    retry_on: &["timeout", "provider_error", "rate_limit"],
};

/// What the engine does with a node beyond handing it to an executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The trigger: its output is the run's inputs.
    Trigger,
    /// Run by an executor.
    Work,
    /// `wait_delay`: a durable timer kept by the engine.
    Wait,
    /// `loop_map`: its body runs once per item.
    Loop,
    /// `try_catch`: guards the steps after its `try` output.
    Try,
    /// `error_catch`: may end the run after it (`continue_on_error: false`).
    Catch,
    /// `stop_return`: ends the run with its output.
    Stop,
}

impl Role {
    /// The role of a step of `kind` and `node_type`.
    pub fn of(kind: NodeKind, node_type: &str) -> Role {
        match (kind, node_type) {
            (NodeKind::Trigger, _) => Role::Trigger,
            (_, "wait_delay") => Role::Wait,
            (_, "loop_map") => Role::Loop,
            (_, "try_catch") => Role::Try,
            (_, "error_catch") => Role::Catch,
            (_, "stop_return") => Role::Stop,
            _ => Role::Work,
        }
    }

    /// Whether an executor runs it (the others the engine settles itself).
    pub const fn is_executed(self) -> bool {
        matches!(self, Role::Work | Role::Catch | Role::Stop)
    }
}

/// One connection into a node.
#[derive(Clone, Debug)]
pub struct Wire {
    pub from: u32,
    pub pick: Pick,
    pub param: String,
    pub condition: Option<Condition>,
    pub strategy: MergeStrategy,
}

/// One node, as the engine sees it.
#[derive(Clone, Debug)]
pub struct PlanNode {
    pub key: String,
    pub node_type: String,
    pub role: Role,
    pub config: serde_json::Map<String, Value>,
    pub parameters: serde_json::Map<String, Value>,
    /// A lens step's lens, and the version it pins.
    pub lens: Option<LensBinding>,
    /// The saved connection it names, opened by its executor.
    pub connector: Option<Connector>,
    pub retry: RetryBehavior,
    /// Whether it calls a model (and so costs credits).
    pub calls_model: bool,
    /// Whether it reaches outside the server (it gets an idempotency key).
    pub outside_effect: bool,
    /// Connections into it, in blueprint order.
    pub wires: Vec<Wire>,
    /// The loop whose body it is in.
    pub in_loop: Option<u32>,
    /// The `try_catch` nodes whose guarded steps include it, innermost first.
    pub guarded_by: Vec<u32>,
}

/// A version ready to run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub nodes: Vec<PlanNode>,
    /// Node indexes in an order where every connection goes forward.
    pub order: Vec<u32>,
    pub trigger: u32,
    /// Per loop node: its body's nodes, and the body's last nodes (those
    /// whose result is the item's result).
    pub loops: Vec<(u32, Vec<u32>, Vec<u32>)>,
    /// Per try node: the steps it guards.
    pub scopes: Vec<(u32, Vec<u32>)>,
    /// Whether any node's connection leaves from its `error` output.
    pub catches_error: Vec<bool>,
}

impl Plan {
    /// Lays `v` out. Fails, saying why, on what the engine cannot run:
    /// no single trigger, a cycle, a loop inside a loop's body.
    pub fn new(v: &WorkflowVersion) -> Result<Plan, String> {
        let index = |id| v.nodes.iter().position(|n| n.id == id).map(|i| i as u32);
        let mut nodes: Vec<PlanNode> = v
            .nodes
            .iter()
            .map(|n| {
                let spec = catalog().get(n.node_type.as_str());
                let role = Role::of(n.kind, n.node_type.as_str());
                let (retry, calls_model, outside_effect) = match (n.kind, spec) {
                    (NodeKind::Lens, _) => (LENS_RETRY, true, false),
                    (_, Some(s)) => (
                        s.retry_behavior,
                        matches!(s.category, Category::Lens | Category::AiPrimitive),
                        s.side_effect_policy != SideEffect::None,
                    ),
                    (_, None) => {
                        (RetryBehavior { max_attempts: 1, backoff_ms: 0, retry_on: &[] }, false, false)
                    }
                };
                PlanNode {
                    key: n.key.as_str().to_owned(),
                    node_type: n.node_type.as_str().to_owned(),
                    role,
                    // Aliases renamed and defaults applied, so the engine and the
                    // executors read one spelling.
                    config: spec.map_or_else(|| n.config.clone(), |s| normalize_config(s, &n.config)),
                    parameters: n.parameters.clone(),
                    lens: n.lens,
                    connector: n.connector.clone(),
                    retry,
                    calls_model,
                    outside_effect,
                    wires: Vec::new(),
                    in_loop: None,
                    guarded_by: Vec::new(),
                }
            })
            .collect();
        let mut pairs = Vec::with_capacity(v.edges.len());
        let mut edges = v.edges.iter().collect::<Vec<_>>();
        edges.sort_by_key(|e| e.ordinal);
        for e in edges {
            let (Some(from), Some(to)) = (index(e.from), index(e.to)) else {
                return Err("a connection names a step that is not in the version".into());
            };
            pairs.push((from, to));
            nodes[to as usize].wires.push(Wire {
                from,
                pick: e.output_key.clone(),
                param: e.input_parameter.as_str().to_owned(),
                condition: e.condition.clone(),
                strategy: e.merge_strategy.unwrap_or(MergeStrategy::LastWriteWins),
            });
        }
        let dag = Dag::new(nodes.len(), &pairs);
        if !dag.cycles().is_empty() {
            return Err("the steps form a cycle; connections must go one way".into());
        }
        let triggers: Vec<u32> =
            (0..nodes.len() as u32).filter(|&i| nodes[i as usize].role == Role::Trigger).collect();
        let [trigger] = triggers[..] else {
            return Err(format!(
                "a workflow runs from exactly one trigger step; this version has {}",
                triggers.len()
            ));
        };
        let order = dag.topological_order();
        // (from, to, the output field it leaves from), for the closures below.
        let links: Vec<(u32, u32, Option<String>)> = nodes
            .iter()
            .enumerate()
            .flat_map(|(to, n)| {
                n.wires.iter().map(move |w| (w.from, to as u32, w.pick.field().map(str::to_owned)))
            })
            .collect();
        let outgoing = |from: u32, port: &str| -> Vec<u32> {
            links
                .iter()
                .filter(|(f, _, p)| *f == from && p.as_deref() == Some(port))
                .map(|(_, t, _)| *t)
                .collect()
        };
        let count = nodes.len() as u32;
        let closure = |starts: &[u32]| -> Vec<u32> {
            let seen = dag.reachable_from(starts);
            (0..count).filter(|&i| seen[i as usize]).collect()
        };

        let mut loops = Vec::new();
        for i in 0..nodes.len() as u32 {
            if nodes[i as usize].role != Role::Loop {
                continue;
            }
            let body = closure(&outgoing(i, "item"));
            if let Some(&inner) = body.iter().find(|&&b| nodes[b as usize].role == Role::Loop) {
                return Err(format!(
                    "step {} is a loop_map inside the body of loop_map {}; put the inner steps in a sub_workflow",
                    nodes[inner as usize].key, nodes[i as usize].key
                ));
            }
            if let Some(&stop) =
                body.iter().find(|&&b| matches!(nodes[b as usize].role, Role::Trigger | Role::Stop))
            {
                return Err(format!(
                    "step {} cannot be inside the body of loop_map {}",
                    nodes[stop as usize].key, nodes[i as usize].key
                ));
            }
            if body.contains(&i) {
                return Err(format!("loop_map {} feeds itself", nodes[i as usize].key));
            }
            let last = body
                .iter()
                .copied()
                .filter(|&b| !links.iter().any(|(f, t, _)| *f == b && body.contains(t)))
                .collect();
            for &b in &body {
                nodes[b as usize].in_loop = Some(i);
            }
            loops.push((i, body, last));
        }

        let mut scopes = Vec::new();
        for i in 0..nodes.len() as u32 {
            if nodes[i as usize].role != Role::Try {
                continue;
            }
            let catch = catch_port(&nodes[i as usize]);
            let tried: Vec<u32> = links
                .iter()
                .filter(|(f, _, p)| *f == i && p.as_deref() != Some(catch.as_str()))
                .map(|(_, t, _)| *t)
                .collect();
            let after_catch = closure(&outgoing(i, &catch));
            let scope: Vec<u32> = closure(&tried).into_iter().filter(|s| !after_catch.contains(s)).collect();
            scopes.push((i, scope));
        }
        // Innermost first: a smaller scope inside a larger one.
        scopes.sort_by_key(|(_, s)| s.len());
        for (t, scope) in &scopes {
            for &s in scope {
                nodes[s as usize].guarded_by.push(*t);
            }
        }
        let catches_error = (0..nodes.len() as u32).map(|i| !outgoing(i, ERROR_PORT).is_empty()).collect();
        Ok(Plan { nodes, order, trigger, loops, scopes, catches_error })
    }

    pub fn node(&self, i: u32) -> &PlanNode {
        &self.nodes[i as usize]
    }

    /// The body and last nodes of loop `l`.
    pub fn body(&self, l: u32) -> (&[u32], &[u32]) {
        self.loops
            .iter()
            .find(|(n, _, _)| *n == l)
            .map(|(_, b, last)| (b.as_slice(), last.as_slice()))
            .unwrap_or((&[], &[]))
    }

    /// The steps try node `t` guards.
    pub fn scope(&self, t: u32) -> &[u32] {
        self.scopes.iter().find(|(n, _)| *n == t).map(|(_, s)| s.as_slice()).unwrap_or(&[])
    }

    /// Whether `i` is a try node's catch output's connection source, for
    /// wire `w` into some node.
    pub fn is_catch_wire(&self, w: &Wire) -> bool {
        let from = self.node(w.from);
        from.role == Role::Try && w.pick.field() == Some(catch_port(from).as_str())
    }
}

/// The name of a try node's error output (`catch_branch`, default `catch`).
pub fn catch_port(n: &PlanNode) -> String {
    n.config.get("catch_branch").and_then(Value::as_str).unwrap_or("catch").to_owned()
}
