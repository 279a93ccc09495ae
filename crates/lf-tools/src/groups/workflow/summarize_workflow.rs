use lf_core::{Clock, LfResult, SystemClock};
use lf_workflow::engine::NodeStatus;
use schemars::JsonSchema;
use serde::Serialize;

use super::run_shapes::{CostOut, entries};
use super::shapes::{RunIdIn, run_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

pub struct SummarizeWorkflow;

/// Node results by status (each loop item counts apart).
#[derive(Default, Serialize, JsonSchema)]
pub struct NodeCountsOut {
    pub total: u32,
    pub completed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub cancelled: u32,
    /// Running, or waiting for a retry.
    pub running: u32,
    /// Not started.
    pub pending: u32,
}

#[derive(Serialize, JsonSchema)]
pub struct SummaryOut {
    pub run_id: String,
    pub workflow_id: String,
    pub status: &'static str,
    /// From its start to its end (or to now while it runs); null before it starts.
    pub duration_ms: Option<u64>,
    pub spent_credits: u64,
    pub budget_credits: Option<u64>,
    pub cost_metadata: CostOut,
    pub nodes: NodeCountsOut,
}

impl Tool for SummarizeWorkflow {
    const NAME: &'static str = "summarize_workflow";
    const TITLE: &'static str = "Summarize a workflow run";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "Sum up a run for a report: status, wall-clock duration, credits and model cost, and how many steps completed, failed, were skipped or cancelled.";
    const DIFFERS_FROM_SPEC: &'static str = "Adds cancelled, running and pending counts; duration_ms is null before the run starts and counts to now while it runs.";
    type Input = RunIdIn;
    type Output = SummaryOut;

    async fn call(ctx: Ctx, i: RunIdIn) -> LfResult<SummaryOut> {
        let log = ctx.services.runs.log(&ctx.principal, run_id(&i.run_id)?).await?;
        let mut nodes = NodeCountsOut::default();
        for e in entries(&log) {
            nodes.total += 1;
            let n = match e.status() {
                NodeStatus::Completed => &mut nodes.completed,
                NodeStatus::Failed => &mut nodes.failed,
                NodeStatus::Skipped => &mut nodes.skipped,
                NodeStatus::Cancelled => &mut nodes.cancelled,
                NodeStatus::Running | NodeStatus::Retrying => &mut nodes.running,
                NodeStatus::Pending => &mut nodes.pending,
            };
            *n += 1;
        }
        let s = &log.run.state;
        let end = s.finished_at.unwrap_or_else(|| SystemClock.now());
        let duration_ms =
            s.started_at.map(|start| (end.as_micros() - start.as_micros()).max(0) as u64 / 1_000);
        let usage = s.usage();
        Ok(SummaryOut {
            run_id: log.run.id.to_string(),
            workflow_id: log.run.workflow_id.to_string(),
            status: s.status.as_str(),
            duration_ms,
            spent_credits: usage.credits,
            budget_credits: s.limits.budget_credits,
            cost_metadata: usage.into(),
            nodes,
        })
    }
}
