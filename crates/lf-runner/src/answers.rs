//! The workflow side of workflow contenders (lf-battle's answers module):
//! [`OwnServices`] starts the run that answers for a contender, and hands
//! the run's outcome to its battle when the run ends. As the battles'
//! [`ContenderRefs`] it also says what a contender's reference names: a
//! lenser's account, an AI Lenser (through the agent service's rules), a
//! workflow the caller can read (its store, with the caller's reach), and
//! a model: for now an AI Lenser the caller can see, whose model and
//! persona answer.
//!
//! The run is the contender's workflow (its head version), started as the
//! battle's creator, origin `battle`, with the inputs `{task_prompt,
//! battle_id, contender_id, battle_title}`, keyed `battle:<battle
//! id>:<contender id>`: starting it again within the key's 24 hours finds
//! it. Its answer is its result: a string as it is, an object's `text`
//! string (what a model step's output holds), anything else as compact
//! JSON.

use async_trait::async_trait;
use lf_battle::{Answer, AnswerRun, Battle, Contender, ContenderRefs, WorkflowAnswers};
use lf_core::{
    BattleId, ContenderId, ContenderRefId, ErrorCode, LenserId, LfError, LfResult, Principal, WorkflowId,
};
use lf_workflow::JsonObject;
use lf_workflow::engine::{RunState, RunStatus};
use lf_workflow::run::{IdempotencyKey, Run, RunOrigin, StartRun};
use serde_json::Value;

use crate::compose::{Bound, OwnServices};

const KEY_PREFIX: &str = "battle:";

/// The idempotency key of the run that answers for `contender` of `battle`.
fn key(battle: BattleId, contender: ContenderId) -> String {
    format!("{KEY_PREFIX}{battle}:{contender}")
}

/// The battle and contender a battle run answers for, read from its key.
fn answering(run: &Run) -> Option<(BattleId, ContenderId)> {
    let rest = run.idempotency_key.as_ref()?.as_str().strip_prefix(KEY_PREFIX)?;
    let (battle, contender) = rest.split_once(':')?;
    let battle = lf_core::parse_uuid("battle_id", battle).ok()?;
    let contender = lf_core::parse_uuid("contender_id", contender).ok()?;
    Some((BattleId::from_uuid(battle), ContenderId::from_uuid(contender)))
}

fn bound(own: &OwnServices) -> LfResult<&Bound> {
    own.bound()
        .ok_or_else(|| LfError::internal("the workflow runner is not bound to the server's services yet"))
}

#[async_trait]
impl ContenderRefs for OwnServices {
    async fn lenser(&self, id: LenserId) -> LfResult<bool> {
        agents(self)?.lenser_exists(id).await
    }

    async fn agent(&self, p: &Principal, id: LenserId) -> LfResult<Option<LenserId>> {
        agents(self)?.battle_entrant(p, id).await
    }

    async fn workflow(&self, p: &Principal, id: WorkflowId) -> LfResult<Option<LenserId>> {
        match bound(self)?.workflows.get_workflow(p.reach(), id).await {
            Ok(w) => Ok(Some(w.owner)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A model profile `p` may use (the operator's, its own, a public one),
    /// or an AI Lenser `p` can read.
    async fn model(&self, p: &Principal, reference: ContenderRefId) -> LfResult<bool> {
        if let Some(profiles) = self.profiles() {
            match profiles.locate(p, "contender_ref_id", &reference.to_string()).await {
                Ok(_) => return Ok(true),
                Err(e) if e.code() == lf_core::ErrorCode::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let agent = LenserId::from_uuid(reference.as_uuid());
        Ok(agents(self)?.visible(p, agent).await?.is_some())
    }
}

/// The agent service, once bound ([`OwnServices::bind_agents`]).
fn agents(own: &OwnServices) -> LfResult<&lf_agent::AgentService> {
    own.teams()
        .map(|t| t.agents())
        .ok_or_else(|| LfError::internal("the AI Lensers are not bound to the server's services yet"))
}

#[async_trait]
impl WorkflowAnswers for OwnServices {
    async fn start(&self, battle: &Battle, contender: &Contender) -> LfResult<AnswerRun> {
        let runs = &bound(self)?.runs;
        let mut inputs = JsonObject::new();
        inputs.insert("task_prompt".into(), Value::String(battle.task_prompt.as_str().to_owned()));
        inputs.insert("battle_id".into(), Value::String(battle.id.to_string()));
        inputs.insert("contender_id".into(), Value::String(contender.id.to_string()));
        inputs.insert("battle_title".into(), Value::String(battle.title.as_str().to_owned()));
        let start = StartRun {
            workflow_id: Some(WorkflowId::from_uuid(contender.reference.as_uuid())),
            inputs,
            idempotency_key: Some(IdempotencyKey::parse("idempotency_key", &key(battle.id, contender.id))?),
            ..StartRun::default()
        };
        let run = runs.start_triggered(RunOrigin::Battle, battle.creator, None, start).await?.run;
        Ok(if run.status().is_final() {
            AnswerRun::Ended(answer_of(&run, &run.state))
        } else {
            AnswerRun::Running
        })
    }
}

/// Hands the outcome of battle run `run`, which ended in `state`, to its
/// battle, in a task of its own (what is not delivered because the process
/// stops is caught up by [`lf_battle::BattleService::answer_waiting`]).
pub(crate) fn deliver(own: &OwnServices, run: &Run, state: &RunState) {
    let Some((battle, contender)) = answering(run) else { return };
    let Some(bound) = own.bound().cloned() else { return };
    let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
    let answer = answer_of(run, state);
    rt.spawn(async move {
        if let Err(e) = bound.battles.deliver_answer(battle, contender, answer).await {
            tracing::warn!(battle_id = %battle, contender_id = %contender, error = %e, "a workflow contender's answer was not delivered");
        }
    });
}

/// What a run that ended in `state` answers.
fn answer_of(run: &Run, state: &RunState) -> Answer {
    let failed = |message: String| Answer::Failed { run_id: Some(run.id.to_string()), message };
    match state.status {
        RunStatus::Completed => match state.result.as_ref().map(answer_text) {
            Some(text) if !text.trim().is_empty() => Answer::Text(text),
            _ => failed(format!(
                "Workflow run {} completed without an answer: its last step gave no output. End the workflow with a step whose output is the answer.",
                run.id
            )),
        },
        RunStatus::Cancelled => failed(format!("Workflow run {} was cancelled before it answered.", run.id)),
        _ => failed(format!(
            "Workflow run {} failed: {}",
            run.id,
            state.error.as_ref().map_or("no error was recorded", |e| e.message.as_str())
        )),
    }
}

/// A result as an answer's text.
fn answer_text(result: &Value) -> String {
    match result {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.get("text").is_some_and(Value::is_string) => {
            o["text"].as_str().unwrap_or_default().to_owned()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_answer_of_a_result() {
        assert_eq!(answer_text(&json!("plain")), "plain");
        assert_eq!(answer_text(&json!({"text": "from a model", "tokens": 3})), "from a model");
        assert_eq!(answer_text(&json!({"text": 4})), r#"{"text":4}"#);
        assert_eq!(answer_text(&json!([1, "a"])), r#"[1,"a"]"#);
    }
}
