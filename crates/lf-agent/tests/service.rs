//! The profile, ownership and grant rules through `AgentService` on the
//! in-memory store: who may do what, with which error code.

mod support;

use lf_agent::{
    AgentFilter, AgentHandle, AgentLimits, AgentPatch, AgentStatus, Bio, Cap, CreditLimit, DisplayName,
    Headline, ModelName, NewAgent, PATCH_FIELDS, Persona, Role, Runtime, Safety, ToolKey, WebUrl,
};
use lf_core::{ErrorCode, LenserId, PageRequest, Principal, Scopes};
use support::*;

#[test]
fn handles_are_unique_among_lensers_and_agents() {
    let w = World::new();
    let (_, alice) = person();
    let (_, bob) = person();
    let a = w.agent(&alice, "Ada_Bot");
    assert_eq!(a.handle.as_str(), "ada_bot", "lowercased");

    let again = NewAgent::new(AgentHandle::parse("ADA_BOT").unwrap(), DisplayName::parse("Copy").unwrap());
    let e = run(w.service.create(&bob, again)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict);
    assert_eq!(str_detail(&e, "handle").as_deref(), Some("ada_bot"));
    assert!(e.message().contains("@ada_bot"), "{}", e.message());

    w.lensers.0.lock().unwrap().insert("grace".into());
    let taken = NewAgent::new(AgentHandle::parse("grace").unwrap(), DisplayName::parse("Grace").unwrap());
    let e = run(w.service.create(&bob, taken)).unwrap_err();
    assert_eq!(
        (e.code(), str_detail(&e, "handle").as_deref()),
        (ErrorCode::Conflict, Some("grace")),
        "a person's handle"
    );
    assert!(!run(w.service.handle_free(&AgentHandle::parse("grace").unwrap())).unwrap());
    assert!(!run(w.service.handle_free(&AgentHandle::parse("ada_bot").unwrap())).unwrap());
    assert!(run(w.service.handle_free(&AgentHandle::parse("free_one").unwrap())).unwrap());
}

#[test]
fn creating_needs_an_owner_and_keeps_the_limit() {
    let w = World::with_limits(AgentLimits { per_owner: 2, ..AgentLimits::default() });
    let (me, alice) = person();
    let one = w.agent(&alice, "first_one");
    w.agent(&alice, "second_one");
    assert_eq!(one.owner, me);
    let third =
        || NewAgent::new(AgentHandle::parse("third_one").unwrap(), DisplayName::parse("Three").unwrap());
    let e = run(w.service.create(&alice, third())).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SlotsFull, "{e:?}");
    assert!(e.message().contains("2 active"), "{}", e.message());
    run(w.service.archive(&alice, one.id, true)).unwrap();
    run(w.service.create(&alice, third())).expect("an archived agent frees its place");

    let nobody = Principal::Service { acting_as: None };
    assert_eq!(code(run(w.service.create(&nobody, third()))), ErrorCode::MissingLenser);
    let as_agent = Principal::Agent { agent_id: one.id, owner: me };
    assert_eq!(
        code(run(w.service.create(&as_agent, third()))),
        ErrorCode::Forbidden,
        "agents make no agents"
    );
    assert_eq!(World::new().service.limits().per_owner, 5, "five by default");
}

#[test]
fn an_update_applies_every_field_and_says_what_changed() {
    let w = World::new();
    let (alice_id, alice) = person();
    let a = w.agent(&alice, "patchable");
    let as_agent = lf_core::Principal::Agent { agent_id: a.id, owner: alice_id };
    let flag =
        |p: &lf_core::Principal| run(w.service.policy_of(p)).unwrap().map(|p| p.can_move_protected_labels);
    assert_eq!(flag(&as_agent), Some(false), "off for a new agent");
    let url = |s| Some(WebUrl::parse("website_url", s).unwrap());
    let patch = AgentPatch {
        display_name: Some(DisplayName::parse("New name").unwrap()),
        bio: Some(Some(Bio::parse("A bio").unwrap())),
        headline: Some(Some(Headline::parse("A headline").unwrap())),
        persona: Some(Some(Persona::parse("You are careful.").unwrap())),
        model: Some(Some(ModelName::parse("llama3").unwrap())),
        runtime_pref: Some(Runtime::Local),
        avatar_url: Some(url("https://example.com/a.png")),
        website_url: Some(url("https://example.com")),
        can_join_battles: Some(true),
        can_vote: Some(true),
        can_create_battles: Some(true),
        can_move_protected_labels: Some(true),
        max_daily_battles: Some(Cap::of(1)),
        max_daily_votes: Some(Cap::of(2)),
        max_daily_team_runs: Some(Cap::of(3)),
        max_daily_tool_calls: Some(Cap::of(4)),
        spending_limit_credits: Some(CreditLimit::of(5)),
    };
    assert_eq!(patch.fields(), PATCH_FIELDS, "every field is in the patch");
    let up = run(w.service.update(&alice, a.id, patch.clone())).unwrap();
    assert_eq!(up.changed, PATCH_FIELDS, "and every one changed");
    assert_eq!(up.agent.revision, 1);
    let stored = run(w.service.get(&alice, a.id)).unwrap().agent;
    assert_eq!(stored, up.agent, "as stored");
    assert_eq!((stored.profile.runtime, stored.policy.spending_limit_credits.get()), (Runtime::Local, 5));
    assert_eq!(
        (flag(&as_agent), flag(&alice)),
        (Some(true), None),
        "an agent's own policy; none for a person"
    );

    let same = run(w.service.update(&alice, a.id, patch)).unwrap();
    assert!(same.changed.is_empty(), "nothing changed, nothing written");
    assert_eq!(same.agent.revision, 1);

    let clear = AgentPatch { bio: Some(None), can_vote: Some(true), ..Default::default() };
    let up = run(w.service.update(&alice, a.id, clear)).unwrap();
    assert_eq!(up.changed, ["bio"], "only what changed: can_vote was already on");
    assert_eq!(up.agent.profile.bio, None);

    let e = run(w.service.update(&alice, a.id, AgentPatch::default())).unwrap_err();
    assert_eq!((e.code(), str_detail(&e, "field").as_deref()), (ErrorCode::InvalidArgument, Some("patch")));

    run(w.service.archive(&alice, a.id, true)).unwrap();
    let rename = AgentPatch { display_name: Some(DisplayName::parse("Late").unwrap()), ..Default::default() };
    assert_eq!(code(run(w.service.update(&alice, a.id, rename))), ErrorCode::InvalidTransition);
}

#[test]
fn archiving_needs_confirmation_and_is_idempotent() {
    let w = World::new();
    let (_, alice) = person();
    let a = w.agent(&alice, "retiring");
    assert_eq!(code(run(w.service.archive(&alice, a.id, false))), ErrorCode::ConfirmationRequired);
    assert_eq!(
        run(w.service.get(&alice, a.id)).unwrap().agent.status,
        AgentStatus::Active,
        "nothing changed"
    );
    let archived = run(w.service.archive(&alice, a.id, true)).unwrap();
    assert_eq!(archived.status, AgentStatus::Archived);
    assert!(archived.archived_at.is_some());
    assert_eq!(run(w.service.archive(&alice, a.id, true)).unwrap(), archived, "again: unchanged");

    let page = run(w.service.list(&alice, &AgentFilter::default(), PageRequest::default())).unwrap();
    assert_eq!(page.total, 0, "archived agents are listed only on request");
    let with = AgentFilter { include_archived: true, ..Default::default() };
    assert_eq!(run(w.service.list(&alice, &with, PageRequest::default())).unwrap().total, 1);
    assert_eq!(
        code(run(w.service.assign_tool(&alice, a.id, tool("get_lens", "lens", Safety::Read), false))),
        ErrorCode::InvalidTransition
    );
}

/// Every use case, for every role, an outsider and the agent itself,
/// against the table of `lf_agent::roles`.
#[test]
fn the_ownership_table_holds_in_every_use_case() {
    let w = World::new();
    let (owner_id, owner) = person();
    let (co_id, co) = person();
    let (op_id, op) = person();
    let (_, stranger) = person();
    let a = w.agent(&owner, "shared_bot");
    run(w.service.add_member(&owner, a.id, co_id, Role::CoOwner)).unwrap();
    run(w.service.add_member(&owner, a.id, op_id, Role::Operator)).unwrap();
    let itself = Principal::Agent { agent_id: a.id, owner: owner_id };

    let view = |p: &Principal| run(w.service.get(p, a.id)).map(|_| ());
    let edit_profile = |p: &Principal| {
        let patch = AgentPatch { headline: Some(Some(Headline::parse("Hi").unwrap())), ..Default::default() };
        run(w.service.update(p, a.id, patch)).map(|_| ())
    };
    let edit_policy = |p: &Principal| {
        let patch = AgentPatch { max_daily_votes: Some(Cap::of(9)), ..Default::default() };
        run(w.service.update(p, a.id, patch)).map(|_| ())
    };
    let tools = |p: &Principal| {
        run(w.service.assign_tool(p, a.id, tool("get_lens", "lens", Safety::Read), false)).map(|_| ())?;
        run(w.service.revoke_tool(p, a.id, &ToolKey::parse("tool_id", "get_lens").unwrap())).map(|_| ())
    };
    let members =
        |p: &Principal| run(w.service.add_member(p, a.id, LenserId::new(), Role::Operator)).map(|_| ());
    let list_tools = |p: &Principal| run(w.service.list_tools(p, a.id, PageRequest::default())).map(|_| ());
    let log = |p: &Principal| run(w.service.list_actions(p, a.id, PageRequest::default())).map(|_| ());

    type Case<'a> = (&'a str, Box<dyn Fn(&Principal) -> lf_core::LfResult<()> + 'a>);
    let cases: Vec<Case> = vec![
        ("view", Box::new(view)),
        ("list_tools", Box::new(list_tools)),
        ("log", Box::new(log)),
        ("edit_profile", Box::new(edit_profile)),
        ("tools", Box::new(tools)),
        ("edit_policy", Box::new(edit_policy)),
        ("members", Box::new(members)),
    ];
    use ErrorCode::{Forbidden as F, NotFound as N};
    // (owner, co_owner, operator, stranger, the agent itself); None: allowed.
    let expected: [[Option<ErrorCode>; 5]; 7] = [
        [None, None, None, Some(N), Some(F)],
        [None, None, None, Some(N), Some(F)],
        [None, None, None, Some(N), Some(F)],
        [None, None, Some(F), Some(N), Some(F)],
        [None, None, Some(F), Some(N), Some(F)],
        [None, Some(F), Some(F), Some(N), Some(F)],
        [None, Some(F), Some(F), Some(N), Some(F)],
    ];
    let who = [&owner, &co, &op, &stranger, &itself];
    for ((name, case), row) in cases.iter().zip(expected) {
        for (p, want) in who.iter().zip(row) {
            assert_eq!(case(p).err().map(|e| e.code()), want, "{name} by {p:?}");
        }
    }
    // Archive last: owner only.
    for p in [&co, &op] {
        assert_eq!(code(run(w.service.archive(p, a.id, true))), ErrorCode::Forbidden);
    }
    assert_eq!(code(run(w.service.archive(&stranger, a.id, true))), ErrorCode::NotFound);
    let e = run(w.service.archive(&co, a.id, true)).unwrap_err();
    assert!(e.message().contains("owner may archive") && e.message().contains("co_owner"), "{}", e.message());
    run(w.service.archive(&owner, a.id, true)).unwrap();
    // The service may do everything.
    let service = Principal::Service { acting_as: None };
    run(w.service.get(&service, a.id)).unwrap();
}

#[test]
fn members_are_added_by_the_owner_and_see_the_agent() {
    let w = World::new();
    let (owner_id, owner) = person();
    let (helper_id, helper) = person();
    let a = w.agent(&owner, "team_bot");
    assert_eq!(code(run(w.service.get(&helper, a.id))), ErrorCode::NotFound, "not yet");
    let with = run(w.service.add_member(&owner, a.id, helper_id, Role::Operator)).unwrap();
    assert_eq!(
        with.members.iter().map(|m| (m.lenser, m.role, m.added_by)).collect::<Vec<_>>(),
        [(helper_id, Role::Operator, owner_id)]
    );
    let view = run(w.service.get(&helper, a.id)).unwrap();
    assert_eq!(view.role, Some(Role::Operator));
    let mine = AgentFilter { lenser: Some(helper_id), ..Default::default() };
    assert_eq!(run(w.service.list(&helper, &mine, PageRequest::default())).unwrap().items[0].id, a.id);

    run(w.service.add_member(&owner, a.id, helper_id, Role::CoOwner)).unwrap();
    assert_eq!(run(w.service.get(&helper, a.id)).unwrap().role, Some(Role::CoOwner), "promoted");
    let e = run(w.service.add_member(&owner, a.id, LenserId::new(), Role::Owner)).unwrap_err();
    assert_eq!(str_detail(&e, "field").as_deref(), Some("role"));
    assert_eq!(
        code(run(w.service.add_member(&owner, a.id, owner_id, Role::CoOwner))),
        ErrorCode::InvalidArgument
    );
    assert_eq!(code(run(w.service.remove_member(&owner, a.id, owner_id))), ErrorCode::InvalidArgument);

    let limited = World::with_limits(AgentLimits { members: 1, ..AgentLimits::default() });
    let b = limited.agent(&owner, "small_team");
    run(limited.service.add_member(&owner, b.id, LenserId::new(), Role::Operator)).unwrap();
    assert_eq!(
        code(run(limited.service.add_member(&owner, b.id, LenserId::new(), Role::Operator))),
        ErrorCode::SlotsFull
    );

    assert!(run(w.service.remove_member(&owner, a.id, helper_id)).unwrap());
    assert_eq!(code(run(w.service.get(&helper, a.id))), ErrorCode::NotFound, "gone");
    let read_only = Principal::Lenser { id: owner_id, scopes: Scopes::READ };
    assert_eq!(
        run(w.service.get(&read_only, a.id)).unwrap().role,
        Some(Role::Owner),
        "scopes are the catalog's"
    );
}

#[test]
fn grants_are_catalog_tools_but_not_the_agent_tools() {
    let w = World::new();
    let (_, alice) = person();
    let a = w.agent(&alice, "tool_user");
    let get_lens = tool("get_lens", "lens", Safety::Read);
    let stored = run(w.service.assign_tool(&alice, a.id, get_lens.clone(), false)).unwrap();
    assert!(stored.created);
    assert_eq!(stored.grant.tool, get_lens);
    let again = run(w.service.assign_tool(&alice, a.id, get_lens.clone(), false)).unwrap();
    assert_eq!((again.created, again.grant), (false, stored.grant.clone()), "idempotent");

    let manage = tool("create_ai_lenser", "agent", Safety::Write);
    let e = run(w.service.assign_tool(&alice, a.id, manage, true)).unwrap_err();
    assert_eq!((e.code(), str_detail(&e, "field").as_deref()), (ErrorCode::InvalidArgument, Some("tool_id")));

    let delete = tool("delete_lens", "lens", Safety::Destructive);
    assert_eq!(
        code(run(w.service.assign_tool(&alice, a.id, delete.clone(), false))),
        ErrorCode::ConfirmationRequired
    );
    run(w.service.assign_tool(&alice, a.id, delete.clone(), true)).expect("confirmed");
    let run_wf = tool("run_workflow", "workflow", Safety::Execute);
    run(w.service.assign_tool(&alice, a.id, run_wf.clone(), false)).expect("Execute needs no confirmation");

    let page = run(w.service.list_tools(&alice, a.id, PageRequest::default())).unwrap();
    let names: Vec<_> = page.items.iter().map(|g| g.tool.name.as_str()).collect();
    assert_eq!(names, ["delete_lens", "get_lens", "run_workflow"], "grants, by name, with their identity");
    assert_eq!(page.items[1].tool, get_lens);

    let by_name = ToolKey::parse("tool_id", "delete_lens").unwrap();
    assert_eq!(run(w.service.revoke_tool(&alice, a.id, &by_name)).unwrap().map(|g| g.tool), Some(delete));
    let by_id = ToolKey::parse("tool_id", &get_lens.id.to_string()).unwrap();
    assert!(run(w.service.revoke_tool(&alice, a.id, &by_id)).unwrap().is_some());
    assert!(run(w.service.revoke_tool(&alice, a.id, &by_id)).unwrap().is_none(), "revoked once");
    assert_eq!(run(w.service.list_tools(&alice, a.id, PageRequest::default())).unwrap().total, 1);

    let limited = World::with_limits(AgentLimits { grants: 1, ..AgentLimits::default() });
    let b = limited.agent(&alice, "one_tool");
    run(limited.service.assign_tool(&alice, b.id, get_lens, false)).unwrap();
    assert_eq!(code(run(limited.service.assign_tool(&alice, b.id, run_wf, false))), ErrorCode::SlotsFull);
}
