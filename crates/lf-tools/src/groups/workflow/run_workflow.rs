use lf_core::{LfError, LfResult};
use lf_workflow::run::{IdempotencyKey, RunId, StartRun};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shapes::{version_number, workflow_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Reaches, Safety, Started, Tool};

pub struct RunWorkflow;

/// The largest budget a run may be given: far beyond any real run.
const MAX_BUDGET_CREDITS: i64 = 1_000_000_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunWorkflowIn {
    /// The workflow to run (validate_workflow first).
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
    /// What the trigger passes to the first steps: a form trigger's fields by name.
    #[schemars(extend("default" = {}))]
    pub inputs: Option<Map<String, Value>>,
    /// Overrides the model of every AI step.
    #[schemars(length(min = 1, max = 200))]
    pub global_model_id: Option<String>,
    /// Repeated within 24 hours: the first run, not another.
    #[schemars(length(min = 1, max = 128))]
    pub idempotency_key: Option<String>,
    /// Most credits its model calls may spend; omit for the server's default.
    #[schemars(range(min = 0, max = 1000000000))]
    pub budget_credits: Option<i64>,
    /// The version number to run; omit for the head.
    #[schemars(range(min = 1, max = 1000000))]
    pub version: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
pub struct RunStartedOut {
    /// The run, for a client of the tasks extension (the task is the run).
    #[serde(skip)]
    pub run: RunId,
    /// The run's id: poll get_workflow_run_status with it.
    pub id: String,
    pub status: &'static str,
    pub created_at: String,
    pub workflow_id: String,
    /// The version number it runs.
    pub version: u32,
    /// True when the idempotency key named an earlier run, which this is.
    pub replayed: bool,
    /// The AI Lenser that started it for its owner (null when a person did).
    pub by_agent: Option<String>,
}

fn budget(n: Option<i64>) -> LfResult<Option<u64>> {
    match n {
        None => Ok(None),
        Some(n) if (0..=MAX_BUDGET_CREDITS).contains(&n) => Ok(Some(n as u64)),
        Some(n) => Err(LfError::invalid_argument(format!(
            "budget_credits must be from 0 to {MAX_BUDGET_CREDITS}; got {n}. Leave it out for the server's default."
        ))
        .with_field("budget_credits")),
    }
}

impl Tool for RunWorkflow {
    const NAME: &'static str = "run_workflow";
    const TITLE: &'static str = "Run a workflow";
    const SAFETY: Safety = Safety::Execute;
    const ACTION_WORDS: &'static [&'static str] = &["run_workflow"];
    const REACHES: Reaches = Reaches::Outside;
    const DESCRIPTION: &'static str = "Start a run of a workflow that validates; answers at once with the run's id. Poll get_workflow_run_status until completed, failed or cancelled.";
    const DIFFERS_FROM_SPEC: &'static str = "Adds budget_credits and version, and answers version and replayed. Refuses a workflow that does not validate, inputs that do not fit a form trigger's fields, and inputs over 256 KiB, nested deeper than 32 levels or holding a secret-named field. An idempotency key holds for 24 hours per workflow (the original never deduplicated). A client that declared MCP's tasks extension gets the run as a task instead (its task id is the run's id; tasks/get, tasks/cancel). A run an AI Lenser starts gets a budget of at most the credits it has left today (BUDGET_EXCEEDED when none are), and what the run spends is counted against the agent when it ends.";
    type Input = RunWorkflowIn;
    type Output = RunStartedOut;
    const STARTS_TASK: Option<fn(&RunStartedOut) -> Started> = Some(|out| Started::Run(out.run));

    async fn call(ctx: Ctx, i: RunWorkflowIn) -> LfResult<RunStartedOut> {
        let start = StartRun {
            workflow_id: Some(workflow_id(&i.workflow_id)?),
            version: version_number(i.version)?,
            inputs: i.inputs.unwrap_or_default(),
            global_model_id: i.global_model_id,
            idempotency_key: i
                .idempotency_key
                .as_deref()
                .map(|k| IdempotencyKey::parse("idempotency_key", k))
                .transpose()?,
            budget_credits: budget(i.budget_credits)?,
        };
        let started = ctx.services.runs.start(&ctx.principal, start).await?;
        let run = started.run;
        Ok(RunStartedOut {
            run: run.id,
            id: run.id.to_string(),
            status: run.status().as_str(),
            created_at: run.created_at.to_rfc3339(),
            workflow_id: run.workflow_id.to_string(),
            version: run.version,
            replayed: !started.created,
            by_agent: run.agent.map(|a| a.to_string()),
        })
    }
}
