//! DESIGN §7: a battle executing with every contender's answer in moves on
//! by itself (voting for community votes, scoring and judging otherwise),
//! whichever event completed the set: the last submission, or the move to
//! executing once every answer was in. Several servers share one store, so
//! the move holds under the store's status check: a submission landing
//! between a server's read and its write still counts, and a battle moved
//! meanwhile by someone else is left as they left it.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use lf_battle::{
    AnswerError, Battle, BattleFilter, BattleResult, BattleService, BattleSheet, BattleStatus, BattleStore,
    BattleSummary, BattleTitle, BattleType, Contender, ContenderType, DisplayName, HistoryFilter, JudgeError,
    JudgingMode, MemoryBattleStore, NewBattle, NewContender, Standing, StoredSubmission, StoredVote,
    Submission, SubmissionText, TaskPrompt, Verdict, Vote, VotePick,
};
use lf_core::{
    BattleId, ContenderId, ContenderRefId, LenserId, LfResult, Page, PageRequest, Principal, Reach,
    SearchQuery, SubmissionId, Timestamp,
};
use pollster::block_on as run;

use BattleStatus::*;

/// What another server does to the shared store just before this one moves
/// a battle from one status to another.
type Meanwhile = Box<dyn FnOnce(&MemoryBattleStore) + Send>;

/// The memory store, as one of several servers sees it: before the first
/// move from `.0` to `.1`, `.2` runs on the store.
#[derive(Default)]
struct Shared {
    store: Arc<MemoryBattleStore>,
    before: Mutex<Option<(BattleStatus, BattleStatus, Meanwhile)>>,
}

#[async_trait]
impl BattleStore for Shared {
    async fn set_status(
        &self,
        id: BattleId,
        from: BattleStatus,
        to: BattleStatus,
        at: Timestamp,
    ) -> LfResult<()> {
        let due = {
            let mut before = self.before.lock().unwrap();
            match before.take() {
                Some((f, t, meanwhile)) if (f, t) == (from, to) => Some(meanwhile),
                other => {
                    *before = other;
                    None
                }
            }
        };
        if let Some(meanwhile) = due {
            meanwhile(&self.store);
        }
        self.store.set_status(id, from, to, at).await
    }

    async fn create_battle(&self, battle: &Battle) -> LfResult<()> {
        self.store.create_battle(battle).await
    }
    async fn get_battle(&self, reach: Reach, id: BattleId) -> LfResult<Battle> {
        self.store.get_battle(reach, id).await
    }
    async fn get_sheet(&self, reach: Reach, id: BattleId) -> LfResult<BattleSheet> {
        self.store.get_sheet(reach, id).await
    }
    async fn list_battles(
        &self,
        reach: Reach,
        f: &BattleFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        self.store.list_battles(reach, f, page).await
    }
    async fn search_battles(
        &self,
        reach: Reach,
        q: &SearchQuery,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        self.store.search_battles(reach, q, page).await
    }
    async fn battle_history(
        &self,
        reach: Reach,
        f: &HistoryFilter,
        page: PageRequest,
    ) -> LfResult<Page<BattleSummary>> {
        self.store.battle_history(reach, f, page).await
    }
    async fn add_contender(&self, contender: &Contender, expected: BattleStatus) -> LfResult<()> {
        self.store.add_contender(contender, expected).await
    }
    async fn answered_executing(
        &self,
        after: Option<(Timestamp, BattleId)>,
        limit: u32,
    ) -> LfResult<Vec<Battle>> {
        self.store.answered_executing(after, limit).await
    }
    async fn put_submission(
        &self,
        s: &Submission,
        advance_to: Option<BattleStatus>,
        cost: Option<&lf_core::AnswerCost>,
    ) -> LfResult<StoredSubmission> {
        self.store.put_submission(s, advance_to, cost).await
    }
    async fn put_vote(&self, vote: &Vote) -> LfResult<StoredVote> {
        self.store.put_vote(vote).await
    }
    async fn vote_of(&self, reach: Reach, id: BattleId, voter: LenserId) -> LfResult<Option<VotePick>> {
        self.store.vote_of(reach, id, voter).await
    }
    async fn put_verdicts(
        &self,
        id: BattleId,
        verdicts: &[Verdict],
        cost: Option<&lf_battle::AnswerCostRecord>,
    ) -> LfResult<()> {
        self.store.put_verdicts(id, verdicts, cost).await
    }
    async fn add_judge_error(&self, error: &JudgeError) -> LfResult<()> {
        self.store.add_judge_error(error).await
    }
    async fn add_answer_error(&self, error: &AnswerError) -> LfResult<()> {
        self.store.add_answer_error(error).await
    }
    async fn put_answer_cost(&self, record: &lf_battle::AnswerCostRecord) -> LfResult<()> {
        self.store.put_answer_cost(record).await
    }
    async fn answer_costs(&self, reach: Reach, id: BattleId) -> LfResult<Vec<lf_battle::AnswerCostRecord>> {
        self.store.answer_costs(reach, id).await
    }
    async fn cost_means(&self, battle_type: Option<BattleType>) -> LfResult<Vec<lf_battle::CostMean>> {
        self.store.cost_means(battle_type).await
    }
    async fn close_battle(
        &self,
        id: BattleId,
        standings: &[Standing],
        winner: Option<ContenderId>,
        at: Timestamp,
    ) -> LfResult<()> {
        self.store.close_battle(id, standings, winner, at).await
    }
    async fn closed_results(&self, battle_type: Option<BattleType>) -> LfResult<Vec<BattleResult>> {
        self.store.closed_results(battle_type).await
    }
    async fn results_version(&self) -> LfResult<i64> {
        self.store.results_version().await
    }
}

struct World {
    shared: Arc<Shared>,
    service: Arc<BattleService>,
    me: Principal,
}

impl World {
    fn new() -> Self {
        let shared = Arc::new(Shared::default());
        let service = Arc::new(BattleService::new(shared.clone()));
        Self { shared, service, me: Principal::Service { acting_as: Some(LenserId::new()) } }
    }

    /// An open battle judged by `mode`, with `n` contenders.
    fn open(&self, mode: JudgingMode, n: usize) -> (Battle, Vec<Contender>) {
        let new = NewBattle {
            judging_mode: Some(mode),
            auto_check: (mode == JudgingMode::AutoScore)
                .then(|| lf_battle::AutoCheck::contains("sea", false).unwrap()),
            max_contenders: Some(lf_battle::MaxContenders::parse(n as i64).unwrap()),
            ..NewBattle::new(BattleTitle::parse("Duel").unwrap(), TaskPrompt::parse("Name a sea.").unwrap())
        };
        let b = run(self.service.create(&self.me, new)).unwrap();
        let cs = (0..n)
            .map(|i| {
                let c = NewContender {
                    battle_id: b.id,
                    display_name: DisplayName::parse(format!("Model {i}")).unwrap(),
                    contender_type: ContenderType::AiModel,
                    reference: ContenderRefId::new(),
                    slot: None,
                    owner: None,
                };
                run(self.service.add_contender(&self.me, c)).unwrap()
            })
            .collect();
        run(self.service.set_status(&self.me, b.id, Open, false)).unwrap();
        (b, cs)
    }

    /// An open battle judged by `mode`, with `n` contenders that all
    /// answered while it was open.
    fn answered(&self, mode: JudgingMode, n: usize) -> Battle {
        let (b, cs) = self.open(mode, n);
        for c in &cs {
            assert_eq!(self.submit(&b, c), Open, "submitting while open moves nothing");
        }
        b
    }

    fn submit(&self, b: &Battle, c: &Contender) -> BattleStatus {
        let text = SubmissionText::parse(format!("The answer of {}.", c.display_name)).unwrap();
        run(self.service.submit(&self.me, b.id, c.id, text)).unwrap().status
    }

    fn status(&self, b: &Battle) -> BattleStatus {
        run(self.service.get(&self.me, b.id)).unwrap().battle.status
    }

    /// Before this server's next move from `from` to `to`, another server
    /// does `meanwhile` to the shared store.
    fn meanwhile(
        &self,
        from: BattleStatus,
        to: BattleStatus,
        meanwhile: impl FnOnce(&MemoryBattleStore) + Send + 'static,
    ) {
        *self.shared.before.lock().unwrap() = Some((from, to, Box::new(meanwhile)));
    }
}

/// Another server's submission for `c`, written as its service writes it.
fn submission(c: &Contender) -> Submission {
    let at = Timestamp::from_micros(1_800_000_000_000_000);
    Submission {
        id: SubmissionId::new(),
        battle_id: c.battle_id,
        contender_id: c.id,
        text: SubmissionText::parse("Another server's answer.").unwrap(),
        submitted_by: None,
        created_at: at,
        updated_at: at,
    }
}

#[test]
fn answers_in_before_executing_move_it_on_when_it_executes() {
    for (mode, target) in [
        (JudgingMode::AiJudge, Scoring),
        (JudgingMode::AutoScore, Scoring),
        (JudgingMode::CommunityVote, Voting),
    ] {
        let w = World::new();
        let (b, cs) = w.open(mode, 2);
        for c in &cs {
            assert_eq!(w.submit(&b, c), Open, "submitting while open moves nothing");
        }
        let moved = run(w.service.set_status(&w.me, b.id, Executing, false)).unwrap();
        assert_eq!(moved.status, target, "{mode}");
        assert_eq!(w.status(&b), target);
    }
}

#[test]
fn the_status_change_says_it_advanced_and_judging_starts() {
    let w = World::new();
    let b = w.answered(JudgingMode::AiJudge, 3);
    let change = run(w.service.request_status(&w.me, b.id, Executing, false)).unwrap();
    assert_eq!((change.battle.status, change.advanced, change.judging_started), (Scoring, true, true));
    assert!(!change.next_step.contains("submit_battle_run"), "{}", change.next_step);
    let sheet = run(w.service.get(&w.me, b.id)).unwrap();
    assert_eq!(sheet.verdicts.len(), 3, "judged (inline: this service has no spawner)");
}

#[test]
fn with_an_answer_missing_it_executes_until_the_last_one() {
    let w = World::new();
    let (b, cs) = w.open(JudgingMode::CommunityVote, 3);
    w.submit(&b, &cs[0]);
    w.submit(&b, &cs[1]);
    let change = run(w.service.request_status(&w.me, b.id, Executing, false)).unwrap();
    assert_eq!((change.battle.status, change.advanced), (Executing, false));
    assert!(change.next_step.contains("submit_battle_run"), "{}", change.next_step);
    assert_eq!(w.submit(&b, &cs[0]), Executing, "a resubmission completes nothing");
    assert_eq!(w.submit(&b, &cs[2]), Voting, "the last answer moves it");
}

#[test]
fn an_answer_that_lands_while_it_moves_to_executing_counts() {
    let w = World::new();
    let (b, cs) = w.open(JudgingMode::AiJudge, 2);
    w.submit(&b, &cs[0]);
    // This server read the battle with one answer; another server's last
    // answer lands before its move to executing, so neither the answer
    // (the battle was open) nor the move (it read one answer) moved it on.
    let last = submission(&cs[1]);
    w.meanwhile(Open, Executing, move |store| {
        let stored = run(store.put_submission(&last, Some(Scoring), None)).unwrap();
        assert_eq!(stored.status, Open);
    });
    let change = run(w.service.request_status(&w.me, b.id, Executing, false)).unwrap();
    assert_eq!((change.battle.status, change.advanced), (Scoring, true));
}

#[test]
fn a_battle_moved_meanwhile_is_left_as_it_was_moved() {
    // Another server archives it between this server's move to executing
    // and its move on: the guarded move answers CONFLICT, and the caller's
    // own move (to executing) still succeeded.
    let w = World::new();
    let b = w.answered(JudgingMode::AiJudge, 2);
    let id = b.id;
    w.meanwhile(Executing, Scoring, move |store| {
        run(store.set_status(id, Executing, Archived, Timestamp::from_micros(1_800_000_000_000_000)))
            .unwrap();
    });
    let change = run(w.service.request_status(&w.me, b.id, Executing, false)).unwrap();
    assert_eq!((change.battle.status, change.advanced, change.judging_started), (Archived, false, false));

    // Another server moved it on first (its own settling of the same
    // battle): this server's move answers CONFLICT and leaves it there.
    let w = World::new();
    let b = w.answered(JudgingMode::CommunityVote, 2);
    let id = b.id;
    w.meanwhile(Executing, Voting, move |store| {
        run(store.set_status(id, Executing, Voting, Timestamp::from_micros(1_800_000_000_000_000))).unwrap();
    });
    let change = run(w.service.request_status(&w.me, b.id, Executing, false)).unwrap();
    assert_eq!((change.battle.status, change.advanced), (Voting, false));
}

/// A crash after the move to executing and before its settling: the
/// battle is written to executing through the store alone.
fn stranded(w: &World, b: &Battle) {
    run(w.shared.store.set_status(b.id, Open, Executing, Timestamp::from_micros(1_800_000_000_000_000)))
        .unwrap();
    assert_eq!(w.status(b), Executing);
}

#[test]
fn the_catch_up_moves_on_a_battle_left_executing_with_every_answer_in() {
    let w = World::new();
    let judged = w.answered(JudgingMode::AiJudge, 2);
    let voted = w.answered(JudgingMode::CommunityVote, 2);
    let (waiting, ws) = w.open(JudgingMode::AiJudge, 3);
    w.submit(&waiting, &ws[0]);
    w.submit(&waiting, &ws[1]);
    for b in [&judged, &voted, &waiting] {
        stranded(&w, b);
    }

    assert_eq!(run(w.service.settle_answered()).unwrap(), 2, "the two battles with every answer in");
    assert_eq!(w.status(&judged), Scoring);
    let sheet = run(w.service.get(&w.me, judged.id)).unwrap();
    assert_eq!(sheet.verdicts.len(), 2, "and judged (inline: this service has no spawner)");
    assert_eq!(w.status(&voted), Voting);
    assert_eq!(w.status(&waiting), Executing, "a battle missing an answer is left alone");

    assert_eq!(run(w.service.settle_answered()).unwrap(), 0, "a second catch-up finds nothing to do");
    assert_eq!((w.status(&judged), w.status(&voted), w.status(&waiting)), (Scoring, Voting, Executing));
    assert_eq!(run(w.service.get(&w.me, judged.id)).unwrap().verdicts, sheet.verdicts, "nor judges again");

    assert_eq!(w.submit(&waiting, &ws[2]), Scoring, "its last answer still moves it");
}

#[test]
fn the_catch_up_leaves_a_battle_another_server_moved() {
    let w = World::new();
    let b = w.answered(JudgingMode::CommunityVote, 2);
    stranded(&w, &b);
    let id = b.id;
    w.meanwhile(Executing, Voting, move |store| {
        run(store.set_status(id, Executing, Archived, Timestamp::from_micros(1_800_000_000_000_000)))
            .unwrap();
    });
    assert_eq!(run(w.service.settle_answered()).unwrap(), 0, "its guarded move found the battle moved");
    assert_eq!(w.status(&b), Archived);
}

#[test]
fn the_catch_up_reads_past_one_pass() {
    let w = World::new();
    let battles: Vec<Battle> = (0..230)
        .map(|_| {
            let b = w.answered(JudgingMode::CommunityVote, 2);
            stranded(&w, &b);
            b
        })
        .collect();
    assert_eq!(run(w.service.settle_answered()).unwrap(), battles.len());
    assert!(battles.iter().all(|b| w.status(b) == Voting));
}
