use lf_core::LfResult;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::run_shapes::{CostOut, NodeResultOut, RunErrorOut, entries, redacted, time};
use super::shapes::{RunIdIn, run_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct GetWorkflowRunLogs;

/// How the run was started.
#[derive(Serialize, JsonSchema)]
pub struct RunMetadataOut {
    pub workflow_id: String,
    pub version: u32,
    /// manual, retry, schedule, webhook, event, sub_workflow, battle, lens or team.
    pub origin: &'static str,
    /// The lenser who started it.
    pub started_by: String,
    /// The AI Lenser that started it for its owner (null when a person did).
    pub by_agent: Option<String>,
    /// The run it retries.
    pub parent_run_id: Option<String>,
    /// A retry with resume: the run whose completed steps it reuses.
    pub resume_from: Option<String>,
    pub idempotency_key: Option<String>,
    pub global_model_id: Option<String>,
    pub cancel_requested_by: Option<String>,
    /// What the trigger passed on, secret-named fields redacted.
    pub inputs: Value,
}

#[derive(Serialize, JsonSchema)]
pub struct RunLogRunOut {
    pub id: String,
    pub status: &'static str,
    pub metadata: RunMetadataOut,
    pub cost_metadata: CostOut,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub error: Option<RunErrorOut>,
}

#[derive(Serialize, JsonSchema)]
pub struct RunLogOut {
    pub run: RunLogRunOut,
    /// Every step (each loop item apart) by start time; steps not started last, in plan order.
    pub node_results: Vec<NodeResultOut>,
}

impl Tool for GetWorkflowRunLogs {
    const NAME: &'static str = "get_workflow_run_logs";
    const TITLE: &'static str = "Get a workflow run's logs";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Read a run's log: how it was started, and each step's status, input, output, error, attempts, tokens, credits and log line, by start time.";
    const DIFFERS_FROM_SPEC: &'static str = "Lists every step, those not started last as pending, each loop item apart, with step, node_type, item, input, error and attempts; secret-named fields of inputs and outputs are redacted.";
    type Input = RunIdIn;
    type Output = RunLogOut;

    async fn call(ctx: Ctx, i: RunIdIn) -> LfResult<RunLogOut> {
        let log = ctx.services.runs.log(&ctx.principal, run_id(&i.run_id)?).await?;
        let node_results = entries(&log).iter().map(NodeResultOut::from).collect();
        let r = &log.run;
        let s = &r.state;
        let metadata = RunMetadataOut {
            workflow_id: r.workflow_id.to_string(),
            version: r.version,
            origin: r.origin.as_str(),
            started_by: r.started_by.to_string(),
            by_agent: r.agent.map(|a| a.to_string()),
            parent_run_id: r.parent_run_id.map(|p| p.to_string()),
            resume_from: r.resume_from.map(|p| p.to_string()),
            idempotency_key: r.idempotency_key.as_ref().map(|k| k.as_str().to_owned()),
            global_model_id: r.global_model_id.clone(),
            cancel_requested_by: r.cancel_requested_by.clone(),
            inputs: redacted(s.inputs.clone()),
        };
        Ok(RunLogOut {
            run: RunLogRunOut {
                id: r.id.to_string(),
                status: s.status.as_str(),
                metadata,
                cost_metadata: s.usage().into(),
                started_at: time(s.started_at),
                completed_at: time(s.finished_at),
                error: s.error.as_ref().map(RunErrorOut::from),
            },
            node_results,
        })
    }
}
