use lf_core::LfResult;
use lf_workflow::engine::RunStatus;
use lf_workflow::run::Run;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::run_shapes::{CostOut, RunErrorOut, redacted, time};
use super::shapes::{RunIdIn, run_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct GetWorkflowRunStatus;

#[derive(Serialize, JsonSchema)]
pub struct RunStatusOut {
    pub id: String,
    /// pending, running, completed, failed or cancelled.
    pub status: &'static str,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub spent_credits: u64,
    /// Most credits it may spend; null: no limit.
    pub budget_credits: Option<u64>,
    pub cost_metadata: CostOut,
    pub workflow_id: String,
    /// The version number it runs.
    pub version: u32,
    /// Why it failed or was cancelled.
    pub error: Option<RunErrorOut>,
    /// What its last steps output, once completed.
    pub result: Option<Value>,
    /// Who asked to cancel it.
    pub cancel_requested_by: Option<String>,
    /// The AI Lenser that started it for its owner (null when a person did).
    pub by_agent: Option<String>,
    /// The run whose end started it through an event (null: none).
    pub caused_by: Option<String>,
    /// The first run of its causal tree; its own id when uncaused.
    pub root_run_id: String,
    /// On a root: when its tree reached its bound of runs.
    pub event_tree_full_at: Option<String>,
}

impl Tool for GetWorkflowRunStatus {
    const NAME: &'static str = "get_workflow_run_status";
    const TITLE: &'static str = "Get a workflow run's status";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Poll a run: status, credits and model cost; a completed run's result or a failed one's error (get_workflow_run_logs: each step).";
    const DIFFERS_FROM_SPEC: &'static str = "Adds workflow_id, version, error, result, cancel_requested_by, caused_by, root_run_id and event_tree_full_at.";
    type Input = RunIdIn;
    type Output = RunStatusOut;

    async fn call(ctx: Ctx, i: RunIdIn) -> LfResult<RunStatusOut> {
        let run = ctx.services.runs.log(&ctx.principal, run_id(&i.run_id)?).await?.run;
        Ok(RunStatusOut::from(&run))
    }
}

/// A run's status as this tool answers it (and a client of the tasks
/// extension gets as the result of a run that ended): `run` read with its
/// node results, whose usage it sums.
impl From<&Run> for RunStatusOut {
    fn from(run: &Run) -> Self {
        let s = &run.state;
        let usage = s.usage();
        RunStatusOut {
            id: run.id.to_string(),
            status: s.status.as_str(),
            started_at: time(s.started_at),
            completed_at: time(s.finished_at),
            spent_credits: usage.credits,
            budget_credits: s.limits.budget_credits,
            cost_metadata: usage.into(),
            workflow_id: run.workflow_id.to_string(),
            version: run.version,
            error: s.error.as_ref().map(RunErrorOut::from),
            result: s.result.clone().filter(|_| s.status == RunStatus::Completed).map(redacted),
            cancel_requested_by: run.cancel_requested_by.clone(),
            by_agent: run.agent.map(|a| a.to_string()),
            caused_by: run.caused_by.map(|c| c.to_string()),
            root_run_id: run.root_run_id.to_string(),
            event_tree_full_at: time(run.tree_full_at),
        }
    }
}
