//! What models' answers cost: recorded per submission and for the judge,
//! read back per battle, and averaged per contender over closed battles.

use lf_core::{AnswerCost, ModelProfileId};

use super::*;
use crate::model::AnswerCostRecord;

fn cost(model: &str, total_ms: u64, cost_usd: f64) -> AnswerCost {
    AnswerCost {
        profile_id: Some(ModelProfileId::new()),
        endpoint: "connection:ünïcödé 'key'".into(),
        model: model.into(),
        first_byte_ms: Some(total_ms / 4),
        total_ms,
        input_tokens: 1_234,
        output_tokens: 56,
        tokens_estimated: false,
        cost_usd,
        finish_reason: Some("length".into()),
    }
}

pub(super) async fn answer_costs(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let (b, cs) = f.with_contenders(s, me, 3, Executing).await;
    let sub1 = f.submission(&cs[1], "an answer");
    s.put_submission(&sub1, None, None).await.unwrap();
    let sub0 = f.submission(&cs[0], "another");
    s.put_submission(&sub0, None, None).await.unwrap();
    let k1 = AnswerCostRecord {
        battle_id: b.id,
        contender_id: Some(cs[1].id),
        cost: cost("m-1", 800, 0.0125),
        at: sub1.updated_at,
    };
    let judge = AnswerCostRecord {
        contender_id: None,
        cost: AnswerCost {
            profile_id: None,
            first_byte_ms: None,
            tokens_estimated: true,
            finish_reason: None,
            ..cost("judge", 3_000, 0.0)
        },
        at: f.tick(),
        ..k1.clone()
    };
    let k0 = AnswerCostRecord {
        contender_id: Some(cs[0].id),
        cost: cost("m-0", 200, 0.5),
        at: sub0.updated_at,
        ..k1.clone()
    };
    s.put_answer_cost(&judge).await.expect("put_answer_cost");
    s.put_answer_cost(&k1).await.unwrap();
    s.put_answer_cost(&k0).await.unwrap();
    assert_eq!(
        s.answer_costs(Reach::Everything, b.id).await.expect("answer_costs"),
        vec![k0.clone(), k1.clone(), judge.clone()],
        "contenders' by slot, then the judge's, read back as written"
    );
    // A resubmission by a model records its cost again, in the same write.
    let resub = f.submission(&cs[0], "a better answer");
    let again = AnswerCostRecord { cost: cost("m-0b", 400, 0.25), at: resub.updated_at, ..k0.clone() };
    s.put_submission(&resub, None, Some(&again.cost)).await.expect("put_submission with its cost");
    // A submission refused writes no cost either.
    let refused = f.submission(&cs[2], "too late");
    let draft_cost = cost("m-2", 1, 1.0);
    s.set_status(b.id, Executing, Scoring, f.tick()).await.unwrap();
    assert_eq!(code(s.put_submission(&refused, None, Some(&draft_cost)).await), ErrorCode::Conflict);
    // The judge's cost is written with its verdicts.
    let judged_again = AnswerCostRecord { at: f.tick(), ..judge.clone() };
    s.put_verdicts(b.id, &[], Some(&judged_again)).await.expect("put_verdicts with its cost");
    s.set_status(b.id, Scoring, Executing, f.tick()).await.unwrap();
    assert_eq!(
        s.answer_costs(Reach::Everything, b.id).await.unwrap(),
        vec![again.clone(), k1.clone(), judged_again],
        "a contender's and the judge's cost are replaced, not added"
    );
    // A later submission not made by a model leaves the cost behind.
    s.put_submission(&f.submission(&cs[0], "by hand"), None, None).await.unwrap();
    let standing = s.answer_costs(Reach::Everything, b.id).await.unwrap();
    assert!(!standing.iter().any(|k| k.contender_id == Some(cs[0].id)), "{standing:?}");
    let stray = AnswerCostRecord { contender_id: Some(ContenderId::new()), ..k1.clone() };
    assert_eq!(code(s.put_answer_cost(&stray).await), ErrorCode::NotFound, "a contender of another battle");
    let lost = AnswerCostRecord { battle_id: BattleId::new(), ..k1.clone() };
    assert_eq!(code(s.put_answer_cost(&lost).await), ErrorCode::NotFound, "an unknown battle");
    assert_eq!(code(s.answer_costs(Reach::Everything, BattleId::new()).await), ErrorCode::NotFound);
    let draft = f.create(s, me, Draft).await;
    assert_eq!(
        code(s.answer_costs(Reach::Lenser(LenserId::new()), draft.id).await),
        ErrorCode::NotFound,
        "out of reach"
    );
    assert!(s.answer_costs(Reach::Lenser(me), draft.id).await.unwrap().is_empty());

    // Means over closed battles: only costs of the submission that stands.
    let mine = |all: Vec<crate::model::CostMean>, c: &Contender| {
        all.into_iter().find(|m| m.reference == c.reference())
    };
    assert_eq!(mine(s.cost_means(None).await.unwrap(), &cs[1]), None, "the battle is not closed");
    s.set_status(b.id, Executing, Scoring, f.tick()).await.unwrap();
    let st = |c: &Contender, position| Standing {
        contender_id: c.id,
        position,
        rank: position,
        score: None,
        votes: 0,
    };
    s.close_battle(b.id, &[st(&cs[0], 1), st(&cs[1], 2), st(&cs[2], 3)], Some(cs[0].id), f.tick())
        .await
        .unwrap();
    let means = s.cost_means(None).await.expect("cost_means");
    let one = mine(means.clone(), &cs[1]).expect("a closed battle's costs count");
    assert_eq!((one.answers, one.mean_cost_usd, one.mean_total_ms), (1, 0.0125, 800.0));
    assert_eq!(mine(means.clone(), &cs[0]), None, "a cost left behind by a later submission does not count");
    assert_eq!(mine(means, &cs[2]), None, "no cost, no mean");
    assert_eq!(mine(s.cost_means(Some(BattleType::WorkflowBattle)).await.unwrap(), &cs[1]), None);
}
