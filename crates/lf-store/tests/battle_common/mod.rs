//! Battle races on real tasks (tokio::spawn, several worker threads),
//! beyond lf-battle's contract suite, which runs its calls one at a time.
//! Each race takes one or more stores over one database (several stores:
//! as several server processes would have) and spreads its tasks over them.

#![allow(dead_code)] // Each test target uses some of these.

use std::sync::Arc;

use lf_battle::{
    Battle, BattleService, BattleStatus, BattleStore, BattleTitle, BattleType, Contender, ContenderType,
    CriterionDescription, CriterionTitle, DisplayName, JudgingMode, LeaderboardOptions, MaxContenders,
    MemoryBattleStore, NewBattle, NewContender, Rubric, RubricCriterion, ScoreOutcome, Slot, Submission,
    SubmissionText, TaskPrompt,
};
use lf_core::{
    BattleId, Clock, ContenderId, ContenderRefId, ErrorCode, LenserId, Principal, Reach, SubmissionId,
    SystemClock,
};

fn battle(max: i64, status: BattleStatus) -> Battle {
    let now = SystemClock.now();
    Battle {
        id: BattleId::new(),
        title: BattleTitle::parse("Race").unwrap(),
        task_prompt: TaskPrompt::parse("Answer fast.").unwrap(),
        battle_type: BattleType::AiVsAi,
        judging_mode: JudgingMode::AiJudge,
        max_contenders: MaxContenders::parse(max).unwrap(),
        ai_judge_model_key: None,
        rubric: None,
        auto_check: None,
        tags: Vec::new(),
        creator: LenserId::new(),
        agent: None,
        status,
        winner: None,
        created_at: now,
        updated_at: now,
        closed_at: None,
    }
}

fn contender(b: &Battle, index: usize) -> Contender {
    Contender {
        id: ContenderId::new(),
        battle_id: b.id,
        slot: Slot::from_index(index).unwrap(),
        display_name: DisplayName::parse(format!("Contender {index}")).unwrap(),
        contender_type: ContenderType::AiModel,
        reference: ContenderRefId::new(),
        owner: None,
        agent: None,
        joined_at: SystemClock.now(),
    }
}

/// Many tasks add a contender for the last free slot of an open battle at
/// once, several rounds: exactly one joins each round, every other gets
/// CONFLICT, and the battle ends with its slots a prefix of A–Z.
pub async fn racing_last_slot(stores: &[Arc<dyn BattleStore>]) {
    let s = &stores[0];
    for round in 0..5 {
        let max = 3 + round;
        let b = battle(max as i64, BattleStatus::Open);
        s.create_battle(&b).await.unwrap();
        for i in 0..max - 1 {
            s.add_contender(&contender(&b, i), BattleStatus::Open).await.unwrap();
        }
        let racers: Vec<Contender> = (0..12).map(|_| contender(&b, max - 1)).collect();
        let tasks: Vec<_> = racers
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (store, c) = (stores[i % stores.len()].clone(), c.clone());
                tokio::spawn(async move { store.add_contender(&c, BattleStatus::Open).await })
            })
            .collect();
        let mut joined = Vec::new();
        for (task, c) in tasks.into_iter().zip(&racers) {
            match task.await.unwrap() {
                Ok(()) => joined.push(c.id),
                Err(e) => assert_eq!(e.code(), ErrorCode::Conflict, "{e}"),
            }
        }
        assert_eq!(joined.len(), 1, "exactly one of concurrent adds takes the last slot");
        let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
        assert_eq!(sheet.contenders.len(), max, "no contender is lost or doubled");
        assert!(sheet.contenders.iter().enumerate().all(|(i, c)| c.slot.index() == i), "slots are a prefix");
        assert_eq!(sheet.contenders[max - 1].id, joined[0]);
    }
}

/// Every contender of an executing battle submits twice, all at once:
/// every submission before the last one is stored, exactly one write sees
/// the set complete and moves the battle to voting, later ones get CONFLICT,
/// and no contender is left without its submission.
pub async fn racing_submissions(stores: &[Arc<dyn BattleStore>]) {
    let s = &stores[0];
    for _ in 0..5 {
        let mut b = battle(6, BattleStatus::Open);
        s.create_battle(&b).await.unwrap();
        let cs: Vec<Contender> = (0..6).map(|i| contender(&b, i)).collect();
        for c in &cs {
            s.add_contender(c, BattleStatus::Open).await.unwrap();
        }
        s.set_status(b.id, BattleStatus::Open, BattleStatus::Executing, SystemClock.now()).await.unwrap();
        b.status = BattleStatus::Executing;

        let attempts: Vec<Submission> = cs
            .iter()
            .chain(&cs)
            .enumerate()
            .map(|(i, c)| {
                let now = SystemClock.now();
                Submission {
                    id: SubmissionId::new(),
                    battle_id: b.id,
                    contender_id: c.id,
                    text: SubmissionText::parse(format!("attempt {i}")).unwrap(),
                    submitted_by: None,
                    created_at: now,
                    updated_at: now,
                }
            })
            .collect();
        let tasks: Vec<_> = attempts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (store, a) = (stores[i % stores.len()].clone(), a.clone());
                tokio::spawn(async move { store.put_submission(&a, Some(BattleStatus::Voting), None).await })
            })
            .collect();
        let mut advanced = 0;
        let mut stored = Vec::new();
        for (task, attempt) in tasks.into_iter().zip(&attempts) {
            match task.await.unwrap() {
                Ok(out) => {
                    if out.status == BattleStatus::Voting {
                        advanced += 1;
                    } else {
                        assert_eq!(out.status, BattleStatus::Executing);
                    }
                    stored.push((attempt.clone(), out));
                }
                Err(e) => assert_eq!(e.code(), ErrorCode::Conflict, "{e}"),
            }
        }
        assert_eq!(advanced, 1, "exactly one submission completes the set and moves the battle");
        let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
        assert_eq!(sheet.battle.status, BattleStatus::Voting);
        assert_eq!(sheet.submissions.len(), cs.len(), "every contender has exactly one submission");
        for c in &cs {
            let mine: Vec<_> = stored.iter().filter(|(a, _)| a.contender_id == c.id).collect();
            let firsts: Vec<_> = mine.iter().filter(|(_, out)| !out.replaced).collect();
            assert_eq!(firsts.len(), 1, "one write inserts, any other replaces");
            let row = sheet.submission_of(c.id).unwrap();
            assert_eq!(row.id, firsts[0].0.id, "a replacement keeps the first id");
            // Each contender writes twice: the stored text is the second
            // write's when it got in, else the first's.
            let last = mine.iter().find(|(_, out)| out.replaced).unwrap_or(firsts[0]);
            assert_eq!(row.text, last.0.text, "the last accepted write is what is stored");
        }
    }
}

/// What [`whole_battles`] saw of one battle, in terms that do not depend on
/// ids or times: per slot its position, rank, score and verdict, and the
/// winner's slot.
type Outcome = (Vec<(char, u8, u8, Option<u16>, String)>, Option<char>);

/// Two battles run whole through [`BattleService`] (create, join, open,
/// execute, submit until the battle moves to scoring by itself, judge with
/// the offline provider, close), one judged by the AI judge and one by a
/// rubric; then the leaderboard over them. The same script on the
/// in-memory store must give the same outcome: the SQL store stores and
/// reads back what the service wrote, unchanged.
pub async fn whole_battles(store: Arc<dyn BattleStore>) {
    let memory = run_battles(Arc::new(MemoryBattleStore::new())).await;
    let sql = run_battles(store).await;
    assert_eq!(sql, memory, "the SQL store and the in-memory store disagree");
    assert!(sql.iter().all(|(standings, winner)| standings.len() == 3 && winner.is_some()));
}

async fn run_battles(store: Arc<dyn BattleStore>) -> Vec<Outcome> {
    let service = BattleService::new(store.clone());
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let criterion = |t: &str, w| {
        RubricCriterion::new(CriterionTitle::parse(t).unwrap(), w, CriterionDescription::parse("").unwrap())
            .unwrap()
    };
    let mut outcomes = Vec::new();
    let mut references = Vec::new();
    for rubric in [None, Some(Rubric::parse(vec![criterion("Correct", 3), criterion("Clear", 1)]).unwrap())] {
        let mut new = NewBattle::new(
            BattleTitle::parse("Explain ownership").unwrap(),
            TaskPrompt::parse("Explain Rust ownership and borrowing to a Python programmer.").unwrap(),
        );
        new.max_contenders = Some(MaxContenders::parse(3).unwrap());
        if rubric.is_some() {
            new.judging_mode = Some(JudgingMode::RubricScore);
            new.rubric = rubric;
        }
        let battle = service.create(&me, new).await.unwrap();
        if references.is_empty() {
            references = (0..3).map(|_| ContenderRefId::new()).collect();
        }
        let mut ids = Vec::new();
        for (i, reference) in references.iter().enumerate() {
            let new = NewContender {
                battle_id: battle.id,
                display_name: DisplayName::parse(format!("Model {i}")).unwrap(),
                contender_type: ContenderType::AiModel,
                reference: *reference,
                slot: None,
                owner: None,
            };
            ids.push(service.add_contender(&me, new).await.unwrap().id);
        }
        service.set_status(&me, battle.id, BattleStatus::Open, false).await.unwrap();
        service.set_status(&me, battle.id, BattleStatus::Executing, false).await.unwrap();
        let answers = [
            "Ownership: every value has one owner; borrowing lends references to a value, checked at compile time.",
            "It is about memory.",
            "Values have owners, and references borrow them: the borrow checker makes sure no reference outlives its value.",
        ];
        let mut advanced = Vec::new();
        for (id, text) in ids.iter().zip(answers) {
            let out =
                service.submit(&me, battle.id, *id, SubmissionText::parse(text).unwrap()).await.unwrap();
            advanced.push(out.advanced);
        }
        assert_eq!(advanced, [false, false, true], "the last submission moves the battle to scoring");
        assert!(matches!(service.score(&me, battle.id).await.unwrap(), ScoreOutcome::Scored(_)));
        let closed = service.set_status(&me, battle.id, BattleStatus::Closed, true).await.unwrap();
        let sheet = store.get_sheet(Reach::Everything, battle.id).await.unwrap();
        let slot = |id| sheet.contender(id).unwrap().slot.letter();
        let standings = sheet
            .standings
            .iter()
            .map(|s| {
                let verdict = sheet.verdicts.iter().find(|v| v.contender_id == s.contender_id).unwrap();
                (
                    slot(s.contender_id),
                    s.position,
                    s.rank,
                    s.score.map(|x| x.tenths()),
                    verdict.verdict.to_string(),
                )
            })
            .collect();
        outcomes.push((standings, closed.winner.map(slot)));
    }
    let board = service
        .leaderboard(&me, Some(BattleType::AiVsAi), LeaderboardOptions::new(Some(1), Some(10)).unwrap())
        .await
        .unwrap();
    for reference in &references {
        let rated =
            board.ratings.iter().find(|r| r.reference.id == *reference).expect("every contender is rated");
        assert_eq!(rated.battles, 2, "both closed battles count");
    }
    outcomes
}

/// The `0004_battle_results.sql` migration, then `0035`/`0031`
/// `_battle_tags_and_styles.sql`, fill `battle_results` for the battles
/// closed before them exactly as the store fills it when one closes:
/// on a database where battles have closed (and one was archived), the
/// table is dropped and the migration run again, and closed_results reads
/// back the same results.
pub async fn results_migration_matches_the_store(db: &lf_store::Database) {
    // The part of 0035/0031 about battle_results (the rest altered battles).
    let from_results = |migration: &'static str| {
        let at = migration.find("-- battle_results (").expect("the battle_results part");
        &migration[at..]
    };
    let store = db.battle_store();
    let sorted = |mut results: Vec<lf_battle::BattleResult>| {
        results.sort_by_key(|r| r.battle_id);
        for r in &mut results {
            r.entries.sort_by_key(|e| (e.reference, e.rank));
        }
        results
    };
    let before = sorted(store.closed_results(None).await.unwrap());
    assert!(before.iter().filter(|r| r.entries.len() >= 2).count() >= 2, "closed battles to compare");
    if let Some(pool) = db.sqlite_pool() {
        let migration = include_str!("../../migrations/sqlite/0004_battle_results.sql");
        let styles = include_str!("../../migrations/sqlite/0035_battle_tags_and_styles.sql");
        sqlx::raw_sql("DROP TABLE battle_results; DROP TABLE battle_results_version")
            .execute(pool)
            .await
            .unwrap();
        sqlx::raw_sql(migration).execute(pool).await.unwrap();
        sqlx::raw_sql(from_results(styles)).execute(pool).await.unwrap();
    } else if let Some(pool) = db.postgres_pool() {
        let migration = include_str!("../../migrations/postgres/0004_battle_results.sql");
        let drop = "DROP TABLE battle_results; DROP TABLE battle_results_version; DROP FUNCTION battle_results_bump()";
        sqlx::raw_sql(drop).execute(pool).await.unwrap();
        sqlx::raw_sql(migration).execute(pool).await.unwrap();
        let styles = include_str!("../../migrations/postgres/0031_battle_tags_and_styles.sql");
        sqlx::raw_sql(from_results(styles)).execute(pool).await.unwrap();
    } else {
        panic!("neither SQLite nor PostgreSQL");
    }
    assert_eq!(sorted(store.closed_results(None).await.unwrap()), before);
}
