//! The use cases that judge by themselves (`lf_battle::pipeline`): judging
//! in the background on a spawner, one at a time per battle, judging again
//! after a failure (the creator only), and what readers are told meanwhile.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use lf_battle::guide::{check_revealed, next_step};
use lf_battle::judge::parse_prompt;
use lf_battle::{
    AutoCheck, Battle, BattleService, BattleStatus, BattleTitle, Contender, ContenderType, DisplayName,
    JudgingMode, JudgingState, MemoryBattleStore, NewBattle, NewContender, SubmissionText, TaskPrompt,
};
use lf_core::{
    ChatRequest, ChatResponse, ContenderRefId, ErrorCode, LenserId, LfError, LfResult, ModelProvider,
    Principal, Scopes, Spawner, Task,
};
use pollster::block_on as run;

/// A judge that scores the first contender it reads 80 and the others 40,
/// failing its first `failures` calls.
struct Judge {
    failures: AtomicUsize,
    calls: AtomicUsize,
}

impl Judge {
    fn new(failures: usize) -> Arc<Self> {
        Arc::new(Self { failures: AtomicUsize::new(failures), calls: AtomicUsize::new(0) })
    }
}

#[async_trait]
impl ModelProvider for Judge {
    fn name(&self) -> &str {
        "test-judge"
    }
    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.failures.load(Ordering::SeqCst) > 0 {
            self.failures.fetch_sub(1, Ordering::SeqCst);
            return Err(LfError::internal("the model server is down"));
        }
        let prompt = parse_prompt(&request.user).expect("a judge prompt");
        let items: Vec<String> = prompt
            .entries
            .iter()
            .enumerate()
            .map(|(i, (slot, _))| {
                format!(
                    r#"{{"contender":"{slot}","score":{},"reasoning":"r"}}"#,
                    if i == 0 { 80 } else { 40 }
                )
            })
            .collect();
        Ok(ChatResponse::new(format!(r#"{{"verdicts":[{}]}}"#, items.join(",")), "judge"))
    }
}

/// Keeps what it is given, for the test to run (or drop) when it likes.
#[derive(Default)]
struct Later(Mutex<Vec<(&'static str, Task)>>);

impl Later {
    fn take(&self) -> Vec<(&'static str, Task)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Spawner for Later {
    fn spawn(&self, name: &'static str, task: Task) {
        self.0.lock().unwrap().push((name, task));
    }
}

fn lenser() -> Principal {
    Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE }
}

struct World {
    service: Arc<BattleService>,
    judge: Arc<Judge>,
    me: Principal,
}

impl World {
    fn new(failures: usize, spawner: Option<Arc<Later>>) -> Self {
        let judge = Judge::new(failures);
        let mut service = BattleService::new(Arc::new(MemoryBattleStore::new())).with_provider(judge.clone());
        if let Some(s) = spawner {
            service = service.with_spawner(s);
        }
        Self { service: Arc::new(service), judge, me: lenser() }
    }

    /// A duel in executing with `mode`: the battle and its two contenders.
    fn executing(&self, mode: JudgingMode) -> (Battle, Vec<Contender>) {
        let mut new = NewBattle::new(
            BattleTitle::parse("Autumn haiku").unwrap(),
            TaskPrompt::parse("Write a haiku about autumn leaves falling in the wind.").unwrap(),
        );
        new.judging_mode = Some(mode);
        if mode == JudgingMode::AutoScore {
            new.auto_check = Some(AutoCheck::contains("autumn", true).unwrap());
        }
        let b = run(self.service.create(&self.me, new)).unwrap();
        let cs = (0..2)
            .map(|i| {
                run(self.service.add_contender(
                    &self.me,
                    NewContender {
                        battle_id: b.id,
                        display_name: DisplayName::parse(format!("Model {i}")).unwrap(),
                        contender_type: ContenderType::AiModel,
                        reference: ContenderRefId::new(),
                        slot: None,
                        owner: None,
                    },
                ))
                .unwrap()
            })
            .collect();
        for to in [BattleStatus::Open, BattleStatus::Executing] {
            run(self.service.request_status(&self.me, b.id, to, false)).unwrap();
        }
        (b, cs)
    }

    fn submit_all(&self, b: &Battle, cs: &[Contender]) -> Vec<lf_battle::Submitted> {
        cs.iter()
            .map(|c| {
                let text =
                    SubmissionText::parse("Red autumn leaves fall, the wind carries them away.").unwrap();
                run(self.service.submit_and_judge(&self.me, b.id, c.id, text)).unwrap()
            })
            .collect()
    }

    fn judging(&self, p: &Principal, b: &Battle) -> JudgingState {
        run(self.service.view(p, b.id)).unwrap().judging
    }
}

#[test]
fn without_a_spawner_the_last_submission_judges_before_it_returns() {
    let w = World::new(0, None);
    let (b, cs) = w.executing(JudgingMode::AiJudge);
    let done = w.submit_all(&b, &cs);
    assert_eq!(done.iter().map(|s| s.judging_started).collect::<Vec<_>>(), [false, true]);
    assert_eq!(done[1].outcome.status, BattleStatus::Scoring);
    let state = run(w.service.score_state(&w.me, b.id)).unwrap();
    assert_eq!(state.judging, JudgingState::Judged);
    assert_eq!(state.view.verdicts.len(), 2);
    assert!(state.next_step.starts_with("Close it"), "{}", state.next_step);
    assert!(!w.service.judging_now(b.id));
}

#[test]
fn on_a_spawner_judging_runs_later_and_once_at_a_time() {
    let later = Arc::new(Later::default());
    let w = World::new(0, Some(later.clone()));
    let (b, cs) = w.executing(JudgingMode::AiJudge);
    let done = w.submit_all(&b, &cs);
    assert!(done[1].judging_started);
    let tasks = later.take();
    assert_eq!(tasks.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["judge a battle"]);
    assert_eq!(w.judge.calls.load(Ordering::SeqCst), 0, "nothing judged before the task runs");

    // Meanwhile readers see it running, and asking again starts nothing.
    assert!(w.service.judging_now(b.id));
    let view = run(w.service.view(&w.me, b.id)).unwrap();
    assert_eq!(view.judging, JudgingState::Running);
    assert!(view.next_step.starts_with("Being judged in the background"), "{}", view.next_step);
    let again = run(w.service.request_status(&w.me, b.id, BattleStatus::Scoring, false)).unwrap();
    assert!(!again.judging_started, "already being judged");
    assert!(later.take().is_empty());

    for (_, task) in tasks {
        run(task);
    }
    assert!(!w.service.judging_now(b.id));
    assert_eq!(w.judging(&w.me, &b), JudgingState::Judged);
    assert_eq!(w.judge.calls.load(Ordering::SeqCst), 2, "both orders, once");
}

#[test]
fn a_judging_dropped_at_shutdown_is_no_longer_running() {
    let later = Arc::new(Later::default());
    let w = World::new(0, Some(later.clone()));
    let (b, cs) = w.executing(JudgingMode::AiJudge);
    w.submit_all(&b, &cs);
    assert!(w.service.judging_now(b.id));
    drop(later.take());
    assert!(!w.service.judging_now(b.id));
    assert_eq!(w.judging(&w.me, &b), JudgingState::Pending);
    let again = run(w.service.request_status(&w.me, b.id, BattleStatus::Scoring, false)).unwrap();
    assert!(again.judging_started, "it can be judged again");
    assert_eq!(later.take().len(), 1);
}

#[test]
fn after_a_failure_only_the_creator_has_it_judged_again() {
    let w = World::new(2, None);
    let (b, cs) = w.executing(JudgingMode::AiJudge);
    w.submit_all(&b, &cs);
    let state = run(w.service.score_state(&w.me, b.id)).unwrap();
    assert_eq!(state.judging, JudgingState::Failed);
    assert_eq!(state.view.judge_errors.len(), 1);
    assert!(state.next_step.contains("status scoring to judge it again"), "{}", state.next_step);

    let other = lenser();
    let refused = run(w.service.request_status(&other, b.id, BattleStatus::Scoring, false)).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Forbidden);
    let service = Principal::Service { acting_as: None };
    for who in [&w.me, &service] {
        let again = run(w.service.request_status(who, b.id, BattleStatus::Scoring, false)).unwrap();
        assert_eq!((again.battle.status, again.judging_started), (BattleStatus::Scoring, true));
    }
    assert_eq!(w.judging(&w.me, &b), JudgingState::Judged);
}

#[test]
fn votes_and_other_moves_start_no_judging() {
    let w = World::new(0, None);
    let (b, cs) = w.executing(JudgingMode::CommunityVote);
    let done = w.submit_all(&b, &cs);
    assert_eq!(done[1].outcome.status, BattleStatus::Voting);
    assert!(!done[1].judging_started);
    let moved = run(w.service.request_status(&w.me, b.id, BattleStatus::Scoring, false)).unwrap();
    assert_eq!((moved.battle.status, moved.judging_started), (BattleStatus::Scoring, false));
    assert_eq!(w.judging(&w.me, &b), JudgingState::Votes);
    assert_eq!(w.judge.calls.load(Ordering::SeqCst), 0);
    // Asking for scoring again on a votes battle is a transition, refused.
    let again = run(w.service.request_status(&w.me, b.id, BattleStatus::Scoring, false)).unwrap_err();
    assert_eq!(again.code(), ErrorCode::InvalidTransition);
}

#[test]
fn the_automatic_check_is_shown_to_the_creator_and_to_everyone_once_finished() {
    let w = World::new(0, None);
    let (b, cs) = w.executing(JudgingMode::AutoScore);
    let other = lenser();
    let service = Principal::Service { acting_as: None };
    for (who, shown) in [(&w.me, true), (&other, false), (&service, true)] {
        assert_eq!(run(w.service.view(who, b.id)).unwrap().check_revealed, shown);
    }
    w.submit_all(&b, &cs);
    run(w.service.request_status(&w.me, b.id, BattleStatus::Closed, true)).unwrap();
    assert!(run(w.service.view(&other, b.id)).unwrap().check_revealed);
    let battle = run(w.service.get(&other, b.id)).unwrap().battle;
    for status in BattleStatus::ALL {
        let finished =
            matches!(status, BattleStatus::Closed | BattleStatus::Published | BattleStatus::Archived);
        assert_eq!(
            check_revealed(&Battle { status: *status, ..battle.clone() }, &other),
            finished,
            "{status}"
        );
    }
}

#[test]
fn next_steps_name_the_tool_to_call() {
    let w = World::new(0, None);
    let (b, models) = w.executing(JudgingMode::AiJudge);
    let battle = run(w.service.get(&w.me, b.id)).unwrap().battle;
    let people: Vec<Contender> =
        models.iter().map(|c| Contender { contender_type: ContenderType::Human, ..c.clone() }).collect();
    let at = |status, contenders: usize, judging| {
        next_step(&Battle { status, ..battle.clone() }, &people[..contenders], judging)
    };
    use BattleStatus::*;
    use JudgingState::*;
    let cases = [
        (Draft, 1, Pending, "Add contenders with add_battle_contender (it has 1 of at most 2)."),
        (Draft, 2, Pending, "Open it with set_battle_status status open"),
        (Open, 2, Pending, "Move it to executing"),
        (Executing, 2, Pending, "the last one moves it to scoring, and judging starts by itself."),
        (Voting, 2, Pending, "Cast votes with cast_battle_vote"),
        (Scoring, 2, Running, "Being judged in the background"),
        (Scoring, 2, Failed, "Judging failed (see judge_errors)"),
        (Scoring, 2, Pending, "Not judged yet"),
        (Scoring, 2, Judged, "Close it with set_battle_status status closed"),
        (Closed, 2, Judged, "Closed: publish it"),
        (Published, 2, Judged, "Published."),
        (Archived, 2, Judged, "Archived: nothing leaves archived."),
    ];
    for (status, contenders, judging, expected) in cases {
        let step = at(status, contenders, judging);
        assert!(step.contains(expected), "{status} {judging:?}: {step}");
    }
    // ai_model contenders answer by themselves; the others are the caller's.
    let executing = Battle { status: Executing, ..battle.clone() };
    let mixed = [models[0].clone(), people[1].clone()];
    let step = next_step(&executing, &mixed, Pending);
    for expected in [
        "Its ai_model contenders answer by themselves",
        "submit for it with submit_battle_run",
        "Submit the answers of the others (B) with submit_battle_run",
        "run_agent_action answer_battle",
        "The last answer moves it to scoring, and judging starts by itself.",
    ] {
        assert!(step.contains(expected), "{expected}: {step}");
    }
    let step = next_step(&executing, &models, Pending);
    assert!(!step.contains("the others"), "every contender answers by itself: {step}");
}
