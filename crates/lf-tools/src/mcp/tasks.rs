//! MCP's tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) over
//! workflow runs: the task is the run.
//!
//! A client that declared the extension (in its `initialize` capabilities,
//! or in a request's own `_meta`) and calls a tool that starts a run
//! ([`crate::Tool::STARTS_RUN`]: run_workflow) gets a `CreateTaskResult`
//! whose task id is the run's id instead of the tool's result; a client
//! that did not gets the result. `tasks/get` reads the run and
//! `tasks/cancel` cancels it, both through [`RunService`] as the caller of
//! that request. There is no task table: a task is as durable as its run,
//! so any process on the same database answers for it, also after a
//! restart, and it lives as long as the run's row (`ttlMs` null).
//!
//! A run's status is its task's:
//! - pending and running: `working`;
//! - completed and failed: `completed`, its `result` what
//!   get_workflow_run_status answers of the run, with `isError: true` when it
//!   failed (the extension keeps `failed` for JSON-RPC errors, and a run
//!   that ends has its answer);
//! - cancelled: `cancelled`.
//!
//! Runs never ask the client for input: no task is `input_required`, and
//! `tasks/update` is acknowledged with its responses ignored, as the
//! extension says of responses to no outstanding request.
//!
//! Who may do what is the run service's: a task is readable by whoever may
//! read its run's workflow version (anyone else gets the error an unknown
//! id gets), and only the run's starter and the workflow's owner may cancel
//! it. A task id is a run id, a UUID v7: 74 random bits besides its time.

use lf_core::{ErrorCode, LfError, LfResult, Principal, Timestamp, clip};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunId, RunService};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};

use crate::catalog::CatalogOptions;
use crate::catalog::errors::request_error;
use crate::catalog::hygiene::sanitize_text;
use crate::catalog::output::ToolOutput;
use crate::groups::workflow::{self, RunStatusOut};

/// How often a client should poll a task (`pollIntervalMs`): runs take
/// seconds to hours, and a status read is two indexed reads.
pub(crate) const POLL_INTERVAL_MS: u64 = 1_000;

/// Whether a server with `options` declares the extension: when it serves
/// the Workflow group, whose runs the tasks are (with dynamic toolsets, a
/// session may enable it). Read-only, it answers `tasks/get` and refuses
/// `tasks/cancel`.
pub(crate) fn offered(options: &CatalogOptions) -> bool {
    options.dynamic
        || options
            .toolsets
            .as_ref()
            .map_or(workflow::GROUP.by_default, |sets| sets.contains(&&workflow::GROUP))
}

/// The task of run `id`, just started by `p`: read back as `tasks/get`
/// reads it, so the task is there before the client hears of it.
pub(crate) async fn created(runs: &RunService, p: &Principal, id: RunId) -> LfResult<CreateTaskResult> {
    let run = runs.get(p, id).await?;
    Ok(CreateTaskResult::new(task(&run)))
}

/// `tasks/get`: the run's task as `p` may read it.
pub(crate) async fn get(runs: &RunService, p: &Principal, task_id: &str) -> Result<GetTaskResult, McpError> {
    let id = parse(task_id)?;
    let run = runs.log(p, id).await.map_err(|e| refused(task_id, e))?.run;
    let payload = match run.status() {
        RunStatus::Pending | RunStatus::Running => TaskPayload::Working,
        RunStatus::Completed | RunStatus::Failed => TaskPayload::Completed { result: result(&run) },
        RunStatus::Cancelled => TaskPayload::Cancelled,
    };
    Ok(GetTaskResult::new(DetailedTask::new(task(&run), payload)))
}

/// `tasks/cancel`: asks the run's runner to stop it, as
/// cancel_workflow_run does. A task that has ended is acknowledged alike:
/// cancelling is a request, and `tasks/get` tells how the task ended.
pub(crate) async fn cancel(runs: &RunService, p: &Principal, task_id: &str) -> Result<(), McpError> {
    match runs.cancel(p, parse(task_id)?).await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == ErrorCode::InvalidTransition => Ok(()),
        Err(e) => Err(refused(task_id, e)),
    }
}

/// `tasks/update`: a run has no outstanding input request, so there is
/// nothing to deliver; the task must still be one `p` may read.
pub(crate) async fn update(runs: &RunService, p: &Principal, task_id: &str) -> Result<(), McpError> {
    runs.get(p, parse(task_id)?).await.map(|_| ()).map_err(|e| refused(task_id, e))
}

/// The run a task id names; a malformed one is as unknown as any other.
fn parse(task_id: &str) -> Result<RunId, McpError> {
    RunId::parse("taskId", task_id).map_err(|_| not_found(task_id))
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
            "Task {} was not found, or you cannot see it: use the taskId a tools/call answered with (a task is a workflow run; list_workflow_runs lists yours).",
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
