//! What the run tools share: a run's status words, its cost and error,
//! its node results in the order a reader follows them, and the summary a
//! listing shows. Inputs and outputs shown to a reader have secret-named
//! fields redacted, as get_workflow redacts a trigger's config.

use std::cmp::Reverse;

use lf_core::Timestamp;
use lf_workflow::Node;
use lf_workflow::engine::{LogLine, NodeRun, NodeStatus, Plan, RunError, RunStatus, Usage};
use lf_workflow::run::{Run, RunLog};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a run stands.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatusIn {
    Pending,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl From<RunStatusIn> for RunStatus {
    fn from(s: RunStatusIn) -> Self {
        match s {
            RunStatusIn::Pending => RunStatus::Pending,
            RunStatusIn::Running => RunStatus::Running,
            RunStatusIn::Completed => RunStatus::Completed,
            RunStatusIn::Failed => RunStatus::Failed,
            RunStatusIn::Cancelled => RunStatus::Cancelled,
        }
    }
}

pub fn time(t: Option<Timestamp>) -> Option<String> {
    t.map(|t| t.to_rfc3339())
}

/// `v` with the value of every secret-named field, at any depth, redacted.
pub fn redacted(mut v: Value) -> Value {
    lf_workflow::secrets::redact_value(&mut v);
    v
}

/// What model calls cost.
#[derive(Serialize, JsonSchema)]
pub struct CostOut {
    pub model_calls: u32,
    pub tokens_used: u64,
}

impl From<Usage> for CostOut {
    fn from(u: Usage) -> Self {
        CostOut { model_calls: u.model_calls, tokens_used: u.tokens }
    }
}

/// Why a run ended other than by completing.
#[derive(Serialize, JsonSchema)]
pub struct RunErrorOut {
    /// node_failed, budget_exceeded, timeout, cancelled or stopped.
    pub code: String,
    pub message: String,
    /// The step it is about, when one is.
    pub step: Option<String>,
}

impl From<&RunError> for RunErrorOut {
    fn from(e: &RunError) -> Self {
        RunErrorOut { code: e.code.clone(), message: e.message.clone(), step: e.node.clone() }
    }
}

/// Why a step failed.
#[derive(Serialize, JsonSchema)]
pub struct NodeErrorOut {
    /// timeout, provider_error, rate_limit, status_5xx, blocked, invalid_input, budget_exceeded…
    pub code: String,
    pub message: String,
}

/// One step's result (for a step inside a loop, one item's).
#[derive(Serialize, JsonSchema)]
pub struct NodeResultOut {
    /// The node's id (get_workflow_graph's nodes).
    pub node_id: String,
    /// pending, running, retrying, completed, failed, skipped or cancelled.
    pub status: &'static str,
    pub output: Option<Value>,
    pub tokens_used: u64,
    pub cost_credits: u64,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    /// The step's key.
    pub step: String,
    pub node_type: String,
    /// The loop item it ran for; null outside a loop.
    pub item: Option<u32>,
    /// Its resolved input: parameters merged with wired values.
    pub input: Option<Value>,
    pub error: Option<NodeErrorOut>,
    /// Attempts made so far.
    pub attempts: u32,
    /// The line it wrote to the run's log (a logger step's); null for others.
    pub log: Option<LogLineOut>,
}

/// A line a step wrote to the run's log.
#[derive(Serialize, JsonSchema)]
pub struct LogLineOut {
    /// debug, info, warn or error.
    pub level: &'static str,
    pub message: String,
}

impl From<&LogLine> for LogLineOut {
    fn from(l: &LogLine) -> Self {
        LogLineOut { level: l.level.as_str(), message: l.message.clone() }
    }
}

/// One entry of a run's log: a slot that has a result, or a node that has
/// none yet (pending).
pub struct Entry<'a> {
    pub node: &'a Node,
    pub item: Option<u32>,
    pub result: Option<&'a NodeRun>,
    /// The node's place in the plan's order.
    order: usize,
}

impl Entry<'_> {
    pub fn status(&self) -> NodeStatus {
        self.result.map_or(NodeStatus::Pending, |r| r.status)
    }

    fn started_at(&self) -> Option<Timestamp> {
        self.result.and_then(|r| r.started_at)
    }
}

/// Every node of the run's version with its results, ordered by start
/// time; what has not started comes last, in plan order.
pub fn entries(log: &RunLog) -> Vec<Entry<'_>> {
    let nodes = &log.version.nodes;
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    if let Ok(plan) = Plan::new(&log.version) {
        for (pos, &i) in plan.order.iter().enumerate() {
            if let Some(o) = order.get_mut(i as usize) {
                *o = pos;
            }
        }
    }
    let mut has_slot = vec![false; nodes.len()];
    let mut out: Vec<Entry<'_>> = Vec::new();
    for (slot, result) in &log.run.state.slots {
        let i = slot.node as usize;
        if let Some(node) = nodes.get(i) {
            has_slot[i] = true;
            out.push(Entry { node, item: slot.item, result: Some(result), order: order[i] });
        }
    }
    for (i, node) in nodes.iter().enumerate().filter(|(i, _)| !has_slot[*i]) {
        out.push(Entry { node, item: None, result: None, order: order[i] });
    }
    out.sort_by_key(|e| (Reverse(e.started_at().is_some()), e.started_at(), e.order, e.item));
    out
}

impl From<&Entry<'_>> for NodeResultOut {
    fn from(e: &Entry<'_>) -> Self {
        let r = e.result;
        let usage = r.map(|r| r.usage).unwrap_or_default();
        NodeResultOut {
            node_id: e.node.id.to_string(),
            status: e.status().as_str(),
            output: r.and_then(|r| r.output.clone()).map(redacted),
            tokens_used: usage.tokens,
            cost_credits: usage.credits,
            started_at: time(r.and_then(|r| r.started_at)),
            completed_at: time(r.and_then(|r| r.finished_at)),
            step: e.node.key.as_str().to_owned(),
            node_type: e.node.node_type.as_str().to_owned(),
            item: e.item,
            input: r.and_then(|r| r.input.clone()).map(redacted),
            error: r
                .and_then(|r| r.error.as_ref())
                .map(|f| NodeErrorOut { code: f.code.clone(), message: f.message.clone() }),
            attempts: r.map_or(0, |r| r.attempt),
            log: r.and_then(|r| r.log.as_ref()).map(LogLineOut::from),
        }
    }
}

/// A run as listings show it.
#[derive(Serialize, JsonSchema)]
pub struct RunSummaryOut {
    pub id: String,
    pub workflow_id: String,
    /// The version number it runs.
    pub version: u32,
    pub status: &'static str,
    /// manual, retry, schedule, webhook, event, sub_workflow, battle, lens or team.
    pub origin: &'static str,
    pub created_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    /// The lenser who started it.
    pub started_by: String,
    /// The AI Lenser that started it for its owner (null when a person did).
    pub by_agent: Option<String>,
    /// The run it retries.
    pub parent_run_id: Option<String>,
}

impl From<&Run> for RunSummaryOut {
    fn from(r: &Run) -> Self {
        RunSummaryOut {
            id: r.id.to_string(),
            workflow_id: r.workflow_id.to_string(),
            version: r.version,
            status: r.status().as_str(),
            origin: r.origin.as_str(),
            created_at: r.created_at.to_rfc3339(),
            started_at: time(r.state.started_at),
            completed_at: time(r.state.finished_at),
            started_by: r.started_by.to_string(),
            by_agent: r.agent.map(|a| a.to_string()),
            parent_run_id: r.parent_run_id.map(|p| p.to_string()),
        }
    }
}
