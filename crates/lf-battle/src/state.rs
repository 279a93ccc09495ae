//! The battle lifecycle (DESIGN §7) as a pure transition function.
//!
//! | from      | to                                   |
//! |-----------|--------------------------------------|
//! | draft     | open, archived                       |
//! | open      | executing, voting, archived          |
//! | executing | voting, scoring, archived            |
//! | voting    | scoring, archived                    |
//! | scoring   | closed, archived                     |
//! | closed    | published, archived                  |
//! | published | archived                             |
//! | archived  | (nothing)                            |
//!
//! Moving to `closed` or `archived` needs `confirm: true`. Only the creator
//! (or a principal writing as the creator: their agent) and the service move a
//! battle. Besides the table, a few facts about the battle must hold (a
//! battle cannot be voted on with fewer than two submissions, see
//! [`Facts`]).
//!
//! The checks run in this order, so a caller is never asked to confirm a move
//! that would fail anyway:
//! 1. NOT_FOUND: a draft is invisible to everyone but its creator and the
//!    service (the same answer as a battle that does not exist);
//! 2. FORBIDDEN: the caller can read the battle but did not create it;
//! 3. INVALID_TRANSITION: the move is not in the table (moving to the
//!    current status included), or a fact does not hold;
//! 4. CONFIRMATION_REQUIRED: closing or archiving without `confirm`.
//!
//! A refused event changes nothing.

use lf_core::{Detail, ErrorCode, LenserId, LfError, LfResult, Principal, Reach};

use crate::model::{BattleStatus, BattleType, ContenderType};

use BattleStatus::*;

/// Every allowed `(from, to)` move.
pub const TRANSITIONS: &[(BattleStatus, BattleStatus)] = &[
    (Draft, Open),
    (Open, Executing),
    (Open, Voting),
    (Executing, Voting),
    (Executing, Scoring),
    (Voting, Scoring),
    (Scoring, Closed),
    (Closed, Published),
    (Draft, Archived),
    (Open, Archived),
    (Executing, Archived),
    (Voting, Archived),
    (Scoring, Archived),
    (Closed, Archived),
    (Published, Archived),
];

/// Whether the table allows `from → to`.
pub fn allowed(from: BattleStatus, to: BattleStatus) -> bool {
    TRANSITIONS.contains(&(from, to))
}

/// The statuses `from` may move to, in table order.
pub fn targets(from: BattleStatus) -> Vec<BattleStatus> {
    TRANSITIONS.iter().filter(|(f, _)| *f == from).map(|(_, t)| *t).collect()
}

/// Whether moving to `to` needs `confirm: true`.
pub const fn needs_confirm(to: BattleStatus) -> bool {
    matches!(to, Closed | Archived)
}

/// Whether a battle with this status and creator is readable with `reach`:
/// drafts only by their creator; everything else by everyone.
pub fn visible(status: BattleStatus, creator: LenserId, reach: Reach) -> bool {
    match reach {
        Reach::Everything => true,
        Reach::Lenser(me) => status != Draft || creator == me,
    }
}

/// A request to move a battle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The status asked for.
    pub to: BattleStatus,
    /// Whether the caller confirmed (needed for closed and archived).
    pub confirm: bool,
}

/// What the guards beyond the table look at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Contenders registered.
    pub contenders: usize,
    /// Of which humans.
    pub humans: usize,
    /// Of which AI models or agents.
    pub ais: usize,
    /// Contenders that have submitted.
    pub submitted: usize,
}

impl Facts {
    /// Counts contenders of these types, `submitted` of which have submitted.
    pub fn of(types: impl IntoIterator<Item = ContenderType>, submitted: usize) -> Self {
        let mut f = Facts { submitted, ..Facts::default() };
        for t in types {
            f.contenders += 1;
            if t == ContenderType::Human {
                f.humans += 1;
            }
            if t.is_ai() {
                f.ais += 1;
            }
        }
        f
    }
}

/// The part of a battle the lifecycle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifecycle {
    /// Where the battle is.
    pub status: BattleStatus,
    /// Who created it.
    pub creator: LenserId,
    /// Its format (human_vs_ai has a guard of its own).
    pub battle_type: BattleType,
    /// Its contenders and submissions.
    pub facts: Facts,
}

impl Lifecycle {
    /// Applies `event` by `actor`: on success the status moves; on error
    /// nothing changes.
    pub fn apply(&mut self, event: Event, actor: &Principal) -> LfResult<BattleStatus> {
        let next = transition(self, event, actor)?;
        self.status = next;
        Ok(next)
    }
}

/// The lifecycle's transition function: the status `state` moves to on
/// `event` by `actor`, or why not (see the module docs for the order of the
/// checks).
pub fn transition(state: &Lifecycle, event: Event, actor: &Principal) -> LfResult<BattleStatus> {
    let from = state.status;
    let to = event.to;
    if !visible(from, state.creator, actor.reach()) {
        return Err(LfError::new(
            ErrorCode::NotFound,
            "This battle was not found, or you cannot see it. Check the id, or list what you can see first.",
        ));
    }
    if !actor.may_write(state.creator) {
        return Err(LfError::forbidden(
            "Only the battle's creator can change its status. Ask the creator, or create your own battle.",
        )
        .with_detail("field", Detail::Str("battle_id".into())));
    }
    if !allowed(from, to) {
        return Err(invalid_transition(from, to));
    }
    guard(state, to)?;
    if needs_confirm(to) && !event.confirm {
        let action = if to == Closed {
            "Closing a battle (it records the winner and every rank, and cannot be undone)"
        } else {
            "Archiving a battle (nothing leaves archived)"
        };
        return Err(LfError::confirmation_required(action).with_field("confirm"));
    }
    Ok(to)
}

fn guard(state: &Lifecycle, to: BattleStatus) -> LfResult<()> {
    let f = state.facts;
    let refuse = |why: String| Err(invalid_transition(state.status, to).with_message(why));
    if matches!(to, Executing | Voting) {
        if f.contenders < 2 {
            return refuse(format!(
                "A battle needs at least 2 contenders before it moves to {to}; it has {}. Add contenders with add_battle_contender first.",
                f.contenders
            ));
        }
        if state.battle_type == BattleType::HumanVsAi && (f.humans == 0 || f.ais == 0) {
            return refuse(format!(
                "A human_vs_ai battle needs at least one human and one AI contender before it moves to {to}; it has {} human and {} AI. Add the missing contender first.",
                f.humans, f.ais
            ));
        }
    }
    if to == Voting && f.submitted < 2 {
        return refuse(format!(
            "Voting needs at least 2 submissions to choose between; {} contender(s) have submitted. Wait for submissions (submit_battle_run) first.",
            f.submitted
        ));
    }
    if to == Scoring && f.submitted == 0 {
        return refuse(
            "Scoring needs at least one submission; no contender has submitted yet. Wait for submissions (submit_battle_run) first."
                .to_owned(),
        );
    }
    Ok(())
}

/// The INVALID_TRANSITION of a move the table refuses, naming where the
/// battle can go instead.
pub fn invalid_transition(from: BattleStatus, to: BattleStatus) -> LfError {
    let allowed: Vec<String> = targets(from).iter().map(|s| s.as_str().to_owned()).collect();
    let message = if from == to {
        format!("The battle is already {from}.")
    } else if allowed.is_empty() {
        format!("A battle in {from} cannot move to {to}: nothing leaves {from}.")
    } else {
        format!("A battle in {from} can move to {}, not to {to}.", allowed.join(", "))
    };
    LfError::new(ErrorCode::InvalidTransition, message)
        .with_field("status")
        .with_detail("from", Detail::Str(from.as_str().into()))
        .with_detail("to", Detail::Str(to.as_str().into()))
        .with_detail("allowed", Detail::Strs(allowed))
}

/// The INVALID_TRANSITION of an action (submitting, voting, adding a
/// contender) attempted in a status that does not take it.
pub fn wrong_status(action: &str, status: BattleStatus, accepted: &[BattleStatus]) -> LfError {
    let accepted: Vec<String> = accepted.iter().map(|s| s.as_str().to_owned()).collect();
    LfError::new(
        ErrorCode::InvalidTransition,
        format!(
            "{action} is only possible while the battle is {}; it is {status}. Check its status with get_battle.",
            accepted.join(" or ")
        ),
    )
    .with_detail("status", Detail::Str(status.as_str().into()))
    .with_detail("accepted_statuses", Detail::Strs(accepted))
}

trait WithMessage {
    fn with_message(self, message: String) -> Self;
}

impl WithMessage for LfError {
    fn with_message(self, message: String) -> Self {
        let mut e = LfError::new(self.code(), message);
        for (k, v) in self.details().iter().cloned() {
            e = e.with_detail(k, v);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use lf_core::Scopes;

    use super::*;

    fn state(status: BattleStatus, creator: LenserId) -> Lifecycle {
        Lifecycle {
            status,
            creator,
            battle_type: BattleType::AiVsAi,
            facts: Facts { contenders: 2, humans: 0, ais: 2, submitted: 2 },
        }
    }

    fn go(to: BattleStatus) -> Event {
        Event { to, confirm: true }
    }

    #[test]
    fn table_vectors() {
        let me = LenserId::new();
        let p = Principal::Lenser { id: me, scopes: Scopes::READ_WRITE };
        for (from, to, ok) in [
            (Draft, Open, true),
            (Open, Closed, false),
            (Voting, Closed, false),
            (Scoring, Closed, true),
            (Closed, Published, true),
            (Published, Archived, true),
            (Archived, Open, false),
            (Archived, Archived, false),
            (Published, Draft, false),
            (Open, Open, false),
            (Scoring, Archived, true),
            (Executing, Scoring, true),
        ] {
            let r = transition(&state(from, me), go(to), &p);
            assert_eq!(r.is_ok(), ok, "{from} -> {to}: {r:?}");
            if !ok {
                assert_eq!(r.unwrap_err().code(), ErrorCode::InvalidTransition);
            }
        }
    }

    #[test]
    fn closed_and_archived_need_confirmation() {
        let me = LenserId::new();
        let p = Principal::Service { acting_as: None };
        for (from, to) in [(Scoring, Closed), (Open, Archived)] {
            let e = transition(&state(from, me), Event { to, confirm: false }, &p).unwrap_err();
            assert_eq!(e.code(), ErrorCode::ConfirmationRequired);
        }
        assert_eq!(transition(&state(Draft, me), Event { to: Open, confirm: false }, &p).unwrap(), Open);
    }

    #[test]
    fn only_the_creator_or_the_service_moves_a_battle() {
        let (me, other) = (LenserId::new(), LenserId::new());
        let stranger = Principal::Lenser { id: other, scopes: Scopes::READ_WRITE };
        let e = transition(&state(Open, me), go(Executing), &stranger).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden);
        let e = transition(&state(Draft, me), go(Open), &stranger).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound, "a draft is invisible to others");
        let agent = Principal::Agent { agent_id: LenserId::new(), owner: me };
        assert!(transition(&state(Open, me), go(Executing), &agent).is_ok(), "an agent acts for its owner");
        // A stranger is told FORBIDDEN before being asked to confirm.
        let e = transition(&state(Scoring, me), Event { to: Closed, confirm: false }, &stranger).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Forbidden);
    }

    #[test]
    fn guards() {
        let me = LenserId::new();
        let p = Principal::Service { acting_as: None };
        let mut s = state(Open, me);
        s.facts.contenders = 1;
        assert_eq!(transition(&s, go(Executing), &p).unwrap_err().code(), ErrorCode::InvalidTransition);
        let mut s = state(Open, me);
        s.battle_type = BattleType::HumanVsAi;
        s.facts = Facts::of([ContenderType::Human, ContenderType::Human], 0);
        let e = transition(&s, go(Executing), &p).unwrap_err();
        assert!(e.message().contains("one human and one AI"), "{e}");
        s.facts = Facts::of([ContenderType::Human, ContenderType::AiAgent], 0);
        assert!(transition(&s, go(Executing), &p).is_ok());
        let mut s = state(Executing, me);
        s.facts.submitted = 1;
        assert_eq!(transition(&s, go(Voting), &p).unwrap_err().code(), ErrorCode::InvalidTransition);
        assert!(transition(&s, go(Scoring), &p).is_ok());
        s.facts.submitted = 0;
        assert!(transition(&s, go(Scoring), &p).is_err());
        assert!(transition(&s, go(Archived), &p).is_ok(), "archiving needs no facts");
    }

    #[test]
    fn refusals_name_the_way_out() {
        let e = invalid_transition(Executing, Open);
        assert!(e.message().contains("voting, scoring, archived"), "{e}");
        assert!(invalid_transition(Archived, Open).message().contains("nothing leaves archived"));
    }
}
