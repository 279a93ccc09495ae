//! The team-run transition table under any sequence of moves.

use lf_agent::team::{self, Move};
use lf_agent::{DelegationPolicy, TeamEventKind, TeamRunStatus};
use lf_core::{ErrorCode, RunId};
use proptest::prelude::*;

use TeamEventKind as K;

fn any_move() -> impl Strategy<Value = Move> {
    prop_oneof![
        Just(Move::Approve { by: None, reason: None }),
        Just(Move::Reject { by: None, reason: Some("no".into()) }),
        Just(Move::Dispatch { run: RunId::from_uuid(Default::default()) }),
        Just(Move::NodeStarted { node: "a".into() }),
        Just(Move::NodeCompleted { node: "a".into() }),
        Just(Move::NodeFailed { node: "a".into(), error: "e".into() }),
        Just(Move::ToolCalled { node: None, tool: "get_lens".into(), outcome: "ran".into() }),
        Just(Move::Complete),
        Just(Move::Fail { error: "e".into() }),
        Just(Move::Cancel { by: None, reason: None }),
        Just(Move::HoldCall { node: "a".into(), tool: "delete_lens".into(), call: "{}".into() }),
    ]
}

proptest! {
    /// Under any sequence of moves: a refused move is INVALID_TRANSITION and
    /// changes nothing; a finished run never moves again; approval happens
    /// only to a run that asked for it (to start, or for a held call once
    /// it has a workflow run); the events tell the statuses.
    #[test]
    fn any_sequence_of_moves_keeps_the_table(approval in any::<bool>(), moves in prop::collection::vec(any_move(), 0..40)) {
        let policy = if approval { DelegationPolicy::ApprovalRequired } else { DelegationPolicy::Auto };
        let opening = team::opening(policy);
        let mut status = opening.to;
        let mut events: Vec<TeamEventKind> = opening.events.iter().map(|e| e.kind).collect();
        // Whether it has a workflow run (a dispatch happened), and its ends.
        let (mut dispatched, mut ends) = (false, 0);
        for mv in &moves {
            let held = dispatched && status == TeamRunStatus::AwaitingApproval;
            let stepped = if held { team::held_step(mv) } else { team::step(status, mv) };
            match stepped {
                Ok(step) => {
                    prop_assert!(!status.is_finished(), "{status} moved");
                    prop_assert!(held || mv.accepted().contains(&status));
                    prop_assert!(!step.events.is_empty());
                    if held && matches!(mv, Move::Approve { .. } | Move::Reject { .. }) {
                        prop_assert_eq!(step.to, TeamRunStatus::Running, "a held call's decision goes back to running");
                    }
                    events.extend(step.events.iter().map(|e| e.kind));
                    dispatched |= matches!(mv, Move::Dispatch { .. });
                    ends += usize::from(step.to.is_finished());
                    status = step.to;
                }
                Err(e) => {
                    prop_assert_eq!(e.code(), ErrorCode::InvalidTransition);
                    prop_assert!(held || !mv.accepted().contains(&status));
                }
            }
        }
        let count = |k| events.iter().filter(|e| **e == k).count();
        prop_assert!(count(K::ApprovalGranted) + count(K::ApprovalRejected) <= count(K::ApprovalRequested));
        prop_assert!(count(K::ApprovalRequested) >= usize::from(approval));
        prop_assert!(count(K::DispatchStarted) <= 1);
        prop_assert_eq!(ends, usize::from(status.is_finished()), "one end, and only for a finished run");
        if let Some(last) = events.last() {
            let ending = matches!(last, K::Completed | K::Failed | K::RunCancelled)
                || (*last == K::ApprovalRejected && !dispatched);
            prop_assert_eq!(ending, status.is_finished(), "a finished run's last event is its end");
        }
    }
}
