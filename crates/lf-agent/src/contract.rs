//! The public contract suite every [`AgentStore`] runs: the in-memory store
//! here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_agent::contract::suite(Arc::new(MyStore::open().await?)).await;
//! ```
//!
//! Each check uses fresh owners, handles and ids, so the suite runs against
//! a store that already holds data (a shared PostgreSQL database) and may
//! run several times. A failed check panics with what the contract expected.

use std::sync::Arc;

use lf_core::{Detail, ErrorCode, LenserId, LfResult, PageRequest, Reach, Timestamp, WorkflowId};
use serde_json::{Map, json};

use crate::model::{
    ActionEntry, ActionId, ActionName, ActionOutcome, Agent, AgentFilter, AgentHandle, AgentStatus,
    ArgsSummary, Ask, Bio, Cap, CreditLimit, DelegationPolicy, DisplayName, EventDetail, Grant, Headline,
    Member, ModelName, NewEvent, Persona, Policy, Profile, Reservation, Role, Runtime, Safety, TeamEventKind,
    TeamInputs, TeamRun, TeamRunId, TeamRunStatus, ToolGroup, ToolId, ToolKey, ToolName, ToolRef, Usage,
    UsageDay, UsageKind, WebUrl,
};
use crate::store::AgentStore;

mod team;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn AgentStore>) {
    let s = store.as_ref();
    agents(s).await;
    owner_limit(s).await;
    revisions(s).await;
    members(s).await;
    listing(s).await;
    grants(s).await;
    usage(s).await;
    run_charges(s).await;
    actions(s).await;
    reserving_with_the_log(s).await;
    team::team_runs(s).await;
    team::events(s).await;
    team::by_status(s).await;
}

struct Fixture {
    clock: i64,
}

impl Fixture {
    fn new() -> Self {
        // Microseconds, within the last few years, apart per fixture.
        Self {
            clock: 1_700_000_000_000_000
                + (LenserId::new().as_uuid().as_u128() % 1_000_000_000) as i64 * 1000,
        }
    }

    fn tick(&mut self) -> Timestamp {
        self.clock += 1_000;
        Timestamp::from_micros(self.clock)
    }

    /// A handle no other run of the suite makes.
    fn handle() -> AgentHandle {
        let hex = LenserId::new().as_uuid().simple().to_string();
        AgentHandle::parse(&format!("ct_{}", &hex[12..32])).unwrap()
    }

    fn agent(&mut self, owner: LenserId) -> Agent {
        let now = self.tick();
        let new = crate::NewAgent {
            handle: Self::handle(),
            profile: Profile {
                display_name: DisplayName::parse("Contract agent — ünïcödé ✓").unwrap(),
                bio: Some(Bio::parse("Writes 'quotes', \"double quotes\" and \\ slashes.").unwrap()),
                headline: Some(Headline::parse("A headline").unwrap()),
                persona: Some(Persona::parse("  You are terse.\nAnswer in one line.  ").unwrap()),
                model: Some(ModelName::parse("gpt-4o-mini").unwrap()),
                runtime: Runtime::Hybrid,
                avatar_url: Some(WebUrl::parse("avatar_url", "https://example.com/a.png").unwrap()),
                website_url: None,
            },
            policy: Policy {
                can_join_battles: true,
                can_vote: false,
                can_create_battles: true,
                can_move_protected_labels: true,
                max_daily_battles: Cap::of(3),
                max_daily_votes: Cap::of(0),
                max_daily_team_runs: Cap::of(7),
                max_daily_tool_calls: Cap::of(10_000),
                spending_limit_credits: CreditLimit::of(1_000_000_000),
            },
        };
        new.into_agent(owner, now)
    }

    async fn create(&mut self, s: &dyn AgentStore, owner: LenserId) -> Agent {
        let a = self.agent(owner);
        s.create_agent(&a, 100).await.expect("create_agent");
        a
    }

    fn member(&mut self, role: Role) -> Member {
        Member { lenser: LenserId::new(), role, added_by: LenserId::new(), added_at: self.tick() }
    }

    fn grant(&mut self, agent: LenserId, name: &str, safety: Safety) -> Grant {
        Grant {
            agent,
            tool: ToolRef {
                id: ToolId::new(),
                name: ToolName::parse("tool", name).unwrap(),
                group: ToolGroup::parse("group", "lens").unwrap(),
                safety,
            },
            granted_by: LenserId::new(),
            granted_at: self.tick(),
        }
    }

    fn team_run(&mut self, agent: LenserId, policy: DelegationPolicy, status: TeamRunStatus) -> TeamRun {
        let now = self.tick();
        let mut inputs = Map::new();
        inputs.insert("topic".into(), json!("ünïcödé 'quotes'"));
        inputs.insert("a_list".into(), json!([1, 2.5, null, {"z": true, "a": false}]));
        TeamRun {
            id: TeamRunId::new(),
            agent,
            workflow_id: WorkflowId::new(),
            workflow_run: None,
            inputs: TeamInputs::new(inputs).unwrap(),
            policy,
            status,
            parent: None,
            depth: 0,
            started_by: Some(LenserId::new()),
            decision: None,
            error: None,
            created_at: now,
            updated_at: now,
            finished_at: None,
        }
    }
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

fn event(kind: TeamEventKind) -> NewEvent {
    NewEvent { kind, detail: EventDetail::default() }
}

async fn agents(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    assert_eq!(s.get_agent(Reach::Everything, a.id).await.unwrap(), a, "an agent reads back as stored");
    assert_eq!(s.get_agent(Reach::Lenser(owner), a.id).await.unwrap(), a, "its owner reads it");
    let e = s.get_agent(Reach::Lenser(LenserId::new()), a.id).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "a stranger does not see it");
    assert_eq!(code(s.get_agent(Reach::Everything, LenserId::new()).await), ErrorCode::NotFound);

    assert!(s.handle_taken(&a.handle).await.unwrap());
    assert!(!s.handle_taken(&Fixture::handle()).await.unwrap());

    let mut same_handle = f.agent(LenserId::new());
    same_handle.handle = a.handle.clone();
    let e = s.create_agent(&same_handle, 100).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict, "handles are unique among agents");
    assert!(
        e.details().contains(&("handle".into(), Detail::Str(a.handle.as_str().into()))),
        "the CONFLICT names the handle: {e:?}"
    );
    assert_eq!(
        code(s.get_agent(Reach::Everything, same_handle.id).await),
        ErrorCode::NotFound,
        "nothing written"
    );
    let mut same_id = f.agent(owner);
    same_id.id = a.id;
    assert_eq!(code(s.create_agent(&same_id, 100).await), ErrorCode::Conflict, "ids are unique");

    // Members given at creation are not stored: members are added one by one.
    let mut with_members = f.agent(owner);
    with_members.members.push(f.member(Role::Operator));
    s.create_agent(&with_members, 100).await.unwrap();
    assert!(s.get_agent(Reach::Everything, with_members.id).await.unwrap().members.is_empty());

    // An archived agent keeps its handle.
    let mut old = f.create(s, owner).await;
    old.status = AgentStatus::Archived;
    old.archived_at = Some(f.tick());
    s.update_agent(&old, 0).await.unwrap();
    let mut reuse = f.agent(LenserId::new());
    reuse.handle = old.handle.clone();
    assert_eq!(
        code(s.create_agent(&reuse, 100).await),
        ErrorCode::Conflict,
        "archived agents hold their handle"
    );
    assert!(s.handle_taken(&old.handle).await.unwrap());
}

async fn owner_limit(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let first = f.agent(owner);
    s.create_agent(&first, 2).await.unwrap();
    s.create_agent(&f.agent(owner), 2).await.unwrap();
    let third = f.agent(owner);
    let e = s.create_agent(&third, 2).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::SlotsFull, "the owner's limit holds: {e:?}");
    assert_eq!(code(s.get_agent(Reach::Everything, third.id).await), ErrorCode::NotFound, "nothing written");
    s.create_agent(&f.agent(LenserId::new()), 2).await.expect("another owner has their own limit");
    // An archived agent does not count.
    let mut archived = first.clone();
    archived.status = AgentStatus::Archived;
    archived.archived_at = Some(f.tick());
    s.update_agent(&archived, 0).await.unwrap();
    s.create_agent(&third, 2).await.expect("archiving frees a place");
    // Members do not count against the limit of the lenser they are.
    let other = LenserId::new();
    let mut m = f.member(Role::CoOwner);
    m.lenser = owner;
    let elsewhere = f.create(s, other).await;
    s.put_member(elsewhere.id, &m, 20).await.unwrap();
    assert_eq!(code(s.create_agent(&f.agent(owner), 2).await), ErrorCode::SlotsFull);
    s.create_agent(&f.agent(owner), 3).await.expect("a co-owned agent is not owned");
}

async fn revisions(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let operator = f.member(Role::Operator);
    s.put_member(a.id, &operator, 20).await.unwrap();

    let mut changed = a.clone();
    changed.profile.display_name = DisplayName::parse("Renamed").unwrap();
    changed.profile.bio = None;
    changed.profile.website_url = Some(WebUrl::parse("website_url", "http://example.org/x?y=1").unwrap());
    changed.policy.can_vote = true;
    changed.policy.can_move_protected_labels = false;
    changed.policy.spending_limit_credits = CreditLimit::of(0);
    changed.updated_at = f.tick();
    // What update_agent does not write: members, handle, owner.
    changed.members.clear();
    changed.handle = Fixture::handle();
    changed.owner = LenserId::new();
    s.update_agent(&changed, 0).await.expect("update at the revision read");
    let stored = s.get_agent(Reach::Everything, a.id).await.unwrap();
    assert_eq!(stored.revision, 1, "the revision moves on");
    assert_eq!(stored.profile, changed.profile);
    assert_eq!(stored.policy, changed.policy);
    assert_eq!(stored.updated_at, changed.updated_at);
    assert_eq!((&stored.handle, stored.owner), (&a.handle, a.owner), "handle and owner are fixed");
    assert_eq!(stored.members, vec![operator], "members are not written by update_agent");

    assert_eq!(code(s.update_agent(&changed, 0).await), ErrorCode::Conflict, "a stale revision is refused");
    assert_eq!(s.get_agent(Reach::Everything, a.id).await.unwrap().revision, 1, "nothing written");
    s.update_agent(&changed, 1).await.expect("the next revision");
    let mut missing = f.agent(owner);
    missing.revision = 0;
    assert_eq!(code(s.update_agent(&missing, 0).await), ErrorCode::NotFound);
}

async fn members(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let co = f.member(Role::CoOwner);
    let op = f.member(Role::Operator);
    assert!(s.put_member(a.id, &co, 2).await.unwrap(), "added");
    assert!(s.put_member(a.id, &op, 2).await.unwrap());
    let stored = s.get_agent(Reach::Everything, a.id).await.unwrap();
    assert_eq!(stored.members, vec![co.clone(), op.clone()], "members oldest first");
    for m in [&co, &op] {
        assert_eq!(
            s.get_agent(Reach::Lenser(m.lenser), a.id).await.unwrap().id,
            a.id,
            "members read the agent"
        );
    }
    let extra = f.member(Role::Operator);
    assert_eq!(code(s.put_member(a.id, &extra, 2).await), ErrorCode::SlotsFull, "the member limit holds");

    // A role change keeps the first addition.
    let mut demoted = co.clone();
    demoted.role = Role::Operator;
    demoted.added_at = f.tick();
    assert!(!s.put_member(a.id, &demoted, 2).await.unwrap(), "changed, not added");
    let stored = s.get_agent(Reach::Everything, a.id).await.unwrap();
    assert_eq!(stored.members[0], Member { role: Role::Operator, ..co.clone() });

    let mut as_owner = f.member(Role::CoOwner);
    as_owner.lenser = owner;
    assert_eq!(code(s.put_member(a.id, &as_owner, 20).await), ErrorCode::Conflict, "the owner is no member");
    let second_owner = f.member(Role::Owner);
    assert_eq!(code(s.put_member(a.id, &second_owner, 20).await), ErrorCode::Conflict, "one owner");
    assert_eq!(code(s.put_member(LenserId::new(), &f.member(Role::Operator), 20).await), ErrorCode::NotFound);

    assert!(s.remove_member(a.id, op.lenser).await.unwrap());
    assert!(!s.remove_member(a.id, op.lenser).await.unwrap(), "removed once");
    assert!(!s.remove_member(a.id, owner).await.unwrap(), "the owner is not a member");
    assert_eq!(
        code(s.get_agent(Reach::Lenser(op.lenser), a.id).await),
        ErrorCode::NotFound,
        "gone from reach"
    );
    assert_eq!(code(s.remove_member(LenserId::new(), op.lenser).await), ErrorCode::NotFound);
}

async fn listing(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let helper = LenserId::new();
    let a1 = f.create(s, owner).await;
    let a2 = f.create(s, owner).await;
    let mut a3 = f.create(s, owner).await;
    a3.status = AgentStatus::Archived;
    a3.archived_at = Some(f.tick());
    s.update_agent(&a3, 0).await.unwrap();
    let theirs = f.create(s, LenserId::new()).await;
    let mut m = f.member(Role::Operator);
    m.lenser = helper;
    s.put_member(theirs.id, &m, 20).await.unwrap();
    let ids = |p: &lf_core::Page<Agent>| p.items.iter().map(|a| a.id).collect::<Vec<_>>();

    let mine = AgentFilter { lenser: Some(owner), role: None, include_archived: false };
    let page = s.list_agents(Reach::Lenser(owner), &mine, PageRequest::default()).await.unwrap();
    assert_eq!(ids(&page), vec![a2.id, a1.id], "newest first, archived left out");
    assert_eq!(page.total, 2);
    let all = AgentFilter { include_archived: true, ..mine.clone() };
    let page =
        s.list_agents(Reach::Lenser(owner), &all, PageRequest::new(Some(2), Some(0)).unwrap()).await.unwrap();
    assert_eq!((ids(&page), page.total), (vec![a3.id, a2.id], 3), "archived on request, paged");
    let page =
        s.list_agents(Reach::Lenser(owner), &all, PageRequest::new(Some(2), Some(2)).unwrap()).await.unwrap();
    assert_eq!(ids(&page), vec![a1.id]);

    // Another person's listing of this owner's agents is empty, not an error.
    let page = s.list_agents(Reach::Lenser(helper), &mine, PageRequest::default()).await.unwrap();
    assert_eq!(page.total, 0);
    let page = s
        .list_agents(
            Reach::Lenser(helper),
            &AgentFilter { lenser: Some(helper), ..Default::default() },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(ids(&page), vec![theirs.id], "a member lists what they are a member of");
    let as_owner = AgentFilter { lenser: Some(helper), role: Some(Role::Owner), include_archived: false };
    assert_eq!(s.list_agents(Reach::Everything, &as_owner, PageRequest::default()).await.unwrap().total, 0);
    let as_operator = AgentFilter { role: Some(Role::Operator), ..as_owner };
    assert_eq!(
        s.list_agents(Reach::Everything, &as_operator, PageRequest::default()).await.unwrap().total,
        1
    );
}

async fn grants(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let lens = f.grant(a.id, "get_lens", Safety::Read);
    let del = f.grant(a.id, "delete_lens", Safety::Destructive);
    let stored = s.put_grant(&lens, 2).await.unwrap();
    assert!(stored.created);
    assert_eq!(stored.grant, lens);
    s.put_grant(&del, 2).await.unwrap();

    let mut again = f.grant(a.id, "get_lens", Safety::Read);
    again.tool.id = lens.tool.id;
    let stored = s.put_grant(&again, 2).await.unwrap();
    assert_eq!((stored.created, stored.grant), (false, lens.clone()), "a repeated grant keeps the first");
    let third = f.grant(a.id, "list_lenses", Safety::Read);
    assert_eq!(code(s.put_grant(&third, 2).await), ErrorCode::SlotsFull, "the grant limit holds");

    let by_id = ToolKey::Id(lens.tool.id);
    let by_name = ToolKey::Name(lens.tool.name.clone());
    let grant = async |reach, agent, key| s.agent_and_grant(reach, agent, key).await.map(|(_, g)| g);
    for key in [&by_id, &by_name] {
        assert_eq!(grant(Reach::Lenser(owner), a.id, key).await.unwrap(), Some(lens.clone()), "{key}");
    }
    let unknown = ToolKey::Id(ToolId::new());
    assert_eq!(grant(Reach::Everything, a.id, &unknown).await.unwrap(), None);
    assert_eq!(code(grant(Reach::Lenser(LenserId::new()), a.id, &by_id).await), ErrorCode::NotFound);

    // The agent and a grant, read together, as a member reads them.
    let op = f.member(Role::Operator);
    s.put_member(a.id, &op, 20).await.unwrap();
    let agent = s.get_agent(Reach::Everything, a.id).await.unwrap();
    assert_eq!(agent.members, vec![op.clone()]);
    for reach in [Reach::Lenser(owner), Reach::Lenser(op.lenser), Reach::Everything] {
        for key in [&by_id, &by_name] {
            let both = s.agent_and_grant(reach, a.id, key).await.unwrap();
            assert_eq!(both, (agent.clone(), Some(lens.clone())), "{reach:?} {key}");
        }
        let none = s.agent_and_grant(reach, a.id, &ToolKey::Id(ToolId::new())).await.unwrap();
        assert_eq!(none, (agent.clone(), None), "not granted");
    }
    assert_eq!(
        code(s.agent_and_grant(Reach::Lenser(LenserId::new()), a.id, &by_id).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(s.agent_and_grant(Reach::Everything, LenserId::new(), &by_id).await),
        ErrorCode::NotFound
    );

    let page = s.list_grants(Reach::Lenser(owner), a.id, PageRequest::default()).await.unwrap();
    assert_eq!(page.items, vec![del.clone(), lens.clone()], "by tool name");
    assert_eq!(
        code(s.list_grants(Reach::Lenser(LenserId::new()), a.id, PageRequest::default()).await),
        ErrorCode::NotFound
    );

    // Another agent's grants are its own.
    let b = f.create(s, owner).await;
    assert_eq!(grant(Reach::Everything, b.id, &by_id).await.unwrap(), None);
    assert_eq!(s.revoke_grant(b.id, &by_id).await.unwrap(), None);

    assert_eq!(s.revoke_grant(a.id, &by_name).await.unwrap(), Some(lens.clone()), "revoked by name");
    assert_eq!(
        grant(Reach::Lenser(owner), a.id, &by_id).await.unwrap(),
        None,
        "a revoked grant is read as gone at once"
    );
    assert_eq!(s.revoke_grant(a.id, &by_id).await.unwrap(), None, "once");
    assert_eq!(s.revoke_grant(a.id, &ToolKey::Id(del.tool.id)).await.unwrap(), Some(del), "revoked by id");
    assert_eq!(s.list_grants(Reach::Everything, a.id, PageRequest::default()).await.unwrap().total, 0);
    assert_eq!(
        code(s.put_grant(&f.grant(LenserId::new(), "get_lens", Safety::Read), 2).await),
        ErrorCode::NotFound
    );
    assert_eq!(code(s.revoke_grant(LenserId::new(), &by_id).await), ErrorCode::NotFound);
}

async fn usage(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let day = UsageDay::of(f.tick());
    let ask = |kind, amount, limit| Ask { kind, amount, limit };

    assert_eq!(
        s.usage(Reach::Lenser(owner), a.id, day).await.unwrap(),
        Usage::default(),
        "a new day is zero"
    );
    let calls = [ask(UsageKind::ToolCalls, 1, 2), ask(UsageKind::Credits, 30, 50)];
    let Reservation::Reserved(u) = s.reserve_usage(a.id, day, &calls).await.unwrap() else { panic!("room") };
    assert_eq!((u.tool_calls, u.credits), (1, 30));
    // Credits have no room for 30 more: nothing is counted, not even the call.
    let r = s.reserve_usage(a.id, day, &calls).await.unwrap();
    assert_eq!(r, Reservation::Refused { kind: UsageKind::Credits, used: 30, asked: 30, limit: 50 });
    assert_eq!(s.usage(Reach::Everything, a.id, day).await.unwrap().tool_calls, 1, "all or nothing");
    // Up to the limit exactly.
    let to_the_limit = [ask(UsageKind::ToolCalls, 1, 2), ask(UsageKind::Credits, 20, 50)];
    let Reservation::Reserved(u) = s.reserve_usage(a.id, day, &to_the_limit).await.unwrap() else {
        panic!("the limit itself is within the limit")
    };
    assert_eq!((u.tool_calls, u.credits), (2, 50));
    let r = s.reserve_usage(a.id, day, &[ask(UsageKind::ToolCalls, 1, 2)]).await.unwrap();
    assert_eq!(
        r,
        Reservation::Refused { kind: UsageKind::ToolCalls, used: 2, asked: 1, limit: 2 },
        "past the cap"
    );
    // Zero allows none; the first ask that does not fit is named.
    let r = s
        .reserve_usage(a.id, day, &[ask(UsageKind::Votes, 1, 0), ask(UsageKind::ToolCalls, 1, 0)])
        .await
        .unwrap();
    assert!(matches!(r, Reservation::Refused { kind: UsageKind::Votes, used: 0, .. }), "{r:?}");
    // Asks of one kind add up.
    let twice = [ask(UsageKind::Battles, 1, 1), ask(UsageKind::Battles, 1, 1)];
    assert!(matches!(s.reserve_usage(a.id, day, &twice).await.unwrap(), Reservation::Refused { .. }));
    assert_eq!(s.usage(Reach::Everything, a.id, day).await.unwrap().battles, 0);
    // Counts that would overflow are refused, not wrapped.
    let huge = [ask(UsageKind::Credits, u64::MAX, u64::MAX)];
    assert!(matches!(s.reserve_usage(a.id, day, &huge).await.unwrap(), Reservation::Refused { .. }));

    // The next day starts from zero; other agents count apart.
    let next = UsageDay::from_days(day.as_days() + 1);
    let Reservation::Reserved(u) = s.reserve_usage(a.id, next, &calls).await.unwrap() else {
        panic!("a new day")
    };
    assert_eq!((u.tool_calls, u.credits), (1, 30));
    let b = f.create(s, owner).await;
    assert_eq!(s.usage(Reach::Everything, b.id, day).await.unwrap(), Usage::default());
    let all_kinds: Vec<Ask> = UsageKind::ALL.iter().map(|k| ask(*k, 2, 2)).collect();
    let Reservation::Reserved(u) = s.reserve_usage(b.id, day, &all_kinds).await.unwrap() else { panic!() };
    assert_eq!(
        u,
        Usage { battles: 2, votes: 2, team_runs: 2, tool_calls: 2, credits: 2 },
        "every kind is kept"
    );
    assert_eq!(s.usage(Reach::Everything, b.id, day).await.unwrap(), u);

    // Giving back lowers the counts given, never below zero, and only of
    // that day; a day with no usage stays at zero.
    let back = Usage { battles: 5, votes: 1, tool_calls: 1, ..Usage::default() };
    s.release_usage(b.id, day, &back).await.unwrap();
    assert_eq!(
        s.usage(Reach::Everything, b.id, day).await.unwrap(),
        Usage { battles: 0, votes: 1, team_runs: 2, tool_calls: 1, credits: 2 },
        "given back"
    );
    s.release_usage(b.id, next, &back).await.unwrap();
    assert_eq!(s.usage(Reach::Everything, b.id, next).await.unwrap(), Usage::default());
    // What was given back is room again.
    let Reservation::Reserved(u) =
        s.reserve_usage(b.id, day, &[ask(UsageKind::Battles, 2, 2)]).await.unwrap()
    else {
        panic!("room given back")
    };
    assert_eq!(u.battles, 2);
    assert_eq!(code(s.release_usage(LenserId::new(), day, &back).await), ErrorCode::NotFound);

    assert_eq!(code(s.usage(Reach::Lenser(LenserId::new()), a.id, day).await), ErrorCode::NotFound);
    assert_eq!(code(s.reserve_usage(LenserId::new(), day, &calls).await), ErrorCode::NotFound);
}

/// A run's spend is counted once, whatever the limit, on the day given.
async fn run_charges(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let day = UsageDay::of(f.tick());
    let run = lf_core::RunId::new();
    let calls = [Ask { kind: UsageKind::Credits, amount: 3, limit: 4 }];
    assert!(matches!(s.reserve_usage(a.id, day, &calls).await.unwrap(), Reservation::Reserved(_)));
    assert!(s.charge_run(a.id, day, run, 5).await.unwrap(), "the first charge counts");
    assert!(!s.charge_run(a.id, day, run, 5).await.unwrap(), "a charge made again does not");
    assert_eq!(s.usage(Reach::Everything, a.id, day).await.unwrap().credits, 8, "past the limit: spent");
    assert!(s.charge_run(a.id, day, lf_core::RunId::new(), 0).await.unwrap());
    let next = UsageDay::from_days(day.as_days() + 1);
    assert!(!s.charge_run(a.id, next, run, 5).await.unwrap(), "once per run, whatever the day");
    assert_eq!(s.usage(Reach::Everything, a.id, next).await.unwrap(), Usage::default());
    assert_eq!(code(s.charge_run(LenserId::new(), day, lf_core::RunId::new(), 1).await), ErrorCode::NotFound);
}

async fn actions(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let tool = f.grant(a.id, "cast_battle_vote", Safety::Write).tool;
    let entry = |f: &mut Fixture, outcome, code: Option<ErrorCode>| ActionEntry {
        id: ActionId::new(),
        agent: a.id,
        action: ActionName::parse("action_type", "cast_vote").unwrap(),
        tool: Some(tool.clone()),
        arguments: ArgsSummary::new("{\"battle_id\": \"…\", \"pick\": 'A'}"),
        outcome,
        code,
        message: code.map(|c| format!("{c}: ünïcödé 'why'")),
        actor: Some(owner),
        at: f.tick(),
    };
    let first = entry(&mut f, ActionOutcome::Succeeded, None);
    let second = entry(&mut f, ActionOutcome::Refused, Some(ErrorCode::Throttled));
    let mut third = entry(&mut f, ActionOutcome::Failed, Some(ErrorCode::NotFound));
    third.tool = None;
    third.actor = None;
    for e in [&first, &second, &third] {
        s.record_action(e).await.unwrap();
    }
    assert_eq!(code(s.record_action(&first).await), ErrorCode::Conflict, "ids are unique");
    let page = s.list_actions(Reach::Lenser(owner), a.id, PageRequest::default()).await.unwrap();
    assert_eq!(page.items, vec![third.clone(), second.clone(), first.clone()], "newest first, as recorded");
    let page =
        s.list_actions(Reach::Everything, a.id, PageRequest::new(Some(1), Some(1)).unwrap()).await.unwrap();
    assert_eq!((page.items, page.total), (vec![second], 3));
    assert_eq!(
        code(s.list_actions(Reach::Lenser(LenserId::new()), a.id, PageRequest::default()).await),
        ErrorCode::NotFound
    );
    let mut orphan = first.clone();
    orphan.id = ActionId::new();
    orphan.agent = LenserId::new();
    assert_eq!(code(s.record_action(&orphan).await), ErrorCode::NotFound);

    // A batch, of two agents, is written whole or not at all.
    let b = f.create(s, owner).await;
    let fourth = entry(&mut f, ActionOutcome::Succeeded, None);
    let mut of_b = entry(&mut f, ActionOutcome::Succeeded, None);
    of_b.agent = b.id;
    let fifth = entry(&mut f, ActionOutcome::Refused, Some(ErrorCode::PermissionDenied));
    for bad in [
        vec![fourth.clone(), orphan.clone()],
        vec![fourth.clone(), first.clone()],
        vec![fourth.clone(), fourth.clone()],
    ] {
        let got = code(s.record_actions(&bad).await);
        assert!(matches!(got, ErrorCode::NotFound | ErrorCode::Conflict), "{got:?}");
        let listed = s.list_actions(Reach::Everything, a.id, PageRequest::default()).await.unwrap();
        assert_eq!(listed.total, 3, "a refused batch writes nothing");
    }
    s.record_actions(&[fourth.clone(), of_b.clone(), fifth.clone()]).await.unwrap();
    s.record_actions(&[]).await.unwrap();
    let page = s.list_actions(Reach::Everything, a.id, PageRequest::default()).await.unwrap();
    assert_eq!(page.items[..2], [fifth, fourth], "newest first");
    assert_eq!(page.total, 5);
    let page = s.list_actions(Reach::Everything, b.id, PageRequest::default()).await.unwrap();
    assert_eq!(page.items, vec![of_b]);

    // A large batch is written whole, every entry as given.
    let c = f.create(s, owner).await;
    let many: Vec<ActionEntry> = (0..100)
        .map(|_| ActionEntry { agent: c.id, ..entry(&mut f, ActionOutcome::Succeeded, None) })
        .collect();
    s.record_actions(&many).await.unwrap();
    let page =
        s.list_actions(Reach::Everything, c.id, PageRequest::new(Some(100), None).unwrap()).await.unwrap();
    let mut newest_first = many;
    newest_first.reverse();
    assert_eq!(page.items, newest_first);
}

/// `reserve_usage_logging`: the log and the reservation, both or neither.
async fn reserving_with_the_log(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let day = UsageDay::of(f.tick());
    let entry = |f: &mut Fixture| ActionEntry {
        id: ActionId::new(),
        agent: a.id,
        action: ActionName::parse("action_type", "get_lens").unwrap(),
        tool: None,
        arguments: ArgsSummary::new("{}"),
        outcome: ActionOutcome::Succeeded,
        code: None,
        message: None,
        actor: Some(owner),
        at: f.tick(),
    };
    let logged =
        async || s.list_actions(Reach::Everything, a.id, PageRequest::default()).await.unwrap().total;
    let used = async || s.usage(Reach::Everything, a.id, day).await.unwrap().tool_calls;
    let calls = |amount| [Ask { kind: UsageKind::ToolCalls, amount, limit: 5 }];

    let (one, two) = (entry(&mut f), entry(&mut f));
    let got = s.reserve_usage_logging(a.id, day, &calls(2), &[one.clone(), two]).await.unwrap();
    assert!(matches!(got, Reservation::Reserved(u) if u.tool_calls == 2), "{got:?}");
    assert_eq!((logged().await, used().await), (2, 2));
    // Refused for want of room: the log is written all the same.
    let got = s.reserve_usage_logging(a.id, day, &calls(4), &[entry(&mut f)]).await.unwrap();
    assert!(matches!(got, Reservation::Refused { .. }), "{got:?}");
    assert_eq!((logged().await, used().await), (3, 2));
    // An entry the log refuses (its id taken): nothing is reserved.
    let got = code(s.reserve_usage_logging(a.id, day, &calls(1), &[entry(&mut f), one]).await);
    assert_eq!(got, ErrorCode::Conflict);
    assert_eq!((logged().await, used().await), (3, 2), "neither written");
    // A missing agent: nothing is logged.
    let got = code(s.reserve_usage_logging(LenserId::new(), day, &calls(1), &[entry(&mut f)]).await);
    assert_eq!(got, ErrorCode::NotFound);
    assert_eq!((logged().await, used().await), (3, 2), "neither written");
}
