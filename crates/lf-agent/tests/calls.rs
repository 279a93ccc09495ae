//! `check_call`, what the catalog will ask before it runs a tool as an
//! agent: grants, the policy's flags, caps that fire at the exact count and
//! reset at the UTC day boundary, the credit limit, the log, and caps that
//! hold under concurrent calls.

mod support;

use chrono::TimeDelta;
use lf_agent::{
    ActionName, ActionOutcome, Agent, AgentPatch, ArgsSummary, Call, Cap, CreditLimit, Role, Safety, ToolRef,
    UsageDay,
};
use lf_core::{Clock, Detail, ErrorCode, LenserId, LfError, PageRequest, Principal, Timestamp};
use support::*;

/// Each check runs on a service without a call ledger and on one with.
macro_rules! in_both_modes {
    ($($name:ident),* $(,)?) => {
        mod plain {
            $(#[test]
            fn $name() {
                super::$name(super::World::new())
            })*
        }
        mod ledgered {
            $(#[test]
            fn $name() {
                super::$name(super::World::ledgered())
            })*
        }
    };
}

in_both_modes!(
    an_ungranted_tool_is_refused_naming_it_and_how_to_grant_it,
    who_may_act_for_an_agent,
    policy_flags_gate_battle_tools,
    caps_fire_at_the_exact_count_and_reset_at_midnight,
    the_credit_limit_answers_budget_exceeded,
    every_call_is_logged,
    concurrent_calls_never_pass_a_cap
);

fn policy(w: &World, owner: &Principal, agent: &Agent, patch: AgentPatch) {
    run(w.service.update(owner, agent.id, patch)).unwrap();
}

fn granted(w: &World, owner: &Principal, agent: &Agent, name: &str, group: &str) -> ToolRef {
    let t = tool(name, group, Safety::Write);
    run(w.service.assign_tool(owner, agent.id, t.clone(), false)).unwrap();
    t
}

fn an_ungranted_tool_is_refused_naming_it_and_how_to_grant_it(w: World) {
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "careful_bot");
    let itself = Principal::Agent { agent_id: a.id, owner: owner_id };
    let get_lens = tool("get_lens", "lens", Safety::Read);
    let e = run(w.service.check_call(&itself, a.id, &Call::new(get_lens.clone(), 0))).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    assert!(
        e.message().contains("was not granted get_lens") && e.message().contains("tool_id get_lens"),
        "{}",
        e.message()
    );

    let t = granted(&w, &owner, &a, "get_lens", "lens");
    let pass = run(w.service.check_call(&itself, a.id, &Call::new(t.clone(), 0))).unwrap();
    assert_eq!(
        pass.principal,
        Principal::Agent { agent_id: a.id, owner: owner_id },
        "runs as the agent for its owner"
    );
    assert_eq!((pass.actor, pass.usage.tool_calls), (Some(a.id), 1));

    // A tool of the Agent group is refused even if a grant were there.
    let manage = tool("update_ai_lenser", "agent", Safety::Write);
    assert_eq!(
        code(run(w.service.check_call(&owner, a.id, &Call::new(manage, 0)))),
        ErrorCode::PermissionDenied
    );
    // Revoked: refused again.
    run(w.service.revoke_tool(&owner, a.id, &(&t).into())).unwrap();
    assert_eq!(code(run(w.service.check_call(&itself, a.id, &Call::new(t, 0)))), ErrorCode::PermissionDenied);
}

fn who_may_act_for_an_agent(w: World) {
    let (owner_id, owner) = person();
    let (op_id, op) = person();
    let (_, stranger) = person();
    let a = w.agent(&owner, "acting_bot");
    let b = w.agent(&owner, "other_bot");
    run(w.service.add_member(&owner, a.id, op_id, Role::Operator)).unwrap();
    let t = granted(&w, &owner, &a, "get_lens", "lens");
    let call = Call::new(t, 0);

    assert_eq!(run(w.service.check_call(&op, a.id, &call)).unwrap().actor, Some(op_id), "an operator acts");
    assert_eq!(run(w.service.check_call(&owner, a.id, &call)).unwrap().actor, Some(owner_id));
    assert_eq!(run(w.service.check_call(&service_as(owner_id), a.id, &call)).unwrap().actor, Some(owner_id));
    assert_eq!(
        code(run(w.service.check_call(&stranger, a.id, &call))),
        ErrorCode::NotFound,
        "no action for others"
    );
    let as_b = Principal::Agent { agent_id: b.id, owner: owner_id };
    assert_eq!(
        code(run(w.service.check_call(&as_b, a.id, &call))),
        ErrorCode::PermissionDenied,
        "only as itself"
    );
    let wrong_owner = Principal::Agent { agent_id: a.id, owner: LenserId::new() };
    assert_eq!(
        code(run(w.service.check_call(&wrong_owner, a.id, &call))),
        ErrorCode::PermissionDenied,
        "for its owner"
    );

    run(w.service.archive(&owner, a.id, true)).unwrap();
    let e = run(w.service.check_call(&owner, a.id, &call)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    assert!(e.message().contains("archived"), "{}", e.message());
}

fn policy_flags_gate_battle_tools(w: World) {
    let (_, owner) = person();
    let a = w.agent(&owner, "battler");
    for (name, gate, flag) in [
        ("add_battle_contender", JOIN, "can_join_battles"),
        ("submit_battle_run", SUBMIT, "can_join_battles"),
        ("cast_battle_vote", VOTE, "can_vote"),
        ("create_battle", CREATE, "can_create_battles"),
    ] {
        let t = granted(&w, &owner, &a, name, "battle");
        let e = run(w.service.check_call(&owner, a.id, &Call::new(t, 0).gated(gate))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::PermissionDenied, "{name}");
        assert_eq!(str_detail(&e, "policy_flag").as_deref(), Some(flag), "{name}");
        assert!(e.message().contains("update_ai_lenser"), "{}", e.message());
    }
    policy(&w, &owner, &a, AgentPatch { can_vote: Some(true), ..Default::default() });
    let vote = run(w.service.list_tools(&owner, a.id, PageRequest::default()))
        .unwrap()
        .items
        .into_iter()
        .find(|g| g.tool.name.as_str() == "cast_battle_vote")
        .unwrap()
        .tool;
    let pass = run(w.service.check_call(&owner, a.id, &Call::new(vote, 0).gated(VOTE))).unwrap();
    assert_eq!((pass.usage.votes, pass.usage.tool_calls), (1, 1), "a vote counts as a vote and a call");
}

/// THROTTLED at the exact count, naming the cap and the next UTC midnight;
/// nothing counted for a refused call; a new day starts from zero.
fn caps_fire_at_the_exact_count_and_reset_at_midnight(w: World) {
    let (_, owner) = person();
    let a = w.agent(&owner, "capped_bot");
    policy(
        &w,
        &owner,
        &a,
        AgentPatch {
            can_vote: Some(true),
            max_daily_votes: Some(Cap::of(2)),
            max_daily_tool_calls: Some(Cap::of(3)),
            ..Default::default()
        },
    );
    let vote = Call::new(granted(&w, &owner, &a, "cast_battle_vote", "battle"), 0).gated(VOTE);
    let read = Call::new(granted(&w, &owner, &a, "get_lens", "lens"), 0);

    run(w.service.check_call(&owner, a.id, &vote)).expect("vote 1 of 2");
    run(w.service.check_call(&owner, a.id, &vote)).expect("vote 2 of 2");
    let e = run(w.service.check_call(&owner, a.id, &vote)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Throttled);
    assert_eq!(str_detail(&e, "cap").as_deref(), Some("max_daily_votes"));
    assert_eq!(str_detail(&e, "resets_at").as_deref(), Some("2026-05-02T00:00:00Z"));
    assert_eq!((detail(&e, "limit"), detail(&e, "used")), (Some(Detail::Int(2)), Some(Detail::Int(2))));
    assert!(
        e.message().contains("max_daily_votes") && e.message().contains("2026-05-02T00:00:00Z"),
        "{}",
        e.message()
    );

    run(w.service.check_call(&owner, a.id, &read)).expect("call 3 of 3: the refused vote counted nothing");
    let e = run(w.service.check_call(&owner, a.id, &read)).unwrap_err();
    assert_eq!(str_detail(&e, "cap").as_deref(), Some("max_daily_tool_calls"));

    // One microsecond before midnight: still today.
    let to_midnight = UsageDay::of(w.clock.now()).resets_at().as_micros() - w.clock.now().as_micros();
    w.clock.advance(TimeDelta::microseconds(to_midnight - 10));
    assert_eq!(code(run(w.service.check_call(&owner, a.id, &read))), ErrorCode::Throttled);
    w.clock.advance(TimeDelta::microseconds(10));
    let pass = run(w.service.check_call(&owner, a.id, &vote)).expect("a new day");
    assert_eq!(pass.day.to_string(), "2026-05-02");
    assert_eq!((pass.usage.votes, pass.usage.tool_calls), (1, 1));
    let view = run(w.service.get(&owner, a.id)).unwrap();
    assert_eq!((view.day, view.usage.votes), (pass.day, 1), "get shows today's usage");

    // A cap of zero allows none.
    policy(&w, &owner, &a, AgentPatch { max_daily_tool_calls: Some(Cap::of(0)), ..Default::default() });
    assert_eq!(code(run(w.service.check_call(&owner, a.id, &read))), ErrorCode::Throttled);
}

fn the_credit_limit_answers_budget_exceeded(w: World) {
    let (_, owner) = person();
    let a = w.agent(&owner, "spender");
    policy(
        &w,
        &owner,
        &a,
        AgentPatch { spending_limit_credits: Some(CreditLimit::of(50)), ..Default::default() },
    );
    let t = granted(&w, &owner, &a, "run_lens", "lens");
    run(w.service.check_call(&owner, a.id, &Call::new(t.clone(), 30))).unwrap();
    let e = run(w.service.check_call(&owner, a.id, &Call::new(t.clone(), 30))).unwrap_err();
    assert_eq!(e.code(), ErrorCode::BudgetExceeded);
    assert_eq!(str_detail(&e, "cap").as_deref(), Some("spending_limit_credits"));
    assert!(e.message().contains("20 of its spending_limit_credits of 50"), "{}", e.message());
    let pass =
        run(w.service.check_call(&owner, a.id, &Call::new(t.clone(), 20))).expect("exactly to the limit");
    assert_eq!((pass.usage.credits, pass.usage.tool_calls), (50, 2), "the refused call was not counted");
    run(w.service.check_call(&owner, a.id, &Call::new(t.clone(), 0))).expect("a free call still passes");
    assert_eq!(
        code(run(w.service.check_call(&owner, a.id, &Call::new(t.clone(), 1)))),
        ErrorCode::BudgetExceeded
    );
    w.clock.advance(TimeDelta::days(1));
    run(w.service.check_call(&owner, a.id, &Call::new(t, 50))).expect("the limit resets with the day");
}

fn every_call_is_logged(w: World) {
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "logged_bot");
    let t = granted(&w, &owner, &a, "add_battle_contender", "battle");
    let call = Call::new(t.clone(), 0).gated(JOIN).asked_as(
        ActionName::parse("action_type", "join_battle").unwrap(),
        ArgsSummary::new(&format!("{{\"battle_id\": \"{}\"}}", "x".repeat(1_000))),
    );
    let refused = run(w.service.check_call(&owner, a.id, &call)).unwrap_err();
    policy(&w, &owner, &a, AgentPatch { can_join_battles: Some(true), ..Default::default() });
    let pass = run(w.service.check_call(&owner, a.id, &call)).unwrap();
    run(w.service.record_call(&pass, Ok(()))).unwrap();
    let pass = run(w.service.check_call(&owner, a.id, &call)).unwrap();
    let failure = LfError::not_found("Battle", "b1");
    run(w.service.record_call(&pass, Err(&failure))).unwrap();

    let log = run(w.service.list_actions(&owner, a.id, PageRequest::default())).unwrap().items;
    let outcomes: Vec<_> = log.iter().map(|e| (e.outcome, e.code)).collect();
    assert_eq!(
        outcomes,
        [
            (ActionOutcome::Failed, Some(ErrorCode::NotFound)),
            (ActionOutcome::Succeeded, None),
            (ActionOutcome::Refused, Some(refused.code())),
        ],
        "newest first"
    );
    for e in &log {
        assert_eq!((e.action.as_str(), e.tool.as_ref(), e.actor), ("join_battle", Some(&t), Some(owner_id)));
        assert_eq!(e.arguments.as_str().chars().count(), ArgsSummary::MAX_CHARS + 1, "summaries are cut");
    }
    assert_eq!(log[2].message.as_deref(), Some(refused.message()));
    assert!(log.windows(2).all(|p| p[0].at > p[1].at));
}

/// Many threads racing for the same caps: exactly the cap passes, never one
/// more, for calls, votes and credits alike.
fn concurrent_calls_never_pass_a_cap(w: World) {
    let (_, owner) = person();
    let a = w.agent(&owner, "racing_bot");
    policy(
        &w,
        &owner,
        &a,
        AgentPatch {
            can_vote: Some(true),
            max_daily_tool_calls: Some(Cap::of(10_000)),
            max_daily_votes: Some(Cap::of(37)),
            spending_limit_credits: Some(CreditLimit::of(1_000)),
            ..Default::default()
        },
    );
    let vote = Call::new(granted(&w, &owner, &a, "cast_battle_vote", "battle"), 0).gated(VOTE);
    let paid = Call::new(granted(&w, &owner, &a, "run_lens", "lens"), 7);

    let (passed, refused) = race(std::slice::from_ref(&w.service), &owner, a.id, &vote, 8, 25);
    assert_eq!(passed, 37, "exactly the vote cap");
    assert!(refused.iter().all(|c| *c == ErrorCode::Throttled), "{refused:?}");
    let (passed, refused) = race(std::slice::from_ref(&w.service), &owner, a.id, &paid, 8, 25);
    assert_eq!(passed, 1_000 / 7, "as many 7-credit calls as fit in 1,000");
    assert!(refused.iter().all(|c| *c == ErrorCode::BudgetExceeded));
    let usage = run(w.service.get(&owner, a.id)).unwrap().usage;
    assert_eq!((usage.votes, usage.credits, usage.tool_calls), (37, 7 * (1_000 / 7), 37 + 1_000 / 7));

    // Before the day boundary and after: a fresh allowance, raced again.
    w.clock.advance(TimeDelta::days(1));
    let (passed, _) = race(std::slice::from_ref(&w.service), &owner, a.id, &vote, 8, 25);
    assert_eq!(passed, 37);
    assert!(Timestamp::from_micros(NOON) < w.clock.now());
}
