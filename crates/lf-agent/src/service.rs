//! The Agent use cases. Each takes the caller's [`Principal`]: an agent is
//! read through the store with the caller's reach (to anyone who is
//! nothing to it, it does not exist), then the caller's role is checked
//! against [`crate::roles`], then the store writes with what it expects
//! (a revision, a status, a count under its limit), so a concurrent change
//! is a CONFLICT or a refusal, never a lost write.
//!
//! [`AgentService::check_call`] is what the catalog asks before it runs a
//! tool as an agent: the caller may act for it, the agent is active, the
//! tool is granted, the policy allows it, and the day's caps and credit
//! limit have room, counted at once. Team runs are in `service/team.rs`.

use std::sync::Arc;

use lf_core::{
    Clock, ErrorCode, LenserId, LfError, LfResult, Page, PageRequest, Principal, Reach, SystemClock,
    Timestamp,
};

use crate::dispatch::TeamDispatch;
use crate::grants::{self, MAX_GRANTS};
use crate::model::{
    ActionEntry, ActionId, ActionName, ActionOutcome, Agent, AgentFilter, AgentHandle, AgentStatus,
    ArgsSummary, Grant, Member, Policy, Profile, Reservation, Role, StoredGrant, ToolKey, ToolRef, Usage,
    UsageDay,
};
use crate::patch::AgentPatch;
use crate::policy::{self, Gate};
use crate::roles::{self, Permission};
use crate::store::{AgentStore, LenserHandles};

mod credits;
mod group_commit;
mod ledger;
mod team;

pub use credits::CreditsLeft;
pub use ledger::{LedgerSettings, allowance};
pub use team::NewTeamRun;

/// The limits a server sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentLimits {
    /// Active agents per owner (default 5, as the original).
    pub per_owner: u32,
    /// Co-owners and operators per agent (default 20).
    pub members: u32,
    /// Tools per agent (default [`MAX_GRANTS`]).
    pub grants: u32,
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits { per_owner: 5, members: 20, grants: MAX_GRANTS }
    }
}

/// A new agent. Its owner is the caller.
#[derive(Clone, Debug)]
pub struct NewAgent {
    pub handle: AgentHandle,
    pub profile: Profile,
    pub policy: Policy,
}

impl NewAgent {
    /// An agent with only a handle and a display name, every other field
    /// and the policy at their defaults.
    pub fn new(handle: AgentHandle, display_name: crate::model::DisplayName) -> Self {
        NewAgent { handle, profile: Profile::named(display_name), policy: Policy::default() }
    }

    /// The agent it makes for `owner` at `now`: active, no members yet,
    /// revision 0.
    pub fn into_agent(self, owner: LenserId, now: Timestamp) -> Agent {
        Agent {
            id: LenserId::new(),
            handle: self.handle,
            owner,
            profile: self.profile,
            policy: self.policy,
            status: AgentStatus::Active,
            members: Vec::new(),
            revision: 0,
            created_at: now,
            updated_at: now,
            archived_at: None,
        }
    }
}

/// An agent as its reader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentView {
    pub agent: Agent,
    /// What the reader is to it (`None`: the service).
    pub role: Option<Role>,
    /// Today (UTC) and what it used of it.
    pub day: UsageDay,
    pub usage: Usage,
}

/// What an update did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Updated {
    pub agent: Agent,
    /// The fields whose value changed (none: nothing was written).
    pub changed: Vec<&'static str>,
}

/// A call an agent is to make.
#[derive(Clone, Debug)]
pub struct Call {
    /// The tool, as the catalog found it.
    pub tool: ToolRef,
    /// What the caller asked for (an action word, or the tool's name).
    pub action: ActionName,
    /// What the call will cost.
    pub credits: u64,
    /// What the policy asks of a call of the tool beyond its grant, as the
    /// catalog declares it.
    pub gate: Gate,
    /// Its arguments in short, for the log.
    pub arguments: ArgsSummary,
}

impl Call {
    /// A call of `tool` by its name, behind no gate, with no arguments
    /// logged.
    pub fn new(tool: ToolRef, credits: u64) -> Self {
        let action = ActionName::from(&tool.name);
        Call { tool, action, credits, gate: Gate::NONE, arguments: ArgsSummary::default() }
    }

    /// The same call, behind `gate` (the tool's, as the catalog declares it).
    pub fn gated(mut self, gate: Gate) -> Self {
        self.gate = gate;
        self
    }

    /// The same call, logged as `action` with `arguments`.
    pub fn asked_as(mut self, action: ActionName, arguments: ArgsSummary) -> Self {
        self.action = action;
        self.arguments = arguments;
        self
    }
}

/// A call that passed every check and was counted: run the tool as
/// `principal`, then tell [`AgentService::record_call`] what came of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallPass {
    pub agent: LenserId,
    /// `Principal::Agent` for the agent and its owner: the principal the
    /// tool runs as (the owner's reach, the agent recorded as the actor).
    pub principal: Principal,
    pub tool: ToolRef,
    pub action: ActionName,
    pub arguments: ArgsSummary,
    /// Who made the call (the agent itself, a person, the service).
    pub actor: Option<LenserId>,
    /// The day it was counted in, and the day's usage with it.
    pub day: UsageDay,
    pub usage: Usage,
    /// The agent's profile as the check read it (its persona and model,
    /// for a call that asks the model as the agent).
    pub profile: Profile,
}

/// The Agent use cases over an [`AgentStore`].
pub struct AgentService {
    store: Arc<dyn AgentStore>,
    lensers: Arc<dyn LenserHandles>,
    clock: Arc<dyn Clock>,
    limits: AgentLimits,
    /// Runs team runs; none: nothing is dispatched.
    dispatch: Option<Arc<dyn TeamDispatch>>,
    /// Holds allowances and group-commits the action log; none: every
    /// call reserves and logs with writes of its own.
    ledger: Option<ledger::Ledger>,
}

/// FORBIDDEN for an agent managing agents (it holds no Agent tool).
fn no_agents(p: &Principal, what: &str) -> LfResult<()> {
    match p {
        Principal::Agent { .. } => Err(LfError::forbidden(format!(
            "An agent cannot {what}: only people and the service manage agents."
        ))),
        _ => Ok(()),
    }
}

/// INVALID_TRANSITION for changing an archived agent.
fn archived(agent: &Agent, what: &str) -> LfError {
    LfError::new(
        ErrorCode::InvalidTransition,
        format!(
            "@{} is archived, so it cannot {what}. Its profile, grants and logs stay readable.",
            agent.handle
        ),
    )
    .with_detail("status", lf_core::Detail::Str(AgentStatus::Archived.as_str().into()))
}

impl AgentService {
    /// A service on `store`, asking `lensers` whether a person holds a
    /// handle, with the system clock and the default limits.
    pub fn new(store: Arc<dyn AgentStore>, lensers: Arc<dyn LenserHandles>) -> Self {
        Self {
            store,
            lensers,
            clock: Arc::new(SystemClock),
            limits: AgentLimits::default(),
            dispatch: None,
            ledger: None,
        }
    }

    /// Keeps a call ledger (see `service/ledger.rs`): calls take from
    /// allowances of the day's caps this server reserved ahead, and the log
    /// entries of calls that end together are committed together, each call
    /// answering once its entry is (`service/group_commit.rs`). Whoever
    /// sets it calls [`AgentService::flush`] every few milliseconds and
    /// [`AgentService::close`] before the process ends.
    pub fn with_ledger(mut self, settings: LedgerSettings) -> Self {
        self.ledger = Some(ledger::Ledger::new(settings));
        self
    }

    /// Reserves ahead for busy agents, writes the log entries no call is
    /// writing (of calls that went away before their entry was written,
    /// or that failed with the store), and gives back what is held of days
    /// that are over. Without a ledger there is nothing to do.
    pub async fn flush(&self) -> LfResult<()> {
        self.drain(Some(UsageDay::of(self.now()))).await
    }

    /// Writes the log entries waiting and gives back everything held: call
    /// it once calls have stopped, before the process ends.
    pub async fn close(&self) -> LfResult<()> {
        self.drain(None).await
    }

    /// Reserves ahead for busy agents that have not changed since their
    /// last call ([`ledger::Ledger::top_ups`], [`ledger::top_up`]: the log
    /// waiting goes with the first), writes the log entries waiting, and
    /// gives back what is held of days other than `today` (of every day,
    /// reserving nothing: `None`).
    async fn drain(&self, today: Option<UsageDay>) -> LfResult<()> {
        let Some(ledger) = &self.ledger else { return Ok(()) };
        let store = self.store.as_ref();
        let mut first = None;
        if let Some(day) = today {
            for (agent, revision, asks) in ledger.top_ups(day) {
                if let Err(e) = ledger::top_up(ledger, store, agent, revision, day, &asks).await {
                    first.get_or_insert(e);
                }
            }
        }
        let written = ledger.log.write_waiting(store).await.and(first.map_or(Ok(()), Err));
        for (agent, day, units) in ledger.take_held(today) {
            self.store.release_usage(agent, day, &units).await?;
        }
        written
    }

    /// Logs `entry`, and returns once it is committed: alone without a
    /// ledger, else with the entries of the calls ending meanwhile. When it
    /// could not be written, the store's error (the call answers that, not
    /// its result; with a ledger its entry waits for the next write).
    async fn log(&self, entry: &ActionEntry) -> LfResult<()> {
        match &self.ledger {
            None => self.store.record_action(entry).await,
            Some(ledger) => ledger.log.commit(self.store.as_ref(), entry.clone()).await,
        }
    }

    /// Tells `dispatch` of every team run left queued (started with policy
    /// `auto`, or approved) and of every cancel of a queued or running one
    /// ([`TeamDispatch`]). Without it (the default: embedding, tests)
    /// nothing is dispatched and team runs stay queued until someone
    /// records their progress.
    pub fn with_dispatch(mut self, dispatch: Arc<dyn TeamDispatch>) -> Self {
        self.dispatch = Some(dispatch);
        self
    }

    /// Uses `clock` for every timestamp and for the day caps count in.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Applies `limits`.
    pub fn with_limits(mut self, limits: AgentLimits) -> Self {
        self.limits = limits;
        self
    }

    pub fn limits(&self) -> AgentLimits {
        self.limits
    }

    pub(crate) fn store(&self) -> &dyn AgentStore {
        self.store.as_ref()
    }

    pub(crate) fn dispatcher(&self) -> Option<&dyn TeamDispatch> {
        self.dispatch.as_deref()
    }

    pub(crate) fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The agent, if `p` may do `permission` to it.
    pub(crate) async fn load(&self, p: &Principal, id: LenserId, permission: Permission) -> LfResult<Agent> {
        let agent = self.store.get_agent(p.reach(), id).await?;
        roles::require(p, &agent, permission)?;
        Ok(agent)
    }

    /// Creates an agent owned by the caller (MISSING_LENSER for the service
    /// acting as nobody): CONFLICT naming the handle when a lenser or an
    /// agent holds it, SLOTS_FULL when the caller already owns the limit of
    /// active agents.
    pub async fn create(&self, p: &Principal, new: NewAgent) -> LfResult<Agent> {
        no_agents(p, "create agents")?;
        let owner = p.owner_for_create()?;
        if self.lensers.lenser_holds(new.handle.as_str()).await? {
            return Err(crate::handle_taken(&new.handle));
        }
        let agent = new.into_agent(owner, self.now());
        self.store.create_agent(&agent, self.limits.per_owner).await?;
        Ok(agent)
    }

    /// The agent, what the caller is to it, and today's usage.
    pub async fn get(&self, p: &Principal, id: LenserId) -> LfResult<AgentView> {
        let agent = self.load(p, id, Permission::View).await?;
        let day = UsageDay::of(self.now());
        let mut usage = self.store.usage(p.reach(), id, day).await?;
        if let Some(ledger) = &self.ledger {
            usage = usage.saturating_sub(ledger.holding(id, day));
        }
        let role = match p {
            Principal::Lenser { id, .. } => agent.role_of(*id),
            _ => None,
        };
        Ok(AgentView { agent, role, day, usage })
    }

    /// The owner of agent `id`, whoever asks. NOT_FOUND if there is no
    /// such agent.
    pub async fn owner_of(&self, id: LenserId) -> LfResult<LenserId> {
        Ok(self.store.get_agent(Reach::Everything, id).await?.owner)
    }

    /// The owner of agent `id`, when `p` may enter it in a battle as a
    /// contender: an active agent whose policy has `can_join_battles` on,
    /// that `p` may act as (`Act`: its owner, a co-owner or an operator;
    /// an agent only itself; the service any). `None` alike when there is
    /// no such agent, when `p` cannot see it and when it may not join, so
    /// nobody learns of an agent they cannot see.
    pub async fn battle_entrant(&self, p: &Principal, id: LenserId) -> LfResult<Option<LenserId>> {
        let Some(agent) = self.visible(p, id).await? else { return Ok(None) };
        let may_act = match p {
            Principal::Agent { agent_id, .. } => *agent_id == id,
            _ => roles::require(p, &agent, Permission::Act).is_ok(),
        };
        Ok((may_act && agent.is_active() && agent.policy.can_join_battles).then_some(agent.owner))
    }

    /// Agent `id`, if `p` can see it (archived or not); `None` otherwise.
    pub async fn visible(&self, p: &Principal, id: LenserId) -> LfResult<Option<Agent>> {
        match self.store.get_agent(p.reach(), id).await {
            Ok(agent) => Ok(Some(agent)),
            Err(e) if e.code() == lf_core::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether lenser `id` has an account (a person, not an agent).
    pub async fn lenser_exists(&self, id: LenserId) -> LfResult<bool> {
        self.lensers.lenser_exists(id).await
    }

    /// The policy of the AI Lenser `p` is, `None` when `p` is not one: what
    /// a use case reading one of its flags (`can_move_protected_labels`)
    /// is handed.
    pub async fn policy_of(&self, p: &Principal) -> LfResult<Option<Policy>> {
        match p {
            Principal::Agent { agent_id, .. } => {
                Ok(Some(self.store.get_agent(p.reach(), *agent_id).await?.policy))
            }
            Principal::Lenser { .. } | Principal::Service { .. } => Ok(None),
        }
    }

    /// The agents the caller may see that match `filter`, newest first.
    pub async fn list(
        &self,
        p: &Principal,
        filter: &AgentFilter,
        page: PageRequest,
    ) -> LfResult<Page<Agent>> {
        no_agents(p, "list agents")?;
        self.store.list_agents(p.reach(), filter, page).await
    }

    /// Whether `handle` is free for a new agent: no lenser and no agent
    /// holds it.
    pub async fn handle_free(&self, handle: &AgentHandle) -> LfResult<bool> {
        Ok(!self.lensers.lenser_holds(handle.as_str()).await? && !self.store.handle_taken(handle).await?)
    }

    /// Applies `patch`: profile fields need an owner or co-owner, policy
    /// fields the owner. INVALID_ARGUMENT for an empty patch;
    /// INVALID_TRANSITION for an archived agent; CONFLICT when the agent
    /// changed since it was read. Answers with the fields that changed
    /// (none: nothing was written).
    pub async fn update(&self, p: &Principal, id: LenserId, patch: AgentPatch) -> LfResult<Updated> {
        patch.check_not_empty()?;
        let mut agent = self.load(p, id, Permission::View).await?;
        if patch.touches_profile() {
            roles::require(p, &agent, Permission::EditProfile)?;
        }
        if patch.touches_policy() {
            roles::require(p, &agent, Permission::EditPolicy)?;
        }
        if !agent.is_active() {
            return Err(archived(&agent, "be changed"));
        }
        let changed = patch.apply(&mut agent);
        if changed.is_empty() {
            return Ok(Updated { agent, changed });
        }
        agent.updated_at = self.now();
        self.store.update_agent(&agent, agent.revision).await?;
        agent.revision += 1;
        Ok(Updated { agent, changed })
    }

    /// Archives the agent (owner only, `confirm: true`): it acts no more,
    /// no longer counts against its owner's limit, and its unfinished team
    /// runs are cancelled (their workflow runs stopped). Archiving an
    /// archived agent changes nothing.
    pub async fn archive(&self, p: &Principal, id: LenserId, confirm: bool) -> LfResult<Agent> {
        if !confirm {
            return Err(LfError::confirmation_required("Archiving an AI Lenser"));
        }
        let mut agent = self.load(p, id, Permission::Archive).await?;
        if !agent.is_active() {
            return Ok(agent);
        }
        let now = self.now();
        agent.status = AgentStatus::Archived;
        agent.archived_at = Some(now);
        agent.updated_at = now;
        self.store.update_agent(&agent, agent.revision).await?;
        agent.revision += 1;
        self.stop_team_runs(p, id).await?;
        Ok(agent)
    }

    /// Makes `lenser` a co-owner or operator of the agent (owner only), or
    /// changes their role; the agent with its members.
    pub async fn add_member(
        &self,
        p: &Principal,
        id: LenserId,
        lenser: LenserId,
        role: Role,
    ) -> LfResult<Agent> {
        if role == Role::Owner {
            return Err(LfError::invalid_argument(
                "An agent has one owner, its creator: add a co_owner or an operator instead.",
            )
            .with_field("role"));
        }
        let agent = self.load(p, id, Permission::ManageMembers).await?;
        if lenser == agent.owner {
            return Err(LfError::invalid_argument("That lenser is the agent's owner already.")
                .with_field("lenser_id"));
        }
        let by = p.lenser().unwrap_or(agent.owner);
        let member = Member { lenser, role, added_by: by, added_at: self.now() };
        self.store.put_member(id, &member, self.limits.members).await?;
        self.store.get_agent(Reach::Everything, id).await
    }

    /// Removes `lenser` from the agent's co-owners and operators (owner
    /// only); whether they were one.
    pub async fn remove_member(&self, p: &Principal, id: LenserId, lenser: LenserId) -> LfResult<bool> {
        let agent = self.load(p, id, Permission::ManageMembers).await?;
        if lenser == agent.owner {
            return Err(LfError::invalid_argument(
                "The owner cannot be removed from their agent; archive it instead.",
            )
            .with_field("lenser_id"));
        }
        self.store.remove_member(id, lenser).await
    }

    /// Grants `tool` to the agent (owner or co-owner): never an Agent tool
    /// (INVALID_ARGUMENT), a Destructive one only with `confirm`
    /// (CONFIRMATION_REQUIRED), not to an archived agent
    /// (INVALID_TRANSITION). Granting a tool again changes nothing.
    pub async fn assign_tool(
        &self,
        p: &Principal,
        id: LenserId,
        tool: ToolRef,
        confirm: bool,
    ) -> LfResult<StoredGrant> {
        let agent = self.load(p, id, Permission::ManageTools).await?;
        if !agent.is_active() {
            return Err(archived(&agent, "be granted tools"));
        }
        grants::check_grantable(&tool, confirm)?;
        let grant =
            Grant { agent: id, tool, granted_by: p.lenser().unwrap_or(agent.owner), granted_at: self.now() };
        self.store.put_grant(&grant, self.limits.grants).await
    }

    /// The agent's grants, by tool name.
    pub async fn list_tools(&self, p: &Principal, id: LenserId, page: PageRequest) -> LfResult<Page<Grant>> {
        self.load(p, id, Permission::View).await?;
        self.store.list_grants(p.reach(), id, page).await
    }

    /// Revokes the agent's grant of the tool `tool` names (owner or
    /// co-owner); the grant revoked, if there was one.
    pub async fn revoke_tool(&self, p: &Principal, id: LenserId, tool: &ToolKey) -> LfResult<Option<Grant>> {
        self.load(p, id, Permission::ManageTools).await?;
        self.store.revoke_grant(id, tool).await
    }

    /// Checks a call the agent is to make and counts it. The caller is the
    /// agent itself (`Principal::Agent` of this agent and its owner), one of
    /// the people it belongs to, or the service; then, in order:
    ///
    /// - the agent is active (PERMISSION_DENIED);
    /// - the tool is granted, and not an Agent tool (PERMISSION_DENIED
    ///   naming the tool and how to grant it);
    /// - the policy's flag for it is on (PERMISSION_DENIED naming it);
    /// - the day's tool calls, its battles or votes, and its credits have
    ///   room, all counted at once or none: THROTTLED naming the cap and
    ///   when it resets, BUDGET_EXCEEDED for credits.
    ///
    /// A refused call is logged as refused (committed before the refusal is
    /// answered). A passed one is counted; run it as [`CallPass::principal`]
    /// and log what came of it with [`AgentService::record_call`].
    pub async fn check_call(&self, p: &Principal, id: LenserId, call: &Call) -> LfResult<CallPass> {
        let (agent, actor, grant) = self.acting(p, id, &ToolKey::Id(call.tool.id)).await?;
        let refusal = if !agent.is_active() {
            Some(LfError::permission_denied(format!("@{} is archived and acts no more.", agent.handle)))
        } else if call.tool.group.is_agent() || grant.is_none() {
            Some(grants::not_granted(&agent, &ToolKey::Name(call.tool.name.clone())))
        } else {
            None
        };
        let asks = match refusal {
            Some(e) => return Err(self.refuse(&agent, call, actor, e).await?),
            None => match policy::call_asks(&agent, &call.tool.name, call.gate, call.credits) {
                Ok(asks) => asks,
                Err(e) => return Err(self.refuse(&agent, call, actor, e).await?),
            },
        };
        let day = UsageDay::of(self.now());
        let counted = match &self.ledger {
            None => self.store.reserve_usage(id, day, &asks).await?,
            Some(ledger) => {
                ledger::reserve_with(ledger, self.store.as_ref(), id, agent.revision, day, &asks).await?
            }
        };
        match counted {
            Reservation::Reserved(usage) => Ok(CallPass {
                agent: id,
                principal: Principal::Agent { agent_id: id, owner: agent.owner },
                tool: call.tool.clone(),
                action: call.action.clone(),
                arguments: call.arguments.clone(),
                actor,
                day,
                usage,
                profile: agent.profile,
            }),
            Reservation::Refused { kind, used, asked, limit } => {
                let e = policy::over_limit(&agent, day, kind, used, asked, limit);
                Err(self.refuse(&agent, call, actor, e).await?)
            }
        }
    }

    /// The agent `p` acts for, who the actor is, and the agent's grant of
    /// `tool`, in one read. An agent acts only as itself and for its owner
    /// (PERMISSION_DENIED otherwise); a person needs `Act`.
    async fn acting(
        &self,
        p: &Principal,
        id: LenserId,
        tool: &ToolKey,
    ) -> LfResult<(Agent, Option<LenserId>, Option<Grant>)> {
        // An agent is read whoever owns it, to tell it that it acts only as
        // itself for its owner.
        let reach = match p {
            Principal::Agent { .. } => Reach::Everything,
            _ => p.reach(),
        };
        let (agent, grant) = self.store.agent_and_grant(reach, id, tool).await?;
        let actor = match p {
            Principal::Agent { agent_id, owner } => {
                if *agent_id != id || agent.owner != *owner {
                    return Err(LfError::permission_denied(format!(
                        "Agent {agent_id} cannot act as AI Lenser {id}: an agent acts only as itself, for its owner."
                    )));
                }
                Some(id)
            }
            Principal::Lenser { id: me, .. } => {
                roles::require(p, &agent, Permission::Act)?;
                Some(*me)
            }
            Principal::Service { acting_as } => *acting_as,
        };
        Ok((agent, actor, grant))
    }

    /// Logs `call` as refused with `e`, and hands `e` back.
    async fn refuse(
        &self,
        agent: &Agent,
        call: &Call,
        actor: Option<LenserId>,
        e: LfError,
    ) -> LfResult<LfError> {
        let entry = ActionEntry {
            id: ActionId::new(),
            agent: agent.id,
            action: call.action.clone(),
            tool: Some(call.tool.clone()),
            arguments: call.arguments.clone(),
            outcome: ActionOutcome::Refused,
            code: Some(e.code()),
            message: Some(ActionEntry::clip_message(e.message())),
            actor,
            at: self.now(),
        };
        self.log(&entry).await?;
        Ok(e)
    }

    /// Logs what came of a passed call: succeeded, or failed with its
    /// error. Returns once the entry is committed (the call answers after).
    pub async fn record_call(&self, pass: &CallPass, result: Result<(), &LfError>) -> LfResult<ActionEntry> {
        let (outcome, code, message) = match result {
            Ok(()) => (ActionOutcome::Succeeded, None, None),
            Err(e) => (ActionOutcome::Failed, Some(e.code()), Some(ActionEntry::clip_message(e.message()))),
        };
        let entry = ActionEntry {
            id: ActionId::new(),
            agent: pass.agent,
            action: pass.action.clone(),
            tool: Some(pass.tool.clone()),
            arguments: pass.arguments.clone(),
            outcome,
            code,
            message,
            actor: pass.actor,
            at: self.now(),
        };
        self.log(&entry).await?;
        Ok(entry)
    }

    /// The agent's action log, newest first.
    pub async fn list_actions(
        &self,
        p: &Principal,
        id: LenserId,
        page: PageRequest,
    ) -> LfResult<Page<ActionEntry>> {
        self.load(p, id, Permission::View).await?;
        self.store.list_actions(p.reach(), id, page).await
    }
}
