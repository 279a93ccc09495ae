//! Bradley–Terry on synthetic battles drawn from known strengths: the fit
//! ranks contenders in their true order, the 95% intervals cover the true
//! ratings in most runs, and the result does not depend on the order in
//! which battles are fed in.

use lf_battle::rating::{LeaderboardOptions, SplitMix64, leaderboard};
use lf_battle::{BattleResult, BattleType, ContenderRef, ContenderType, ResultEntry};
use lf_core::{BattleId, ContenderRefId, Timestamp};

struct World {
    refs: Vec<ContenderRef>,
    /// True Elo-scale ratings, centred on 1000.
    truth: Vec<f64>,
}

impl World {
    fn new(n: usize, spacing: f64) -> Self {
        let refs = (0..n)
            .map(|_| ContenderRef { kind: ContenderType::AiModel, id: ContenderRefId::new() })
            .collect();
        let mid = (n as f64 - 1.0) / 2.0;
        let truth = (0..n).map(|i| 1000.0 + spacing * (i as f64 - mid)).collect();
        Self { refs, truth }
    }

    fn strength(&self, i: usize) -> f64 {
        10f64.powf((self.truth[i] - 1000.0) / 400.0)
    }

    /// A battle among `seats` ranked by Plackett–Luce sampling (repeatedly
    /// pick the next best with probability proportional to strength): its
    /// pairwise marginals follow Bradley–Terry for duels.
    fn battle(&self, rng: &mut SplitMix64, seats: &[usize], at: i64) -> BattleResult {
        let mut left: Vec<usize> = seats.to_vec();
        let mut entries = Vec::new();
        let mut rank = 1;
        while !left.is_empty() {
            let total: f64 = left.iter().map(|i| self.strength(*i)).sum();
            let mut x = rng.unit() * total;
            let mut pick = left.len() - 1;
            for (k, i) in left.iter().enumerate() {
                x -= self.strength(*i);
                if x < 0.0 {
                    pick = k;
                    break;
                }
            }
            let i = left.remove(pick);
            entries.push(ResultEntry {
                reference: self.refs[i],
                display_name: format!("model {i}"),
                rank,
                style: None,
            });
            rank += 1;
        }
        BattleResult {
            battle_id: BattleId::new(),
            tags: Vec::new(),
            battle_type: BattleType::AiVsAi,
            closed_at: Timestamp::from_micros(at),
            entries,
        }
    }

    fn duels(&self, seed: u64, n: usize) -> Vec<BattleResult> {
        let mut rng = SplitMix64::new(seed);
        let k = self.refs.len();
        (0..n)
            .map(|t| {
                let a = rng.below(k);
                let b = (a + 1 + rng.below(k - 1)) % k;
                self.battle(&mut rng, &[a, b], t as i64)
            })
            .collect()
    }
}

#[test]
fn fitted_ratings_rank_contenders_in_their_true_order() {
    let w = World::new(10, 80.0);
    let results = w.duels(7, 4_000);
    let board = leaderboard(&results, LeaderboardOptions { rounds: 50, ..Default::default() });
    assert_eq!(board.ratings.len(), 10);
    let mut by_rating = board.ratings.clone();
    by_rating.sort_by(|a, b| b.rating.total_cmp(&a.rating));
    let got: Vec<ContenderRef> = by_rating.iter().map(|r| r.reference).collect();
    let want: Vec<ContenderRef> = w.refs.iter().rev().copied().collect();
    assert_eq!(got, want, "ratings in true order");
    for r in &board.ratings {
        let i = w.refs.iter().position(|x| *x == r.reference).unwrap();
        assert!((r.rating - w.truth[i]).abs() < 60.0, "{} vs true {}", r.rating, w.truth[i]);
    }
}

#[test]
fn multi_contender_battles_with_shared_ranks_rank_in_true_order() {
    let w = World::new(8, 100.0);
    let mut rng = SplitMix64::new(11);
    let mut results = Vec::new();
    for t in 0..1_500 {
        let n = 2 + rng.below(4);
        let mut seats: Vec<usize> = Vec::new();
        while seats.len() < n {
            let i = rng.below(8);
            if !seats.contains(&i) {
                seats.push(i);
            }
        }
        let mut r = w.battle(&mut rng, &seats, t);
        // Every tenth battle, the last two places share a rank (ties count half).
        if t % 10 == 0 {
            let last = r.entries.len() - 1;
            r.entries[last].rank = r.entries[last - 1].rank;
        }
        results.push(r);
    }
    let board = leaderboard(&results, LeaderboardOptions { rounds: 20, ..Default::default() });
    let mut by_rating = board.ratings.clone();
    by_rating.sort_by(|a, b| b.rating.total_cmp(&a.rating));
    let got: Vec<ContenderRef> = by_rating.iter().map(|r| r.reference).collect();
    assert_eq!(got, w.refs.iter().rev().copied().collect::<Vec<_>>());
    assert!(board.ratings.iter().any(|r| r.ties > 0));
}

#[test]
fn intervals_cover_the_true_ratings_in_most_runs() {
    let w = World::new(8, 60.0);
    let (mut covered, mut total) = (0, 0);
    for run in 0..20u64 {
        let results = w.duels(1_000 + run, 1_200);
        let options = LeaderboardOptions { rounds: 200, seed: run, ..Default::default() };
        let board = leaderboard(&results, options);
        for r in &board.ratings {
            let i = w.refs.iter().position(|x| *x == r.reference).unwrap();
            let interval = r.interval.expect("hundreds of battles each give an interval");
            assert!(interval.lower <= r.rating && r.rating <= interval.upper);
            total += 1;
            if (interval.lower..=interval.upper).contains(&w.truth[i]) {
                covered += 1;
            }
        }
    }
    let rate = covered as f64 / total as f64;
    eprintln!("95% intervals covered the true rating {covered} times out of {total}");
    assert!(rate >= 0.85, "95% intervals covered the truth {covered} times out of {total}");
    assert!(rate < 1.0 || total < 50, "intervals this wide say nothing: {covered}/{total}");
}

#[test]
fn the_order_of_battles_does_not_matter() {
    let w = World::new(12, 50.0);
    let results = w.duels(3, 2_000);
    let options = LeaderboardOptions { rounds: 40, ..Default::default() };
    let a = leaderboard(&results, options);
    let mut shuffled = results.clone();
    shuffled.reverse();
    let mut rng = SplitMix64::new(99);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i + 1));
    }
    for r in shuffled.iter_mut() {
        r.entries.reverse();
    }
    let b = leaderboard(&shuffled, options);
    assert_eq!(a, b, "bit-for-bit the same leaderboard");
    assert_eq!(a.ratings[0].display_name, b.ratings[0].display_name);
    let other_seed = leaderboard(&results, LeaderboardOptions { seed: 1, ..options });
    assert_eq!(
        a.ratings.iter().map(|r| r.rating).collect::<Vec<_>>(),
        other_seed.ratings.iter().map(|r| r.rating).collect::<Vec<_>>(),
        "the point estimates do not depend on the seed"
    );
}

#[test]
fn ordered_by_lower_bound() {
    let w = World::new(6, 120.0);
    let board = leaderboard(&w.duels(5, 900), LeaderboardOptions::default());
    let lower = |r: &lf_battle::Rating| r.interval.expect("an interval").lower;
    assert!(board.ratings.windows(2).all(|p| lower(&p[0]) >= lower(&p[1])));
}
