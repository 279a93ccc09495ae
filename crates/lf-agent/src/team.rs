//! How a team run moves, as pure functions: where a new one starts, and
//! what each move does from each status (the new status and the events it
//! appends, in order). A move from a status not in its row is
//! INVALID_TRANSITION and changes nothing.
//!
//! | move       | from                                   | to                | events                              |
//! |------------|----------------------------------------|-------------------|-------------------------------------|
//! | start      | (policy `auto`)                        | queued            | dispatch_queued                     |
//! | start      | (policy `approval_required`)           | awaiting_approval | approval_requested                  |
//! | approve    | awaiting_approval                      | queued            | approval_granted, dispatch_queued   |
//! | reject     | awaiting_approval                      | rejected          | approval_rejected                   |
//! | dispatch   | queued                                 | running           | dispatch_started                    |
//! | node_*, tool_called | running                       | running           | node_started, node_completed, node_failed, tool_called |
//! | complete   | running                                | completed         | completed                           |
//! | fail       | queued, running                        | failed            | failed                              |
//! | cancel     | queued, awaiting_approval, running     | cancelled         | run_cancelled                       |
//! | hold_call  | running                                | awaiting_approval | approval_requested                  |
//!
//! A team run awaiting approval that has a workflow run waits on a held
//! tool call of an `agent_execute` step (`hold_call`), not on its start:
//! its approve and reject take it back to running (approval_granted, or
//! approval_rejected: the step tells the agent and goes on), and while it
//! waits its workflow run's progress is recorded, its end ends it, and a
//! cancel cancels it as a running one's does ([`held_step`]).
//!
//! Completed, failed, cancelled and rejected runs are finished: nothing
//! moves them, so cancelling a finished run answers INVALID_TRANSITION
//! (the original cancelled finished runs again).

use lf_core::{Detail, ErrorCode, LenserId, LfError, LfResult, RunId, Timestamp};

use crate::model::{
    Decision, DelegationPolicy, EventDetail, NewEvent, TeamEvent, TeamEventId, TeamEventKind, TeamRun,
    TeamRunId, TeamRunStatus,
};

use TeamRunStatus::*;

/// Something that happens to a team run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    /// An owner approved it.
    Approve { by: Option<LenserId>, reason: Option<String> },
    /// An owner refused it.
    Reject { by: Option<LenserId>, reason: Option<String> },
    /// The runner started its workflow run.
    Dispatch { run: RunId },
    /// A step of its workflow run started.
    NodeStarted { node: String },
    /// A step completed.
    NodeCompleted { node: String },
    /// A step failed (its run may go on: a retry, an error branch).
    NodeFailed { node: String, error: String },
    /// The agent called a tool, with what came of it.
    ToolCalled { node: Option<String>, tool: String, outcome: String },
    /// Its workflow run completed.
    Complete,
    /// Its workflow run failed, or could not start.
    Fail { error: String },
    /// Someone cancelled it.
    Cancel { by: Option<LenserId>, reason: Option<String> },
    /// A step of its workflow run holds a tool call until an owner
    /// approves it: `call` says what it is (the tool and its arguments).
    HoldCall { node: String, tool: String, call: String },
}

impl Move {
    /// The move's name, for messages.
    pub const fn name(&self) -> &'static str {
        match self {
            Move::Approve { .. } => "Approving",
            Move::Reject { .. } => "Rejecting",
            Move::Dispatch { .. } => "Dispatching",
            Move::NodeStarted { .. } | Move::NodeCompleted { .. } | Move::NodeFailed { .. } => {
                "Recording a step"
            }
            Move::ToolCalled { .. } => "Recording a tool call",
            Move::Complete => "Completing",
            Move::Fail { .. } => "Failing",
            Move::Cancel { .. } => "Cancelling",
            Move::HoldCall { .. } => "Holding a tool call for approval",
        }
    }

    /// The statuses it moves from.
    pub const fn accepted(&self) -> &'static [TeamRunStatus] {
        match self {
            Move::Approve { .. } | Move::Reject { .. } => &[AwaitingApproval],
            Move::Dispatch { .. } => &[Queued],
            Move::NodeStarted { .. }
            | Move::NodeCompleted { .. }
            | Move::NodeFailed { .. }
            | Move::ToolCalled { .. }
            | Move::Complete
            | Move::HoldCall { .. } => &[Running],
            Move::Fail { .. } => &[Queued, Running],
            Move::Cancel { .. } => &[Queued, AwaitingApproval, Running],
        }
    }
}

/// Where a move takes a team run: its new status and the events to append.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub to: TeamRunStatus,
    pub events: Vec<NewEvent>,
}

fn event(kind: TeamEventKind, detail: EventDetail) -> NewEvent {
    NewEvent { kind, detail }
}

/// Where a new team run with `policy` starts.
pub fn opening(policy: DelegationPolicy) -> Step {
    match policy {
        DelegationPolicy::Auto => {
            Step { to: Queued, events: vec![event(TeamEventKind::DispatchQueued, EventDetail::default())] }
        }
        DelegationPolicy::ApprovalRequired => Step {
            to: AwaitingApproval,
            events: vec![event(TeamEventKind::ApprovalRequested, EventDetail::default())],
        },
    }
}

/// What `mv` does to a team run in `status`; INVALID_TRANSITION naming the
/// statuses it accepts otherwise.
pub fn step(status: TeamRunStatus, mv: &Move) -> LfResult<Step> {
    if !mv.accepted().contains(&status) {
        return Err(wrong_status(mv, status));
    }
    let with_reason = |by: &Option<LenserId>, reason: &Option<String>| {
        let d = EventDetail::default().with_actor(*by);
        match reason {
            Some(r) => d.with_note(r),
            None => d,
        }
    };
    use TeamEventKind as K;
    let (to, events) = match mv {
        Move::Approve { by, reason } => (
            Queued,
            vec![
                event(K::ApprovalGranted, with_reason(by, reason)),
                event(K::DispatchQueued, EventDetail::default()),
            ],
        ),
        Move::Reject { by, reason } => (Rejected, vec![event(K::ApprovalRejected, with_reason(by, reason))]),
        Move::Dispatch { run } => {
            (Running, vec![event(K::DispatchStarted, EventDetail::default().with_run(*run))])
        }
        Move::NodeStarted { node } => {
            (Running, vec![event(K::NodeStarted, EventDetail::default().with_node(node))])
        }
        Move::NodeCompleted { node } => {
            (Running, vec![event(K::NodeCompleted, EventDetail::default().with_node(node))])
        }
        Move::NodeFailed { node, error } => {
            (Running, vec![event(K::NodeFailed, EventDetail::note(error).with_node(node))])
        }
        Move::ToolCalled { node, tool, outcome } => {
            let d = EventDetail::note(outcome).with_tool(tool);
            (Running, vec![event(K::ToolCalled, if let Some(n) = node { d.with_node(n) } else { d })])
        }
        Move::Complete => (Completed, vec![event(K::Completed, EventDetail::default())]),
        Move::Fail { error } => (Failed, vec![event(K::Failed, EventDetail::note(error))]),
        Move::Cancel { by, reason } => (Cancelled, vec![event(K::RunCancelled, with_reason(by, reason))]),
        Move::HoldCall { node, tool, call } => (
            AwaitingApproval,
            vec![event(K::ApprovalRequested, EventDetail::note(call).with_node(node).with_tool(tool))],
        ),
    };
    Ok(Step { to, events })
}

/// What `mv` does to a team run awaiting approval of a held tool call
/// (one that has a workflow run): approve and reject take it back to
/// running, the workflow run's progress leaves it waiting, its end and a
/// cancel end it; INVALID_TRANSITION for a dispatch or another hold.
pub fn held_step(mv: &Move) -> LfResult<Step> {
    use TeamEventKind as K;
    let decided = |kind, by: &Option<LenserId>, reason: &Option<String>| {
        let d = EventDetail::default().with_actor(*by);
        event(
            kind,
            match reason {
                Some(r) => d.with_note(r),
                None => d,
            },
        )
    };
    let (to, events) = match mv {
        Move::Approve { by, reason } => (Running, vec![decided(K::ApprovalGranted, by, reason)]),
        Move::Reject { by, reason } => (Running, vec![decided(K::ApprovalRejected, by, reason)]),
        Move::Dispatch { .. } | Move::HoldCall { .. } => {
            let e = wrong_status(mv, AwaitingApproval);
            return Err(LfError::new(
                e.code(),
                format!("{} A step of its workflow run already holds a tool call for approval.", e.message()),
            ));
        }
        other => {
            let Step { to, events } = step(Running, other)?;
            (if to == Running { AwaitingApproval } else { to }, events)
        }
    };
    Ok(Step { to, events })
}

/// A team run's write: from the status it was read in to the next, with
/// what else changes and the events to append, all in one transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamRunChange {
    pub id: TeamRunId,
    pub agent: LenserId,
    /// The status the write expects (CONFLICT when it moved).
    pub from: TeamRunStatus,
    pub to: TeamRunStatus,
    /// Set when dispatched.
    pub workflow_run: Option<RunId>,
    /// Set when decided.
    pub decision: Option<Decision>,
    /// Set when failed or cancelled.
    pub error: Option<String>,
    pub at: Timestamp,
    pub events: Vec<NewEvent>,
}

/// `events` of `run` as a store appends them after the run's `last` event
/// (its `seq` and time, if it has one): numbered on from it, each at `at`
/// or at the last one's time, whichever is later (so a clock that steps
/// back never reorders a run's events).
pub fn numbered(
    run: &TeamRun,
    events: &[NewEvent],
    last: Option<(u32, Timestamp)>,
    at: Timestamp,
) -> Vec<TeamEvent> {
    let (seq, at) = match last {
        Some((seq, last_at)) => (seq, at.max(last_at)),
        None => (0, at),
    };
    (seq + 1..)
        .zip(events)
        .map(|(seq, e)| TeamEvent {
            id: TeamEventId::new(),
            team_run: run.id,
            agent: run.agent,
            seq,
            kind: e.kind,
            detail: e.detail.clone(),
            at,
        })
        .collect()
}

impl TeamRunChange {
    /// `run` as the change leaves it, when `run` is still in
    /// [`TeamRunChange::from`] (CONFLICT otherwise): what every store
    /// writes, before it appends the change's events.
    pub fn apply(&self, mut run: TeamRun) -> LfResult<TeamRun> {
        if run.status != self.from {
            return Err(crate::team_run_moved(run.id, run.status));
        }
        run.status = self.to;
        run.updated_at = self.at;
        if self.to.is_finished() {
            run.finished_at = Some(self.at);
        }
        if let Some(w) = self.workflow_run {
            run.workflow_run = Some(w);
        }
        if let Some(d) = &self.decision {
            run.decision = Some(d.clone());
        }
        if let Some(e) = &self.error {
            run.error = Some(e.clone());
        }
        Ok(run)
    }
}

/// The write that `mv` makes of `run` at `at`; INVALID_TRANSITION when
/// `run`'s status does not take it.
pub fn plan(run: &TeamRun, mv: &Move, at: Timestamp) -> LfResult<TeamRunChange> {
    let Step { to, events } = if holds_call(run) { held_step(mv)? } else { step(run.status, mv)? };
    let decision = match mv {
        Move::Approve { by, reason } | Move::Reject { by, reason } => Some(Decision {
            approved: matches!(mv, Move::Approve { .. }),
            by: *by,
            reason: reason.clone(),
            at,
        }),
        _ => None,
    };
    let error = match mv {
        Move::Fail { error } => Some(error.clone()),
        Move::Cancel { reason, .. } => Some(reason.clone().unwrap_or_else(|| "cancelled".to_owned())),
        _ => None,
    };
    let workflow_run = match mv {
        Move::Dispatch { run } => Some(*run),
        _ => None,
    };
    Ok(TeamRunChange {
        id: run.id,
        agent: run.agent,
        from: run.status,
        to,
        workflow_run,
        decision,
        error: error.map(|e| lf_core::clip(&e, EventDetail::MAX_NOTE_CHARS).into_owned()),
        at,
        events,
    })
}

/// Whether `run` waits on a held tool call of its workflow run (awaiting
/// approval with a workflow run), not on its start.
pub fn holds_call(run: &TeamRun) -> bool {
    run.status == AwaitingApproval && run.workflow_run.is_some()
}

/// INVALID_TRANSITION for `mv` on a team run in `status`.
pub fn wrong_status(mv: &Move, status: TeamRunStatus) -> LfError {
    let accepted: Vec<String> = mv.accepted().iter().map(|s| s.as_str().to_owned()).collect();
    let why = if status.is_finished() { " and it has finished" } else { "" };
    LfError::new(
        ErrorCode::InvalidTransition,
        format!(
            "{} a team run is only possible while it is {}; it is {status}{why}. Read its events with list_agent_run_events.",
            mv.name(),
            accepted.join(" or ")
        ),
    )
    .with_detail("status", Detail::Str(status.as_str().into()))
    .with_detail("accepted_statuses", Detail::Strs(accepted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &Step) -> Vec<TeamEventKind> {
        s.events.iter().map(|e| e.kind).collect()
    }

    #[test]
    fn the_table() {
        use TeamEventKind as K;
        assert_eq!(opening(DelegationPolicy::Auto).to, Queued);
        assert_eq!(kinds(&opening(DelegationPolicy::ApprovalRequired)), [K::ApprovalRequested]);
        let approve = step(AwaitingApproval, &Move::Approve { by: None, reason: None }).unwrap();
        assert_eq!((approve.to, kinds(&approve)), (Queued, vec![K::ApprovalGranted, K::DispatchQueued]));
        let run = RunId::new();
        let d = step(Queued, &Move::Dispatch { run }).unwrap();
        assert_eq!((d.to, d.events[0].detail.run), (Running, Some(run)));
        assert_eq!(step(Running, &Move::Complete).unwrap().to, Completed);
        assert_eq!(step(Queued, &Move::Fail { error: "no".into() }).unwrap().to, Failed);
        for from in [Queued, AwaitingApproval, Running] {
            assert_eq!(step(from, &Move::Cancel { by: None, reason: None }).unwrap().to, Cancelled);
        }
    }

    #[test]
    fn a_held_call_waits_and_its_decision_takes_the_run_back_to_running() {
        use TeamEventKind::{ApprovalGranted, ApprovalRejected, ApprovalRequested};
        let hold = Move::HoldCall {
            node: "agent".into(),
            tool: "delete_lens".into(),
            call: "delete_lens {}".into(),
        };
        let held = step(Running, &hold).unwrap();
        assert_eq!((held.to, kinds(&held)), (AwaitingApproval, vec![ApprovalRequested]));
        let d = &held.events[0].detail;
        assert_eq!((d.node.as_deref(), d.tool.as_deref()), (Some("agent"), Some("delete_lens")));
        assert_eq!(step(Queued, &hold).unwrap_err().code(), ErrorCode::InvalidTransition);

        let by = Some(LenserId::new());
        let ok = held_step(&Move::Approve { by, reason: None }).unwrap();
        assert_eq!((ok.to, kinds(&ok), ok.events[0].detail.actor), (Running, vec![ApprovalGranted], by));
        let no = held_step(&Move::Reject { by, reason: Some("not that one".into()) }).unwrap();
        assert_eq!((no.to, kinds(&no)), (Running, vec![ApprovalRejected]));
        assert_eq!(no.events[0].detail.note.as_deref(), Some("not that one"));
        let progress =
            held_step(&Move::ToolCalled { node: None, tool: "get_lens".into(), outcome: "ran".into() });
        assert_eq!(progress.unwrap().to, AwaitingApproval, "progress leaves it waiting");
        assert_eq!(held_step(&Move::Complete).unwrap().to, Completed);
        assert_eq!(held_step(&Move::Fail { error: "x".into() }).unwrap().to, Failed);
        assert_eq!(held_step(&Move::Cancel { by: None, reason: None }).unwrap().to, Cancelled);
        let twice = held_step(&hold).unwrap_err();
        assert_eq!(twice.code(), ErrorCode::InvalidTransition);
        assert!(twice.message().contains("already holds"), "{}", twice.message());
        assert_eq!(
            held_step(&Move::Dispatch { run: RunId::new() }).unwrap_err().code(),
            ErrorCode::InvalidTransition
        );
    }

    #[test]
    fn finished_runs_do_not_move() {
        let moves = [
            Move::Cancel { by: None, reason: None },
            Move::Approve { by: None, reason: None },
            Move::Complete,
            Move::Fail { error: "x".into() },
            Move::NodeStarted { node: "a".into() },
        ];
        for from in TeamRunStatus::ALL.iter().filter(|s| s.is_finished()) {
            for mv in &moves {
                let e = step(*from, mv).unwrap_err();
                assert_eq!(e.code(), ErrorCode::InvalidTransition, "{from} {mv:?}");
                assert!(e.message().contains("finished"), "{}", e.message());
            }
        }
    }
}
