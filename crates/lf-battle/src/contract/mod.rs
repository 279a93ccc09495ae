//! The public contract suite every [`BattleStore`] runs: the in-memory store
//! here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_battle::contract::suite(Arc::new(MyStore::open().await?)).await;
//! ```
//!
//! Each check uses fresh creators and ids, so the suite runs against a store
//! that already holds data (a shared PostgreSQL database) and may run several
//! times. A failed check panics with what the contract expected.

use std::sync::Arc;

use lf_core::{
    BattleId, ContenderId, ContenderRefId, ErrorCode, LenserId, LfResult, PageRequest, Reach, SearchQuery,
    SubmissionId, Timestamp, VoteId,
};

use crate::model::{
    AnswerError, AutoCheck, Battle, BattleFilter, BattleStatus, BattleTitle, BattleType, Contender,
    ContenderType, CriterionDescription, CriterionTitle, DisplayName, HistoryFilter, JudgeError, JudgingMode,
    MaxContenders, ModelKey, Rationale, Rubric, RubricCriterion, Score, Slot, Standing, Style, Submission,
    SubmissionText, TaskPrompt, Verdict, VerdictKind, Vote, VotePick,
};
use crate::store::BattleStore;

mod answers;
pub mod asks;
mod costs;
mod reading;

use answers::{answer_errors, answered_executing, closing_and_results, verdicts_and_errors};
use costs::answer_costs;
use reading::{history, listing, search};

use BattleStatus::*;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn BattleStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    reach(s).await;
    contenders(s).await;
    agents(s).await;
    statuses(s).await;
    submissions(s).await;
    votes(s).await;
    verdicts_and_errors(s).await;
    answer_errors(s).await;
    answer_costs(s).await;
    answered_executing(s).await;
    closing_and_results(s).await;
    listing(s).await;
    search(s).await;
    history(s).await;
}

struct Fixture {
    clock: i64,
}

impl Fixture {
    fn new() -> Self {
        // Microseconds, within the last few years, increasing per battle.
        Self {
            clock: 1_700_000_000_000_000
                + (BattleId::new().as_uuid().as_u128() % 1_000_000_000) as i64 * 1000,
        }
    }

    fn tick(&mut self) -> Timestamp {
        self.clock += 1_000;
        Timestamp::from_micros(self.clock)
    }

    fn battle(&mut self, creator: LenserId, status: BattleStatus) -> Battle {
        let now = self.tick();
        Battle {
            id: BattleId::new(),
            title: BattleTitle::parse("Contract battle — ünïcödé ✓").unwrap(),
            task_prompt: TaskPrompt::parse(
                "  Write a haiku about 'quotes', \"double quotes\" and \\ slashes.\n",
            )
            .unwrap(),
            battle_type: BattleType::AiVsAi,
            judging_mode: JudgingMode::AiJudge,
            max_contenders: MaxContenders::parse(4).unwrap(),
            ai_judge_model_key: None,
            rubric: None,
            auto_check: None,
            tags: vec!["code".into(), "ünïcödé".into()],
            creator,
            agent: None,
            status,
            winner: None,
            created_at: now,
            updated_at: now,
            closed_at: None,
        }
    }

    async fn create(&mut self, s: &dyn BattleStore, creator: LenserId, status: BattleStatus) -> Battle {
        let b = self.battle(creator, status);
        s.create_battle(&b).await.expect("create_battle");
        b
    }

    fn contender(&mut self, battle: &Battle, index: usize, kind: ContenderType) -> Contender {
        Contender {
            id: ContenderId::new(),
            battle_id: battle.id,
            slot: Slot::from_index(index).unwrap(),
            display_name: DisplayName::parse(format!("Contender {index}")).unwrap(),
            contender_type: kind,
            reference: ContenderRefId::new(),
            owner: None,
            agent: None,
            joined_at: self.tick(),
        }
    }

    /// A battle in `status` with `n` AI contenders added while it was open.
    async fn with_contenders(
        &mut self,
        s: &dyn BattleStore,
        creator: LenserId,
        n: usize,
        status: BattleStatus,
    ) -> (Battle, Vec<Contender>) {
        let mut b = self.create(s, creator, Open).await;
        let mut cs = Vec::new();
        for i in 0..n {
            let c = self.contender(&b, i, ContenderType::AiModel);
            s.add_contender(&c, Open).await.expect("add_contender");
            cs.push(c);
        }
        if status != Open {
            s.set_status(b.id, Open, status, self.tick()).await.expect("set_status");
            b.status = status;
        }
        (b, cs)
    }

    /// A battle in executing with `n` contenders, the first `answered` of
    /// them with a submission (put without moving the battle on).
    async fn executing_with(
        &mut self,
        s: &dyn BattleStore,
        creator: LenserId,
        n: usize,
        answered: usize,
    ) -> (Battle, Vec<Contender>) {
        let (b, cs) = self.with_contenders(s, creator, n, Executing).await;
        for c in &cs[..answered] {
            s.put_submission(&self.submission(c, "an answer"), None, None).await.expect("put_submission");
        }
        (s.get_battle(Reach::Everything, b.id).await.unwrap(), cs)
    }

    fn submission(&mut self, c: &Contender, text: &str) -> Submission {
        let now = self.tick();
        Submission {
            id: SubmissionId::new(),
            battle_id: c.battle_id,
            contender_id: c.id,
            text: SubmissionText::parse(text).unwrap(),
            submitted_by: Some(LenserId::new()),
            created_at: now,
            updated_at: now,
        }
    }

    fn vote(&mut self, battle: BattleId, voter: LenserId, pick: VotePick) -> Vote {
        let now = self.tick();
        Vote {
            id: VoteId::new(),
            battle_id: battle,
            voter,
            pick,
            rationale: None,
            created_at: now,
            updated_at: now,
        }
    }

    fn verdict(&mut self, c: &Contender, score: u16, kind: VerdictKind) -> Verdict {
        Verdict {
            battle_id: c.battle_id,
            contender_id: c.id,
            verdict: kind,
            score: Score::from_tenths(score),
            criteria: vec![Score::from_tenths(score), Score::from_tenths(1000 - score)],
            reasoning: "Because 'quotes' \"and\" \\ stay.".into(),
            model: "test-model".into(),
            position_consistent: Some(score.is_multiple_of(2)),
            created_at: self.tick(),
        }
    }
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

async fn round_trip(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let criterion = |t: &str, w| {
        RubricCriterion::new(
            CriterionTitle::parse(t).unwrap(),
            w,
            CriterionDescription::parse("Is it right? 'Really'").unwrap(),
        )
        .unwrap()
    };
    let mut b = f.battle(me, Draft);
    b.battle_type = BattleType::HumanVsAi;
    b.judging_mode = JudgingMode::RubricScore;
    b.max_contenders = MaxContenders::parse(26).unwrap();
    b.ai_judge_model_key = Some(ModelKey::parse("gpt-4o-mini").unwrap());
    b.rubric = Some(Rubric::parse(vec![criterion("Correct", 3), criterion("Clear", 1)]).unwrap());
    s.create_battle(&b).await.expect("create_battle");
    assert_eq!(s.get_battle(Reach::Lenser(me), b.id).await.unwrap(), b, "a battle reads back as stored");
    assert_eq!(code(s.create_battle(&b).await), ErrorCode::Conflict, "ids are unique");

    for check in [
        AutoCheck::exact("42").unwrap(),
        AutoCheck::contains("Ünï", true).unwrap(),
        AutoCheck::regex(r"^\d+(\.\d+)?$").unwrap(),
        AutoCheck::json_schema(r#"{"type":"object"}"#).unwrap(),
        AutoCheck::length_range(3, 100_000).unwrap(),
    ] {
        let mut b = f.battle(me, Open);
        b.judging_mode = JudgingMode::AutoScore;
        b.auto_check = Some(check);
        s.create_battle(&b).await.expect("create_battle");
        assert_eq!(
            s.get_battle(Reach::Everything, b.id).await.unwrap(),
            b,
            "every auto_check kind round-trips"
        );
    }

    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(sheet.battle, b);
    assert!(sheet.contenders.is_empty() && sheet.submissions.is_empty() && sheet.verdicts.is_empty());
    assert!(sheet.judge_errors.is_empty() && sheet.standings.is_empty());
    assert_eq!((sheet.votes.total, sheet.votes.ties), (0, 0));
    assert_eq!(code(s.get_battle(Reach::Everything, BattleId::new()).await), ErrorCode::NotFound);
    assert_eq!(code(s.get_sheet(Reach::Everything, BattleId::new()).await), ErrorCode::NotFound);
}

async fn reach(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let draft = f.create(s, alice, Draft).await;
    let open = f.create(s, alice, Open).await;
    assert_eq!(
        code(s.get_battle(Reach::Lenser(bob), draft.id).await),
        ErrorCode::NotFound,
        "drafts are private"
    );
    assert_eq!(code(s.get_sheet(Reach::Lenser(bob), draft.id).await), ErrorCode::NotFound);
    s.get_battle(Reach::Lenser(alice), draft.id).await.expect("the creator reads her draft");
    s.get_battle(Reach::Everything, draft.id).await.expect("the service reads every battle");
    s.get_sheet(Reach::Lenser(bob), open.id).await.expect("an open battle is readable by everyone");

    let by_alice = BattleFilter { creator: Some(alice), ..Default::default() };
    let seen = s.list_battles(Reach::Lenser(bob), &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(seen.total, 1, "bob lists alice's open battle, not her draft");
    assert_eq!(seen.items[0].battle.id, open.id);
    let seen = s.list_battles(Reach::Lenser(alice), &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(seen.total, 2);
    let hist = HistoryFilter { lenser: alice, status: None };
    assert_eq!(s.battle_history(Reach::Lenser(bob), &hist, PageRequest::default()).await.unwrap().total, 1);
    assert_eq!(s.battle_history(Reach::Everything, &hist, PageRequest::default()).await.unwrap().total, 2);

    s.set_status(draft.id, Draft, Open, f.tick()).await.unwrap();
    s.get_battle(Reach::Lenser(bob), draft.id).await.expect("visible once open");
}

async fn contenders(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let b = f.create(s, me, Draft).await;
    let a = f.contender(&b, 0, ContenderType::AiAgent);
    let mut a = Contender { owner: Some(LenserId::new()), ..a };
    a.display_name = DisplayName::parse("Agent 'Smith' \"007\"").unwrap();
    s.add_contender(&a, Draft).await.expect("add A");
    let c_early = f.contender(&b, 2, ContenderType::AiModel);
    assert_eq!(
        code(s.add_contender(&c_early, Draft).await),
        ErrorCode::Conflict,
        "slot C before B is refused"
    );
    let b2 = f.contender(&b, 1, ContenderType::Human);
    assert_eq!(
        code(s.add_contender(&b2, Open).await),
        ErrorCode::Conflict,
        "a contender added for a status the battle has left is refused"
    );
    let same_ref = Contender { reference: a.reference, ..f.contender(&b, 1, ContenderType::AiModel) };
    assert_eq!(code(s.add_contender(&same_ref, Draft).await), ErrorCode::Conflict, "a reference joins once");
    let same_slot = f.contender(&b, 0, ContenderType::AiModel);
    assert_eq!(code(s.add_contender(&same_slot, Draft).await), ErrorCode::Conflict, "a slot is taken once");
    let b2 = Contender { owner: Some(LenserId::from_uuid(b2.reference.as_uuid())), ..b2 };
    s.add_contender(&b2, Draft).await.expect("add B");
    let dup_id = Contender { id: a.id, ..f.contender(&b, 2, ContenderType::AiModel) };
    assert_eq!(code(s.add_contender(&dup_id, Draft).await), ErrorCode::Conflict, "contender ids are unique");
    let orphan = Contender { battle_id: BattleId::new(), ..f.contender(&b, 0, ContenderType::AiModel) };
    assert_eq!(code(s.add_contender(&orphan, Draft).await), ErrorCode::NotFound);

    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(sheet.contenders, vec![a.clone(), b2.clone()], "contenders read back as stored, by slot");
    assert_eq!(sheet.votes.per_contender.len(), 2, "the tally has an entry per contender");
    let listed = s
        .list_battles(
            Reach::Everything,
            &BattleFilter { creator: Some(me), ..Default::default() },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(listed.items[0].contenders, 2);
}

/// The AI Lenser that wrote a battle or a contender reads back from every
/// read that returns it, and stays through later changes; a person's rows
/// name none.
async fn agents(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let (owner, agent) = (LenserId::new(), LenserId::new());
    // A word no other battle of a shared database has.
    let word = format!("zq{}", BattleId::new().as_uuid().simple());
    let by_agent = Battle {
        title: BattleTitle::parse(format!("An agent's {word}")).unwrap(),
        agent: Some(agent),
        ..f.battle(owner, Open)
    };
    s.create_battle(&by_agent).await.expect("create_battle by an agent");
    let by_person = f.create(s, owner, Open).await;
    let its = Contender { agent: Some(agent), ..f.contender(&by_person, 0, ContenderType::AiAgent) };
    let theirs = f.contender(&by_person, 1, ContenderType::AiModel);
    s.add_contender(&its, Open).await.expect("add_contender by an agent");
    s.add_contender(&theirs, Open).await.expect("add_contender by a person");

    let got = s.get_battle(Reach::Lenser(owner), by_agent.id).await.unwrap();
    assert_eq!(got, by_agent, "a battle an agent created reads back with its agent");
    assert_eq!(s.get_battle(Reach::Lenser(owner), by_person.id).await.unwrap().agent, None);
    let sheet = s.get_sheet(Reach::Lenser(owner), by_person.id).await.unwrap();
    assert_eq!(sheet.battle.agent, None, "a person's battle names no agent");
    assert_eq!(sheet.contenders, vec![its.clone(), theirs.clone()], "each contender names who added it");

    let agents_of = |page: lf_core::Page<crate::model::BattleSummary>| -> Vec<(BattleId, Option<LenserId>)> {
        page.items.iter().map(|i| (i.battle.id, i.battle.agent)).collect()
    };
    let want = vec![(by_person.id, None), (by_agent.id, Some(agent))];
    let mine = BattleFilter { creator: Some(owner), ..Default::default() };
    let listed = s.list_battles(Reach::Lenser(owner), &mine, PageRequest::default()).await.unwrap();
    assert_eq!(agents_of(listed), want, "list_battles names each battle's agent");
    let hist = HistoryFilter { lenser: owner, status: None };
    let page = s.battle_history(Reach::Lenser(owner), &hist, PageRequest::default()).await.unwrap();
    assert_eq!(agents_of(page), want, "battle_history too");
    let q = SearchQuery::parse(&word).unwrap();
    let found = s.search_battles(Reach::Lenser(owner), &q, PageRequest::default()).await.unwrap();
    assert_eq!(agents_of(found), vec![(by_agent.id, Some(agent))], "search_battles too");

    s.set_status(by_agent.id, Open, Executing, f.tick()).await.unwrap();
    let moved = s.get_battle(Reach::Everything, by_agent.id).await.unwrap();
    assert_eq!((moved.status, moved.agent), (Executing, Some(agent)), "a status change keeps the agent");
}

async fn statuses(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let b = f.create(s, LenserId::new(), Draft).await;
    let t = f.tick();
    s.set_status(b.id, Draft, Open, t).await.expect("set_status");
    let got = s.get_battle(Reach::Everything, b.id).await.unwrap();
    assert_eq!((got.status, got.updated_at, got.created_at), (Open, t, b.created_at));
    assert_eq!(
        code(s.set_status(b.id, Draft, Open, f.tick()).await),
        ErrorCode::Conflict,
        "a move from a status the battle has left is refused"
    );
    assert_eq!(s.get_battle(Reach::Everything, b.id).await.unwrap().status, Open, "and changes nothing");
    assert_eq!(code(s.set_status(BattleId::new(), Draft, Open, f.tick()).await), ErrorCode::NotFound);
}

async fn submissions(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let draft = f.create(s, me, Draft).await;
    let dc = f.contender(&draft, 0, ContenderType::AiModel);
    s.add_contender(&dc, Draft).await.unwrap();
    let sub = f.submission(&dc, "too early");
    assert_eq!(
        code(s.put_submission(&sub, None, None).await),
        ErrorCode::Conflict,
        "no submissions in draft"
    );

    let (b, cs) = f.with_contenders(s, me, 2, Open).await;
    let odd = "  \t leading space, odd text: ' \" \\ % _ \u{202e}rtl\u{202c} 🦀 \r\n trailing  \n";
    let first = f.submission(&cs[0], odd);
    let out = s.put_submission(&first, Some(Scoring), None).await.expect("put_submission");
    assert_eq!((out.submission.clone(), out.replaced, out.status), (first.clone(), false, Open));
    let again = f.submission(&cs[0], "second thoughts");
    let out = s.put_submission(&again, Some(Scoring), None).await.unwrap();
    assert!(out.replaced);
    assert_eq!(out.submission.id, first.id, "a resubmission keeps the id");
    assert_eq!(out.submission.created_at, first.created_at, "and created_at");
    assert_eq!(out.submission.updated_at, again.updated_at);
    assert_eq!(out.submission.text, again.text);
    let other = f.submission(&cs[1], "B in open");
    let out = s.put_submission(&other, Some(Scoring), None).await.unwrap();
    assert_eq!(out.status, Open, "everyone submitting while open does not advance");
    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(sheet.submissions.len(), 2);
    assert_eq!(sheet.submissions[0].text.as_str(), "second thoughts", "submissions by slot");
    let stranger = Contender { id: ContenderId::new(), ..cs[0].clone() };
    assert_eq!(code(s.put_submission(&f.submission(&stranger, "x"), None, None).await), ErrorCode::NotFound);

    // Auto-advance: executing, the last contender submits.
    let (b, cs) = f.with_contenders(s, me, 3, Executing).await;
    let out = s.put_submission(&f.submission(&cs[0], "a"), Some(Voting), None).await.unwrap();
    assert_eq!(out.status, Executing);
    let out = s.put_submission(&f.submission(&cs[1], "b"), Some(Voting), None).await.unwrap();
    assert_eq!(out.status, Executing, "not until every contender has submitted");
    let last = f.submission(&cs[2], "c");
    let out = s.put_submission(&last, Some(Voting), None).await.unwrap();
    assert_eq!(out.status, Voting, "the last submission moves the battle");
    let got = s.get_battle(Reach::Everything, b.id).await.unwrap();
    assert_eq!((got.status, got.updated_at), (Voting, last.updated_at));
    assert_eq!(
        code(s.put_submission(&f.submission(&cs[0], "late"), Some(Scoring), None).await),
        ErrorCode::Conflict,
        "no submissions once voting"
    );

    let (b, cs) = f.with_contenders(s, me, 2, Executing).await;
    s.put_submission(&f.submission(&cs[0], "a"), None, None).await.unwrap();
    let out = s.put_submission(&f.submission(&cs[1], "b"), None, None).await.unwrap();
    assert_eq!(out.status, Executing, "no advance unless asked");
    assert_eq!(s.get_battle(Reach::Everything, b.id).await.unwrap().status, Executing);
}

async fn votes(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let (open, ocs) = f.with_contenders(s, me, 2, Open).await;
    let early = f.vote(open.id, LenserId::new(), VotePick::Contender(ocs[0].id));
    assert_eq!(code(s.put_vote(&early).await), ErrorCode::Conflict, "no votes outside voting");

    let (b, cs) = f.with_contenders(s, me, 3, Voting).await;
    let (v1, v2, v3) = (LenserId::new(), LenserId::new(), LenserId::new());
    let mut first = f.vote(b.id, v1, VotePick::Contender(cs[0].id));
    first.rationale = Some(Rationale::parse("Clearer, 'really'.").unwrap());
    let out = s.put_vote(&first).await.expect("put_vote");
    assert_eq!((out.vote.clone(), out.replaced), (first.clone(), false));
    let change = f.vote(b.id, v1, VotePick::Contender(cs[1].id));
    let out = s.put_vote(&change).await.unwrap();
    assert!(out.replaced, "a second vote replaces the first");
    assert_eq!((out.vote.id, out.vote.created_at), (first.id, first.created_at));
    assert_eq!((out.vote.pick, out.vote.rationale.clone()), (change.pick, None));
    s.put_vote(&f.vote(b.id, v2, VotePick::Contender(cs[1].id))).await.unwrap();
    s.put_vote(&f.vote(b.id, v3, VotePick::Tie)).await.unwrap();
    let unknown = f.vote(b.id, LenserId::new(), VotePick::Contender(ContenderId::new()));
    assert_eq!(code(s.put_vote(&unknown).await), ErrorCode::NotFound);
    assert_eq!(code(s.put_vote(&f.vote(BattleId::new(), v1, VotePick::Tie)).await), ErrorCode::NotFound);

    let tally = s.get_sheet(Reach::Everything, b.id).await.unwrap().votes;
    assert_eq!((tally.total, tally.ties), (3, 1));
    let pick = |voter| s.vote_of(Reach::Everything, b.id, voter);
    assert_eq!(pick(v1).await.unwrap(), Some(VotePick::Contender(cs[1].id)), "the replacing pick");
    assert_eq!(pick(v3).await.unwrap(), Some(VotePick::Tie));
    assert_eq!(pick(LenserId::new()).await.unwrap(), None, "no vote");
    assert_eq!(code(s.vote_of(Reach::Everything, BattleId::new(), v1).await), ErrorCode::NotFound);
    let counts: Vec<(ContenderId, u32)> =
        tally.per_contender.iter().map(|e| (e.contender_id, e.votes)).collect();
    assert_eq!(counts, vec![(cs[0].id, 0), (cs[1].id, 2), (cs[2].id, 0)], "one entry per contender, by slot");
    let listed = s
        .list_battles(
            Reach::Everything,
            &BattleFilter { creator: Some(me), status: Some(Voting), ..Default::default() },
            PageRequest::default(),
        )
        .await
        .unwrap();
    assert_eq!(listed.items[0].votes, 3);
}
