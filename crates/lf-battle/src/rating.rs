//! Bradley–Terry ratings across closed battles, with bootstrap intervals.
//!
//! Every pair of contenders ranked in one battle is one comparison: the
//! better-ranked wins, equal ranks count half a win each. Contenders are
//! identified by their [`ContenderRef`], so a model that fought in a hundred
//! battles has one rating.
//!
//! The model: contender i has a strength `p_i = e^θ_i` and beats j with
//! probability `p_i / (p_i + p_j)`. The log-strengths are fitted by maximum
//! likelihood with Newton's method over the comparisons aggregated into pair
//! counts (so one pass costs the number of distinct pairs, however many
//! battles there are), each Newton system solved by preconditioned conjugate
//! gradients; see `fit`. Each contender also plays one virtual drawn game
//! against a fixed opponent of strength 1: a weak prior that keeps the
//! estimate finite for a contender that always won (or lost) and makes the
//! fit unique on a disconnected comparison graph. The fit stops when a Newton
//! step moves no log-strength by more than 1e-5 (0.004 Elo points); the
//! error left is about the square of that.
//!
//! Ratings are on the Elo scale (400 points is 10:1 odds), centred so that
//! the mean rating of all contenders is 1000. The 95% interval is the
//! percentile interval of `rounds` bootstrap refits, each on the battles
//! resampled with replacement (whole battles, so the comparisons of one
//! battle stay together), drawn from a fixed-seed generator.
//!
//! Unlike the hosted original's rating, which was updated battle by battle
//! and so depended on the order of the matches, the result here is a pure
//! function of the set of results and the options: battles are sorted by id
//! before anything else, contenders by reference, and every sum runs in that
//! order.

use std::collections::{BTreeMap, HashMap};

use lf_core::{BattleId, LfError, LfResult, Timestamp};

use crate::model::{BattleResult, ContenderRef};

/// Options of a leaderboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderboardOptions {
    /// Fewest battles a contender needs before its rating is shown (it is
    /// fitted either way, as every comparison informs the others).
    pub min_battles: u32,
    /// Bootstrap rounds for the intervals (0: intervals collapse onto the
    /// rating).
    pub rounds: u32,
    /// Seed of the bootstrap's generator.
    pub seed: u64,
}

impl LeaderboardOptions {
    /// The default minimum of battles.
    pub const DEFAULT_MIN_BATTLES: u32 = 5;
    /// The default number of bootstrap rounds.
    pub const DEFAULT_ROUNDS: u32 = 200;
    /// Most bootstrap rounds a caller may ask for.
    pub const MAX_ROUNDS: u32 = 1_000;
    /// The default seed.
    pub const DEFAULT_SEED: u64 = 0x4C46_4254_5261_7465;

    /// Checks `min_battles` in 1..=10,000 and `rounds` in 0..=1,000.
    pub fn new(min_battles: Option<i64>, rounds: Option<i64>) -> LfResult<Self> {
        let min_battles = min_battles.unwrap_or(i64::from(Self::DEFAULT_MIN_BATTLES));
        if !(1..=10_000).contains(&min_battles) {
            return Err(LfError::invalid_argument(format!(
                "min_battles must be between 1 and 10000, got {min_battles}"
            ))
            .with_field("min_battles"));
        }
        let rounds = rounds.unwrap_or(i64::from(Self::DEFAULT_ROUNDS));
        if !(0..=i64::from(Self::MAX_ROUNDS)).contains(&rounds) {
            return Err(LfError::invalid_argument(format!(
                "bootstrap_rounds must be between 0 and {}, got {rounds}",
                Self::MAX_ROUNDS
            ))
            .with_field("bootstrap_rounds"));
        }
        Ok(Self { min_battles: min_battles as u32, rounds: rounds as u32, seed: Self::DEFAULT_SEED })
    }
}

impl Default for LeaderboardOptions {
    fn default() -> Self {
        Self {
            min_battles: Self::DEFAULT_MIN_BATTLES,
            rounds: Self::DEFAULT_ROUNDS,
            seed: Self::DEFAULT_SEED,
        }
    }
}

/// One contender's rating.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    /// Who.
    pub reference: ContenderRef,
    /// Its display name in its most recent closed battle.
    pub display_name: String,
    /// The fitted rating (mean of all contenders: 1000).
    pub rating: f64,
    /// Lower end of the 95% bootstrap interval.
    pub lower: f64,
    /// Upper end of the 95% bootstrap interval.
    pub upper: f64,
    /// Closed battles it took part in.
    pub battles: u32,
    /// Pairwise comparisons won.
    pub wins: u32,
    /// Pairwise comparisons lost.
    pub losses: u32,
    /// Pairwise comparisons tied.
    pub ties: u32,
}

/// Ratings of every contender with enough battles, best lower bound first
/// (then higher rating, then reference).
#[derive(Clone, Debug, PartialEq)]
pub struct Leaderboard {
    /// The rated contenders, in order.
    pub ratings: Vec<Rating>,
    /// Battles that counted (those with at least two contenders).
    pub battles: u32,
    /// Contenders fitted, shown or not.
    pub contenders: u32,
    /// Contenders left out for having fewer than `min_battles` battles.
    pub unrated: u32,
    /// The options used.
    pub options: LeaderboardOptions,
}

/// A small, fast, well-distributed generator (SplitMix64): enough for
/// resampling, and reproducible everywhere.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; the bias is
    /// below 2^-32 for the sizes used here).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Weight of the virtual drawn game each contender plays against strength 1.
const PRIOR_GAMES: f64 = 1.0;
/// Convergence: the largest Newton step on any log-strength.
const TOLERANCE: f64 = 1e-5;
const MAX_NEWTON_STEPS: usize = 100;
const MAX_CG_STEPS: usize = 200;
/// Largest change of a log-strength in one Newton step (about 350 Elo):
/// keeps the first steps from a cold start from overshooting.
const MAX_STEP: f64 = 2.0;
const ELO: f64 = 400.0 / std::f64::consts::LN_10;

/// The distinct pairs `(i, j)`, `i < j`, of the comparisons.
struct Pairs {
    i: Vec<u32>,
    j: Vec<u32>,
}

/// One pair's comparisons in one fit: `n` of them, of which `a` won `w`
/// (ties half).
#[derive(Clone, Copy)]
struct PairCount {
    a: u32,
    b: u32,
    n: f64,
    w: f64,
}

/// The pairs with at least one comparison, packed for the fit's passes.
fn pack(pairs: &Pairs, n: &[f64], w: &[f64], out: &mut Vec<PairCount>) {
    out.clear();
    out.extend((0..n.len()).filter(|k| n[*k] > 0.0).map(|k| PairCount {
        a: pairs.i[k],
        b: pairs.j[k],
        n: n[k],
        w: w[k],
    }));
}

/// Buffers reused across fits.
#[derive(Default)]
struct Workspace {
    wins: Vec<f64>,
    grad: Vec<f64>,
    diag: Vec<f64>,
    /// Per pair: `n·π·(1−π)`, the pair's weight in the Hessian.
    h: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    d: Vec<f64>,
    q: Vec<f64>,
}

fn resize(v: &mut Vec<f64>, n: usize) {
    v.clear();
    v.resize(n, 0.0);
}

/// Fits log-strengths `theta` (starting from its values) by maximising the
/// log-likelihood of `n[k]` comparisons of pair k, of which the
/// lower-indexed contender won `w[k]` (ties half), plus the prior.
///
/// The objective is concave with a positive-definite negative Hessian (a
/// weighted graph Laplacian plus the prior's diagonal), so Newton's method
/// converges quadratically; each Newton system is solved by conjugate
/// gradients with a Jacobi preconditioner, whose products cost one pass over
/// the pairs without a division. From the full fit, a bootstrap refit takes
/// a few Newton steps of a few dozen passes in all, where the classic MM
/// iteration needed hundreds.
fn fit(pairs: &[PairCount], theta: &mut [f64], ws: &mut Workspace) {
    let m = theta.len();
    let np = pairs.len();
    resize(&mut ws.wins, m);
    for pc in pairs {
        ws.wins[pc.a as usize] += pc.w;
        ws.wins[pc.b as usize] += pc.n - pc.w;
    }
    ws.h.clear();
    ws.h.resize(np, 0.0);
    for _ in 0..MAX_NEWTON_STEPS {
        // Gradient and Hessian at theta.
        resize(&mut ws.grad, m);
        resize(&mut ws.diag, m);
        let p: &mut Vec<f64> = &mut ws.z;
        p.clear();
        p.extend(theta.iter().map(|t| t.exp()));
        for (((g, d), &pc), &won) in ws.grad.iter_mut().zip(ws.diag.iter_mut()).zip(p.iter()).zip(&ws.wins) {
            let s = pc / (pc + 1.0);
            *g = won + PRIOR_GAMES * (0.5 - s);
            *d = PRIOR_GAMES * s * (1.0 - s);
        }
        for (pc, hk) in pairs.iter().zip(ws.h.iter_mut()) {
            let (a, b) = (pc.a as usize, pc.b as usize);
            let pi = p[a] / (p[a] + p[b]);
            ws.grad[a] -= pc.n * pi;
            ws.grad[b] -= pc.n * (1.0 - pi);
            let h = pc.n * pi * (1.0 - pi);
            *hk = h;
            ws.diag[a] += h;
            ws.diag[b] += h;
        }
        // Solve H·x = grad by preconditioned conjugate gradients.
        let gmax = ws.grad.iter().fold(0.0f64, |acc, g| acc.max(g.abs()));
        if gmax == 0.0 {
            break;
        }
        // Inexact Newton: solve loosely while far from the optimum, tightly
        // near it (superlinear convergence at a fraction of the CG steps).
        let forcing = gmax.sqrt().clamp(1e-10, 0.1);
        resize(&mut ws.x, m);
        ws.r.clear();
        ws.r.extend_from_slice(&ws.grad);
        ws.z.clear();
        ws.z.extend(ws.r.iter().zip(&ws.diag).map(|(r, d)| r / d));
        ws.d.clear();
        ws.d.extend_from_slice(&ws.z);
        let mut rz: f64 = ws.r.iter().zip(&ws.z).map(|(r, z)| r * z).sum();
        for _ in 0..MAX_CG_STEPS {
            ws.q.clear();
            ws.q.extend(ws.d.iter().zip(&ws.diag).map(|(d, g)| d * g));
            for (pc, &h) in pairs.iter().zip(&ws.h) {
                let (a, b) = (pc.a as usize, pc.b as usize);
                ws.q[a] -= h * ws.d[b];
                ws.q[b] -= h * ws.d[a];
            }
            let dq: f64 = ws.d.iter().zip(&ws.q).map(|(d, q)| d * q).sum();
            if dq <= 0.0 {
                break;
            }
            let alpha = rz / dq;
            let mut rmax: f64 = 0.0;
            for c in 0..m {
                ws.x[c] += alpha * ws.d[c];
                ws.r[c] -= alpha * ws.q[c];
                rmax = rmax.max(ws.r[c].abs());
            }
            if rmax <= forcing * gmax {
                break;
            }
            let mut rz_next = 0.0;
            for c in 0..m {
                ws.z[c] = ws.r[c] / ws.diag[c];
                rz_next += ws.r[c] * ws.z[c];
            }
            let beta = rz_next / rz;
            rz = rz_next;
            for c in 0..m {
                ws.d[c] = ws.z[c] + beta * ws.d[c];
            }
        }
        let step = ws.x.iter().fold(0.0f64, |acc, x| acc.max(x.abs()));
        let scale = if step > MAX_STEP { MAX_STEP / step } else { 1.0 };
        for (t, x) in theta.iter_mut().zip(&ws.x) {
            *t += scale * x;
        }
        if step < TOLERANCE {
            break;
        }
    }
}

/// Elo-scale ratings of log-strengths `theta`, centred on 1000.
fn ratings_of(theta: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let mean = theta.iter().sum::<f64>() / theta.len() as f64;
    out.extend(theta.iter().map(|t| 1000.0 + ELO * (t - mean)));
}

/// The `q`-quantile of sorted `xs`, interpolating between order statistics.
fn quantile(xs: &[f64], q: f64) -> f64 {
    let at = q * (xs.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    xs[lo] + (xs[hi] - xs[lo]) * (at - lo as f64)
}

/// Rates the contenders of `results` (see the module docs).
pub fn leaderboard(results: &[BattleResult], options: LeaderboardOptions) -> Leaderboard {
    // Canonical order: by battle id, whatever order the store returned.
    let mut order: Vec<&BattleResult> = results.iter().filter(|r| r.entries.len() >= 2).collect();
    order.sort_by_key(|r| r.battle_id);
    order.dedup_by_key(|r| r.battle_id);

    // Contenders by reference; the display name of the latest battle.
    let mut names: BTreeMap<ContenderRef, (Timestamp, BattleId, &str)> = BTreeMap::new();
    for r in &order {
        for e in &r.entries {
            let key = (r.closed_at, r.battle_id, e.display_name.as_str());
            names
                .entry(e.reference)
                .and_modify(|v| {
                    if (key.0, key.1) > (v.0, v.1) {
                        *v = key;
                    }
                })
                .or_insert(key);
        }
    }
    let refs: Vec<ContenderRef> = names.keys().copied().collect();
    let index: HashMap<ContenderRef, u32> = refs.iter().enumerate().map(|(i, r)| (*r, i as u32)).collect();
    let m = refs.len();

    // Each battle's comparisons as (pair, outcome for the lower index).
    let mut pair_index: HashMap<(u32, u32), u32> = HashMap::new();
    let mut pairs = Pairs { i: Vec::new(), j: Vec::new() };
    let mut comparisons: Vec<(u32, f64)> = Vec::new();
    let mut starts: Vec<u32> = Vec::with_capacity(order.len() + 1);
    let mut battles = vec![0u32; m];
    let (mut wins, mut losses, mut ties) = (vec![0u32; m], vec![0u32; m], vec![0u32; m]);
    let mut seats: Vec<(u32, u8)> = Vec::new();
    for r in &order {
        starts.push(comparisons.len() as u32);
        seats.clear();
        seats.extend(r.entries.iter().map(|e| (index[&e.reference], e.rank)));
        seats.sort_unstable();
        seats.dedup_by_key(|s| s.0);
        for (a, &(ia, ra)) in seats.iter().enumerate() {
            battles[ia as usize] += 1;
            for &(ib, rb) in &seats[a + 1..] {
                let k = *pair_index.entry((ia, ib)).or_insert_with(|| {
                    pairs.i.push(ia);
                    pairs.j.push(ib);
                    (pairs.i.len() - 1) as u32
                });
                let s = match ra.cmp(&rb) {
                    std::cmp::Ordering::Less => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Greater => 0.0,
                };
                let (ia, ib) = (ia as usize, ib as usize);
                if s == 1.0 {
                    wins[ia] += 1;
                    losses[ib] += 1;
                } else if s == 0.0 {
                    wins[ib] += 1;
                    losses[ia] += 1;
                } else {
                    ties[ia] += 1;
                    ties[ib] += 1;
                }
                comparisons.push((k, s));
            }
        }
    }
    starts.push(comparisons.len() as u32);
    let npairs = pairs.i.len();

    let mut n = vec![0.0; npairs];
    let mut w = vec![0.0; npairs];
    for &(k, s) in &comparisons {
        n[k as usize] += 1.0;
        w[k as usize] += s;
    }
    let mut ws = Workspace::default();
    let mut packed = Vec::with_capacity(npairs);
    let mut fitted = vec![0.0; m];
    if m > 0 {
        pack(&pairs, &n, &w, &mut packed);
        fit(&packed, &mut fitted, &mut ws);
    }
    let mut point = Vec::new();
    ratings_of(&fitted, &mut point);

    // Bootstrap: resample whole battles, refit from the full fit.
    let rounds = if m == 0 { 0 } else { options.rounds as usize };
    let mut samples = vec![0.0; rounds * m];
    let mut rng = SplitMix64::new(options.seed);
    let mut drawn = vec![0u32; order.len()];
    let mut p = vec![0.0; m];
    let mut round_ratings = Vec::new();
    for round in 0..rounds {
        drawn.iter_mut().for_each(|d| *d = 0);
        for _ in 0..order.len() {
            drawn[rng.below(order.len())] += 1;
        }
        n.iter_mut().for_each(|x| *x = 0.0);
        w.iter_mut().for_each(|x| *x = 0.0);
        for (b, &times) in drawn.iter().enumerate() {
            if times == 0 {
                continue;
            }
            let t = f64::from(times);
            for &(k, s) in &comparisons[starts[b] as usize..starts[b + 1] as usize] {
                n[k as usize] += t;
                w[k as usize] += t * s;
            }
        }
        p.copy_from_slice(&fitted);
        pack(&pairs, &n, &w, &mut packed);
        fit(&packed, &mut p, &mut ws);
        ratings_of(&p, &mut round_ratings);
        for (c, r) in round_ratings.iter().enumerate() {
            samples[c * rounds + round] = *r;
        }
    }

    let mut ratings = Vec::new();
    let mut unrated = 0;
    for (c, reference) in refs.iter().enumerate() {
        if battles[c] < options.min_battles {
            unrated += 1;
            continue;
        }
        let (lower, upper) = if rounds == 0 {
            (point[c], point[c])
        } else {
            let xs = &mut samples[c * rounds..(c + 1) * rounds];
            xs.sort_by(f64::total_cmp);
            (quantile(xs, 0.025), quantile(xs, 0.975))
        };
        ratings.push(Rating {
            reference: *reference,
            display_name: names[reference].2.to_owned(),
            rating: point[c],
            lower,
            upper,
            battles: battles[c],
            wins: wins[c],
            losses: losses[c],
            ties: ties[c],
        });
    }
    ratings.sort_by(|a, b| {
        b.lower.total_cmp(&a.lower).then(b.rating.total_cmp(&a.rating)).then(a.reference.cmp(&b.reference))
    });
    Leaderboard { ratings, battles: order.len() as u32, contenders: m as u32, unrated, options }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BattleType, ContenderType, ResultEntry};

    fn duel(a: ContenderRef, b: ContenderRef, a_rank: u8, b_rank: u8) -> BattleResult {
        BattleResult {
            battle_id: BattleId::new(),
            battle_type: BattleType::AiVsAi,
            closed_at: Timestamp::from_micros(0),
            entries: vec![
                ResultEntry { reference: a, display_name: "a".into(), rank: a_rank },
                ResultEntry { reference: b, display_name: "b".into(), rank: b_rank },
            ],
        }
    }

    fn r() -> ContenderRef {
        ContenderRef { kind: ContenderType::AiModel, id: Default::default() }
    }

    #[test]
    fn undefeated_contenders_stay_finite_and_ties_count_half() {
        let (a, b, c) = (r(), r(), r());
        let mut results = Vec::new();
        for _ in 0..10 {
            results.push(duel(a, b, 1, 2));
            results.push(duel(b, c, 1, 1));
        }
        let board = leaderboard(&results, LeaderboardOptions { rounds: 50, ..Default::default() });
        assert_eq!(board.ratings.len(), 3);
        assert_eq!(board.ratings[0].reference, a);
        assert!(
            board.ratings.iter().all(|x| x.rating.is_finite() && x.lower <= x.rating && x.rating <= x.upper)
        );
        let rb = board.ratings.iter().find(|x| x.reference == b).unwrap();
        let rc = board.ratings.iter().find(|x| x.reference == c).unwrap();
        assert_eq!((rb.wins, rb.losses, rb.ties), (0, 10, 10));
        assert!(rb.rating < 1000.0 && rc.rating < 1000.0 && rc.rating > rb.rating - 1.0);
        let mean: f64 = board.ratings.iter().map(|x| x.rating).sum::<f64>() / 3.0;
        assert!((mean - 1000.0).abs() < 1e-6, "centred on 1000");
    }

    #[test]
    fn minimum_battles_hides_but_still_fits() {
        let (a, b, c) = (r(), r(), r());
        let mut results = vec![duel(a, c, 1, 2)];
        for _ in 0..5 {
            results.push(duel(a, b, 1, 2));
        }
        let board =
            leaderboard(&results, LeaderboardOptions { min_battles: 5, rounds: 0, ..Default::default() });
        assert_eq!(board.ratings.len(), 2);
        assert_eq!(board.unrated, 1);
        assert_eq!(board.contenders, 3);
        assert!(board.ratings.iter().all(|x| x.lower == x.rating && x.upper == x.rating));
    }

    #[test]
    fn empty_and_single_entry_results() {
        let board = leaderboard(&[], LeaderboardOptions::default());
        assert!(board.ratings.is_empty() && board.battles == 0);
        let lonely = BattleResult {
            entries: vec![ResultEntry { reference: r(), display_name: "x".into(), rank: 1 }],
            ..duel(r(), r(), 1, 2)
        };
        assert_eq!(leaderboard(&[lonely], LeaderboardOptions::default()).battles, 0);
    }

    #[test]
    fn options_are_checked() {
        assert!(LeaderboardOptions::new(Some(0), None).is_err());
        assert!(LeaderboardOptions::new(None, Some(1_001)).is_err());
        assert_eq!(LeaderboardOptions::new(None, None).unwrap(), LeaderboardOptions::default());
    }

    #[test]
    fn generator_is_uniform_enough() {
        let mut g = SplitMix64::new(1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[g.below(10)] += 1;
        }
        assert!(counts.iter().all(|c| (9_500..10_500).contains(c)), "{counts:?}");
        assert!((0..1000).map(|_| g.unit()).all(|u| (0.0..1.0).contains(&u)));
    }
}
