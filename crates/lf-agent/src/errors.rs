//! The errors every store and the service answer alike: one wording per
//! refusal, whichever implementation refuses.

use lf_core::{Detail, ErrorCode, LenserId, LfError};

use crate::model::{AgentHandle, TeamRunId, TeamRunStatus};

/// The NOT_FOUND of an agent that does not exist or is out of reach.
pub fn agent_not_found(id: LenserId) -> LfError {
    LfError::not_found("AI Lenser", id).with_field("ai_lenser_id")
}

/// The NOT_FOUND of a team run that does not exist or is not the agent's.
pub fn team_run_not_found(id: TeamRunId) -> LfError {
    LfError::not_found("Team run", id).with_field("team_run_id")
}

/// The CONFLICT of a handle a lenser or another agent holds.
pub fn handle_taken(handle: &AgentHandle) -> LfError {
    LfError::conflict(format!("Handle \"@{handle}\" is already in use: pick another handle."))
        .with_detail("handle", Detail::Str(handle.as_str().into()))
}

/// The SLOTS_FULL of an owner at their limit of active agents.
pub fn too_many_agents(owner: LenserId, max: u32) -> LfError {
    LfError::new(
        ErrorCode::SlotsFull,
        format!(
            "Lenser {owner} already owns {max} active AI Lensers, the most allowed. Archive one with archive_ai_lenser first."
        ),
    )
    .with_detail("max_agents", Detail::Int(max.into()))
}

/// The SLOTS_FULL of an agent at its limit of co-owners and operators.
pub fn too_many_members(agent: LenserId, max: u32) -> LfError {
    LfError::new(
        ErrorCode::SlotsFull,
        format!(
            "AI Lenser {agent} already has {max} co-owners and operators, the most allowed. Remove one first."
        ),
    )
}

/// The SLOTS_FULL of an agent at its limit of granted tools.
pub fn too_many_grants(agent: LenserId, max: u32) -> LfError {
    LfError::new(
        ErrorCode::SlotsFull,
        format!(
            "AI Lenser {agent} already holds {max} tools, the most an agent may hold. Revoke one with revoke_agent_tool first."
        ),
    )
}

/// The CONFLICT of a write that found the agent changed since it was read.
pub fn agent_moved(id: LenserId) -> LfError {
    LfError::conflict(format!(
        "AI Lenser {id} changed while you were acting on it. Read it again with get_ai_lenser and retry."
    ))
}

/// The CONFLICT of a write that found the team run in another status.
pub fn team_run_moved(id: TeamRunId, now: TeamRunStatus) -> LfError {
    LfError::conflict(format!(
        "Team run {id} changed while you were acting on it (it is now {now}). Read its events with list_agent_run_events and retry."
    ))
}
