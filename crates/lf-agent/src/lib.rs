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
//! ([`ToolRef`]: stable id, name, group, safety class), and a call of it
//! comes with what the catalog declares of it ([`Call`]: its cost, and its
//! [`policy::Gate`], the flag it needs and the count it adds to), so no
//! list here is keyed by tool names; a team run names
//! its workflow and workflow run by id, and whether a person holds a
//! handle is asked through [`LenserHandles`]; what runs a team run's
//! workflow is a [`TeamDispatch`] hook the composition root binds. It
//! needs no async runtime of its own: an app can run the whole
//! [`AgentService`] on the [`MemoryAgentStore`] with any executor.
//!
//! ```
//! use std::sync::Arc;
//! use lf_core::{LenserId, Principal};
//! use lf_agent::{
//!     AgentHandle, AgentService, Call, DisplayName, MemoryAgentStore, NewAgent, NoLensers, Safety, ToolGroup,
//!     ToolId, ToolName, ToolRef,
//! };
//! use pollster::block_on as run;
//!
//! let service = AgentService::new(Arc::new(MemoryAgentStore::new()), Arc::new(NoLensers));
//! let me = Principal::Service { acting_as: Some(LenserId::new()) };
//! let agent = run(service.create(&me, NewAgent::new(
//!     AgentHandle::parse("lens_scout").unwrap(),
//!     DisplayName::parse("Lens Scout").unwrap(),
//! ))).unwrap();
//! let get_lens = ToolRef {
//!     id: ToolId::new(),
//!     name: ToolName::parse("tool", "get_lens").unwrap(),
//!     group: ToolGroup::parse("group", "lens").unwrap(),
//!     safety: Safety::Read,
//! };
//! // Not granted yet: refused, and the refusal is logged.
//! let call = Call::new(get_lens.clone(), 0);
//! assert!(run(service.check_call(&me, agent.id, &call)).is_err());
//! run(service.assign_tool(&me, agent.id, get_lens, false)).unwrap();
//! let pass = run(service.check_call(&me, agent.id, &call)).unwrap();
//! // The tool runs as the agent, with its owner's reach.
//! assert_eq!(pass.principal, Principal::Agent { agent_id: agent.id, owner: agent.owner });
//! ```
//!
//! Invariants:
//! - a handle is held by one lenser or agent at most, archived agents
//!   included, and an owner has at most the configured number of active
//!   agents (5 by default);
//! - an agent calls only the tools it was granted, never a tool of the
//!   Agent group, as `Principal::Agent` with its owner's reach;
//! - a day's counts never pass their caps nor the credit limit, whatever
//!   the concurrency: the store counts and checks in one atomic step, and a
//!   refused call counts nothing (with a call ledger,
//!   [`AgentService::with_ledger`], a server reserves ahead and calls take
//!   from what it holds: the store's counts are then what was used plus
//!   what servers hold, still never past a cap);
//! - a call of an agent (passed or refused) answers only once its action
//!   log entry is committed: a process killed at any moment has every
//!   answered call in the log (with a ledger, the entries of calls that
//!   end together share one commit);
//! - every read goes through the store with the caller's reach (an agent is
//!   its owner's, co-owners' and operators' alone; to anyone else it does
//!   not exist);
//! - a team run moves only along the table of [`team`]; a finished one
//!   never moves, and its events are numbered in the order they happened.

pub mod contract;
mod dispatch;
mod errors;
pub mod grants;
mod memory;
mod model;
mod patch;
pub mod policy;
pub mod roles;
mod service;
mod store;
pub mod team;

pub use dispatch::TeamDispatch;
pub use errors::{
    agent_moved, agent_not_found, handle_taken, team_run_moved, team_run_not_found, too_many_agents,
    too_many_grants, too_many_members,
};
pub use memory::MemoryAgentStore;
pub use model::{
    ActionEntry, ActionId, ActionName, ActionOutcome, Agent, AgentFilter, AgentHandle, AgentStatus,
    ArgsSummary, Ask, Bio, Cap, CreditLimit, Decision, DelegationPolicy, DisplayName, EventDetail,
    EventFilter, Grant, Headline, Member, ModelName, NewEvent, Persona, Policy, Profile, Reason, Reservation,
    Role, Runtime, Safety, StoredGrant, TeamEvent, TeamEventId, TeamEventKind, TeamInputs, TeamRun,
    TeamRunFilter, TeamRunId, TeamRunStatus, TeamRunUpdate, ToolGroup, ToolId, ToolKey, ToolName, ToolRef,
    Usage, UsageDay, UsageKind, WebUrl,
};
pub use patch::{AgentPatch, PATCH_FIELDS};
pub use service::{
    AgentLimits, AgentService, AgentView, Call, CallPass, CreditsLeft, LedgerSettings, NewAgent, NewTeamRun,
    Updated, allowance,
};
pub use store::{AgentStore, LenserHandles, MemoryLensers, NoLensers};
