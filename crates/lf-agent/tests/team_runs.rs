//! Team runs through `AgentService`: who starts them, the approval wait,
//! the order of their events, cancellation of unfinished runs only, the
//! nesting limit and the daily cap.

mod support;

use lf_agent::team::Move;
use lf_agent::{
    AgentPatch, Cap, DelegationPolicy, EventFilter, NewTeamRun, Reason, Role, TeamEventKind, TeamInputs,
    TeamRunId, TeamRunStatus,
};
use lf_core::{ErrorCode, LenserId, PageRequest, Principal, RunId, WorkflowId};
use support::*;

use TeamEventKind as K;

fn new_run(agent: LenserId, policy: DelegationPolicy) -> NewTeamRun {
    let mut inputs = serde_json::Map::new();
    inputs.insert("topic".into(), serde_json::json!("rust"));
    NewTeamRun {
        agent,
        workflow_id: WorkflowId::new(),
        inputs: TeamInputs::new(inputs).unwrap(),
        policy,
        parent: None,
    }
}

fn kinds_oldest_first(
    w: &World,
    p: &Principal,
    agent: LenserId,
    run_id: TeamRunId,
) -> Vec<(u32, TeamEventKind)> {
    let filter = EventFilter { team_run: Some(run_id), kind: None };
    let page = run(w.service.list_events(p, agent, &filter, PageRequest::default())).unwrap();
    page.items.iter().rev().map(|e| (e.seq, e.kind)).collect()
}

#[test]
fn only_the_service_starts_team_runs() {
    let w = World::new();
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "team_lead");
    let e = run(w.service.start_team_run(&owner, new_run(a.id, DelegationPolicy::Auto))).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied, "an HTTP caller, even the owner");
    let itself = Principal::Agent { agent_id: a.id, owner: owner_id };
    assert_eq!(
        code(run(w.service.start_team_run(&itself, new_run(a.id, DelegationPolicy::Auto)))),
        ErrorCode::PermissionDenied
    );

    let service = service_as(owner_id);
    let started = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap();
    assert_eq!(
        (started.run.status, started.run.depth, started.run.started_by),
        (TeamRunStatus::Queued, 0, Some(owner_id))
    );
    assert_eq!(started.events.iter().map(|e| (e.seq, e.kind)).collect::<Vec<_>>(), [(1, K::DispatchQueued)]);
    assert_eq!(
        run(w.service.get_team_run(&owner, a.id, started.run.id)).unwrap(),
        started.run,
        "the owner reads it"
    );
    let (_, stranger) = person();
    assert_eq!(code(run(w.service.get_team_run(&stranger, a.id, started.run.id))), ErrorCode::NotFound);
    assert_eq!(
        code(run(w.service.start_team_run(&service, new_run(LenserId::new(), DelegationPolicy::Auto)))),
        ErrorCode::NotFound
    );

    run(w.service.archive(&owner, a.id, true)).unwrap();
    assert_eq!(
        code(run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto)))),
        ErrorCode::PermissionDenied
    );
}

#[test]
fn an_approval_run_waits_for_an_owner_and_its_events_come_in_order() {
    let w = World::new();
    let (owner_id, owner) = person();
    let (op_id, op) = person();
    let a = w.agent(&owner, "approver_bot");
    run(w.service.add_member(&owner, a.id, op_id, Role::Operator)).unwrap();
    let service = service_as(owner_id);
    let started =
        run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::ApprovalRequired))).unwrap();
    let id = started.run.id;
    assert_eq!(started.run.status, TeamRunStatus::AwaitingApproval);
    assert_eq!(
        code(run(w.service.record_progress(&service, a.id, id, Move::Dispatch { run: RunId::new() }))),
        ErrorCode::InvalidTransition,
        "not before approval"
    );

    let reason = Some(Reason::parse("Looks right").unwrap());
    assert_eq!(
        code(run(w.service.decide_approval(&op, a.id, id, true, reason.clone()))),
        ErrorCode::Forbidden,
        "operators do not decide"
    );
    let approved = run(w.service.decide_approval(&owner, a.id, id, true, reason)).unwrap();
    assert_eq!(approved.run.status, TeamRunStatus::Queued);
    let d = approved.run.decision.clone().unwrap();
    assert_eq!((d.approved, d.by, d.reason.as_deref()), (true, Some(owner_id), Some("Looks right")));
    assert_eq!(approved.events[0].detail.actor, Some(owner_id));
    assert_eq!(
        code(run(w.service.decide_approval(&owner, a.id, id, false, None))),
        ErrorCode::InvalidTransition,
        "decided once"
    );

    let workflow_run = RunId::new();
    let dispatched =
        run(w.service.record_progress(&service, a.id, id, Move::Dispatch { run: workflow_run })).unwrap();
    assert_eq!(
        (dispatched.run.status, dispatched.run.workflow_run),
        (TeamRunStatus::Running, Some(workflow_run))
    );
    for mv in [
        Move::NodeStarted { node: "draft".into() },
        Move::ToolCalled { node: Some("draft".into()), tool: "get_lens".into(), outcome: "ran".into() },
        Move::NodeFailed { node: "draft".into(), error: "timeout".into() },
        Move::NodeStarted { node: "draft".into() },
        Move::NodeCompleted { node: "draft".into() },
        Move::Complete,
    ] {
        run(w.service.record_progress(&service, a.id, id, mv)).unwrap();
    }
    assert_eq!(
        code(run(w.service.record_progress(&owner, a.id, id, Move::Complete))),
        ErrorCode::PermissionDenied,
        "progress is the runner's"
    );
    let seen = kinds_oldest_first(&w, &op, a.id, id);
    assert_eq!(
        seen,
        [
            (1, K::ApprovalRequested),
            (2, K::ApprovalGranted),
            (3, K::DispatchQueued),
            (4, K::DispatchStarted),
            (5, K::NodeStarted),
            (6, K::ToolCalled),
            (7, K::NodeFailed),
            (8, K::NodeStarted),
            (9, K::NodeCompleted),
            (10, K::Completed),
        ]
    );
    let done = run(w.service.get_team_run(&owner, a.id, id)).unwrap();
    assert_eq!(done.status, TeamRunStatus::Completed);
    assert!(done.finished_at.is_some());

    // Cancelling a finished run is INVALID_TRANSITION, and changes nothing.
    let e = run(w.service.cancel_team_run(&op, a.id, id, None)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidTransition);
    assert!(e.message().contains("completed"), "{}", e.message());
    assert_eq!(kinds_oldest_first(&w, &owner, a.id, id).len(), 10);
}

#[test]
fn a_rejected_run_never_runs_and_unfinished_runs_cancel() {
    let w = World::new();
    let (owner_id, owner) = person();
    let (op_id, op) = person();
    let a = w.agent(&owner, "cancel_bot");
    run(w.service.add_member(&owner, a.id, op_id, Role::Operator)).unwrap();
    let service = service_as(owner_id);
    let start = |p| run(w.service.start_team_run(&service, new_run(a.id, p))).unwrap().run.id;

    let rejected = start(DelegationPolicy::ApprovalRequired);
    let r = run(w.service.decide_approval(
        &owner,
        a.id,
        rejected,
        false,
        Some(Reason::parse("Too costly").unwrap()),
    ))
    .unwrap();
    assert_eq!(r.run.status, TeamRunStatus::Rejected);
    assert_eq!(r.events[0].detail.note.as_deref(), Some("Too costly"));
    assert_eq!(
        code(run(w.service.record_progress(&service, a.id, rejected, Move::Dispatch { run: RunId::new() }))),
        ErrorCode::InvalidTransition
    );

    // Queued, awaiting approval and running runs all cancel, by an operator too.
    let queued = start(DelegationPolicy::Auto);
    let waiting = start(DelegationPolicy::ApprovalRequired);
    let running = start(DelegationPolicy::Auto);
    run(w.service.record_progress(&service, a.id, running, Move::Dispatch { run: RunId::new() })).unwrap();
    for id in [queued, waiting, running] {
        let c = run(w.service.cancel_team_run(&op, a.id, id, Some(Reason::parse("Stop").unwrap()))).unwrap();
        assert_eq!(c.run.status, TeamRunStatus::Cancelled);
        assert_eq!((c.events[0].kind, c.events[0].detail.actor), (K::RunCancelled, Some(op_id)));
        assert_eq!(c.run.error.as_deref(), Some("Stop"));
        assert_eq!(
            code(run(w.service.cancel_team_run(&owner, a.id, id, None))),
            ErrorCode::InvalidTransition,
            "once"
        );
    }
    // A node event after the cancel is refused: the runner stops.
    assert_eq!(
        code(run(w.service.record_progress(&service, a.id, running, Move::NodeStarted { node: "n".into() }))),
        ErrorCode::InvalidTransition
    );
    let (_, stranger) = person();
    assert_eq!(code(run(w.service.cancel_team_run(&stranger, a.id, queued, None))), ErrorCode::NotFound);
    let other = w.agent(&owner, "other_bot");
    assert_eq!(
        code(run(w.service.cancel_team_run(&owner, other.id, queued, None))),
        ErrorCode::NotFound,
        "another agent's run"
    );

    let page =
        run(w.service.list_team_runs(&owner, a.id, Some(TeamRunStatus::Cancelled), PageRequest::default()))
            .unwrap();
    assert_eq!(
        page.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [running, waiting, queued],
        "newest first"
    );
}

#[test]
fn events_list_newest_first_with_filters_and_pages() {
    let w = World::new();
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "event_bot");
    let service = service_as(owner_id);
    let one = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap().run.id;
    let two = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::ApprovalRequired)))
        .unwrap()
        .run
        .id;
    run(w.service.record_progress(&service, a.id, one, Move::Dispatch { run: RunId::new() })).unwrap();
    run(w.service.record_progress(&service, a.id, one, Move::Fail { error: "boom".into() })).unwrap();

    let all =
        run(w.service.list_events(&owner, a.id, &EventFilter::default(), PageRequest::default())).unwrap();
    let listed: Vec<_> = all.items.iter().map(|e| (e.team_run, e.kind)).collect();
    assert_eq!(
        listed,
        [(one, K::Failed), (one, K::DispatchStarted), (two, K::ApprovalRequested), (one, K::DispatchQueued)]
    );
    let page = run(w.service.list_events(
        &owner,
        a.id,
        &EventFilter::default(),
        PageRequest::new(Some(2), Some(2)).unwrap(),
    ))
    .unwrap();
    assert_eq!((page.total, page.items.len(), page.has_more()), (4, 2, false));
    let failed = EventFilter { team_run: None, kind: Some(K::Failed) };
    let page = run(w.service.list_events(&owner, a.id, &failed, PageRequest::default())).unwrap();
    assert_eq!(page.items[0].detail.note.as_deref(), Some("boom"));
    let (_, stranger) = person();
    assert_eq!(
        code(run(w.service.list_events(&stranger, a.id, &EventFilter::default(), PageRequest::default()))),
        ErrorCode::NotFound
    );
}

#[test]
fn nesting_is_limited_to_eight() {
    let w = World::new();
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "nesting_bot");
    run(w.service.update(
        &owner,
        a.id,
        AgentPatch { max_daily_team_runs: Some(Cap::of(100)), ..Default::default() },
    ))
    .unwrap();
    let service = service_as(owner_id);
    let mut parent =
        run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap().run;
    for depth in 1..=8 {
        let child = run(w.service.start_team_run(
            &service,
            NewTeamRun { parent: Some(parent.id), ..new_run(a.id, DelegationPolicy::Auto) },
        ))
        .unwrap()
        .run;
        assert_eq!((child.depth, child.parent), (depth, Some(parent.id)));
        parent = child;
    }
    let e = run(w.service.start_team_run(
        &service,
        NewTeamRun { parent: Some(parent.id), ..new_run(a.id, DelegationPolicy::Auto) },
    ))
    .unwrap_err();
    assert_eq!(
        (e.code(), str_detail(&e, "field").as_deref()),
        (ErrorCode::InvalidArgument, Some("parent_team_run_id"))
    );
    let missing = NewTeamRun { parent: Some(TeamRunId::new()), ..new_run(a.id, DelegationPolicy::Auto) };
    assert_eq!(code(run(w.service.start_team_run(&service, missing))), ErrorCode::NotFound);
}

#[test]
fn the_daily_team_run_cap_throttles() {
    let w = World::new();
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "busy_bot");
    run(w.service.update(
        &owner,
        a.id,
        AgentPatch { max_daily_team_runs: Some(Cap::of(2)), ..Default::default() },
    ))
    .unwrap();
    let service = service_as(owner_id);
    for _ in 0..2 {
        run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap();
    }
    let e = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap_err();
    assert_eq!(
        (e.code(), str_detail(&e, "cap").as_deref()),
        (ErrorCode::Throttled, Some("max_daily_team_runs"))
    );
    assert_eq!(
        run(w.service.list_team_runs(&owner, a.id, None, PageRequest::default())).unwrap().total,
        2,
        "nothing recorded"
    );
    w.clock.advance(chrono::TimeDelta::days(1));
    run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).expect("a new day");
}

/// What a dispatch hook heard: `("dispatch" | "cancel", run, status)`.
#[derive(Default)]
struct Heard(std::sync::Mutex<Vec<(&'static str, TeamRunId, TeamRunStatus)>>);

#[async_trait::async_trait]
impl lf_agent::TeamDispatch for Heard {
    async fn dispatch(&self, run: &lf_agent::TeamRun) {
        self.0.lock().unwrap().push(("dispatch", run.id, run.status));
    }
    async fn cancel(&self, run: &lf_agent::TeamRun) {
        self.0.lock().unwrap().push(("cancel", run.id, run.status));
    }
    async fn held_call_decided(&self, run: &lf_agent::TeamRun) {
        self.0.lock().unwrap().push(("decided", run.id, run.status));
    }
}

#[test]
fn a_held_tool_call_is_decided_by_an_owner_and_its_run_goes_on() {
    use std::sync::Arc;
    let heard = Arc::new(Heard::default());
    let service = lf_agent::AgentService::new(
        Arc::new(lf_agent::MemoryAgentStore::new()),
        Arc::new(lf_agent::NoLensers),
    )
    .with_dispatch(heard.clone());
    let (owner_id, owner) = person();
    let (op_id, op) = person();
    let new = lf_agent::NewAgent::new(
        lf_agent::AgentHandle::parse("careful_bot").unwrap(),
        lf_agent::DisplayName::parse("Careful").unwrap(),
    );
    let a = run(service.create(&owner, new)).unwrap();
    run(service.add_member(&owner, a.id, op_id, Role::Operator)).unwrap();
    let svc = service_as(owner_id);
    let take = || std::mem::take(&mut *heard.0.lock().unwrap());
    let id = run(service.start_team_run(&svc, new_run(a.id, DelegationPolicy::Auto))).unwrap().run.id;
    run(service.record_progress(&svc, a.id, id, Move::Dispatch { run: RunId::new() })).unwrap();
    take();

    let hold = || Move::HoldCall {
        node: "agent".into(),
        tool: "delete_lens".into(),
        call: "delete_lens {\"lens_id\":\"L\"}".into(),
    };
    let held = run(service.record_progress(&svc, a.id, id, hold())).unwrap();
    assert_eq!(held.run.status, TeamRunStatus::AwaitingApproval);
    let asked = &held.events[0];
    assert_eq!(
        (asked.kind, asked.detail.node.as_deref(), asked.detail.tool.as_deref()),
        (K::ApprovalRequested, Some("agent"), Some("delete_lens"))
    );
    assert_eq!(
        code(run(service.record_progress(&svc, a.id, id, hold()))),
        ErrorCode::InvalidTransition,
        "one held call at a time"
    );
    let progress =
        Move::ToolCalled { node: Some("other".into()), tool: "get_lens".into(), outcome: "ran".into() };
    let still = run(service.record_progress(&svc, a.id, id, progress)).unwrap();
    assert_eq!(
        still.run.status,
        TeamRunStatus::AwaitingApproval,
        "other steps' progress is recorded meanwhile"
    );
    assert_eq!(code(run(service.decide_approval(&op, a.id, id, true, None))), ErrorCode::Forbidden);

    let approved = run(service.decide_approval(&owner, a.id, id, true, None)).unwrap();
    assert_eq!(approved.run.status, TeamRunStatus::Running, "back to running, not queued");
    assert_eq!(approved.events.iter().map(|e| e.kind).collect::<Vec<_>>(), [K::ApprovalGranted]);
    assert_eq!(take(), [("decided", id, TeamRunStatus::Running)], "the hook wakes the step; no dispatch");

    run(service.record_progress(&svc, a.id, id, hold())).unwrap();
    let why = Some(Reason::parse("Keep that one").unwrap());
    let rejected = run(service.decide_approval(&owner, a.id, id, false, why)).unwrap();
    assert_eq!(rejected.run.status, TeamRunStatus::Running, "a rejected call does not end the run");
    assert_eq!(rejected.events[0].kind, K::ApprovalRejected);
    assert_eq!(rejected.events[0].detail.note.as_deref(), Some("Keep that one"));
    assert_eq!(take(), [("decided", id, TeamRunStatus::Running)]);

    // Cancelled while a call is held: its workflow run is stopped through the hook.
    run(service.record_progress(&svc, a.id, id, hold())).unwrap();
    run(service.cancel_team_run(&owner, a.id, id, None)).unwrap();
    assert_eq!(take(), [("cancel", id, TeamRunStatus::Cancelled)]);
}

#[test]
fn the_dispatch_hook_hears_queued_runs_and_cancels() {
    use std::sync::Arc;
    let heard = Arc::new(Heard::default());
    let store = Arc::new(lf_agent::MemoryAgentStore::new());
    let service = lf_agent::AgentService::new(store, Arc::new(lf_agent::NoLensers))
        .with_clock(Arc::new(lf_core::FixedClock::new(
            lf_core::Timestamp::from_micros(NOON),
            chrono::TimeDelta::microseconds(1),
        )))
        .with_dispatch(heard.clone());
    let (owner_id, owner) = person();
    let new = lf_agent::NewAgent::new(
        lf_agent::AgentHandle::parse("hook_bot").unwrap(),
        lf_agent::DisplayName::parse("Hook").unwrap(),
    );
    let a = run(service.create(&owner, new)).unwrap();
    run(service.update(
        &owner,
        a.id,
        AgentPatch { max_daily_team_runs: Some(Cap::of(10)), ..Default::default() },
    ))
    .unwrap();
    let svc = service_as(owner_id);
    let take = || std::mem::take(&mut *heard.0.lock().unwrap());

    let auto = run(service.start_team_run(&svc, new_run(a.id, DelegationPolicy::Auto))).unwrap().run.id;
    assert_eq!(take(), [("dispatch", auto, TeamRunStatus::Queued)], "a queued run is dispatched");
    let waiting =
        run(service.start_team_run(&svc, new_run(a.id, DelegationPolicy::ApprovalRequired))).unwrap().run.id;
    assert_eq!(take(), [], "not before approval");
    run(service.decide_approval(&owner, a.id, waiting, true, None)).unwrap();
    assert_eq!(take(), [("dispatch", waiting, TeamRunStatus::Queued)], "once approved");
    let rejected =
        run(service.start_team_run(&svc, new_run(a.id, DelegationPolicy::ApprovalRequired))).unwrap().run.id;
    run(service.decide_approval(&owner, a.id, rejected, false, None)).unwrap();
    let awaiting =
        run(service.start_team_run(&svc, new_run(a.id, DelegationPolicy::ApprovalRequired))).unwrap().run.id;
    run(service.cancel_team_run(&owner, a.id, awaiting, None)).unwrap();
    assert_eq!(take(), [], "a rejected run, and one cancelled while awaiting approval, had no workflow run");

    run(service.record_progress(&svc, a.id, auto, Move::Dispatch { run: RunId::new() })).unwrap();
    run(service.cancel_team_run(&owner, a.id, auto, None)).unwrap();
    run(service.cancel_team_run(&owner, a.id, waiting, None)).unwrap();
    assert_eq!(
        take(),
        [("cancel", auto, TeamRunStatus::Cancelled), ("cancel", waiting, TeamRunStatus::Cancelled)],
        "a running and a queued run are cancelled through the hook"
    );
    assert_eq!(code(run(service.cancel_team_run(&owner, a.id, auto, None))), ErrorCode::InvalidTransition);
    assert_eq!(take(), [], "a refused cancel tells nothing");

    // What the catch-up reads: every agent's runs in a status, the service's only.
    let cancelled = run(service.team_runs_in(&svc, TeamRunStatus::Cancelled, None, 10)).unwrap();
    assert_eq!(cancelled.iter().map(|r| r.id).collect::<Vec<_>>(), [auto, waiting, awaiting], "oldest first");
    let after = Some((cancelled[0].created_at, cancelled[0].id));
    let rest = run(service.team_runs_in(&svc, TeamRunStatus::Cancelled, after, 1)).unwrap();
    assert_eq!(rest.iter().map(|r| r.id).collect::<Vec<_>>(), [waiting]);
    assert_eq!(
        code(run(service.team_runs_in(&owner, TeamRunStatus::Queued, None, 10))),
        ErrorCode::PermissionDenied
    );
}

#[test]
fn archiving_an_agent_stops_its_unfinished_team_runs() {
    let w = World::new();
    let (owner_id, owner) = person();
    let a = w.agent(&owner, "retiring");
    let service = service_as(owner_id);
    let waiting =
        run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::ApprovalRequired))).unwrap();
    let queued = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap();
    let running = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap();
    run(w.service.record_progress(&service, a.id, running.run.id, Move::Dispatch { run: RunId::new() }))
        .unwrap();
    let done = run(w.service.start_team_run(&service, new_run(a.id, DelegationPolicy::Auto))).unwrap();
    run(w.service.record_progress(&service, a.id, done.run.id, Move::Dispatch { run: RunId::new() }))
        .unwrap();
    run(w.service.record_progress(&service, a.id, done.run.id, Move::Complete)).unwrap();

    run(w.service.archive(&owner, a.id, true)).unwrap();
    for id in [waiting.run.id, queued.run.id, running.run.id] {
        let r = run(w.service.get_team_run(&owner, a.id, id)).unwrap();
        assert_eq!(r.status, TeamRunStatus::Cancelled, "{id}");
        assert_eq!(kinds_oldest_first(&w, &owner, a.id, id).last().unwrap().1, K::RunCancelled);
    }
    let r = run(w.service.get_team_run(&owner, a.id, done.run.id)).unwrap();
    assert_eq!(r.status, TeamRunStatus::Completed, "a finished run stays as it was");
}
