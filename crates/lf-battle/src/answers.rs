//! Workflow contenders answer by themselves. When a battle moves to
//! executing ([`BattleService::request_status`]), the run of each workflow
//! contender that has no answer yet is started through the
//! [`WorkflowAnswers`] the composition root gave the service (the workflow
//! runner): the contender's workflow, as the battle's creator, with the task
//! prompt as its input. When the run ends, the runner hands its outcome to
//! [`BattleService::deliver_answer`]: a completed run's result is submitted
//! as the contender's answer (by the service, for the creator, so the last
//! answer moves the battle on and judging starts as for any submission); a
//! run that failed, was cancelled or would not start is recorded as an
//! [`AnswerError`] on the contender, which `get_battle` shows. The contender
//! can still be answered by hand.
//!
//! Nothing is lost to a process that dies between two of these steps: the
//! run is keyed by battle and contender, so starting it again finds it, and
//! [`BattleService::answer_waiting`] (which the runner calls when it starts
//! and now and then) starts the runs that are missing and delivers the
//! outcomes of the runs that ended while nobody delivered them.
//!
//! Without a [`WorkflowAnswers`] (lf-battle embedded alone), workflow
//! contenders are answered by hand like any other.

use std::sync::Arc;

use async_trait::async_trait;
use lf_core::{BattleId, ContenderId, LfResult, PageRequest, Principal, Reach};

use crate::model::{
    AnswerError, Battle, BattleFilter, BattleSheet, BattleStatus, BattleType, Contender, ContenderType,
    SubmissionText,
};
use crate::service::BattleService;

/// What a workflow contender's run came to.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The run completed with this answer.
    Text(String),
    /// A model answered (an `ai_model` contender), with what it cost.
    Asked { text: String, cost: lf_core::AnswerCost },
    /// The run gave no answer.
    Failed {
        /// The run, when one ran.
        run_id: Option<String>,
        /// Why, safe to show to the battle's readers.
        message: String,
    },
}

/// Where a workflow contender's run stands after [`WorkflowAnswers::start`].
#[derive(Clone, Debug, PartialEq)]
pub enum AnswerRun {
    /// It was started, or had been and is still running: its end will be
    /// delivered.
    Running,
    /// It had been started and has ended: this is its outcome, not yet
    /// delivered.
    Ended(Answer),
}

/// The workflow side of workflow contenders, given to the service by the
/// composition root ([`BattleService::with_workflow_answers`]).
#[async_trait]
pub trait WorkflowAnswers: Send + Sync {
    /// Starts the run that answers for `contender` (its workflow, as the
    /// battle's creator, with the task prompt as its input), keyed by
    /// battle and contender, so that starting it again finds the first
    /// run and says where it stands. An error is recorded on the contender.
    async fn start(&self, battle: &Battle, contender: &Contender) -> LfResult<AnswerRun>;
}

/// Whether `contender` waits to answer by itself: a workflow or ai_model
/// contender with neither an answer nor a recorded failure.
fn waiting(sheet: &BattleSheet, contender: &Contender) -> bool {
    matches!(contender.contender_type, ContenderType::Workflow | ContenderType::AiModel)
        && sheet.submission_of(contender.id).is_none()
        && sheet.answer_error_of(contender.id).is_none()
}

/// The most battles one [`BattleService::answer_waiting`] pass reads.
const PASS: u32 = 100;

impl BattleService {
    /// Starts the runs of the workflow contenders of `sheet` that wait for
    /// one (a battle just moved to executing, or found executing by
    /// [`BattleService::answer_waiting`]); returns how many it looked at.
    pub(crate) async fn start_answers(self: &Arc<Self>, sheet: &BattleSheet) -> usize {
        let mut looked = 0;
        for c in sheet.contenders.iter().filter(|c| waiting(sheet, c)) {
            if c.contender_type == ContenderType::AiModel {
                if let Some(asker) = self.model_answers() {
                    looked += 1;
                    asker.ask(&sheet.battle, c);
                }
                continue;
            }
            let Some(answers) = self.workflow_answers() else { continue };
            looked += 1;
            let outcome = match answers.start(&sheet.battle, c).await {
                Ok(AnswerRun::Running) => continue,
                Ok(AnswerRun::Ended(answer)) => answer,
                Err(e) => Answer::Failed {
                    run_id: None,
                    message: format!("The workflow's run did not start: {}", e.message()),
                },
            };
            if let Err(e) = self.deliver_answer(sheet.battle.id, c.id, outcome).await {
                tracing::warn!(battle_id = %sheet.battle.id, contender_id = %c.id, error = %e, "a workflow contender's answer was not recorded");
            }
        }
        looked
    }

    /// Records what the run of workflow contender `contender_id` came to:
    /// its answer submitted (and judging started when it was the last one),
    /// or its failure recorded on the contender, as is a submission that
    /// was refused (the battle moved on, an empty or oversized answer).
    /// NOT_FOUND for an unknown battle or contender.
    pub async fn deliver_answer(
        self: &Arc<Self>,
        battle_id: BattleId,
        contender_id: ContenderId,
        answer: Answer,
    ) -> LfResult<()> {
        let battle = self.store().get_battle(Reach::Everything, battle_id).await?;
        // A model's answer records what it cost with its submission.
        let cost = match &answer {
            Answer::Asked { cost, .. } => Some(cost.clone()),
            _ => None,
        };
        let (run_id, message) = match answer {
            Answer::Failed { run_id, message } => (run_id, message),
            Answer::Text(text) | Answer::Asked { text, .. } => match SubmissionText::parse(text) {
                Err(e) => (None, format!("The answer could not be submitted: {}", e.message())),
                Ok(text) => {
                    let p = Principal::Service { acting_as: Some(battle.creator) };
                    // The cost is written with the submission: a process
                    // that dies in between leaves neither.
                    match self
                        .submit_and_judge_with_cost(&p, battle_id, contender_id, text, cost.as_ref())
                        .await
                    {
                        Ok(_) => return Ok(()),
                        Err(e) => (None, format!("The answer could not be submitted: {}", e.message())),
                    }
                }
            },
        };
        let error = AnswerError {
            battle_id,
            contender_id,
            run_id,
            message: lf_core::clip(&message, 2_000).into_owned(),
            at: self.now(),
        };
        self.store().add_answer_error(&error).await
    }

    /// Starts the missing runs of workflow contenders of every executing
    /// workflow battle, and delivers the outcomes of their runs that ended
    /// undelivered (a process died in between); hands the waiting
    /// `ai_model` contenders of every executing battle to the
    /// [`crate::ModelAnswers`] (see [`crate::asks`]). Returns how many
    /// contenders it looked at. Does nothing without either.
    pub async fn answer_waiting(self: &Arc<Self>) -> LfResult<usize> {
        if self.workflow_answers().is_none() && self.model_answers().is_none() {
            return Ok(0);
        }
        // ai_model contenders enter battles of any type; workflow ones
        // only workflow battles.
        let battle_type = self.model_answers().is_none().then_some(BattleType::WorkflowBattle);
        let filter = BattleFilter { status: Some(BattleStatus::Executing), battle_type, creator: None };
        let mut looked = 0;
        // A battle answered meanwhile leaves the listing and shifts the
        // pages: one it pushes past is found by the next pass.
        let mut offset = 0i64;
        loop {
            let page = PageRequest::new(Some(i64::from(PASS)), Some(offset))?;
            let page = self.store().list_battles(Reach::Everything, &filter, page).await?;
            for b in &page.items {
                let sheet = self.store().get_sheet(Reach::Everything, b.battle.id).await?;
                looked += self.start_answers(&sheet).await;
            }
            offset += page.items.len() as i64;
            if page.items.len() < PASS as usize || offset as u64 >= page.total {
                return Ok(looked);
            }
        }
    }
}
