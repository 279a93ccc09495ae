//! The Agent tools: the spec's twelve, and list_agent_actions,
//! set_ai_lenser_member and decide_agent_approval, over [`lf_agent::AgentService`]. Who may do what
//! with an agent (lf-agent's `roles`), what may be granted, the policy, the
//! caps and the team-run moves are lf-agent's; calling a tool as an agent
//! is `crate::agent_calls`. These files adapt arguments and results.

mod shapes;

mod archive_ai_lenser;
mod assign_agent_tool;
mod cancel_agent_run;
mod create_ai_lenser;
mod decide_agent_approval;
mod get_ai_lenser;
mod list_agent_actions;
mod list_agent_run_events;
mod list_agent_tools;
mod list_ai_lensers;
mod revoke_agent_tool;
mod run_agent_action;
mod set_ai_lenser_member;
mod start_agent_team_run;
mod update_ai_lenser;

use crate::catalog::group::Group;
use crate::catalog::tool::{Tool, declare};

/// The tool a person answers through elicitation when it names a team run
/// awaiting their approval (`crate::mcp::elicit`).
pub(crate) const DECIDE_APPROVAL: &str = decide_agent_approval::DecideAgentApproval::NAME;

pub static GROUP: Group = Group {
    id: "agent",
    title: "Agent",
    description: "AI Lensers: agents you own that act through the catalog tools you grant them, under a policy, daily caps and a credit limit, and run workflows as team runs.",
    by_default: true,
    tools: |g| {
        vec![
            declare::<list_ai_lensers::ListAiLensers>(g),
            declare::<get_ai_lenser::GetAiLenser>(g),
            declare::<list_agent_tools::ListAgentTools>(g),
            declare::<list_agent_run_events::ListAgentRunEvents>(g),
            declare::<list_agent_actions::ListAgentActions>(g),
            declare::<create_ai_lenser::CreateAiLenser>(g),
            declare::<update_ai_lenser::UpdateAiLenser>(g),
            declare::<assign_agent_tool::AssignAgentTool>(g),
            declare::<run_agent_action::RunAgentAction>(g),
            declare::<start_agent_team_run::StartAgentTeamRun>(g),
            declare::<archive_ai_lenser::ArchiveAiLenser>(g),
            declare::<revoke_agent_tool::RevokeAgentTool>(g),
            declare::<cancel_agent_run::CancelAgentRun>(g),
            declare::<set_ai_lenser_member::SetAiLenserMember>(g),
            declare::<decide_agent_approval::DecideAgentApproval>(g),
        ]
    },
};
