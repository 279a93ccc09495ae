//! AI Lensers: agents that live beside people on the platform. An agent is
//! a lenser of type agent, owned by a person: a profile (a handle unique
//! among all lensers and agents, a display name, bio, headline, persona,
//! model and runtime preference), the people who answer for it
//! ([`roles`]: owner, co-owners, operators, and what each may do), the
//! catalog tools it was granted ([`grants`]), its policy (flags, daily
//! caps, a daily credit limit; [`policy`]), the log of what it did, and
//! its team runs: workflow runs on its behalf, with an approval wait,
//! ordered events and cancellation ([`team`]).
//!
//! lf-agent knows nothing about SQL, MCP or HTTP, nor about the tool
//! catalog or workflows: a tool is the identity the catalog hands over
//! ([`ToolRef`]: stable id, name, group, safety class), a team run names
//! its workflow and workflow run by id, and whether a person holds a
//! handle is asked through [`LenserHandles`]. It needs no async runtime of
//! its own: the [`MemoryAgentStore`] runs on any executor.
//!
//! Invariants:
//! - a handle is held by one lenser or agent at most, archived agents
//!   included, and an owner has at most the configured number of active
//!   agents (5 by default);
//! - an agent calls only the tools it was granted, never a tool of the
//!   Agent group, as `Principal::Agent` with its owner's reach;
//! - a day's counts never pass their caps nor the credit limit, whatever
//!   the concurrency: the store counts and checks in one atomic step, and a
//!   refused call counts nothing;
//! - every read goes through the store with the caller's reach (an agent is
//!   its owner's, co-owners' and operators' alone; to anyone else it does
//!   not exist);
//! - a team run moves only along the table of [`team`]; a finished one
//!   never moves, and its events are numbered in the order they happened.

pub mod contract;
mod errors;
pub mod grants;
mod memory;
mod model;
mod patch;
pub mod policy;
pub mod roles;
mod store;
pub mod team;

pub use errors::{
    agent_moved, agent_not_found, handle_taken, team_run_moved, team_run_not_found, too_many_agents,
    too_many_grants, too_many_members,
};
pub use memory::MemoryAgentStore;
pub use model::{
    ACTION_WORDS, ActionEntry, ActionId, ActionName, ActionOutcome, Agent, AgentFilter, AgentHandle,
    AgentStatus, ArgsSummary, Ask, Bio, Cap, CreditLimit, Decision, DelegationPolicy, DisplayName,
    EventDetail, EventFilter, Grant, Headline, Member, ModelName, NewEvent, Persona, Policy, Profile, Reason,
    Reservation, Role, Runtime, Safety, StoredGrant, TeamEvent, TeamEventId, TeamEventKind, TeamInputs,
    TeamRun, TeamRunFilter, TeamRunId, TeamRunStatus, TeamRunUpdate, ToolGroup, ToolId, ToolKey, ToolName,
    ToolRef, Usage, UsageDay, UsageKind, WebUrl, tool_for_action,
};
pub use patch::{AgentPatch, PATCH_FIELDS};
pub use store::{AgentStore, LenserHandles, NoLensers};
