//! The `contender_run` step: an AI Lenser answers a battle as its
//! `ai_agent` contender, from a workflow: the action word `answer_battle`
//! of `run_agent_action`, as a step.
//!
//! - `battle_id` and `contender_id` are filled from the step's main input
//!   (`[[name]]`, as `battle_create` fills its fields), then read as ids.
//! - The battle is read as the run's starter reads it: a battle, or a
//!   contender of it, that the starter cannot see fails the step with
//!   `not_found`. Only an `ai_agent` contender answers here: a workflow
//!   contender answers by its own run (started when its battle moves to
//!   executing), and a human or ai_model contender's answer is submitted
//!   with `submit_battle_run`; either fails the step with `invalid_input`,
//!   saying so.
//! - The agent is the contender's reference. It answers through
//!   [`AgentTools::answer_battle`], which makes the one call an agent acts
//!   by (lf-tools' `call_as_agent` with the action word `answer_battle`):
//!   the starter must be one the agent acts for (its owner, a co-owner, an
//!   operator); the call is checked and counted against the agent's policy
//!   (`can_join_battles`, `submit_battle_run` granted), its daily caps and
//!   credit limit; the agent's model is asked with its persona and the
//!   task prompt; the answer is submitted as the agent's; and the call is
//!   written to the agent's action log. The model call counts against the
//!   agent's credits, not the run's budget (the step reports no usage). A
//!   refusal fails the step with the error's code in lower case
//!   (`not_found`, `permission_denied`, `throttled`, `budget_exceeded`,
//!   `invalid_transition`...) and its message; an INTERNAL one with
//!   `store`. `conflict` (the battle moved while the answer was written)
//!   is retried, as the catalog's retry rule says.
//! - Output: `{battle_id, contender_id, submission_id, text}`, the text as
//!   submitted.
//! - Once: the output is saved ([`Job::checkpoint`], as `{"answered":
//!   output}`) right after the answer is submitted and its text read
//!   back, and an attempt that runs again with that save (a takeover, a
//!   retry) outputs it without answering again. A process that dies between the submission and the
//!   save answers once more when the step runs again: the new answer
//!   replaces the first (a contender has one submission, kept under its
//!   id), so there is never a second.

use std::sync::Arc;

use async_trait::async_trait;
use lf_battle::{BattleSheet, ContenderType};
use lf_core::{BattleId, ContenderId, ErrorCode, LenserId, LfError, Principal, Scopes};
use lf_workflow::engine::{Failure, Usage, main_input};
use lf_workflow::exec::fill_placeholders;
use serde_json::{Value, json};

use crate::agent_step::{AgentTools, lost, store_failure};
use crate::compose::OwnServices;
use crate::executor::{Done, Executor, Executors, Job};
use crate::steps::Runs;

/// Where the step's save keeps its output.
const ANSWERED: &str = "answered";

/// The `contender_run` step's executor.
pub struct ContenderSteps {
    tools: Arc<dyn AgentTools>,
    own: OwnServices,
}

impl ContenderSteps {
    /// Answers through `tools`; reads battles through `own` (bound with
    /// [`OwnServices::bind`]: until then the step fails with `not_ready`).
    pub fn new(tools: Arc<dyn AgentTools>, own: OwnServices) -> Self {
        ContenderSteps { tools, own }
    }

    /// `executors` with `contender_run` (a runner with this step alone;
    /// [`Executors::all`] has every step).
    pub fn register(self, executors: Executors) -> Executors {
        let me: Arc<dyn Executor> = Arc::new(self);
        executors.fill(|runs| (runs == Runs::Contender).then(|| me.clone()))
    }
}

/// `key`'s id, its placeholders filled from the main input.
fn id_of(job: &Job, key: &str) -> Result<uuid::Uuid, Failure> {
    let text = job.node().config.get(key).and_then(Value::as_str).unwrap_or_default();
    let filled = fill_placeholders(text, main_input(&job.input));
    lf_core::parse_uuid(key, filled.trim())
        .map_err(|e| Failure::new("invalid_config", e.message().to_owned()))
}

/// A refusal of the answer, or of the battle's read, as the step's failure.
fn refused(e: &LfError) -> Failure {
    match e.code() {
        ErrorCode::Internal => store_failure(e),
        code => Failure::new(code.as_str().to_ascii_lowercase(), e.message().to_owned()),
    }
}

/// The battle as the run's starter reads it.
async fn sheet(own: &OwnServices, starter: LenserId, id: BattleId) -> Result<BattleSheet, Failure> {
    let bound = own.get()?;
    let as_starter = Principal::Lenser { id: starter, scopes: Scopes::READ };
    match bound.battles.get(&as_starter, id).await {
        Ok(sheet) => Ok(sheet),
        Err(e) if e.code() == ErrorCode::NotFound => Err(Failure::new(
            "not_found",
            format!("battle {id} was not found, or this run's starter ({starter}) cannot see it"),
        )),
        Err(e) => Err(refused(&e)),
    }
}

/// Why a contender of `kind` does not answer through this step.
fn not_an_agent(slot: lf_battle::Slot, name: &str, kind: ContenderType) -> Failure {
    let how = match kind {
        ContenderType::Workflow => {
            "a workflow contender answers by its own run, started when its battle moves to executing"
        }
        _ => "its answer is submitted with submit_battle_run by whoever answers for it",
    };
    Failure::new(
        "invalid_input",
        format!(
            "contender {slot} ({name}) is {} contender: contender_run answers only ai_agent contenders (an AI Lenser answering for itself); {how}",
            kind.with_article()
        ),
    )
}

#[async_trait]
impl Executor for ContenderSteps {
    async fn execute(&self, job: &Job) -> Result<Done, Failure> {
        if let Some(answered) = job.saved.as_ref().and_then(|s| s.get(ANSWERED)) {
            return Ok(Done::output(answered.clone()));
        }
        let battle = BattleId::from_uuid(id_of(job, "battle_id")?);
        let contender = ContenderId::from_uuid(id_of(job, "contender_id")?);
        let starter = job.started_by;
        let before = sheet(&self.own, starter, battle).await?;
        let Some(c) = before.contenders.iter().find(|c| c.id == contender) else {
            return Err(Failure::new("not_found", format!("battle {battle} has no contender {contender}")));
        };
        if c.contender_type != ContenderType::AiAgent {
            return Err(not_an_agent(c.slot, c.display_name.as_str(), c.contender_type));
        }
        let agent = LenserId::from_uuid(c.reference.as_uuid());

        let submitted =
            self.tools.answer_battle(starter, agent, battle, contender).await.map_err(|e| refused(&e))?;
        let after = sheet(&self.own, starter, battle).await?;
        let text = after.submission_of(contender).map(|s| s.text.as_str().to_owned());
        let answered = json!({
            "battle_id": battle.to_string(),
            "contender_id": contender.to_string(),
            "submission_id": submitted.get("id").cloned().unwrap_or(Value::Null),
            "text": text,
        });
        if !job.checkpoint(json!({ ANSWERED: answered }), Usage::default()).await {
            return Err(lost());
        }
        Ok(Done::output(answered))
    }
}
