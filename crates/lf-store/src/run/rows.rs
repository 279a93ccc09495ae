//! `workflow_runs` and `workflow_node_results` rows, as both backends read
//! and write them (see the `0008_runs.sql` / `0007_runs.sql` migrations,
//! `0015_row_agents.sql` / `0014_row_agents.sql` for `agent_id`, and
//! `0019_node_log.sql` / `0015_node_log.sql` for a step's log line,
//! `0021_run_causes.sql` / `0017_run_causes.sql` for a run's cause and root).
//! JSON values are text, numbers `bigint` (INTEGER), a slot's missing loop
//! item -1. Reading back is strict, as for workflows: a value lf-workflow
//! would refuse is a corrupt row (INTERNAL).

use lf_core::{LenserId, LfResult, WorkflowId};
use lf_workflow::WorkflowVersionId;
use lf_workflow::engine::{
    Failure, Limits, LogLevel, LogLine, NodeRun, NodeStatus, RunError, RunState, RunStatus, Slot, Usage,
};
use lf_workflow::run::{IdempotencyKey, Run, RunId, RunOrigin};
use serde_json::Value;
use uuid::Uuid;

use crate::dialect::{Bind, Columns};
use crate::error::corrupt;
use crate::workflow::rows::valid;

/// The columns of `workflow_runs` that make a [`Run`], in the order
/// [`bind_run`] binds them: the run's own, then its state's
/// ([`state_columns`]).
macro_rules! run_columns {
    () => {
        concat!(
            "id, workflow_id, version_id, version, workflow_owner, started_by, agent_id, origin, \
             parent_run_id, resume_from, idempotency_key, global_model_id, created_at, cancel_requested_by, \
             caused_by, root_run_id, tree_full_at, ",
            crate::run::rows::state_columns!()
        )
    };
}
pub(crate) use run_columns;

/// The columns of a run's state without its slots, in the order
/// [`bind_state`] binds them.
macro_rules! state_columns {
    () => {
        "status, inputs, parallel, budget_credits, run_timeout_ms, node_timeout_ms, started_at, finished_at, \
         result, error_code, error_message, error_node"
    };
}
pub(crate) use state_columns;

/// The columns of `workflow_node_results`, in the order [`bind_node_result`]
/// binds them.
macro_rules! node_result_columns {
    () => {
        "run_id, node, item, status, attempt, input, output, error_code, error_message, wake_at, started_at, \
         finished_at, model_calls, tokens, credits, log_level, log_message"
    };
}
pub(crate) use node_result_columns;

/// A count that lf-workflow holds as `u64`, as a `bigint`. One past
/// `i64::MAX` is more than any run spends or waits: it is stored as
/// `i64::MAX`.
fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn unsigned(n: i64, column: &str) -> LfResult<u64> {
    u64::try_from(n).map_err(|_| corrupt(format!("{column}: {n} is negative")))
}

fn small(n: i64, column: &str) -> LfResult<u32> {
    u32::try_from(n).map_err(|_| corrupt(format!("{column}: {n} is out of range")))
}

fn json_text(v: &Value) -> String {
    v.to_string()
}

fn json(text: Option<String>, column: &str) -> LfResult<Option<Value>> {
    text.map(|t| valid(serde_json::from_str(&t), column)).transpose()
}

/// The run of a row of [`run_columns`], without its slots.
pub(crate) fn run(row: &impl Columns) -> LfResult<Run> {
    let error = match row.value::<Option<String>>("error_code")? {
        None => None,
        Some(code) => {
            Some(RunError { code, message: row.value("error_message")?, node: row.value("error_node")? })
        }
    };
    let state = RunState {
        status: valid(RunStatus::parse(row.text("status")?), "workflow_runs.status")?,
        inputs: valid(serde_json::from_str(row.text("inputs")?), "workflow_runs.inputs")?,
        limits: Limits {
            parallel: small(row.value("parallel")?, "workflow_runs.parallel")?,
            budget_credits: row
                .value::<Option<i64>>("budget_credits")?
                .map(|n| unsigned(n, "workflow_runs.budget_credits"))
                .transpose()?,
            run_timeout_ms: unsigned(row.value("run_timeout_ms")?, "workflow_runs.run_timeout_ms")?,
            node_timeout_ms: unsigned(row.value("node_timeout_ms")?, "workflow_runs.node_timeout_ms")?,
        },
        slots: Default::default(),
        started_at: row.opt_time("started_at")?,
        finished_at: row.opt_time("finished_at")?,
        result: json(row.value("result")?, "workflow_runs.result")?,
        error,
    };
    let run_id = |col: &str| Ok::<_, lf_core::LfError>(row.value::<Option<Uuid>>(col)?.map(RunId::from_uuid));
    let id = RunId::from_uuid(row.value("id")?);
    Ok(Run {
        id,
        workflow_id: WorkflowId::from_uuid(row.value("workflow_id")?),
        version_id: WorkflowVersionId::from_uuid(row.value("version_id")?),
        version: small(row.value("version")?, "workflow_runs.version")?,
        workflow_owner: LenserId::from_uuid(row.value("workflow_owner")?),
        started_by: LenserId::from_uuid(row.value("started_by")?),
        agent: row.value::<Option<Uuid>>("agent_id")?.map(LenserId::from_uuid),
        origin: valid(RunOrigin::parse(row.text("origin")?), "workflow_runs.origin")?,
        parent_run_id: run_id("parent_run_id")?,
        caused_by: run_id("caused_by")?,
        // A run made before roots were kept is its own.
        root_run_id: run_id("root_run_id")?.unwrap_or(id),
        tree_full_at: row.opt_time("tree_full_at")?,
        idempotency_key: valid(
            row.value::<Option<String>>("idempotency_key")?
                .map(|k| IdempotencyKey::parse("idempotency_key", &k))
                .transpose(),
            "workflow_runs.idempotency_key",
        )?,
        global_model_id: row.value("global_model_id")?,
        resume_from: run_id("resume_from")?,
        created_at: row.time("created_at")?,
        cancel_requested_by: row.value("cancel_requested_by")?,
        state,
    })
}

/// Binds a new `workflow_runs` row, in [`run_columns`] order.
pub(crate) fn bind_run<Q: Bind>(q: Q, r: &Run) -> Q {
    let q = q
        .put(r.id.as_uuid())
        .put(r.workflow_id.as_uuid())
        .put(r.version_id.as_uuid())
        .put(i64::from(r.version))
        .put(r.workflow_owner.as_uuid())
        .put(r.started_by.as_uuid())
        .put(r.agent.map(|a| a.as_uuid()))
        .put(r.origin.as_str().to_owned())
        .put(r.parent_run_id.map(|id| id.as_uuid()))
        .put(r.resume_from.map(|id| id.as_uuid()))
        .put(r.idempotency_key.as_ref().map(|k| k.as_str().to_owned()))
        .put(r.global_model_id.clone())
        .put_time(r.created_at)
        .put(r.cancel_requested_by.clone())
        .put(r.caused_by.map(|id| id.as_uuid()))
        .put(r.root_run_id.as_uuid())
        .put_opt_time(r.tree_full_at);
    bind_state(q, &r.state)
}

/// Binds a run's state without its slots, in [`state_columns`] order.
pub(crate) fn bind_state<Q: Bind>(q: Q, s: &RunState) -> Q {
    let error = s.error.as_ref();
    q.put(s.status.as_str().to_owned())
        .put(json_text(&s.inputs))
        .put(i64::from(s.limits.parallel))
        .put(s.limits.budget_credits.map(big))
        .put(big(s.limits.run_timeout_ms))
        .put(big(s.limits.node_timeout_ms))
        .put_opt_time(s.started_at)
        .put_opt_time(s.finished_at)
        .put(s.result.as_ref().map(json_text))
        .put(error.map(|e| e.code.clone()))
        .put(error.map(|e| e.message.clone()))
        .put(error.and_then(|e| e.node.clone()))
}

/// A slot's loop item as stored: -1 for none.
fn item(slot: Slot) -> i64 {
    slot.item.map_or(-1, i64::from)
}

/// A `workflow_node_results` row, as `run::sql::NODE_RESULTS` selects it.
pub(crate) fn node_result(row: &impl Columns) -> LfResult<(Slot, NodeRun)> {
    let item = match row.value::<i64>("item")? {
        -1 => None,
        n => Some(small(n, "workflow_node_results.item")?),
    };
    let slot = Slot { node: small(row.value("node")?, "workflow_node_results.node")?, item };
    let error = match row.value::<Option<String>>("error_code")? {
        None => None,
        Some(code) => Some(Failure { code, message: row.value("error_message")? }),
    };
    let log = match row.value::<Option<String>>("log_level")? {
        None => None,
        Some(level) => Some(LogLine {
            level: valid(LogLevel::parse(&level), "workflow_node_results.log_level")?,
            message: row.value("log_message")?,
        }),
    };
    let node = NodeRun {
        status: valid(NodeStatus::parse(row.text("status")?), "workflow_node_results.status")?,
        attempt: small(row.value("attempt")?, "workflow_node_results.attempt")?,
        input: json(row.value("input")?, "workflow_node_results.input")?,
        output: json(row.value("output")?, "workflow_node_results.output")?,
        error,
        wake_at: row.opt_time("wake_at")?,
        started_at: row.opt_time("started_at")?,
        finished_at: row.opt_time("finished_at")?,
        usage: Usage {
            model_calls: small(row.value("model_calls")?, "workflow_node_results.model_calls")?,
            tokens: unsigned(row.value("tokens")?, "workflow_node_results.tokens")?,
            credits: unsigned(row.value("credits")?, "workflow_node_results.credits")?,
        },
        log,
    };
    Ok((slot, node))
}

/// Binds a `workflow_node_results` row of run `run`, in
/// [`node_result_columns`] order.
pub(crate) fn bind_node_result<Q: Bind>(q: Q, run: RunId, slot: Slot, n: &NodeRun) -> Q {
    let error = n.error.as_ref();
    q.put(run.as_uuid())
        .put(i64::from(slot.node))
        .put(item(slot))
        .put(n.status.as_str().to_owned())
        .put(i64::from(n.attempt))
        .put(n.input.as_ref().map(json_text))
        .put(n.output.as_ref().map(json_text))
        .put(error.map(|e| e.code.clone()))
        .put(error.map(|e| e.message.clone()))
        .put_opt_time(n.wake_at)
        .put_opt_time(n.started_at)
        .put_opt_time(n.finished_at)
        .put(i64::from(n.usage.model_calls))
        .put(big(n.usage.tokens))
        .put(big(n.usage.credits))
        .put(n.log.as_ref().map(|l| l.level.as_str().to_owned()))
        .put(n.log.as_ref().map(|l| l.message.clone()))
}
