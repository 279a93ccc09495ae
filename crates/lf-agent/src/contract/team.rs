//! The contract's checks of team runs and their events.

use lf_core::{Detail, ErrorCode, LenserId, PageRequest, Reach, RunId, Timestamp};

use super::{Fixture, code, event};
use crate::model::{
    Decision, DelegationPolicy, EventDetail, EventFilter, NewEvent, TeamEventKind, TeamRunFilter, TeamRunId,
    TeamRunStatus,
};
use crate::store::AgentStore;
use crate::team::TeamRunChange;

pub(super) async fn team_runs(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let run = f.team_run(a.id, DelegationPolicy::ApprovalRequired, TeamRunStatus::AwaitingApproval);
    let events = s.create_team_run(&run, &[event(TeamEventKind::ApprovalRequested)]).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0].seq, events[0].kind, events[0].at),
        (1, TeamEventKind::ApprovalRequested, run.created_at)
    );
    assert_eq!((events[0].team_run, events[0].agent), (run.id, a.id));
    assert_eq!(
        s.get_team_run(Reach::Lenser(owner), a.id, run.id).await.unwrap(),
        run,
        "a run reads back as stored"
    );
    assert_eq!(code(s.create_team_run(&run, &[]).await), ErrorCode::Conflict, "ids are unique");

    let b = f.create(s, owner).await;
    let e = s.get_team_run(Reach::Everything, b.id, run.id).await.unwrap_err();
    assert_eq!(
        e.details()[0],
        ("field".into(), Detail::Str("team_run_id".into())),
        "another agent's run: {e:?}"
    );
    let e = s.get_team_run(Reach::Lenser(LenserId::new()), a.id, run.id).await.unwrap_err();
    assert_eq!(e.details()[0], ("field".into(), Detail::Str("ai_lenser_id".into())), "out of reach: {e:?}");
    let orphan = f.team_run(LenserId::new(), DelegationPolicy::Auto, TeamRunStatus::Queued);
    assert_eq!(code(s.create_team_run(&orphan, &[]).await), ErrorCode::NotFound);

    // Approve: awaiting_approval → queued, with the decision.
    let approver = LenserId::new();
    let at = f.tick();
    let decision = Decision { approved: true, by: Some(approver), reason: Some("Looks 'fine'".into()), at };
    let approve = TeamRunChange {
        id: run.id,
        agent: a.id,
        from: TeamRunStatus::AwaitingApproval,
        to: TeamRunStatus::Queued,
        workflow_run: None,
        decision: Some(decision.clone()),
        error: None,
        at,
        events: vec![event(TeamEventKind::ApprovalGranted), event(TeamEventKind::DispatchQueued)],
    };
    let update = s.advance_team_run(&approve).await.unwrap();
    assert_eq!(update.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [2, 3], "numbered on");
    assert_eq!(
        (update.run.status, update.run.decision.clone(), update.run.updated_at),
        (TeamRunStatus::Queued, Some(decision.clone()), at)
    );
    assert_eq!(update.run.finished_at, None);
    assert_eq!(s.get_team_run(Reach::Everything, a.id, run.id).await.unwrap(), update.run, "as stored");
    assert_eq!(code(s.advance_team_run(&approve).await), ErrorCode::Conflict, "the status moved");
    let wrong_agent = TeamRunChange { agent: b.id, from: TeamRunStatus::Queued, ..approve.clone() };
    assert_eq!(code(s.advance_team_run(&wrong_agent).await), ErrorCode::NotFound, "not that agent's run");

    // Dispatch with its workflow run, then fail: finished, with the error.
    let workflow_run = RunId::new();
    let dispatch = TeamRunChange {
        from: TeamRunStatus::Queued,
        to: TeamRunStatus::Running,
        workflow_run: Some(workflow_run),
        decision: None,
        at: f.tick(),
        events: vec![NewEvent {
            kind: TeamEventKind::DispatchStarted,
            detail: EventDetail::default().with_run(workflow_run),
        }],
        ..approve.clone()
    };
    s.advance_team_run(&dispatch).await.unwrap();
    let end = f.tick();
    let fail = TeamRunChange {
        from: TeamRunStatus::Running,
        to: TeamRunStatus::Failed,
        workflow_run: None,
        decision: None,
        error: Some("step 'two' failed: ünïcödé".into()),
        at: end,
        events: vec![NewEvent {
            kind: TeamEventKind::Failed,
            detail: EventDetail::note("step 'two' failed"),
        }],
        ..approve.clone()
    };
    let update = s.advance_team_run(&fail).await.unwrap();
    let stored = update.run;
    assert_eq!(stored.status, TeamRunStatus::Failed);
    assert_eq!(
        (stored.finished_at, stored.workflow_run),
        (Some(end), Some(workflow_run)),
        "kept from before"
    );
    assert_eq!(
        (stored.decision, stored.error.as_deref()),
        (Some(decision), Some("step 'two' failed: ünïcödé"))
    );

    // Listing, newest first, by status.
    let later = f.team_run(a.id, DelegationPolicy::Auto, TeamRunStatus::Queued);
    s.create_team_run(&later, &[event(TeamEventKind::DispatchQueued)]).await.unwrap();
    let page = s
        .list_team_runs(Reach::Lenser(owner), a.id, &TeamRunFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(page.items.iter().map(|r| r.id).collect::<Vec<_>>(), [later.id, run.id]);
    let queued = TeamRunFilter { status: Some(TeamRunStatus::Queued) };
    let page = s.list_team_runs(Reach::Everything, a.id, &queued, PageRequest::default()).await.unwrap();
    assert_eq!((page.total, page.items[0].id), (1, later.id));
    assert_eq!(
        s.list_team_runs(Reach::Everything, b.id, &TeamRunFilter::default(), PageRequest::default())
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        code(
            s.list_team_runs(
                Reach::Lenser(LenserId::new()),
                a.id,
                &TeamRunFilter::default(),
                PageRequest::default()
            )
            .await
        ),
        ErrorCode::NotFound
    );
}

pub(super) async fn events(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let a = f.create(s, owner).await;
    let one = f.team_run(a.id, DelegationPolicy::Auto, TeamRunStatus::Queued);
    s.create_team_run(&one, &[event(TeamEventKind::DispatchQueued)]).await.unwrap();
    let two = f.team_run(a.id, DelegationPolicy::Auto, TeamRunStatus::Queued);
    s.create_team_run(&two, &[event(TeamEventKind::DispatchQueued)]).await.unwrap();
    let start = f.tick();
    let running = TeamRunChange {
        id: one.id,
        agent: a.id,
        from: TeamRunStatus::Queued,
        to: TeamRunStatus::Running,
        workflow_run: Some(RunId::new()),
        decision: None,
        error: None,
        at: start,
        events: vec![event(TeamEventKind::DispatchStarted)],
    };
    s.advance_team_run(&running).await.unwrap();
    // A step's events, with a clock that stepped back: never before the last.
    let node = EventDetail::default().with_node("summarize 'it'").with_tool("get_lens").with_note("ok ✓");
    let steps = TeamRunChange {
        from: TeamRunStatus::Running,
        workflow_run: None,
        at: Timestamp::from_micros(start.as_micros() - 500_000),
        events: vec![
            NewEvent { kind: TeamEventKind::NodeStarted, detail: node.clone() },
            NewEvent { kind: TeamEventKind::ToolCalled, detail: node.clone() },
            NewEvent { kind: TeamEventKind::NodeCompleted, detail: node.clone() },
        ],
        ..running.clone()
    };
    let written = s.advance_team_run(&steps).await.unwrap().events;
    assert!(written.iter().all(|e| e.at == start), "raised to the last event's time: {written:?}");
    assert_eq!(written[1].detail, node, "details read back");

    let all = s
        .list_events(Reach::Lenser(owner), a.id, &EventFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(all.total, 6);
    let of_one: Vec<(u32, TeamEventKind)> =
        all.items.iter().filter(|e| e.team_run == one.id).map(|e| (e.seq, e.kind)).collect();
    use TeamEventKind::*;
    assert_eq!(
        of_one,
        [(5, NodeCompleted), (4, ToolCalled), (3, NodeStarted), (2, DispatchStarted), (1, DispatchQueued)],
        "newest first, in the order written"
    );
    for w in all.items.windows(2) {
        assert!((w[0].at, w[0].team_run, w[0].seq) > (w[1].at, w[1].team_run, w[1].seq), "one order: {w:?}");
    }

    let by_run = EventFilter { team_run: Some(two.id), kind: None };
    let page = s.list_events(Reach::Everything, a.id, &by_run, PageRequest::default()).await.unwrap();
    assert_eq!(
        page.items.iter().map(|e| (e.team_run, e.kind)).collect::<Vec<_>>(),
        [(two.id, DispatchQueued)]
    );
    let by_kind = EventFilter { team_run: None, kind: Some(DispatchQueued) };
    let page = s
        .list_events(Reach::Everything, a.id, &by_kind, PageRequest::new(Some(1), None).unwrap())
        .await
        .unwrap();
    assert_eq!((page.total, page.items.len()), (2, 1), "filtered and paged");
    let both = EventFilter { team_run: Some(one.id), kind: Some(ToolCalled) };
    let page = s.list_events(Reach::Everything, a.id, &both, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|e| e.seq).collect::<Vec<_>>(), [4]);

    let b = f.create(s, owner).await;
    let foreign = EventFilter { team_run: Some(one.id), kind: None };
    assert_eq!(
        code(s.list_events(Reach::Everything, b.id, &foreign, PageRequest::default()).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        s.list_events(Reach::Everything, b.id, &EventFilter::default(), PageRequest::default())
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        code(
            s.list_events(
                Reach::Lenser(LenserId::new()),
                a.id,
                &EventFilter::default(),
                PageRequest::default()
            )
            .await
        ),
        ErrorCode::NotFound
    );
}

/// `team_runs_in`: every agent's runs in one status, oldest first, in
/// batches after a cursor. The store may hold other runs (a shared
/// database): only this check's runs are compared, in their order.
pub(super) async fn by_status(s: &dyn AgentStore) {
    let mut f = Fixture::new();
    let (a, b) = (f.create(s, LenserId::new()).await, f.create(s, LenserId::new()).await);
    let mut mine = Vec::new();
    for (agent, status) in [
        (a.id, TeamRunStatus::Queued),
        (b.id, TeamRunStatus::Queued),
        (a.id, TeamRunStatus::AwaitingApproval),
        (b.id, TeamRunStatus::Queued),
        (a.id, TeamRunStatus::Queued),
    ] {
        let run = f.team_run(agent, DelegationPolicy::Auto, status);
        s.create_team_run(&run, &[event(TeamEventKind::DispatchQueued)]).await.unwrap();
        mine.push(run);
    }
    // Two created in the same microsecond: the id breaks the tie.
    let mut twin = f.team_run(b.id, DelegationPolicy::Auto, TeamRunStatus::Queued);
    twin.created_at = mine[4].created_at;
    s.create_team_run(&twin, &[]).await.unwrap();
    mine.push(twin);
    let queued: Vec<TeamRunId> = {
        let mut q: Vec<_> = mine.iter().filter(|r| r.status == TeamRunStatus::Queued).collect();
        q.sort_by_key(|r| (r.created_at, r.id));
        q.iter().map(|r| r.id).collect()
    };
    let ours = |runs: &[crate::model::TeamRun]| -> Vec<TeamRunId> {
        runs.iter().map(|r| r.id).filter(|id| mine.iter().any(|m| m.id == *id)).collect()
    };

    // From just before the first (a cursor a microsecond earlier, whatever
    // its id), in batches of two.
    let from_first = Some((Timestamp::from_micros(mine[0].created_at.as_micros() - 1), mine[0].id));
    let mut after = from_first;
    let mut seen = Vec::new();
    let last = mine.iter().map(|r| (r.created_at, r.id)).max().unwrap();
    loop {
        let batch = s.team_runs_in(TeamRunStatus::Queued, after, 2).await.unwrap();
        assert!(batch.len() <= 2, "at most the limit");
        for w in batch.windows(2) {
            assert!((w[0].created_at, w[0].id) < (w[1].created_at, w[1].id), "oldest first: {w:?}");
        }
        assert!(batch.iter().all(|r| r.status == TeamRunStatus::Queued), "only that status");
        seen.extend(ours(&batch));
        match batch.last() {
            Some(r) if (r.created_at, r.id) < last => after = Some((r.created_at, r.id)),
            _ => break,
        }
    }
    assert_eq!(seen, queued, "each queued run once, in order, across batches");

    // A run read back as stored, and gone from its old status once moved.
    let awaiting = s.team_runs_in(TeamRunStatus::AwaitingApproval, from_first, 100).await.unwrap();
    let found = awaiting.iter().find(|r| r.id == mine[2].id).expect("the run awaiting approval");
    assert_eq!(found, &mine[2], "read back as stored");
    let start = TeamRunChange {
        id: mine[0].id,
        agent: a.id,
        from: TeamRunStatus::Queued,
        to: TeamRunStatus::Running,
        workflow_run: Some(RunId::new()),
        decision: None,
        error: None,
        at: f.tick(),
        events: vec![event(TeamEventKind::DispatchStarted)],
    };
    s.advance_team_run(&start).await.unwrap();
    let queued_now = ours(&s.team_runs_in(TeamRunStatus::Queued, from_first, 100).await.unwrap());
    assert_eq!(queued_now, queued[1..], "moved out of queued");
    let running = ours(&s.team_runs_in(TeamRunStatus::Running, from_first, 100).await.unwrap());
    assert_eq!(running, [mine[0].id], "and into running");
}
