//! MCP's tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) over
//! workflow runs and experiments: the task is the run or the experiment.
//!
//! A client that declared the extension (in its `initialize` capabilities,
//! or in a request's own `_meta`) and calls a tool that starts one
//! ([`crate::Tool::STARTS_TASK`]: run_workflow, run_experiment) gets a
//! `CreateTaskResult` whose task id is the run's or the experiment's id
//! instead of the tool's result; a client that did not gets the result.
//! `tasks/get` reads it and `tasks/cancel` cancels it, through
//! [`lf_workflow::run::RunService`] or
//! [`lf_eval::experiment::ExperimentService`] as the caller of that request
//! (a task id is looked up as a run first, then as an experiment). There
//! is no task table: a task is as durable as its run or experiment, so
//! any process on the same database answers for it, also after a restart,
//! and it lives as long as that row (`ttlMs` null).
//!
//! A run's status is its task's:
//! - pending and running: `working`;
//! - completed and failed: `completed`, its `result` what
//!   get_workflow_run_status answers of the run, with `isError: true` when it
//!   failed (the extension keeps `failed` for JSON-RPC errors, and a run
//!   that ends has its answer);
//! - cancelled: `cancelled`.
//!
//! An experiment's likewise: running is `working`; completed and
//! budget_spent are `completed`, its `result` what get_experiment answers;
//! cancelled is `cancelled`.
//!
//! Neither asks the client for input: no task is `input_required`, and
//! `tasks/update` is acknowledged with its responses ignored, as the
//! extension says of responses to no outstanding request.
//!
//! Who may do what is the services': a run's task is readable by whoever
//! may read its run's workflow version, an experiment's by whoever may
//! read the experiment (anyone else gets the error an unknown id gets);
//! only the run's starter and the workflow's owner may cancel a run, only
//! its owner an experiment. A task id is a UUID v7: 74 random bits
//! besides its time.

use lf_core::{ErrorCode, LfError, LfResult, Principal, Timestamp, clip};
use lf_eval::experiment::{ExperimentId, ExperimentStatus, ExperimentView};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunId};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};

use crate::catalog::CatalogOptions;
use crate::catalog::errors::request_error;
use crate::catalog::hygiene::sanitize_text;
use crate::catalog::output::ToolOutput;
use crate::catalog::services::Services;
use crate::catalog::tool::Started;
use crate::groups::eval::{self, ExperimentViewOut};
use crate::groups::workflow::{self, RunStatusOut};

/// How often a client should poll a task (`pollIntervalMs`): runs take
/// seconds to hours, and a status read is two indexed reads.
pub(crate) const POLL_INTERVAL_MS: u64 = 1_000;

/// Whether a server with `options` declares the extension: when it serves
/// the Workflow or the Eval group, whose runs and experiments the tasks
/// are (with dynamic toolsets, a session may enable them). Read-only, it
/// answers `tasks/get` and refuses `tasks/cancel`.
pub(crate) fn offered(options: &CatalogOptions) -> bool {
    options.dynamic
        || [&workflow::GROUP, &eval::GROUP]
            .into_iter()
            .any(|g| options.toolsets.as_ref().map_or(g.by_default, |sets| sets.contains(&g)))
}

/// The task of what `p` just started: read back as `tasks/get` reads it,
/// so the task is there before the client hears of it.
pub(crate) async fn created(s: &Services, p: &Principal, started: Started) -> LfResult<CreateTaskResult> {
    Ok(CreateTaskResult::new(match started {
        Started::Run(id) => task(&s.runs.get(p, id).await?),
        Started::Experiment(id) => experiment_task(&s.experiments.get(p, id).await?),
    }))
}

/// `tasks/get`: the run's or the experiment's task as `p` may read it.
pub(crate) async fn get(s: &Services, p: &Principal, task_id: &str) -> Result<GetTaskResult, McpError> {
    let (run, experiment) = parse(task_id)?;
    let run = match s.runs.log(p, run).await {
        Ok(log) => log.run,
        Err(e) if e.code() == ErrorCode::NotFound => {
            let view = s.experiments.get(p, experiment).await.map_err(|e| refused(task_id, e))?;
            let payload = match view.experiment.status {
                ExperimentStatus::Running => TaskPayload::Working,
                ExperimentStatus::Completed | ExperimentStatus::BudgetSpent => {
                    TaskPayload::Completed { result: experiment_result(&view) }
                }
                ExperimentStatus::Cancelled => TaskPayload::Cancelled,
            };
            return Ok(GetTaskResult::new(DetailedTask::new(experiment_task(&view), payload)));
        }
        Err(e) => return Err(refused(task_id, e)),
    };
    let payload = match run.status() {
        RunStatus::Pending | RunStatus::Running => TaskPayload::Working,
        RunStatus::Completed | RunStatus::Failed => TaskPayload::Completed { result: result(&run) },
        RunStatus::Cancelled => TaskPayload::Cancelled,
    };
    Ok(GetTaskResult::new(DetailedTask::new(task(&run), payload)))
}

/// `tasks/cancel`: asks the run's runner to stop it, as
/// cancel_workflow_run does, or stops the experiment, as
/// cancel_experiment does. A task that has ended is acknowledged alike:
/// cancelling is a request, and `tasks/get` tells how the task ended.
pub(crate) async fn cancel(s: &Services, p: &Principal, task_id: &str) -> Result<(), McpError> {
    let (run, experiment) = parse(task_id)?;
    let ended = match s.runs.cancel(p, run).await {
        Ok(_) => return Ok(()),
        Err(e) if e.code() == ErrorCode::InvalidTransition => return Ok(()),
        Err(e) if e.code() == ErrorCode::NotFound => s.experiments.cancel(p, experiment).await,
        Err(e) => return Err(refused(task_id, e)),
    };
    match ended {
        // CONFLICT: the experiment is no longer running.
        Err(e) if e.code() != ErrorCode::Conflict => Err(refused(task_id, e)),
        _ => Ok(()),
    }
}

/// `tasks/update`: neither has an outstanding input request, so there is
/// nothing to deliver; the task must still be one `p` may read.
pub(crate) async fn update(s: &Services, p: &Principal, task_id: &str) -> Result<(), McpError> {
    let (run, experiment) = parse(task_id)?;
    match s.runs.get(p, run).await {
        Err(e) if e.code() == ErrorCode::NotFound => s.experiments.get(p, experiment).await.map(|_| ()),
        read => read.map(|_| ()),
    }
    .map_err(|e| refused(task_id, e))
}

/// The run or the experiment a task id names; a malformed one is as
/// unknown as any other.
fn parse(task_id: &str) -> Result<(RunId, ExperimentId), McpError> {
    let run = RunId::parse("taskId", task_id).map_err(|_| not_found(task_id))?;
    let experiment = ExperimentId::parse("taskId", task_id).map_err(|_| not_found(task_id))?;
    Ok((run, experiment))
}

/// The JSON-RPC error for `err`, met serving task `task_id`: the
/// extension's -32602 for a task that is not there or not the caller's.
fn refused(task_id: &str, err: LfError) -> McpError {
    match err.code() {
        ErrorCode::NotFound => not_found(task_id),
        _ => request_error(err),
    }
}

fn not_found(task_id: &str) -> McpError {
    crate::catalog::errors::logged(McpError::invalid_params(
        format!(
            "Task {} was not found, or you cannot see it: use the taskId a tools/call answered with (a task is a workflow run or an experiment).",
            clip(task_id, 100)
        ),
        None,
    ))
}

/// The run as a task: its id, status, times and a word on where it stands.
fn task(run: &Run) -> Task {
    let status = match run.status() {
        RunStatus::Pending | RunStatus::Running => TaskStatus::Working,
        RunStatus::Completed | RunStatus::Failed => TaskStatus::Completed,
        RunStatus::Cancelled => TaskStatus::Cancelled,
    };
    let created = run.created_at;
    Task::new(run.id.to_string(), status, created.to_rfc3339(), last_update(run).to_rfc3339())
        .with_status_message(status_message(run))
        .with_poll_interval_ms(POLL_INTERVAL_MS)
}

/// The last time anything of the run was recorded: its creation, start or
/// end, or a step's (of the steps read with it).
fn last_update(run: &Run) -> Timestamp {
    let s = &run.state;
    let steps = s.slots.values().flat_map(|n| [n.started_at, n.finished_at]);
    [Some(run.created_at), s.started_at, s.finished_at]
        .into_iter()
        .chain(steps)
        .flatten()
        .max()
        .unwrap_or(run.created_at)
}

fn status_message(run: &Run) -> String {
    let id = run.id;
    let message = match (run.status(), &run.state.error, &run.cancel_requested_by) {
        (RunStatus::Pending | RunStatus::Running, _, Some(by)) => {
            format!("Workflow run {id}: {by} asked to cancel it; it stops within one step.")
        }
        (RunStatus::Pending, ..) => format!("Workflow run {id} is waiting for a runner."),
        (RunStatus::Running, ..) => format!("Workflow run {id} is running."),
        (RunStatus::Completed, ..) => format!("Workflow run {id} completed."),
        (RunStatus::Failed, Some(e), _) => {
            format!("Workflow run {id} failed: {} (get_workflow_run_logs shows each step).", e.message)
        }
        (RunStatus::Failed, None, _) => {
            format!("Workflow run {id} failed (get_workflow_run_logs shows each step).")
        }
        (RunStatus::Cancelled, _, Some(by)) => format!("Workflow run {id} was cancelled by {by}."),
        (RunStatus::Cancelled, ..) => format!("Workflow run {id} was cancelled."),
    };
    // A step's error may quote what an outside service answered.
    sanitize_text(&message).unwrap_or(message)
}

/// The result of a run that ended: get_workflow_run_status's answer, an
/// error when the run failed. Its structured content fits run_workflow's
/// listed output schema too (the fields both name have one type).
fn result(run: &Run) -> JsonObject {
    let value = serde_json::to_value(RunStatusOut::from(run)).unwrap_or_default();
    let output = ToolOutput::cleaned("run_workflow", value, run.status() == RunStatus::Failed);
    match serde_json::to_value(CallToolResult::from(output)) {
        Ok(serde_json::Value::Object(result)) => result,
        _ => JsonObject::new(),
    }
}

/// The experiment as a task: its id, status, times and its progress.
fn experiment_task(view: &ExperimentView) -> Task {
    let e = &view.experiment;
    let status = match e.status {
        ExperimentStatus::Running => TaskStatus::Working,
        ExperimentStatus::Completed | ExperimentStatus::BudgetSpent => TaskStatus::Completed,
        ExperimentStatus::Cancelled => TaskStatus::Cancelled,
    };
    let (id, done, cells) = (e.id, view.done, e.cell_count());
    let message = match e.status {
        ExperimentStatus::Running => format!("Experiment {id}: {done} of {cells} cells have their result."),
        ExperimentStatus::Completed => format!("Experiment {id} completed: {cells} cells."),
        ExperimentStatus::BudgetSpent => {
            format!("Experiment {id} stopped at its budget: {done} of {cells} cells have their result.")
        }
        ExperimentStatus::Cancelled => {
            format!("Experiment {id} was cancelled: {done} of {cells} cells have their result.")
        }
    };
    Task::new(id.to_string(), status, e.created_at.to_rfc3339(), e.updated_at.to_rfc3339())
        .with_status_message(message)
        .with_poll_interval_ms(POLL_INTERVAL_MS)
}

/// The result of an experiment that ended: get_experiment's answer.
fn experiment_result(view: &ExperimentView) -> JsonObject {
    let value = serde_json::to_value(ExperimentViewOut::of(view)).unwrap_or_default();
    let output = ToolOutput::cleaned("get_experiment", value, false);
    match serde_json::to_value(CallToolResult::from(output)) {
        Ok(serde_json::Value::Object(result)) => result,
        _ => JsonObject::new(),
    }
}
