//! The use cases that start judging by themselves: a submission that moves
//! a judged battle to scoring, a move to scoring, asking for scoring
//! again while in scoring (the way out of a judge error), and the catch-up
//! of battles left in executing with every answer in
//! ([`BattleService::settle_answered`]). Judging runs as
//! the Service principal on the service's [`lf_core::Spawner`] (inline,
//! awaited by the caller, when it has none), one at a time per battle in
//! this process; its verdicts or its error are what the views show.
//!
//! A move to executing also starts the runs of workflow contenders
//! ([`crate::answers`]).
//!
//! These sit on top of [`BattleService::submit`],
//! [`BattleService::set_status`] and [`BattleService::score`], which do one
//! thing each and never start anything.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use lf_core::{BattleId, ContenderId, LfError, LfResult, Principal};

use crate::guide::{self, JudgingState};
use crate::model::{Battle, BattleSheet, BattleStatus, SubmissionText};
use crate::service::{BattleService, ScoreOutcome, ScoreView, SubmitOutcome};

/// The battles this process is judging now.
#[derive(Default)]
pub(crate) struct InFlight(Mutex<HashSet<BattleId>>);

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<BattleId>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn contains(&self, id: BattleId) -> bool {
        self.lock().contains(&id)
    }
}

/// Takes a battle off the in-flight set when its judging ends, however it
/// ends (a task dropped at shutdown included).
struct Judging {
    service: Arc<BattleService>,
    id: BattleId,
}

impl Drop for Judging {
    fn drop(&mut self) {
        self.service.in_flight().lock().remove(&self.id);
    }
}

/// What [`BattleService::submit_and_judge`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// What the submission did.
    pub outcome: SubmitOutcome,
    /// Whether it moved a judged battle to scoring and judging started.
    pub judging_started: bool,
}

/// What [`BattleService::request_status`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusChange {
    /// The battle afterwards.
    pub battle: Battle,
    /// Whether it moved on by itself past the status asked for: every
    /// contender had submitted when it moved to executing.
    pub advanced: bool,
    /// Whether judging started.
    pub judging_started: bool,
    /// What can happen next, as [`guide::next_step`] says it.
    pub next_step: String,
}

/// A battle as a reader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BattleView {
    /// Everything stored about it.
    pub sheet: BattleSheet,
    /// Whether the reader sees its automatic check's parameters ([`guide::check_revealed`]).
    pub check_revealed: bool,
    /// Where its judging stands.
    pub judging: JudgingState,
    /// What can happen next.
    pub next_step: String,
}

/// A battle's score as it stands, with where its judging stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreState {
    /// Votes, verdicts, judge errors and standings.
    pub view: ScoreView,
    /// Where its judging stands.
    pub judging: JudgingState,
    /// What can happen next.
    pub next_step: String,
}

/// The most battles one read of [`BattleService::settle_answered`] asks
/// the store for.
const SETTLE_PASS: u32 = 100;

impl BattleService {
    /// Whether this process is judging battle `id` now.
    pub fn judging_now(&self, id: BattleId) -> bool {
        self.in_flight().contains(id)
    }

    /// Judges battle `id` in the background as the Service principal;
    /// false, starting nothing, when it is being judged already.
    async fn start_judging(self: &Arc<Self>, id: BattleId) -> bool {
        if !self.in_flight().lock().insert(id) {
            return false;
        }
        let job = Judging { service: self.clone(), id }.run();
        match self.spawner() {
            Some(spawner) => spawner.spawn("judge a battle", Box::pin(job)),
            None => job.await,
        }
        true
    }

    /// [`BattleService::submit`], then judging when this submission moved a
    /// judged battle to scoring.
    pub async fn submit_and_judge(
        self: &Arc<Self>,
        p: &Principal,
        battle_id: BattleId,
        contender_id: ContenderId,
        text: SubmissionText,
    ) -> LfResult<Submitted> {
        self.submit_and_judge_with_cost(p, battle_id, contender_id, text, None).await
    }

    /// [`BattleService::submit_and_judge`] of an answer a model made, its
    /// `cost` written with it ([`BattleService::submit_with_cost`]).
    pub async fn submit_and_judge_with_cost(
        self: &Arc<Self>,
        p: &Principal,
        battle_id: BattleId,
        contender_id: ContenderId,
        text: SubmissionText,
        cost: Option<&lf_core::AnswerCost>,
    ) -> LfResult<Submitted> {
        let outcome = self.submit_with_cost(p, battle_id, contender_id, text, cost).await?;
        let judging_started = outcome.advanced
            && outcome.status == BattleStatus::Scoring
            && self.start_judging(battle_id).await;
        Ok(Submitted { outcome, judging_started })
    }

    /// Moves on, as the service, every battle in executing with every
    /// contender's answer in, as the last submission would have
    /// ([`crate::rules::settles`]), and starts judging those it moved to
    /// scoring. A last submission moves the battle in its own write, but a
    /// move to executing with every answer already in settles in a second
    /// write ([`BattleService::set_status`]): a process that stops between
    /// the two leaves the battle executing, for this catch-up, which the
    /// runner calls when it starts and now and then. Each move is the
    /// store's guarded one, so a battle another server moved meanwhile is
    /// left as it is. Returns how many battles it moved; a battle that
    /// could not be read or moved is logged and left for the next call.
    pub async fn settle_answered(self: &Arc<Self>) -> LfResult<usize> {
        let mut moved = 0;
        // Keyed by creation, not by offset: a battle that moves on leaves
        // the set without shifting the ones after it.
        let mut after = None;
        loop {
            let batch = self.store().answered_executing(after, SETTLE_PASS).await?;
            for b in &batch {
                match self.settle(b.id, self.now()).await {
                    Ok(Some(to)) => {
                        moved += 1;
                        if to == BattleStatus::Scoring {
                            self.start_judging(b.id).await;
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(battle_id = %b.id, error = %e, "a battle with every answer in did not move on");
                    }
                }
            }
            match batch.last() {
                Some(last) if batch.len() == SETTLE_PASS as usize => after = Some((last.created_at, last.id)),
                _ => return Ok(moved),
            }
        }
    }

    /// What a caller asking for status `to` means: a transition
    /// ([`BattleService::set_status`]), except that asking for scoring on a
    /// judged battle already in scoring asks to judge it again, which only
    /// its creator (or the service) may (FORBIDDEN otherwise). Judging starts
    /// whenever a judged battle is in scoring afterwards; the runs of
    /// workflow contenders start when it moves to executing
    /// ([`crate::answers`]).
    pub async fn request_status(
        self: &Arc<Self>,
        p: &Principal,
        id: BattleId,
        to: BattleStatus,
        confirm: bool,
    ) -> LfResult<StatusChange> {
        let (battle, advanced) = match self.rejudge_target(p, id, to).await? {
            Some(battle) => (battle, false),
            None => self.move_status(p, id, to, confirm).await?,
        };
        let judging_started = battle.status == BattleStatus::Scoring
            && battle.judging_mode.is_judged()
            && self.start_judging(id).await;
        let mut sheet = self.get(p, id).await?;
        // Delivering an ended run's answer changes the sheet: read it again then.
        if to == BattleStatus::Executing
            && battle.status == BattleStatus::Executing
            && self.start_answers(&sheet).await > 0
        {
            sheet = self.get(p, id).await?;
        }
        let judging =
            JudgingState::of(&sheet.battle, &sheet.verdicts, &sheet.judge_errors, self.judging_now(id));
        let next_step = guide::next_step(&sheet.battle, &sheet.contenders, judging);
        Ok(StatusChange { battle, advanced, judging_started, next_step })
    }

    /// The battle when asking for scoring on it asks to judge it again (a
    /// judged battle in scoring, and the caller its creator); `None` when
    /// the request is a transition.
    async fn rejudge_target(
        &self,
        p: &Principal,
        id: BattleId,
        to: BattleStatus,
    ) -> LfResult<Option<Battle>> {
        if to != BattleStatus::Scoring {
            return Ok(None);
        }
        let battle = self.get(p, id).await?.battle;
        if battle.status != BattleStatus::Scoring || !battle.judging_mode.is_judged() {
            return Ok(None);
        }
        if !p.may_write(battle.creator) {
            return Err(LfError::forbidden(
                "Only the battle's creator can have it judged again. Ask the creator, or create your own battle.",
            )
            .with_field("battle_id"));
        }
        Ok(Some(battle))
    }

    /// The battle with everything stored about it, as `p` may see it.
    pub async fn view(&self, p: &Principal, id: BattleId) -> LfResult<BattleView> {
        let sheet = self.get(p, id).await?;
        let judging =
            JudgingState::of(&sheet.battle, &sheet.verdicts, &sheet.judge_errors, self.judging_now(id));
        Ok(BattleView {
            check_revealed: guide::check_revealed(&sheet.battle, p),
            next_step: guide::next_step(&sheet.battle, &sheet.contenders, judging),
            judging,
            sheet,
        })
    }

    /// [`BattleService::score_view`] with where its judging stands and what
    /// can happen next.
    pub async fn score_state(&self, p: &Principal, id: BattleId) -> LfResult<ScoreState> {
        let view = self.score_view(p, id).await?;
        let judging =
            JudgingState::of(&view.battle, &view.verdicts, &view.judge_errors, self.judging_now(id));
        let next_step = guide::next_step(&view.battle, &view.contenders, judging);
        Ok(ScoreState { view, judging, next_step })
    }
}

impl Judging {
    /// Judges the battle and logs what came of it: verdicts and judge errors
    /// are recorded by [`BattleService::score`], so readers see them.
    async fn run(self) {
        let service = Principal::Service { acting_as: None };
        let id = self.id;
        match self.service.score(&service, id).await {
            Ok(ScoreOutcome::Scored(verdicts)) => {
                tracing::info!(battle_id = %id, verdicts = verdicts.len(), "battle judged");
            }
            Ok(ScoreOutcome::Failed(e)) => {
                tracing::warn!(battle_id = %id, model = %e.model, error = %e.message, "judging failed; the battle stays in scoring");
            }
            Ok(ScoreOutcome::NothingToJudge) => {}
            Err(e) => tracing::error!(battle_id = %id, error = ?e, "scoring could not run"),
        }
    }
}
