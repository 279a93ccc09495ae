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
    MaxContenders, ModelKey, Rationale, Rubric, RubricCriterion, Score, Slot, Standing, Submission,
    SubmissionText, TaskPrompt, Verdict, VerdictKind, Vote, VotePick,
};
use crate::store::BattleStore;

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
            s.put_submission(&self.submission(c, "an answer"), None).await.expect("put_submission");
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
    assert_eq!(code(s.put_submission(&sub, None).await), ErrorCode::Conflict, "no submissions in draft");

    let (b, cs) = f.with_contenders(s, me, 2, Open).await;
    let odd = "  \t leading space, odd text: ' \" \\ % _ \u{202e}rtl\u{202c} 🦀 \r\n trailing  \n";
    let first = f.submission(&cs[0], odd);
    let out = s.put_submission(&first, Some(Scoring)).await.expect("put_submission");
    assert_eq!((out.submission.clone(), out.replaced, out.status), (first.clone(), false, Open));
    let again = f.submission(&cs[0], "second thoughts");
    let out = s.put_submission(&again, Some(Scoring)).await.unwrap();
    assert!(out.replaced);
    assert_eq!(out.submission.id, first.id, "a resubmission keeps the id");
    assert_eq!(out.submission.created_at, first.created_at, "and created_at");
    assert_eq!(out.submission.updated_at, again.updated_at);
    assert_eq!(out.submission.text, again.text);
    let other = f.submission(&cs[1], "B in open");
    let out = s.put_submission(&other, Some(Scoring)).await.unwrap();
    assert_eq!(out.status, Open, "everyone submitting while open does not advance");
    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(sheet.submissions.len(), 2);
    assert_eq!(sheet.submissions[0].text.as_str(), "second thoughts", "submissions by slot");
    let stranger = Contender { id: ContenderId::new(), ..cs[0].clone() };
    assert_eq!(code(s.put_submission(&f.submission(&stranger, "x"), None).await), ErrorCode::NotFound);

    // Auto-advance: executing, the last contender submits.
    let (b, cs) = f.with_contenders(s, me, 3, Executing).await;
    let out = s.put_submission(&f.submission(&cs[0], "a"), Some(Voting)).await.unwrap();
    assert_eq!(out.status, Executing);
    let out = s.put_submission(&f.submission(&cs[1], "b"), Some(Voting)).await.unwrap();
    assert_eq!(out.status, Executing, "not until every contender has submitted");
    let last = f.submission(&cs[2], "c");
    let out = s.put_submission(&last, Some(Voting)).await.unwrap();
    assert_eq!(out.status, Voting, "the last submission moves the battle");
    let got = s.get_battle(Reach::Everything, b.id).await.unwrap();
    assert_eq!((got.status, got.updated_at), (Voting, last.updated_at));
    assert_eq!(
        code(s.put_submission(&f.submission(&cs[0], "late"), Some(Scoring)).await),
        ErrorCode::Conflict,
        "no submissions once voting"
    );

    let (b, cs) = f.with_contenders(s, me, 2, Executing).await;
    s.put_submission(&f.submission(&cs[0], "a"), None).await.unwrap();
    let out = s.put_submission(&f.submission(&cs[1], "b"), None).await.unwrap();
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

async fn answer_errors(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let (b, cs) = f.with_contenders(s, me, 2, Executing).await;
    let e1 = AnswerError {
        battle_id: b.id,
        contender_id: cs[1].id,
        run_id: Some("0192f7a0-0000-7000-8000-000000000001".into()),
        message: "Workflow run failed at step 'fetch': timed out — ünïcödé".into(),
        at: f.tick(),
    };
    let e2 = AnswerError {
        contender_id: cs[0].id,
        run_id: None,
        message: "did not start".into(),
        at: f.tick(),
        ..e1.clone()
    };
    s.add_answer_error(&e1).await.expect("add_answer_error");
    s.add_answer_error(&e2).await.unwrap();
    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(sheet.answer_errors, vec![e1.clone(), e2.clone()], "answer errors, oldest first");
    assert_eq!(sheet.answer_error_of(cs[1].id), Some(&e1));
    let stray = AnswerError { contender_id: ContenderId::new(), ..e1.clone() };
    assert_eq!(code(s.add_answer_error(&stray).await), ErrorCode::NotFound, "a contender of another battle");
    let lost = AnswerError { battle_id: BattleId::new(), ..e1.clone() };
    assert_eq!(code(s.add_answer_error(&lost).await), ErrorCode::NotFound, "an unknown battle");
    // In any status: a run may end after the battle moved on.
    let (voting, vcs) = f.with_contenders(s, me, 2, Voting).await;
    let late = AnswerError { battle_id: voting.id, contender_id: vcs[0].id, ..e2 };
    s.add_answer_error(&late).await.unwrap();
    let empty = f.with_contenders(s, me, 2, Executing).await.0;
    assert!(s.get_sheet(Reach::Everything, empty.id).await.unwrap().answer_errors.is_empty());
}

/// The battles `answered_executing` answers, by id.
async fn answered_ids(
    s: &dyn BattleStore,
    after: Option<(Timestamp, BattleId)>,
    limit: u32,
) -> Vec<BattleId> {
    let found = s.answered_executing(after, limit).await.expect("answered_executing");
    assert!(found.len() <= limit as usize, "at most {limit}");
    found.iter().map(|b| b.id).collect()
}

async fn answered_executing(s: &dyn BattleStore) {
    // Whatever the store holds: battles in executing, oldest first.
    let any = s.answered_executing(None, 3).await.expect("answered_executing");
    assert!(any.len() <= 3);
    assert!(any.iter().all(|b| b.status == Executing), "only battles in executing");
    assert!(any.windows(2).all(|w| (w[0].created_at, w[0].id) < (w[1].created_at, w[1].id)), "oldest first");

    // This check's battles are made in a stretch of time of their own,
    // years before the other checks' (a shared database holds theirs), and
    // read from the start of that stretch.
    let mut f = Fixture {
        clock: 1_000_000_000_000_000 + (BattleId::new().as_uuid().as_u128() % 1_000_000_000) as i64 * 1000,
    };
    let start = Some((Timestamp::from_micros(f.clock), BattleId::new()));
    let me = LenserId::new();
    let (first, _) = f.executing_with(s, me, 2, 2).await;
    let (missing, missing_cs) = f.executing_with(s, me, 3, 2).await;
    let (open, open_cs) = f.with_contenders(s, me, 2, Open).await;
    for c in &open_cs {
        s.put_submission(&f.submission(c, "an answer while open"), None).await.unwrap();
    }
    let empty = f.create(s, me, Executing).await;
    let (moved, _) = f.executing_with(s, me, 2, 2).await;
    s.set_status(moved.id, Executing, Voting, f.tick()).await.unwrap();
    let (second, _) = f.executing_with(s, me, 1, 1).await;
    // Two battles made in the same microsecond: their ids order them.
    let at = f.tick();
    let mut twins = Vec::new();
    for _ in 0..2 {
        let b = Battle { created_at: at, updated_at: at, ..f.battle(me, Open) };
        s.create_battle(&b).await.unwrap();
        let c = f.contender(&b, 0, ContenderType::AiModel);
        s.add_contender(&c, Open).await.unwrap();
        s.set_status(b.id, Open, Executing, f.tick()).await.unwrap();
        s.put_submission(&f.submission(&c, "a twin's answer"), None).await.unwrap();
        twins.push(b.id);
    }
    twins.sort();

    let found = s.answered_executing(start, 4).await.unwrap();
    assert_eq!(
        found.iter().map(|b| b.id).collect::<Vec<_>>(),
        vec![first.id, second.id, twins[0], twins[1]],
        "executing with every answer in, oldest first; not a battle missing an answer, open, without contenders or moved on"
    );
    assert_eq!(found[0], first, "each battle as stored");
    assert_eq!(answered_ids(s, start, 1).await, vec![first.id], "at most limit");
    assert_eq!(
        answered_ids(s, Some((first.created_at, first.id)), 3).await,
        vec![second.id, twins[0], twins[1]],
        "after the last one read"
    );
    assert_eq!(
        answered_ids(s, Some((at, twins[0])), 1).await,
        vec![twins[1]],
        "after it in the same microsecond"
    );

    s.put_submission(&f.submission(&missing_cs[2], "the last answer"), None).await.unwrap();
    assert_eq!(
        answered_ids(s, start, 5).await,
        vec![first.id, missing.id, second.id, twins[0], twins[1]],
        "a battle whose last answer came in"
    );
    let mine = [first.id, missing.id, open.id, empty.id, moved.id, second.id, twins[0], twins[1]];
    for id in [first.id, missing.id, second.id, twins[0], twins[1]] {
        s.set_status(id, Executing, Scoring, f.tick()).await.unwrap();
    }
    let left = answered_ids(s, start, 5).await;
    assert!(left.iter().all(|id| !mine.contains(id)), "battles that moved on are not answered: {left:?}");
}

async fn verdicts_and_errors(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let (voting, vcs) = f.with_contenders(s, me, 2, Voting).await;
    let v = f.verdict(&vcs[0], 900, VerdictKind::Winner);
    assert_eq!(
        code(s.put_verdicts(voting.id, &[v]).await),
        ErrorCode::Conflict,
        "verdicts only while scoring"
    );
    let e = JudgeError { battle_id: voting.id, model: "m".into(), message: "x".into(), at: f.tick() };
    assert_eq!(code(s.add_judge_error(&e).await), ErrorCode::Conflict);

    let (b, cs) = f.with_contenders(s, me, 2, Scoring).await;
    let e1 = JudgeError {
        battle_id: b.id,
        model: "offline-deterministic".into(),
        message: "the model's answer was not valid judge JSON: 'x'".into(),
        at: f.tick(),
    };
    let e2 = JudgeError { at: f.tick(), message: "second".into(), ..e1.clone() };
    s.add_judge_error(&e1).await.unwrap();
    s.add_judge_error(&e2).await.unwrap();
    let mut first =
        vec![f.verdict(&cs[1], 455, VerdictKind::Loser), f.verdict(&cs[0], 900, VerdictKind::Winner)];
    first[0].position_consistent = None;
    first[0].criteria.clear();
    s.put_verdicts(b.id, &first).await.expect("put_verdicts");
    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(
        sheet.verdicts,
        vec![first[1].clone(), first[0].clone()],
        "verdicts read back as stored, by slot"
    );
    assert_eq!(sheet.judge_errors, vec![e1, e2], "judge errors, oldest first");
    let second = vec![f.verdict(&cs[0], 100, VerdictKind::Loser)];
    s.put_verdicts(b.id, &second).await.unwrap();
    assert_eq!(s.get_sheet(Reach::Everything, b.id).await.unwrap().verdicts, second, "verdicts are replaced");
    let stray = Verdict { contender_id: ContenderId::new(), ..second[0].clone() };
    assert_eq!(code(s.put_verdicts(b.id, &[stray]).await), ErrorCode::NotFound);
    assert_eq!(
        s.get_sheet(Reach::Everything, b.id).await.unwrap().verdicts,
        second,
        "a refused write changes nothing"
    );
}

async fn closing_and_results(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let (voting, vcs) = f.with_contenders(s, me, 2, Voting).await;
    let st = |c: &Contender, position, rank| Standing {
        contender_id: c.id,
        position,
        rank,
        score: Some(Score::from_tenths(500)),
        votes: 3,
    };
    assert_eq!(
        code(s.close_battle(voting.id, &[st(&vcs[0], 1, 1)], Some(vcs[0].id), f.tick()).await),
        ErrorCode::Conflict,
        "only a scoring battle closes"
    );

    let (b, cs) = f.with_contenders(s, me, 3, Scoring).await;
    let standings =
        vec![st(&cs[1], 1, 1), Standing { score: None, votes: 0, ..st(&cs[2], 2, 1) }, st(&cs[0], 3, 3)];
    let at = f.tick();
    let before = s.results_version().await.unwrap();
    s.close_battle(b.id, &standings, Some(cs[1].id), at).await.expect("close_battle");
    let closed = s.results_version().await.unwrap();
    assert_ne!(closed, before, "closing a battle changes the results version");
    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(sheet.battle.status, Closed);
    assert_eq!(
        (sheet.battle.winner, sheet.battle.closed_at, sheet.battle.updated_at),
        (Some(cs[1].id), Some(at), at)
    );
    assert_eq!(sheet.standings, standings, "standings read back by position");
    assert_eq!(
        code(s.close_battle(b.id, &standings, Some(cs[1].id), f.tick()).await),
        ErrorCode::Conflict,
        "a battle closes once"
    );

    let other = f.with_contenders(s, me, 2, Scoring).await;
    s.close_battle(
        other.0.id,
        &[st(&other.1[0], 1, 1), st(&other.1[1], 2, 2)],
        Some(other.1[0].id),
        f.tick(),
    )
    .await
    .unwrap();
    s.set_status(other.0.id, Closed, Published, f.tick()).await.unwrap();
    let (archived, acs) = f.with_contenders(s, me, 2, Scoring).await;
    s.close_battle(archived.id, &[st(&acs[0], 1, 1), st(&acs[1], 2, 2)], None, f.tick()).await.unwrap();
    let unarchived = s.results_version().await.unwrap();
    s.set_status(archived.id, Closed, Archived, f.tick()).await.unwrap();
    let version = s.results_version().await.unwrap();
    assert_ne!(version, unarchived, "archiving a closed battle changes the results version");

    let all = s.closed_results(None).await.unwrap();
    let mine = all.iter().find(|r| r.battle_id == b.id).expect("a closed battle has results");
    assert_eq!(mine.closed_at, at);
    assert_eq!(mine.battle_type, BattleType::AiVsAi);
    let mut entries: Vec<(ContenderRefId, u8, String)> =
        mine.entries.iter().map(|e| (e.reference.id, e.rank, e.display_name.clone())).collect();
    entries.sort_by_key(|e| e.0);
    let mut want: Vec<(ContenderRefId, u8, String)> = vec![
        (cs[0].reference, 3, cs[0].display_name.to_string()),
        (cs[1].reference, 1, cs[1].display_name.to_string()),
        (cs[2].reference, 1, cs[2].display_name.to_string()),
    ];
    want.sort_by_key(|e| e.0);
    assert_eq!(entries, want, "results carry each contender's reference, rank and name");
    assert!(mine.entries.iter().all(|e| e.reference.kind == ContenderType::AiModel));
    assert!(all.iter().any(|r| r.battle_id == other.0.id), "published battles count");
    assert!(!all.iter().any(|r| r.battle_id == archived.id), "archived battles do not");
    assert!(!all.iter().any(|r| r.battle_id == voting.id), "open ones neither");
    let typed = s.closed_results(Some(BattleType::WorkflowBattle)).await.unwrap();
    assert!(!typed.iter().any(|r| r.battle_id == b.id), "the type filter applies");
    assert_eq!(s.results_version().await.unwrap(), version, "reading changes nothing");
}

async fn listing(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let mut made = Vec::new();
    for status in [Draft, Open, Open, Closed, Archived] {
        let mut b = f.battle(me, status);
        if made.len() == 2 {
            b.battle_type = BattleType::WorkflowBattle;
        }
        s.create_battle(&b).await.unwrap();
        made.push(b);
    }
    let mine = BattleFilter { creator: Some(me), ..Default::default() };
    let page =
        s.list_battles(Reach::Everything, &mine, PageRequest::new(Some(2), Some(0)).unwrap()).await.unwrap();
    assert_eq!(page.total, 4, "archived battles are left out by default");
    let ids: Vec<BattleId> = page.items.iter().map(|i| i.battle.id).collect();
    assert_eq!(ids, vec![made[3].id, made[2].id], "newest first");
    assert!(page.has_more());
    let page =
        s.list_battles(Reach::Everything, &mine, PageRequest::new(Some(2), Some(2)).unwrap()).await.unwrap();
    let ids: Vec<BattleId> = page.items.iter().map(|i| i.battle.id).collect();
    assert_eq!(ids, vec![made[1].id, made[0].id]);
    let archived = BattleFilter { status: Some(Archived), ..mine };
    let page = s.list_battles(Reach::Everything, &archived, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.battle.id).collect::<Vec<_>>(), vec![made[4].id]);
    let open = BattleFilter { status: Some(Open), ..mine };
    assert_eq!(s.list_battles(Reach::Everything, &open, PageRequest::default()).await.unwrap().total, 2);
    let typed = BattleFilter { battle_type: Some(BattleType::WorkflowBattle), ..mine };
    let page = s.list_battles(Reach::Everything, &typed, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.battle.id).collect::<Vec<_>>(), vec![made[2].id]);
    let nobody = BattleFilter { creator: Some(LenserId::new()), ..Default::default() };
    assert_eq!(s.list_battles(Reach::Everything, &nobody, PageRequest::default()).await.unwrap().total, 0);
}

async fn search(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let (me, other) = (LenserId::new(), LenserId::new());
    // A word no other battle of a shared database has.
    let word = format!("zq{}", BattleId::new().as_uuid().simple());
    let titled = |f: &mut Fixture, creator, status| Battle {
        title: BattleTitle::parse(format!("All about {} THINGS", word.to_uppercase())).unwrap(),
        ..f.battle(creator, status)
    };
    let in_title = titled(&mut f, me, Open);
    let in_task = Battle {
        task_prompt: TaskPrompt::parse(format!("Explain pre{word}ing, then stop.")).unwrap(),
        ..f.battle(other, Closed)
    };
    let others_draft = titled(&mut f, other, Draft);
    let my_draft = titled(&mut f, me, Draft);
    let archived = titled(&mut f, me, Archived);
    let unrelated = f.battle(me, Open);
    for b in [&in_title, &in_task, &others_draft, &my_draft, &archived, &unrelated] {
        s.create_battle(b).await.unwrap();
    }
    let ids = |page: lf_core::Page<crate::model::BattleSummary>| -> Vec<BattleId> {
        page.items.iter().map(|i| i.battle.id).collect()
    };
    let q = SearchQuery::parse(&word).unwrap();
    let page = s.search_battles(Reach::Everything, &q, PageRequest::default()).await.unwrap();
    assert_eq!(
        ids(page),
        vec![my_draft.id, others_draft.id, in_task.id, in_title.id],
        "title or task prompt, any case, inside a longer word too, archived left out, newest first"
    );
    let page = s.search_battles(Reach::Lenser(me), &q, PageRequest::default()).await.unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(ids(page), vec![my_draft.id, in_task.id, in_title.id], "someone else's draft is out of reach");
    let page =
        s.search_battles(Reach::Lenser(me), &q, PageRequest::new(Some(1), Some(1)).unwrap()).await.unwrap();
    assert_eq!((page.total, page.has_more()), (3, true));
    assert_eq!(ids(page), vec![in_task.id]);
    let both = SearchQuery::parse(&format!("things {word}")).unwrap();
    let page = s.search_battles(Reach::Lenser(me), &both, PageRequest::default()).await.unwrap();
    assert_eq!(ids(page), vec![my_draft.id, in_title.id], "every word must match");
    let missing = SearchQuery::parse(&format!("{word} nowhere{word}")).unwrap();
    assert_eq!(s.search_battles(Reach::Everything, &missing, PageRequest::default()).await.unwrap().total, 0);
}

async fn history(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let (me, other) = (LenserId::new(), LenserId::new());
    let created = f.create(s, me, Closed).await;
    let (joined, _) = f.with_contenders(s, other, 0, Open).await;
    let mut c = f.contender(&joined, 0, ContenderType::Human);
    c.reference = ContenderRefId::from_uuid(me.as_uuid());
    c.owner = Some(me);
    s.add_contender(&c, Open).await.unwrap();
    let agent = Contender {
        reference: ContenderRefId::new(),
        owner: Some(me),
        ..f.contender(&joined, 1, ContenderType::AiAgent)
    };
    s.add_contender(&agent, Open).await.unwrap();
    let _unrelated = f.create(s, other, Open).await;
    let archived = f.create(s, me, Archived).await;

    let all = HistoryFilter { lenser: me, status: None };
    let page = s.battle_history(Reach::Everything, &all, PageRequest::default()).await.unwrap();
    let ids: Vec<BattleId> = page.items.iter().map(|i| i.battle.id).collect();
    assert_eq!(
        ids,
        vec![archived.id, joined.id, created.id],
        "created or joined, archived included, each once, newest first"
    );
    let closed = HistoryFilter { lenser: me, status: Some(Closed) };
    let page = s.battle_history(Reach::Everything, &closed, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.battle.id).collect::<Vec<_>>(), vec![created.id]);
    let none = HistoryFilter { lenser: LenserId::new(), status: None };
    assert_eq!(s.battle_history(Reach::Everything, &none, PageRequest::default()).await.unwrap().total, 0);
}
