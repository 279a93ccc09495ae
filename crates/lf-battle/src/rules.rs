//! The rules of contenders, submissions and votes (DESIGN §7), as pure
//! functions over what the store returned. The service runs them before it
//! writes; the store re-checks the status and slot it was told to expect, so
//! a concurrent change turns into CONFLICT instead of a broken rule.

use lf_core::{Detail, ErrorCode, LenserId, LfError, LfResult, Principal};

use crate::model::{
    Battle, BattleStatus, BattleType, Contender, ContenderType, JudgingMode, Slot, Submission, VotePick,
};
use crate::state::wrong_status;

/// Statuses in which contenders may join.
pub const JOINABLE: [BattleStatus; 2] = [BattleStatus::Draft, BattleStatus::Open];
/// Statuses in which contenders may submit or resubmit. Not voting: a
/// changed answer would change what voters already judged.
pub const SUBMITTABLE: [BattleStatus; 2] = [BattleStatus::Open, BattleStatus::Executing];
/// Statuses in which votes are taken.
pub const VOTABLE: [BattleStatus; 1] = [BattleStatus::Voting];

/// The slot a new contender gets, after checking every rule of joining, in
/// this order:
/// 1. INVALID_TRANSITION unless the battle is draft or open;
/// 2. SLOTS_FULL when `max_contenders` are already there;
/// 3. INVALID_ARGUMENT (`contender_type`) when the format does not take this
///    type, or (human_vs_ai) when taking it would leave no room for the human
///    or the AI the battle still needs;
/// 4. INVALID_ARGUMENT (`contender_ref_id`) when the reference already is a
///    contender of this battle;
/// 5. INVALID_ARGUMENT (`slot`) when `asked` is not the next free slot
///    (slots are always a prefix of A–Z).
pub fn next_slot(
    battle: &Battle,
    existing: &[Contender],
    contender_type: ContenderType,
    reference: lf_core::ContenderRefId,
    asked: Option<Slot>,
) -> LfResult<Slot> {
    if !JOINABLE.contains(&battle.status) {
        return Err(wrong_status("Adding a contender", battle.status, &JOINABLE));
    }
    let max = battle.max_contenders.get();
    if existing.len() >= max {
        return Err(slots_full(max));
    }
    let bt = battle.battle_type;
    if !bt.allows(contender_type) {
        let allowed: Vec<&str> = bt.allowed().iter().map(|t| t.as_str()).collect();
        return Err(LfError::invalid_argument(format!(
            "A {bt} battle takes contenders of type {}, not {contender_type}.",
            allowed.join(" or ")
        ))
        .with_field("contender_type")
        .with_detail("allowed", Detail::Strs(allowed.into_iter().map(str::to_owned).collect())));
    }
    if bt == BattleType::HumanVsAi {
        let types = || existing.iter().map(|c| c.contender_type).chain([contender_type]);
        let need_human = !types().any(|t| t == ContenderType::Human);
        let need_ai = !types().any(ContenderType::is_ai);
        let left = max - existing.len() - 1;
        if usize::from(need_human) + usize::from(need_ai) > left {
            let missing = if need_human { "human" } else { "AI (ai_model or ai_agent)" };
            return Err(LfError::invalid_argument(format!(
                "A human_vs_ai battle needs at least one human and one AI contender, and this {contender_type} would take the last slot: add a {missing} contender instead."
            ))
            .with_field("contender_type"));
        }
    }
    if existing.iter().any(|c| c.reference == reference) {
        return Err(LfError::invalid_argument(format!(
            "{reference} already is a contender of this battle: each contender reference joins a battle once."
        ))
        .with_field("contender_ref_id"));
    }
    let next = Slot::from_index(existing.len()).ok_or_else(|| slots_full(max))?;
    if let Some(asked) = asked
        && asked != next
    {
        return Err(LfError::invalid_argument(format!(
            "slot must be {next}, the next free slot (slots are given in order A, B, C…), got {asked}. Leave slot out to get it automatically."
        ))
        .with_field("slot"));
    }
    Ok(next)
}

/// The SLOTS_FULL of a battle with `max` contenders.
pub fn slots_full(max: usize) -> LfError {
    LfError::new(
        ErrorCode::SlotsFull,
        format!(
            "All {max} contender slots of this battle are taken (max_contenders is {max}). Create a battle with a larger max_contenders (up to 26) to add more."
        ),
    )
    .with_detail("max_contenders", Detail::Int(max as i64))
}

/// The lenser a human contender answers for: the reference itself. For other
/// types, `given` (an agent's or workflow's owner, as the caller resolved it).
pub fn contender_owner(
    contender_type: ContenderType,
    reference: lf_core::ContenderRefId,
    given: Option<LenserId>,
) -> Option<LenserId> {
    match contender_type {
        ContenderType::Human => Some(LenserId::from_uuid(reference.as_uuid())),
        _ => given,
    }
}

/// Whether `p` may submit for `contender` of `battle`: the service, the
/// battle's creator, the contender's owner (the human contender, the agent's
/// owner), or the agent itself. FORBIDDEN otherwise.
pub fn may_submit(battle: &Battle, contender: &Contender, p: &Principal) -> LfResult<()> {
    let own = match p {
        Principal::Service { .. } => true,
        Principal::Agent { agent_id, .. } if agent_id.as_uuid() == contender.reference.as_uuid() => true,
        _ => p.may_write(battle.creator) || (contender.owner.is_some() && contender.owner == p.lenser()),
    };
    if own {
        Ok(())
    } else {
        Err(LfError::forbidden(format!(
            "Only the battle's creator or whoever answers for contender {} ({}) may submit for it.",
            contender.slot, contender.display_name
        ))
        .with_field("contender_id"))
    }
}

/// Checks the status for a submission: INVALID_TRANSITION outside open and
/// executing.
pub fn check_submittable(battle: &Battle) -> LfResult<()> {
    if SUBMITTABLE.contains(&battle.status) {
        Ok(())
    } else {
        Err(wrong_status("Submitting", battle.status, &SUBMITTABLE))
    }
}

/// Where a battle moves by itself once every contender has submitted while
/// executing: voting for community votes, scoring for the judged modes.
pub const fn advance_target(mode: JudgingMode) -> BattleStatus {
    match mode {
        JudgingMode::CommunityVote => BattleStatus::Voting,
        _ => BattleStatus::Scoring,
    }
}

/// Whether every contender has a submission (and there is one at least).
pub fn all_submitted(contenders: &[Contender], submissions: &[Submission]) -> bool {
    !contenders.is_empty() && contenders.iter().all(|c| submissions.iter().any(|s| s.contender_id == c.id))
}

/// Where `battle` moves by itself now: [`advance_target`] when it is
/// executing and every contender has submitted, whichever event completed
/// that (the last submission, or the move to executing once every answer
/// was in); `None` when it stays.
pub fn settles(
    battle: &Battle,
    contenders: &[Contender],
    submissions: &[Submission],
) -> Option<BattleStatus> {
    (battle.status == BattleStatus::Executing && all_submitted(contenders, submissions))
        .then(|| advance_target(battle.judging_mode))
}

/// Who votes when `p` votes: a lenser, an agent by its own id, the service as
/// the lenser it acts as (MISSING_LENSER when it acts as nobody).
pub fn voter_of(p: &Principal) -> LfResult<LenserId> {
    match p {
        Principal::Lenser { id, .. } => Ok(*id),
        Principal::Agent { agent_id, .. } => Ok(*agent_id),
        Principal::Service { acting_as: Some(id) } => Ok(*id),
        Principal::Service { acting_as: None } => Err(LfError::missing_lenser()),
    }
}

/// Checks a vote by `p` with this pick and returns the voter:
/// - INVALID_TRANSITION unless the battle is voting;
/// - MISSING_LENSER for the service acting as nobody;
/// - NOT_FOUND (`contender_id`) for a contender not in this battle;
/// - INVALID_ARGUMENT (`contender_id`) for a contender without a submission;
/// - FORBIDDEN (`contender_id`) for a contender the voter answers for (their
///   own human contender, their agent, or an agent voting for itself).
///
/// `tie` is always a valid pick.
pub fn check_vote(
    battle: &Battle,
    contenders: &[Contender],
    submissions: &[Submission],
    p: &Principal,
    pick: VotePick,
) -> LfResult<LenserId> {
    if !VOTABLE.contains(&battle.status) {
        return Err(wrong_status("Voting", battle.status, &VOTABLE));
    }
    let voter = voter_of(p)?;
    let VotePick::Contender(id) = pick else {
        return Ok(voter);
    };
    let Some(c) = contenders.iter().find(|c| c.id == id) else {
        return Err(LfError::not_found("Contender", id).with_field("contender_id"));
    };
    if !submissions.iter().any(|s| s.contender_id == id) {
        return Err(LfError::invalid_argument(format!(
            "Contender {} ({}) has not submitted anything to vote for: pick a contender that has, or tie.",
            c.slot, c.display_name
        ))
        .with_field("contender_id"));
    }
    let mine = c.reference.as_uuid() == voter.as_uuid()
        || c.owner.is_some_and(|o| Some(o) == p.lenser() || o == voter);
    if mine {
        return Err(LfError::forbidden(format!(
            "You cannot vote for contender {} ({}): you answer for it. Vote for another contender, or tie.",
            c.slot, c.display_name
        ))
        .with_field("contender_id"));
    }
    Ok(voter)
}
