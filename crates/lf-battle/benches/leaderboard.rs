//! `get_leaderboard`'s computation: Bradley–Terry over 100,000 closed battles
//! among 500 contenders, with 200 bootstrap rounds (the issue's target: under
//! 1 s on one core).
//!
//! ```text
//! cargo bench -p lf-battle --bench leaderboard -- --warm-up-time 1 --measurement-time 10
//! ```
//!
//! Battles are duels between uniformly drawn contenders whose true ratings
//! are spread over 1,000 Elo points, decided by the Bradley–Terry model with
//! a deterministic generator, so every run measures the same input. Cases:
//! - `bootstrap_200/100k_battles_500_contenders`: the full leaderboard;
//! - `fit_only/100k_battles_500_contenders`: no bootstrap (aggregation and
//!   one fit), for comparison.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use lf_battle::rating::{LeaderboardOptions, SplitMix64, leaderboard};
use lf_battle::{BattleResult, BattleType, ContenderRef, ContenderType, ResultEntry};
use lf_core::{BattleId, ContenderRefId, Timestamp};

const BATTLES: usize = 100_000;
const CONTENDERS: usize = 500;

fn battles() -> Vec<BattleResult> {
    let mut rng = SplitMix64::new(2026);
    let refs: Vec<ContenderRef> = (0..CONTENDERS)
        .map(|_| ContenderRef { kind: ContenderType::AiModel, id: ContenderRefId::new() })
        .collect();
    let strength: Vec<f64> =
        (0..CONTENDERS).map(|i| 10f64.powf(1000.0 * (i as f64 / CONTENDERS as f64 - 0.5) / 400.0)).collect();
    (0..BATTLES)
        .map(|t| {
            let a = rng.below(CONTENDERS);
            let b = (a + 1 + rng.below(CONTENDERS - 1)) % CONTENDERS;
            let a_wins = rng.unit() < strength[a] / (strength[a] + strength[b]);
            let entry = |i: usize, won: bool| ResultEntry {
                reference: refs[i],
                display_name: format!("model {i}"),
                rank: if won { 1 } else { 2 },
                style: None,
            };
            BattleResult {
                battle_id: BattleId::new(),
                tags: Vec::new(),
                battle_type: BattleType::AiVsAi,
                closed_at: Timestamp::from_micros(t as i64),
                entries: vec![entry(a, a_wins), entry(b, !a_wins)],
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let results = battles();
    let mut g = c.benchmark_group("leaderboard");
    g.sample_size(10);
    g.bench_function("bootstrap_200/100k_battles_500_contenders", |b| {
        b.iter(|| leaderboard(black_box(&results), LeaderboardOptions { rounds: 200, ..Default::default() }))
    });
    g.bench_function("fit_only/100k_battles_500_contenders", |b| {
        b.iter(|| leaderboard(black_box(&results), LeaderboardOptions { rounds: 0, ..Default::default() }))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
