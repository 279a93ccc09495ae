//! Workflow contenders answer battles by themselves, on the in-memory
//! stores with a real runner: moving a workflow battle to executing runs
//! each workflow contender's workflow with the task prompt, as the
//! battle's creator; a completed run's result is submitted as the
//! contender's answer, a failed or cancelled one is recorded on the
//! contender; and nothing is lost or doubled when nobody heard a run end,
//! nor when a process stopped before it moved on a battle whose answers
//! were all in.

use std::time::Duration;

use lf_battle::{
    AutoCheck, BattleSheet, BattleStatus, BattleStore, BattleTitle, BattleType, ContenderType, DisplayName,
    JudgingMode, NewBattle, NewContender, SubmissionText, TaskPrompt,
};
use lf_core::{BattleId, ContenderId, ContenderRefId, ErrorCode, LenserId, Principal, Scopes, WorkflowId};
use lf_runner::RunEnds;
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunFilter, RunOrigin, RunStore};
use serde_json::{Value, json};

mod support;
use support::Stack;

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

const PROMPT: &str = "Write a haiku about the sea.";

/// A workflow of `owner` that answers with `step`'s output.
async fn workflow(s: &Stack, owner: LenserId, visibility: &str, step: Value) -> WorkflowId {
    support::create_workflow(&s.service, owner, json!({
        "title": "Contender", "visibility": visibility,
        "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"}, step],
        "connections": [{"from_step": "start", "to_step": "step", "input_parameter": "input"}]
    })).await
}

/// Answers with the task prompt it was given.
fn echo() -> Value {
    json!({"key": "step", "kind": "tool", "name": "Echo", "node_type": "extract_field", "config": {"path": "$.task_prompt"}})
}

/// Fails: its input has no such field.
fn broken() -> Value {
    json!({"key": "step", "kind": "tool", "name": "Broken", "node_type": "extract_field", "config": {"path": "$.nothing_here"}})
}

/// Waits an hour (to be cancelled).
fn slow() -> Value {
    json!({"key": "step", "kind": "tool", "name": "Wait", "node_type": "wait_delay", "config": {"duration_ms": 3_600_000}})
}

/// A workflow battle of `creator` checked automatically (the answer must
/// contain "haiku"), with `workflows` as its contenders, left open.
async fn battle(s: &Stack, creator: LenserId, workflows: &[WorkflowId]) -> (BattleId, Vec<ContenderId>) {
    let me = lenser(creator);
    let mut new =
        NewBattle::new(BattleTitle::parse("Sea poems").unwrap(), TaskPrompt::parse(PROMPT).unwrap());
    new.battle_type = Some(BattleType::WorkflowBattle);
    new.judging_mode = Some(JudgingMode::AutoScore);
    new.auto_check = Some(AutoCheck::Contains { needle: "haiku".into(), case_insensitive: true });
    new.max_contenders = Some(lf_battle::MaxContenders::parse(workflows.len() as i64 + 1).unwrap());
    let b = s.battles.create(&me, new).await.unwrap();
    let mut ids = Vec::new();
    for (i, w) in workflows.iter().enumerate() {
        let c =
            s.battles.add_contender(&me, contender(b.id, i, *w)).await.expect("a readable workflow joins");
        ids.push(c.id);
    }
    s.battles.set_status(&me, b.id, BattleStatus::Open, false).await.unwrap();
    (b.id, ids)
}

fn contender(battle_id: BattleId, i: usize, w: WorkflowId) -> NewContender {
    NewContender {
        battle_id,
        display_name: DisplayName::parse(format!("Workflow {i}")).unwrap(),
        contender_type: ContenderType::Workflow,
        reference: ContenderRefId::from_uuid(w.as_uuid()),
        slot: None,
        owner: None,
    }
}

async fn sheet(s: &Stack, id: BattleId) -> BattleSheet {
    s.battles.get(&Principal::Service { acting_as: None }, id).await.unwrap()
}

/// Waits until `done` holds of the battle's sheet.
async fn until(s: &Stack, id: BattleId, what: &str, done: impl Fn(&BattleSheet) -> bool) -> BattleSheet {
    for _ in 0..500 {
        let sheet = sheet(s, id).await;
        if done(&sheet) {
            return sheet;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: {:#?}", sheet(s, id).await);
}

async fn runs_of(s: &Stack, starter: LenserId, w: WorkflowId) -> Vec<Run> {
    let filter = RunFilter { workflow_id: Some(w), status: None, ..Default::default() };
    let page = lf_core::PageRequest::new(Some(100), None).unwrap();
    s.runs.list_runs(starter, &filter, page).await.unwrap().items
}

#[tokio::test]
async fn workflow_contenders_answer_by_themselves() {
    let s = Stack::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let bobs_public = workflow(&s, bob, "public", echo()).await;
    let bobs_private = workflow(&s, bob, "private", echo()).await;
    let broken = workflow(&s, alice, "private", broken()).await;
    let slow = workflow(&s, alice, "private", slow()).await;

    // Only a workflow the creator can read joins; its owner answers for it.
    let (id, cs) = battle(&s, alice, &[bobs_public, broken, slow]).await;
    let e = s.battles.add_contender(&lenser(alice), contender(id, 3, bobs_private)).await.unwrap_err();
    let field = e.details().iter().find(|(k, _)| k == "field").map(|(_, v)| v.clone());
    assert_eq!(e.code(), ErrorCode::NotFound, "{e:?}");
    assert_eq!(field, Some(lf_core::Detail::Str("contender_ref_id".into())));
    let joined = sheet(&s, id).await;
    assert_eq!(joined.contenders[0].owner, Some(bob), "the workflow's owner answers for it");
    assert_eq!(joined.contenders[1].owner, Some(alice));

    // Nothing runs while the battle is open.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(runs_of(&s, alice, bobs_public).await.is_empty());

    s.battles.request_status(&lenser(alice), id, BattleStatus::Executing, false).await.unwrap();
    let answered = until(&s, id, "the echo answers and the broken one fails", |sh| {
        sh.submission_of(cs[0]).is_some() && sh.answer_error_of(cs[1]).is_some()
    })
    .await;
    let answer = answered.submission_of(cs[0]).unwrap();
    assert_eq!(answer.text.as_str(), PROMPT, "the run's result, submitted as the contender's answer");
    assert_eq!(answer.submitted_by, Some(alice), "submitted for the battle's creator");
    let runs = runs_of(&s, alice, bobs_public).await;
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!((run.origin, run.started_by, run.status()), (RunOrigin::Battle, alice, RunStatus::Completed));
    assert_eq!(run.state.inputs["task_prompt"], PROMPT);
    assert_eq!(run.state.inputs["contender_id"], cs[0].to_string());

    let failed = answered.answer_error_of(cs[1]).unwrap();
    let failed_run = &runs_of(&s, alice, broken).await[0];
    assert_eq!(failed_run.status(), RunStatus::Failed);
    assert_eq!(failed.run_id.as_deref(), Some(failed_run.id.to_string().as_str()));
    assert!(failed.message.contains("failed"), "{failed:?}");
    assert_eq!(answered.battle.status, BattleStatus::Executing, "two answers are missing");

    // Cancelling the slow run records that on its contender.
    let slow_run = runs_of(&s, alice, slow).await.remove(0);
    assert_eq!(slow_run.status(), RunStatus::Running);
    s.starts.cancel(&lenser(alice), slow_run.id).await.unwrap();
    let cancelled =
        until(&s, id, "the cancelled run is recorded", |sh| sh.answer_error_of(cs[2]).is_some()).await;
    assert!(cancelled.answer_error_of(cs[2]).unwrap().message.contains("cancelled"));

    // Catching up starts nothing again and records nothing twice.
    assert_eq!(s.battles.answer_waiting().await.unwrap(), 0, "no contender waits");
    assert_eq!(sheet(&s, id).await.answer_errors.len(), 2);
    assert_eq!(runs_of(&s, alice, bobs_public).await.len(), 1);

    // The failed contenders are answered by hand; the last answer moves the
    // battle to scoring and the check judges it.
    let text = SubmissionText::parse("A haiku: waves fold into foam.").unwrap();
    s.battles.submit_and_judge(&lenser(alice), id, cs[1], text).await.unwrap();
    let text = SubmissionText::parse("No poem today.").unwrap();
    let last = s.battles.submit_and_judge(&lenser(alice), id, cs[2], text).await.unwrap();
    assert_eq!(last.outcome.status, BattleStatus::Scoring);
    let judged = until(&s, id, "judged", |sh| sh.verdicts.len() == 3).await;
    let score = |c: ContenderId| judged.verdicts.iter().find(|v| v.contender_id == c).unwrap().score;
    assert!(score(cs[0]) > score(cs[2]), "the workflow's answer holds the needle");
}

#[tokio::test]
async fn answers_nobody_heard_are_caught_up() {
    // No process hears a run end: runs end, nothing is delivered.
    let s = Stack::build(false);
    let alice = LenserId::new();
    let (one, two) =
        (workflow(&s, alice, "private", echo()).await, workflow(&s, alice, "private", broken()).await);
    let (id, cs) = battle(&s, alice, &[one, two]).await;

    // Moved to executing without starting anything (a process that died
    // right after the move): catching up starts both runs.
    s.battles.set_status(&lenser(alice), id, BattleStatus::Executing, false).await.unwrap();
    assert_eq!(s.battles.answer_waiting().await.unwrap(), 2);
    for w in [one, two] {
        for _ in 0..500 {
            if runs_of(&s, alice, w).await.first().is_some_and(|r| r.status().is_final()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let unheard = sheet(&s, id).await;
    assert!(unheard.submissions.is_empty() && unheard.answer_errors.is_empty(), "nobody delivered the ends");

    // The next catch-up finds the ended runs by their keys and delivers
    // them: no run is started again.
    assert_eq!(s.battles.answer_waiting().await.unwrap(), 2);
    let caught = sheet(&s, id).await;
    assert_eq!(caught.submission_of(cs[0]).map(|x| x.text.as_str()), Some(PROMPT));
    assert!(caught.answer_error_of(cs[1]).is_some());
    assert_eq!((runs_of(&s, alice, one).await.len(), runs_of(&s, alice, two).await.len()), (1, 1));
    assert_eq!(s.battles.answer_waiting().await.unwrap(), 0, "and then nothing waits");
}

#[tokio::test]
async fn the_catch_up_moves_on_a_battle_left_executing_with_every_answer_in() {
    let s = Stack::new();
    let alice = LenserId::new();
    let (one, two) =
        (workflow(&s, alice, "private", echo()).await, workflow(&s, alice, "private", echo()).await);
    let (id, cs) = battle(&s, alice, &[one, two]).await;
    for c in &cs {
        let text = SubmissionText::parse("A haiku by hand.").unwrap();
        s.battles.submit(&lenser(alice), id, *c, text).await.unwrap();
    }
    // A process that died right after its move to executing, before it
    // moved the battle on: the move is written through the store alone.
    let at = lf_core::Timestamp::from_micros(1_800_000_000_000_000);
    s.battle_store.set_status(id, BattleStatus::Open, BattleStatus::Executing, at).await.unwrap();
    assert_eq!(sheet(&s, id).await.battle.status, BattleStatus::Executing);

    s.own.catch_up().await;
    let judged = sheet(&s, id).await;
    assert_eq!(judged.battle.status, BattleStatus::Scoring, "the runner's catch-up moved it on");
    assert_eq!(judged.verdicts.len(), 2, "and judged it");
    assert!(runs_of(&s, alice, one).await.is_empty(), "answered by hand: no workflow ran");
}

#[tokio::test]
async fn a_workflow_that_cannot_start_is_recorded() {
    let s = Stack::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let bobs = workflow(&s, bob, "public", echo()).await;
    let mine = workflow(&s, alice, "private", echo()).await;
    let (id, cs) = battle(&s, alice, &[bobs, mine]).await;
    // Bob makes his workflow private before the battle runs.
    let mut private = lf_workflow::WorkflowUpdate::new(bobs);
    private.visibility = Some(lf_workflow::Visibility::Private);
    s.service.update(&lenser(bob), private).await.unwrap();
    s.battles.request_status(&lenser(alice), id, BattleStatus::Executing, false).await.unwrap();
    let sh = until(&s, id, "both settled", |sh| {
        sh.answer_error_of(cs[0]).is_some() && sh.submission_of(cs[1]).is_some()
    })
    .await;
    let e = sh.answer_error_of(cs[0]).unwrap();
    assert_eq!(e.run_id, None);
    assert!(e.message.contains("did not start"), "{e:?}");
}
