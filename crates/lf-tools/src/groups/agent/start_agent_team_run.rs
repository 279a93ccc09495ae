use lf_agent::{DelegationPolicy, NewTeamRun, TeamInputs};
use lf_core::{LfResult, Principal, WorkflowId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::shapes::{ai_lenser_id, team_run_id};
use crate::catalog::services::Ctx;
use crate::catalog::tool::{Reaches, Safety, Tool};

/// auto: runs at once. approval_required (or manual): waits until an owner calls decide_agent_approval.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PolicyIn {
    Auto,
    ApprovalRequired,
    Manual,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartAgentTeamRunIn {
    /// The AI Lenser.
    #[schemars(extend("format" = "uuid"))]
    pub ai_lenser_id: String,
    /// A workflow its owner can read.
    #[schemars(extend("format" = "uuid"))]
    pub workflow_id: String,
    /// The workflow's inputs.
    pub inputs: Option<Map<String, Value>>,
    /// auto (default) or approval_required.
    pub policy: Option<PolicyIn>,
    /// The agent's team run this one is nested in (at most 8 deep).
    #[schemars(extend("format" = "uuid"))]
    pub parent_team_run_id: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct TeamRunOut {
    pub team_run_id: String,
    pub ai_lenser_id: String,
    pub workflow_id: String,
    pub policy: &'static str,
    /// queued, awaiting_approval, running, completed, failed, cancelled or rejected.
    pub status: &'static str,
}

pub struct StartAgentTeamRun;

impl Tool for StartAgentTeamRun {
    const NAME: &'static str = "start_agent_team_run";
    const TITLE: &'static str = "Start a team run";
    const SAFETY: Safety = Safety::Execute;
    const REACHES: Reaches = Reaches::Outside;
    const DESCRIPTION: &'static str = "Run a workflow on an AI Lenser's behalf, with its owner's reach; follow it with list_agent_run_events. Service role only (stdio; refused over HTTP).";
    const DIFFERS_FROM_SPEC: &'static str = "policy manual means approval_required; the run executes.";
    type Input = StartAgentTeamRunIn;
    type Output = TeamRunOut;

    async fn call(ctx: Ctx, i: StartAgentTeamRunIn) -> LfResult<TeamRunOut> {
        let agent = ai_lenser_id(&i.ai_lenser_id)?;
        let workflow_id = WorkflowId::parse("workflow_id", &i.workflow_id)?;
        let policy = match i.policy.unwrap_or(PolicyIn::Auto) {
            PolicyIn::Auto => DelegationPolicy::Auto,
            PolicyIn::ApprovalRequired | PolicyIn::Manual => DelegationPolicy::ApprovalRequired,
        };
        let inputs = i.inputs.unwrap_or_default();
        lf_workflow::run::check_inputs(&inputs)?;
        let new = NewTeamRun {
            agent,
            workflow_id,
            inputs: TeamInputs::new(inputs)?,
            policy,
            parent: i
                .parent_team_run_id
                .as_deref()
                .map(|s| team_run_id("parent_team_run_id", s))
                .transpose()?,
        };
        let agents = &ctx.services.agents;
        if matches!(ctx.principal, Principal::Service { .. }) {
            // The workflow must be one the agent's owner can read: it runs
            // with the owner's reach.
            let owner = agents.owner_of(agent).await?;
            let as_agent = Principal::Agent { agent_id: agent, owner };
            ctx.services.workflow.get(&as_agent, workflow_id).await?;
        }
        let started = agents.start_team_run(&ctx.principal, new).await?;
        Ok(TeamRunOut::new(&started.run))
    }
}

impl TeamRunOut {
    pub fn new(r: &lf_agent::TeamRun) -> Self {
        TeamRunOut {
            team_run_id: r.id.to_string(),
            ai_lenser_id: r.agent.to_string(),
            workflow_id: r.workflow_id.to_string(),
            policy: r.policy.as_str(),
            status: r.status.as_str(),
        }
    }
}
