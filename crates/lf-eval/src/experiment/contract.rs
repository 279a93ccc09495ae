//! The public contract suite every [`ExperimentStore`] runs: the in-memory
//! store here, SQLite and PostgreSQL in lf-store. Each check uses fresh
//! experiments, so the suite runs against a store that holds data.

use std::sync::Arc;

use lf_battle::Claim;
use lf_core::{LenserId, PageRequest, Reach, Timestamp};
use serde_json::json;

use super::compare::Outcome;
use super::model::{
    AssertionOutcome, CellKey, CellResult, Contender, Experiment, ExperimentId, ExperimentStatus, Judged,
    ResultFilter,
};
use super::ratings::{Matchup, Rated, RatedMatchup};
use super::store::ExperimentStore;
use crate::dataset::{DatasetId, Visibility};

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn ExperimentStore>) {
    let s = store.as_ref();
    round_trip_and_visibility(s).await;
    listed_by_dataset(s).await;
    cells_are_claimed_and_written_once(s).await;
    tallies_and_results(s).await;
    matchups_of_shared_experiments(s).await;
}

const AT: i64 = 1_760_000_000_123_456;

fn at(plus: i64) -> Timestamp {
    Timestamp::from_micros(AT + plus)
}

fn experiment(owner: LenserId, visibility: Visibility) -> Experiment {
    Experiment {
        id: ExperimentId::new(),
        owner,
        visibility,
        dataset: DatasetId::new(),
        dataset_version: 2,
        case_count: 4,
        contenders: vec![Contender::model("fast"), Contender::model("careful")],
        assertions: vec![json!({"type": "contains", "value": "x"}).as_object().unwrap().clone()],
        judge: (visibility == Visibility::Private).then(|| "grader".to_owned()),
        repeats: 2,
        concurrency: 3,
        budget_credits: Some(50),
        status: ExperimentStatus::Running,
        created_at: at(0),
        updated_at: at(0),
        created_by: owner,
        agent: None,
    }
}

fn key(e: &Experiment, position: u32, contender: u16, repeat: u8) -> CellKey {
    CellKey { experiment: e.id, position, contender, repeat }
}

fn result(key: CellKey, passed: bool, latency_ms: u64, error: bool) -> CellResult {
    CellResult {
        key,
        tags: vec![format!("p{}", key.position), "all".into()],
        answer: (!error).then(|| format!("answer {} \"quoted\"", key.position)),
        outcomes: vec![
            AssertionOutcome::checked("contains", "assertions[0]".into(), passed, "why".into()),
            AssertionOutcome {
                kind: "pairwise".into(),
                from: "case.assertions[1]".into(),
                passed,
                reason: "judged".into(),
                judged: (key.position % 2 == 1).then(|| Judged {
                    score: 0.5,
                    position_consistent: Some(key.repeat == 1),
                    model: "grader-1".into(),
                    input_tokens: 30,
                    output_tokens: 7,
                    cost_usd: 0.25,
                }),
            },
        ],
        passed,
        score: if passed { 1.0 } else { 0.25 },
        error: error.then(|| "the endpoint failed".to_owned()),
        input_tokens: 10,
        output_tokens: 5,
        cost_usd: 0.5,
        credits: 1,
        latency_ms,
        attempts: 1,
        created_at: at(7),
        matchups: Vec::new(),
    }
}

fn page(limit: i64, offset: i64) -> PageRequest {
    PageRequest::new(Some(limit), Some(offset)).unwrap()
}

async fn round_trip_and_visibility(s: &dyn ExperimentStore) {
    let (owner, other) = (LenserId::new(), LenserId::new());
    let e = experiment(owner, Visibility::Private);
    s.add_experiment(&e).await.unwrap();
    assert!(s.add_experiment(&e).await.is_err(), "the id is taken");
    assert_eq!(
        s.experiment(Reach::Lenser(owner), e.id).await.unwrap(),
        Some(e.clone()),
        "read back as written"
    );
    assert_eq!(s.experiment(Reach::Lenser(other), e.id).await.unwrap(), None, "another's private experiment");
    let shared = experiment(owner, Visibility::Community);
    s.add_experiment(&shared).await.unwrap();
    assert_eq!(s.experiment(Reach::Lenser(other), shared.id).await.unwrap(), Some(shared.clone()));
    assert!(s.running().await.unwrap().iter().any(|r| r.id == e.id));
    assert!(s.finish(e.id, ExperimentStatus::Cancelled, at(9)).await.unwrap());
    assert!(!s.finish(e.id, ExperimentStatus::Completed, at(10)).await.unwrap(), "no longer running");
    let read = s.experiment(Reach::Everything, e.id).await.unwrap().unwrap();
    assert_eq!((read.status, read.updated_at), (ExperimentStatus::Cancelled, at(9)));
    assert!(!s.running().await.unwrap().iter().any(|r| r.id == e.id));
}

async fn listed_by_dataset(s: &dyn ExperimentStore) {
    let (owner, other) = (LenserId::new(), LenserId::new());
    let dataset = DatasetId::new();
    let mut made = Vec::new();
    for (i, visibility) in
        [Visibility::Community, Visibility::Private, Visibility::Public].into_iter().enumerate()
    {
        let e = Experiment { dataset, created_at: at(i as i64 * 10), ..experiment(owner, visibility) };
        s.add_experiment(&e).await.unwrap();
        made.push(e.id);
    }
    // Another dataset's experiment is never listed.
    s.add_experiment(&experiment(owner, Visibility::Public)).await.unwrap();
    let ids = |p: lf_core::Page<Experiment>| (p.total, p.items.iter().map(|e| e.id).collect::<Vec<_>>());
    assert_eq!(
        ids(s.of_dataset(Reach::Lenser(owner), dataset, page(10, 0)).await.unwrap()),
        (3, vec![made[2], made[1], made[0]]),
        "newest first"
    );
    assert_eq!(
        ids(s.of_dataset(Reach::Lenser(other), dataset, page(10, 0)).await.unwrap()),
        (2, vec![made[2], made[0]]),
        "not another's private one"
    );
    assert_eq!(ids(s.of_dataset(Reach::Everything, dataset, page(1, 1)).await.unwrap()), (3, vec![made[1]]));
    let none = s.of_dataset(Reach::Everything, DatasetId::new(), page(10, 0)).await.unwrap();
    assert_eq!(ids(none), (0, vec![]));
}

async fn cells_are_claimed_and_written_once(s: &dyn ExperimentStore) {
    let e = experiment(LenserId::new(), Visibility::Private);
    s.add_experiment(&e).await.unwrap();
    let cell = key(&e, 1, 0, 1);
    assert_eq!(s.claim_cell(cell, "a", at(0), at(100), 3).await.unwrap(), Claim::Attempt(1));
    assert_eq!(s.claim_cell(cell, "b", at(50), at(150), 3).await.unwrap(), Claim::Leased { until: at(100) });
    assert!(s.renew_cell(cell, "a", at(200)).await.unwrap());
    assert!(!s.renew_cell(cell, "b", at(300)).await.unwrap(), "b holds nothing");
    assert_eq!(s.claim_cell(cell, "b", at(201), at(400), 3).await.unwrap(), Claim::Attempt(2), "taken over");
    assert!(!s.save_result(&result(cell, true, 10, false), "a", at(300)).await.unwrap(), "a lost the lease");
    let unclaimed = key(&e, 3, 0, 1);
    assert!(
        !s.save_result(&result(unclaimed, true, 10, false), "a", at(300)).await.unwrap(),
        "never claimed"
    );
    assert!(s.save_result(&result(cell, true, 10, false), "b", at(300)).await.unwrap());
    assert!(!s.save_result(&result(cell, false, 10, false), "b", at(300)).await.unwrap(), "written once");
    assert!(matches!(s.claim_cell(cell, "c", at(500), at(600), 3).await.unwrap(), Claim::Spent { .. }));
    let other = key(&e, 2, 1, 2);
    for n in 1..=3 {
        assert_eq!(s.claim_cell(other, "a", at(n), at(n), 3).await.unwrap(), Claim::Attempt(n as u32));
    }
    assert_eq!(s.claim_cell(other, "a", at(9), at(9), 3).await.unwrap(), Claim::Spent { attempts: 3 });
    // "a" made the last attempt and left: once its lease ends, another
    // writes why the cell has no answer.
    assert!(!s.save_result(&result(other, false, 0, true), "z", at(3)).await.unwrap(), "a's lease holds");
    assert!(s.save_result(&result(other, false, 0, true), "z", at(10)).await.unwrap());
    assert_eq!(s.done(e.id, 1, 4).await.unwrap(), [cell, other]);
    assert!(s.done(e.id, 3, 4).await.unwrap().is_empty());
}

async fn tallies_and_results(s: &dyn ExperimentStore) {
    let e = experiment(LenserId::new(), Visibility::Public);
    s.add_experiment(&e).await.unwrap();
    // Contender 0: positions 1–4, two repeats; passes on odd positions,
    // latencies 10..=80; contender 1: one error, one pass.
    let mut latency = 0;
    for position in 1..=4 {
        for repeat in 1..=2 {
            latency += 10;
            let k = key(&e, position, 0, repeat);
            s.claim_cell(k, "h", at(0), at(1_000), 3).await.unwrap();
            assert!(s.save_result(&result(k, position % 2 == 1, latency, false), "h", at(1)).await.unwrap());
        }
    }
    for (position, error) in [(1, true), (2, false)] {
        let k = key(&e, position, 1, 1);
        s.claim_cell(k, "h", at(0), at(1_000), 3).await.unwrap();
        assert!(s.save_result(&result(k, !error, 999, error), "h", at(1)).await.unwrap());
    }
    let t = s.tallies(e.id).await.unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!((t[0].contender, t[0].cells, t[0].passed, t[0].errors), (0, 8, 4, 0));
    // The answers' dollars (8 × 0.5) and the judge's (4 judged × 0.25).
    assert!((t[0].score_sum - 5.0).abs() < 1e-9 && (t[0].cost_usd - 5.0).abs() < 1e-9);
    assert_eq!((t[0].input_tokens, t[0].output_tokens, t[0].credits), (80, 40, 8));
    assert_eq!((t[0].latency_p50_ms, t[0].latency_p95_ms), (Some(40), Some(80)));
    assert_eq!((t[1].cells, t[1].passed, t[1].errors), (2, 1, 1));
    assert_eq!((t[1].latency_p50_ms, t[1].latency_p95_ms), (Some(999), Some(999)), "errors have no latency");

    let all = s.results(e.id, &ResultFilter::default(), page(3, 0)).await.unwrap();
    assert_eq!(all.total, 10);
    let keys: Vec<(u32, u16, u8)> =
        all.items.iter().map(|r| (r.key.position, r.key.contender, r.key.repeat)).collect();
    assert_eq!(keys, [(1, 0, 1), (1, 0, 2), (1, 1, 1)], "by position, contender, repeat");
    assert_eq!(all.items[0], result(key(&e, 1, 0, 1), true, 10, false), "read back as written");
    assert_eq!(all.items[2].error.as_deref(), Some("the endpoint failed"));
    let failed = ResultFilter { contender: Some(0), passed: Some(false), ..ResultFilter::default() };
    let f = s.results(e.id, &failed, page(10, 0)).await.unwrap();
    assert_eq!((f.total, f.items.iter().all(|r| !r.passed && r.key.contender == 0)), (4, true));
    let tagged = ResultFilter { tag: Some("p2".into()), ..ResultFilter::default() };
    let t = s.results(e.id, &tagged, page(10, 0)).await.unwrap();
    assert_eq!(t.items.iter().map(|r| r.key.position).collect::<Vec<_>>(), [2, 2, 2]);
    let at_two = ResultFilter { contender: Some(0), positions: Some((2, 2)), ..ResultFilter::default() };
    let t = s.results(e.id, &at_two, page(10, 0)).await.unwrap();
    assert_eq!(t.items.iter().map(|r| (r.key.position, r.key.repeat)).collect::<Vec<_>>(), [(2, 1), (2, 2)]);
    assert_eq!(t.items[0], result(key(&e, 2, 0, 1), false, 30, false), "read back as written");
    let none = ResultFilter { tag: Some("p%".into()), ..ResultFilter::default() };
    assert_eq!(s.results(e.id, &none, page(10, 0)).await.unwrap().total, 0, "a tag is matched whole");
    let rows = ResultFilter { positions: Some((2, 3)), ..ResultFilter::default() };
    let r = s.results(e.id, &rows, page(10, 0)).await.unwrap();
    let keys: Vec<(u32, u16, u8)> =
        r.items.iter().map(|r| (r.key.position, r.key.contender, r.key.repeat)).collect();
    assert_eq!(
        keys,
        [(2, 0, 1), (2, 0, 2), (2, 1, 1), (3, 0, 1), (3, 0, 2)],
        "the cases of a page of the matrix"
    );
    let one = ResultFilter { positions: Some((4, 4)), contender: Some(1), ..ResultFilter::default() };
    assert_eq!(s.results(e.id, &one, page(10, 0)).await.unwrap().total, 0);

    let read = s.outcomes(e.id, 0, 2).await.unwrap();
    let want: Vec<Outcome> = [(1, 1), (1, 2), (2, 1), (2, 2)]
        .into_iter()
        .map(|(position, repeat)| {
            let passed = position % 2 == 1;
            Outcome { position, repeat, passed, score: if passed { 1.0 } else { 0.25 } }
        })
        .collect();
    assert_eq!(read, want, "contender 0's cells up to position 2, by position then repeat");
    let errored = s.outcomes(e.id, 1, 4).await.unwrap();
    assert_eq!(errored.iter().map(|o| (o.position, o.passed)).collect::<Vec<_>>(), [(1, false), (2, true)]);
    assert!(s.outcomes(e.id, 5, 4).await.unwrap().is_empty(), "no such contender");
}

async fn matchups_of_shared_experiments(s: &dyn ExperimentStore) {
    let before = s.matchups_version().await.unwrap();
    let owner = LenserId::new();
    let rated = |name: &str| Rated {
        reference: lf_battle::ContenderRef {
            kind: lf_battle::ContenderType::AiModel,
            id: lf_core::ContenderRefId::new(),
        },
        name: name.into(),
    };
    let mut written = Vec::new();
    for visibility in [Visibility::Private, Visibility::Community, Visibility::Public] {
        let e = experiment(owner, visibility);
        s.add_experiment(&e).await.unwrap();
        let k = key(&e, 3, 1, 2);
        s.claim_cell(k, "h", at(0), at(1_000), 3).await.unwrap();
        let m = Matchup {
            id: lf_core::BattleId::new(),
            contender: rated("fast"),
            baseline: rated("careful"),
            score: 0.5,
        };
        let r = CellResult {
            matchups: vec![m.clone(), Matchup { id: lf_core::BattleId::new(), score: 1.0, ..m.clone() }],
            ..result(k, true, 5, false)
        };
        assert!(!s.save_result(&r, "not the holder", at(1)).await.unwrap());
        assert!(s.save_result(&r, "h", at(1)).await.unwrap());
        written.push((visibility, r));
    }
    assert!(s.matchups_version().await.unwrap() > before, "written matchups change the version");
    let all = s.matchups().await.unwrap();
    for (visibility, r) in &written {
        let found: Vec<&RatedMatchup> =
            all.iter().filter(|m| r.matchups.iter().any(|w| w.id == m.matchup.id)).collect();
        if *visibility == Visibility::Private {
            assert!(found.is_empty(), "a private experiment's matchups are rated for nobody");
            continue;
        }
        assert_eq!(found.len(), 2, "{visibility:?}: each matchup once");
        for m in found {
            let want = RatedMatchup {
                matchup: r.matchups.iter().find(|w| w.id == m.matchup.id).unwrap().clone(),
                tags: r.tags.clone(),
                at: r.created_at,
            };
            assert_eq!(*m, want, "read back as written, with the case's tags");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_memory_store_keeps_the_contract() {
        pollster::block_on(super::suite(std::sync::Arc::new(crate::experiment::MemoryExperiments::new())));
    }
}
