//! Answers, verdicts and closing: answer errors, battles left executing
//! with every answer in, verdicts and results.

use super::*;

pub(super) async fn answer_errors(s: &dyn BattleStore) {
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

pub(super) async fn answered_executing(s: &dyn BattleStore) {
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
        s.put_submission(&f.submission(c, "an answer while open"), None, None).await.unwrap();
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
        s.put_submission(&f.submission(&c, "a twin's answer"), None, None).await.unwrap();
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

    s.put_submission(&f.submission(&missing_cs[2], "the last answer"), None, None).await.unwrap();
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

pub(super) async fn verdicts_and_errors(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let (voting, vcs) = f.with_contenders(s, me, 2, Voting).await;
    let v = f.verdict(&vcs[0], 900, VerdictKind::Winner);
    assert_eq!(
        code(s.put_verdicts(voting.id, &[v], None).await),
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
    s.put_verdicts(b.id, &first, None).await.expect("put_verdicts");
    let sheet = s.get_sheet(Reach::Everything, b.id).await.unwrap();
    assert_eq!(
        sheet.verdicts,
        vec![first[1].clone(), first[0].clone()],
        "verdicts read back as stored, by slot"
    );
    assert_eq!(sheet.judge_errors, vec![e1, e2], "judge errors, oldest first");
    let second = vec![f.verdict(&cs[0], 100, VerdictKind::Loser)];
    s.put_verdicts(b.id, &second, None).await.unwrap();
    assert_eq!(s.get_sheet(Reach::Everything, b.id).await.unwrap().verdicts, second, "verdicts are replaced");
    let stray = Verdict { contender_id: ContenderId::new(), ..second[0].clone() };
    assert_eq!(code(s.put_verdicts(b.id, &[stray], None).await), ErrorCode::NotFound);
    assert_eq!(
        s.get_sheet(Reach::Everything, b.id).await.unwrap().verdicts,
        second,
        "a refused write changes nothing"
    );
}

pub(super) async fn closing_and_results(s: &dyn BattleStore) {
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
    assert!(mine.entries.iter().all(|e| e.style.is_none()), "no answer, no style");
    assert_eq!(mine.tags, ["code", "ünïcödé"], "results carry the battle's tags");
    assert_eq!(s.results_version().await.unwrap(), version, "reading changes nothing");

    // Each answer's style, as Style::of counts it, where the contender answered.
    let (styled, scs) = f.with_contenders(s, me, 3, Open).await;
    let texts = ["## Plan\n\n- **one** `x` | y", "plain words, é"];
    for (c, text) in scs.iter().zip(texts) {
        s.put_submission(&f.submission(c, text), None, None).await.unwrap();
    }
    s.set_status(styled.id, Open, Scoring, f.tick()).await.unwrap();
    let ranks = [st(&scs[0], 1, 1), st(&scs[1], 2, 2), st(&scs[2], 3, 3)];
    s.close_battle(styled.id, &ranks, Some(scs[0].id), f.tick()).await.unwrap();
    let all = s.closed_results(None).await.unwrap();
    let read = all.iter().find(|r| r.battle_id == styled.id).expect("its results");
    let style_of = |c: &Contender| read.entries.iter().find(|e| e.reference.id == c.reference).unwrap().style;
    assert_eq!(style_of(&scs[0]), Some(Style::of(texts[0])));
    assert_eq!(style_of(&scs[0]), Some(Style { chars: 26, markdown: 9 }));
    assert_eq!(style_of(&scs[1]), Some(Style { chars: 14, markdown: 0 }), "characters, not bytes");
    assert_eq!(style_of(&scs[2]), None, "it did not answer");
}
