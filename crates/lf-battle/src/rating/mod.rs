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
//! A refit starts from the full fit, whose optimum a resample moves only a
//! little. Where the contenders are few enough for a dense matrix (see
//! `Dense::worth_it`), the Hessian at the full fit is factored once
//! (Cholesky) and each refit takes chord steps with it: a step costs one
//! pass over the pairs and two triangular solves, and each step shrinks the
//! error by the small factor by which a resample's Hessian differs from the
//! full one. A refit that does not converge in a few such steps (a
//! contender left with very few games can make the difference large), and
//! every refit where the contenders are many, finishes with Newton's method
//! as above. Chord steps stop when one moves no log-strength by more than
//! 1e-4 (0.02 Elo points), far below the Monte Carlo error of a percentile
//! interval from a few hundred rounds.
//!
//! The result is a pure function of the set of results and the options, not
//! of the order the battles came in: battles are sorted by id before
//! anything else, contenders by reference, and every sum runs in that order.
//!
//! A rating's interval is `None` where it cannot be estimated (see
//! [`Rating::interval`]), and contenders under `min_battles` are listed with
//! the battles each still needs ([`Unrated`]). What the fit and the
//! bootstrap cost is measured in docs/performance.md.

use std::collections::HashMap;

use lf_core::{BattleId, LfError, LfResult, Timestamp};

use crate::model::{BattleResult, ContenderRef, Style};

mod style;

use style::{Styled, covariates, fit_styled};

/// Options of a leaderboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderboardOptions {
    /// Fewest battles a contender needs before its rating is shown (it is
    /// fitted either way, as every comparison informs the others).
    pub min_battles: u32,
    /// Bootstrap rounds for the intervals (0: no intervals).
    pub rounds: u32,
    /// Seed of the bootstrap's generator.
    pub seed: u64,
    /// Fit answer length and markdown density as covariates (see
    /// [`style::fit_styled`]), so that a contender is not rated up for writing
    /// longer or more formatted answers.
    pub style_control: bool,
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
        Ok(Self {
            min_battles: min_battles as u32,
            rounds: rounds as u32,
            seed: Self::DEFAULT_SEED,
            style_control: false,
        })
    }
}

impl Default for LeaderboardOptions {
    fn default() -> Self {
        Self {
            min_battles: Self::DEFAULT_MIN_BATTLES,
            rounds: Self::DEFAULT_ROUNDS,
            seed: Self::DEFAULT_SEED,
            style_control: false,
        }
    }
}

/// A 95% bootstrap interval of a rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Its lower end.
    pub lower: f64,
    /// Its upper end.
    pub upper: f64,
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
    /// The 95% bootstrap interval, `None` when it cannot be estimated: no
    /// bootstrap rounds, fewer than [`MIN_INTERVAL_BATTLES`] battles, or
    /// resamples that all give (within [`MIN_SPREAD`]) the same rating, as
    /// when every battle it fought ended the same way; a zero-width
    /// interval would claim a certainty the data does not give.
    pub interval: Option<Interval>,
    /// Closed battles it took part in.
    pub battles: u32,
    /// Pairwise comparisons won.
    pub wins: u32,
    /// Pairwise comparisons lost.
    pub losses: u32,
    /// Pairwise comparisons tied.
    pub ties: u32,
}

/// A contender with fewer battles than the leaderboard's `min_battles`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrated {
    /// Who.
    pub reference: ContenderRef,
    /// Its display name in its most recent closed battle.
    pub display_name: String,
    /// Closed battles it took part in.
    pub battles: u32,
    /// More closed battles it needs before its rating is shown.
    pub battles_needed: u32,
}

/// Ratings of every contender with enough battles, best lower bound first
/// (an interval that cannot be estimated after every one that can, then
/// higher rating, then reference).
#[derive(Clone, Debug, PartialEq)]
pub struct Leaderboard {
    /// The rated contenders, in order.
    pub ratings: Vec<Rating>,
    /// Battles that counted (those with at least two contenders).
    pub battles: u32,
    /// Contenders fitted, shown or not.
    pub contenders: u32,
    /// Contenders left out for having fewer than `min_battles` battles,
    /// fewest battles needed first (then reference).
    pub unrated: Vec<Unrated>,
    /// The options used.
    pub options: LeaderboardOptions,
    /// With style control: what length and markdown were worth.
    pub style: Option<StyleEffect>,
}

/// What style was worth in a style-controlled fit, in Elo points: the
/// rating difference that a comparison's covariate of 1 (one answer all the
/// length, or all the markdown density, of the two) adds to the odds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StyleEffect {
    pub length: f64,
    pub markdown: f64,
    /// Comparisons where both answers had a style (the others weigh in
    /// with covariates of 0).
    pub comparisons: u32,
}

/// Fewest battles of a contender for its interval to be estimated: the
/// resamples of a single battle only say whether it was drawn.
pub const MIN_INTERVAL_BATTLES: u32 = 2;
/// Narrowest interval reported, in rating points (the precision ratings are
/// shown with): resamples that spread less than this did not vary.
pub const MIN_SPREAD: f64 = 0.1;

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
/// Convergence of a bootstrap refit by chord steps (0.02 Elo points): far
/// below the Monte Carlo error of the percentile interval itself.
const BOOTSTRAP_TOLERANCE: f64 = 1e-4;
/// Most chord steps in one bootstrap refit before it hands over to Newton's
/// method: a refit that needs more converges too slowly for chord steps to
/// pay.
const MAX_CHORD_STEPS: usize = 12;
const MAX_NEWTON_STEPS: usize = 100;
/// Passes over the pairs a Newton refit of a bootstrap resample typically
/// takes (its Newton steps and their conjugate-gradient steps), as measured
/// (docs/performance.md): the cost model of `Dense::worth_it`.
const NEWTON_REFIT_PASSES: f64 = 60.0;
/// Chord steps a refit typically takes, as measured: each a pass and a solve.
const CHORD_REFIT_STEPS: f64 = 8.0;
const MAX_CG_STEPS: usize = 200;
/// Largest change of a log-strength in one Newton step (about 350 Elo):
/// keeps the first steps from a cold start from overshooting.
const MAX_STEP: f64 = 2.0;
const ELO: f64 = 400.0 / std::f64::consts::LN_10;

/// The comparisons, aggregated by pair for one fit: a contender's pairs with
/// higher-indexed contenders lie together, so that a pass over the pairs
/// reads two dense arrays front to back and keeps the contender's own sums
/// in registers.
#[derive(Default)]
struct Pairs {
    /// Contender `a`'s pairs are `rows[a]..rows[a + 1]`.
    rows: Vec<u32>,
    /// Each pair's other contender, `b > a`.
    b: Vec<u32>,
    /// Each pair's comparisons in this fit; 0 for a pair a bootstrap
    /// resample left out, which then weighs nothing.
    n: Vec<f64>,
    /// Each contender's wins in this fit, ties half.
    wins: Vec<f64>,
}

impl Pairs {
    fn contenders(&self) -> usize {
        self.rows.len() - 1
    }

    /// `(k, a, b)` for every pair `k`, in order.
    fn each(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        self.rows
            .windows(2)
            .enumerate()
            .flat_map(move |(a, w)| (w[0] as usize..w[1] as usize).map(move |k| (k, a, self.b[k] as usize)))
    }
}

/// Every comparison, grouped by pair (pairs in the order of [`Pairs`]):
/// each its battle's index (in canonical order) shifted left by two, plus
/// what the pair's `a` scored in halves (2 a win, 1 a tie, 0 a loss), and
/// the index of its pair.
struct Tally {
    items: Vec<u32>,
    pair: Vec<u32>,
    /// Per pair: running totals of comparisons and halves up to its last
    /// comparison (scratch space of `count`).
    ends: Vec<(u64, u64)>,
}

impl Tally {
    /// Sets `pairs.n` and `pairs.wins`, each comparison counted as many
    /// times as `times` says its battle is. Sums of whole numbers and
    /// halves: exact in any order.
    ///
    /// One pass keeps running totals and writes them to the slot of the
    /// comparison's pair, so that each slot ends up with the totals up to
    /// the pair's last comparison; a pair's counts are then the difference
    /// from the pair before. No branch depends on the data.
    #[inline(never)]
    fn count(&mut self, pairs: &mut Pairs, times: impl Fn(usize) -> u32) {
        let (mut n, mut halves) = (0u64, 0u64);
        for (&item, &k) in self.items.iter().zip(&self.pair) {
            let t = u64::from(times((item >> 2) as usize));
            n += t;
            halves += t * u64::from(item & 3);
            self.ends[k as usize] = (n, halves);
        }
        let m = pairs.contenders();
        resize(&mut pairs.wins, m);
        let mut before = (0u64, 0u64);
        for a in 0..m {
            for k in pairs.rows[a] as usize..pairs.rows[a + 1] as usize {
                let end = self.ends[k];
                let (n, won) = ((end.0 - before.0) as f64, (end.1 - before.1) as f64 / 2.0);
                before = end;
                pairs.n[k] = n;
                pairs.wins[a] += won;
                pairs.wins[pairs.b[k] as usize] += n - won;
            }
        }
    }
}

/// Buffers reused across fits.
#[derive(Default)]
struct Workspace {
    grad: Vec<f64>,
    diag: Vec<f64>,
    /// Per pair: `n·π·(1−π)`, the pair's weight in the Hessian.
    h: Vec<f64>,
    x: Vec<f64>,
    r: Vec<f64>,
    z: Vec<f64>,
    d: Vec<f64>,
    q: Vec<f64>,
    /// [`Dense::solve`]'s working vector.
    y: Vec<f32>,
}

fn resize(v: &mut Vec<f64>, n: usize) {
    v.clear();
    v.resize(n, 0.0);
}

/// The gradient of the log-likelihood of `pairs` plus the prior at `theta`
/// into `ws.grad`. With `HESSIAN`, also the negative Hessian: its diagonal
/// into `ws.diag`, and each pair's weight `n·π·(1−π)` (minus its
/// off-diagonal entry) into `ws.h`.
// Kept out of line, like `Tally::count` and `Dense::solve`: inlined into
// `leaderboard`, the bootstrap's passes run slower (the compiler then keeps
// less of each pass in registers).
#[inline(never)]
fn gradient<const HESSIAN: bool>(pairs: &Pairs, theta: &[f64], ws: &mut Workspace) {
    let m = theta.len();
    resize(&mut ws.grad, m);
    resize(&mut ws.diag, m);
    if HESSIAN {
        resize(&mut ws.h, pairs.b.len());
    }
    let p: &mut Vec<f64> = &mut ws.z;
    p.clear();
    p.extend(theta.iter().map(|t| t.exp()));
    for (((g, d), &pc), &won) in ws.grad.iter_mut().zip(ws.diag.iter_mut()).zip(p.iter()).zip(&pairs.wins) {
        let s = pc / (pc + 1.0);
        *g = won + PRIOR_GAMES * (0.5 - s);
        *d = PRIOR_GAMES * s * (1.0 - s);
    }
    for a in 0..m {
        let row = pairs.rows[a] as usize..pairs.rows[a + 1] as usize;
        let pa = p[a];
        let (mut ga, mut da) = (0.0, 0.0);
        for k in row {
            let (b, n) = (pairs.b[k] as usize, pairs.n[k]);
            let pi = pa / (pa + p[b]);
            ga += n * pi;
            ws.grad[b] -= n * (1.0 - pi);
            if HESSIAN {
                let h = n * pi * (1.0 - pi);
                ws.h[k] = h;
                da += h;
                ws.diag[b] += h;
            }
        }
        ws.grad[a] -= ga;
        ws.diag[a] += da;
    }
}

/// Fits log-strengths `theta` (starting from its values) by maximising the
/// log-likelihood of `pairs`, plus the prior.
///
/// The objective is concave with a positive-definite negative Hessian (a
/// weighted graph Laplacian plus the prior's diagonal), so Newton's method
/// converges quadratically; each Newton system is solved by conjugate
/// gradients with a Jacobi preconditioner, whose products cost one pass over
/// the pairs without a division.
fn fit(pairs: &Pairs, theta: &mut [f64], ws: &mut Workspace) {
    let m = theta.len();
    for _ in 0..MAX_NEWTON_STEPS {
        gradient::<true>(pairs, theta, ws);
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
            for a in 0..m {
                let (da, mut qa) = (ws.d[a], 0.0);
                for k in pairs.rows[a] as usize..pairs.rows[a + 1] as usize {
                    let (b, h) = (pairs.b[k] as usize, ws.h[k]);
                    qa += h * ws.d[b];
                    ws.q[b] -= h * da;
                }
                ws.q[a] -= qa;
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

/// `x·y` with `N` running sums, so that the compiler can keep them in
/// vector registers (one sum would chain every addition to the one before).
fn dot<T, const N: usize>(x: &[T], y: &[T]) -> T
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let (xs, ys) = (x.chunks_exact(N), y.chunks_exact(N));
    let tail = xs.remainder().iter().zip(ys.remainder()).fold(T::default(), |acc, (a, b)| acc + *a * *b);
    let mut acc = [T::default(); N];
    for (a, b) in xs.zip(ys) {
        for k in 0..N {
            acc[k] = acc[k] + a[k] * b[k];
        }
    }
    acc.iter().fold(tail, |sum, x| sum + *x)
}

/// The Cholesky factor `L` (`L·Lᵀ = H`) of the negative Hessian `H` at the
/// full fit, for the bootstrap's chord steps: its lower triangle row by
/// row, in single precision ([`dot`] in eight lanes). A chord step only
/// needs a direction close to Newton's (the gradient, in double precision,
/// decides where the steps end), and at half the size the factor stays in
/// the core's cache next to the pairs, and its solves read half the memory.
struct Dense {
    m: usize,
    /// Row `i` is `l[i·(i+1)/2 ..][..i + 1]`.
    l: Vec<f32>,
}

impl Dense {
    /// Whether the factor pays for itself, in passes over the pairs: a
    /// Newton refit takes [`NEWTON_REFIT_PASSES`] of them, a chord refit
    /// [`CHORD_REFIT_STEPS`] passes and as many solves; a solve (`m²`
    /// single-precision multiply-adds, eight to a vector) costs about as much
    /// as a pass over `m²/4` pairs, and factoring (`m³/3` in double
    /// precision, four to a vector) about `m³/12`. Above 2,000 contenders
    /// the matrix (32 MB while factoring) is not worth holding either.
    fn worth_it(m: usize, pairs: usize, rounds: usize) -> bool {
        let (m, pairs, rounds) = (m as f64, pairs as f64, rounds as f64);
        m <= 2_000.0
            && m * m * m / 12.0 + rounds * CHORD_REFIT_STEPS * (m * m / 4.0 + pairs)
                < rounds * NEWTON_REFIT_PASSES * pairs
    }

    /// Factors the negative Hessian whose diagonal is in `ws.diag` and pair
    /// weights in `ws.h` (as [`gradient`] leaves them), in double
    /// precision. `None` if rounding makes it lose positive definiteness,
    /// which it mathematically has.
    fn factor(pairs: &Pairs, ws: &Workspace) -> Option<Self> {
        let m = pairs.contenders();
        let mut l = vec![0.0; m * m];
        for (c, d) in ws.diag.iter().enumerate() {
            l[c * m + c] = *d;
        }
        for (k, a, b) in pairs.each() {
            // The lower triangle: row b > a, column a.
            l[b * m + a] -= ws.h[k];
        }
        for j in 0..m {
            let (done, row_j) = l.split_at_mut(j * m);
            let row_j = &mut row_j[..m];
            for k in 0..j {
                let row_k = &done[k * m..k * m + k];
                row_j[k] = (row_j[k] - dot::<f64, 4>(&row_j[..k], row_k)) / done[k * m + k];
            }
            let pivot = row_j[j] - dot::<f64, 4>(&row_j[..j], &row_j[..j]);
            if pivot.is_nan() || pivot <= 0.0 {
                return None;
            }
            row_j[j] = pivot.sqrt();
        }
        let packed = (0..m).flat_map(|i| l[i * m..=i * m + i].iter().map(|x| *x as f32)).collect();
        Some(Self { m, l: packed })
    }

    fn row(&self, i: usize) -> &[f32] {
        let start = i * (i + 1) / 2;
        &self.l[start..=start + i]
    }

    /// Overwrites `b` with `H⁻¹·b`, computed in single precision in `y`.
    #[inline(never)]
    fn solve(&self, b: &mut [f64], y: &mut Vec<f32>) {
        y.clear();
        y.extend(b.iter().map(|x| *x as f32));
        // L·z = b.
        for i in 0..self.m {
            let (row, pivot) = self.row(i).split_at(i);
            y[i] = (y[i] - dot::<f32, 8>(row, &y[..i])) / pivot[0];
        }
        // Lᵀ·x = z, a row of L (a column of Lᵀ) at a time.
        for i in (0..self.m).rev() {
            let (row, pivot) = self.row(i).split_at(i);
            y[i] /= pivot[0];
            let yi = y[i];
            for (yk, lik) in y[..i].iter_mut().zip(row) {
                *yk -= lik * yi;
            }
        }
        for (x, z) in b.iter_mut().zip(y.iter()) {
            *x = f64::from(*z);
        }
    }

    /// Refits `theta` (starting from the full fit) to `pairs` by chord
    /// steps: Newton steps with the full fit's Hessian, until what is left
    /// to move on any log-strength is within [`BOOTSTRAP_TOLERANCE`]. False
    /// when that takes more than [`MAX_CHORD_STEPS`] or a step grows too
    /// large; `theta` then holds the last step's values, a fine start for
    /// [`fit`].
    ///
    /// Chord steps converge linearly: each is about the last one times a
    /// rate `r` below 1, so what remains after a step is about
    /// `step·r/(1−r)`, estimated with the rate of the last two steps. That
    /// estimate ends most refits a step earlier than waiting for a step
    /// itself to fall under the tolerance.
    fn refit(&self, pairs: &Pairs, theta: &mut [f64], ws: &mut Workspace) -> bool {
        let mut last = f64::INFINITY;
        for _ in 0..MAX_CHORD_STEPS {
            gradient::<false>(pairs, theta, ws);
            self.solve(&mut ws.grad, &mut ws.y);
            let step = ws.grad.iter().fold(0.0f64, |acc, x| acc.max(x.abs()));
            if !step.is_finite() || step > MAX_STEP {
                return false;
            }
            for (t, x) in theta.iter_mut().zip(&ws.grad) {
                *t += x;
            }
            // No rate before the second step (the first one's is 0).
            let rate = step / last;
            let left = if rate < 1.0 { step * rate / (1.0 - rate) } else { f64::INFINITY };
            if step < BOOTSTRAP_TOLERANCE || (last.is_finite() && left < BOOTSTRAP_TOLERANCE) {
                return true;
            }
            last = step;
        }
        false
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

/// `items` stably sorted by `key`, a contender's index below `m`.
fn sort_by_contender<T: Copy>(items: &[T], m: usize, key: impl Fn(&T) -> u32) -> Vec<T> {
    let mut at = vec![0usize; m + 1];
    for item in items {
        at[key(item) as usize + 1] += 1;
    }
    for c in 0..m {
        at[c + 1] += at[c];
    }
    let mut sorted = items.to_vec();
    for item in items {
        let slot = &mut at[key(item) as usize];
        sorted[*slot] = *item;
        *slot += 1;
    }
    sorted
}

/// Rates the contenders of `results` (see the module docs).
pub fn leaderboard(results: &[BattleResult], options: LeaderboardOptions) -> Leaderboard {
    rate(results, options, true)
}

/// [`leaderboard`], with chord refits allowed or not (tests compare the two).
fn rate(results: &[BattleResult], options: LeaderboardOptions, chord: bool) -> Leaderboard {
    // Canonical order: by battle id, whatever order the store returned.
    let mut order: Vec<&BattleResult> = results.iter().filter(|r| r.entries.len() >= 2).collect();
    order.sort_by_key(|r| r.battle_id);
    order.dedup_by_key(|r| r.battle_id);

    // Contenders by reference, each with the display name of its latest
    // battle: numbered as met, then renumbered in reference order.
    let mut met: HashMap<ContenderRef, u32> = HashMap::new();
    let mut latest: Vec<(ContenderRef, Timestamp, BattleId, &str)> = Vec::new();
    let mut seat_of: Vec<u32> = Vec::new();
    for r in &order {
        for e in &r.entries {
            let next = latest.len() as u32;
            let i = *met.entry(e.reference).or_insert(next);
            if i == next {
                latest.push((e.reference, r.closed_at, r.battle_id, &e.display_name));
            } else {
                let l = &mut latest[i as usize];
                if (r.closed_at, r.battle_id) > (l.1, l.2) {
                    (l.1, l.2, l.3) = (r.closed_at, r.battle_id, &e.display_name);
                }
            }
            seat_of.push(i);
        }
    }
    drop(met);
    let m = latest.len();
    let mut by_ref: Vec<u32> = (0..m as u32).collect();
    by_ref.sort_unstable_by_key(|i| latest[*i as usize].0);
    let mut index = vec![0u32; m];
    for (at, i) in by_ref.iter().enumerate() {
        index[*i as usize] = at as u32;
    }
    let refs: Vec<(ContenderRef, &str)> =
        by_ref.iter().map(|i| (latest[*i as usize].0, latest[*i as usize].3)).collect();

    // Every comparison: its pair (a < b), then its battle and what a scored.
    let mut comparisons: Vec<(u32, u32, u32)> = Vec::new();
    let mut battles = vec![0u32; m];
    let (mut wins, mut losses, mut ties) = (vec![0u32; m], vec![0u32; m], vec![0u32; m]);
    let mut seats: Vec<(u32, u8, Option<Style>)> = Vec::new();
    let mut styled: Vec<Styled> = Vec::new();
    let mut with_style = 0u32;
    let mut seat = seat_of.iter();
    for (battle, r) in order.iter().enumerate() {
        seats.clear();
        seats.extend(r.entries.iter().zip(&mut seat).map(|(e, i)| (index[*i as usize], e.rank, e.style)));
        seats.sort_unstable_by_key(|s| (s.0, s.1));
        seats.dedup_by_key(|s| s.0);
        for (k, &(a, ra, sa)) in seats.iter().enumerate() {
            battles[a as usize] += 1;
            for &(b, rb, sb) in &seats[k + 1..] {
                let (ia, ib) = (a as usize, b as usize);
                let halves = match ra.cmp(&rb) {
                    std::cmp::Ordering::Less => {
                        wins[ia] += 1;
                        losses[ib] += 1;
                        2
                    }
                    std::cmp::Ordering::Equal => {
                        ties[ia] += 1;
                        ties[ib] += 1;
                        1
                    }
                    std::cmp::Ordering::Greater => {
                        wins[ib] += 1;
                        losses[ia] += 1;
                        0
                    }
                };
                comparisons.push((a, b, (battle as u32) << 2 | halves));
                if options.style_control {
                    let x = covariates(sa, sb);
                    with_style += u32::from(x.is_some());
                    let (battle, y) = (battle as u32, f64::from(halves) / 2.0);
                    styled.push(Styled { a, b, battle, y, x: x.unwrap_or([0.0; 2]) });
                }
            }
        }
    }
    // By (a, b, battle): two stable counting sorts of the comparisons,
    // made in battle order.
    let comparisons = sort_by_contender(&sort_by_contender(&comparisons, m, |c| c.1), m, |c| c.0);
    let mut pairs = Pairs { rows: vec![0; m + 1], ..Pairs::default() };
    let mut tally = Tally {
        items: Vec::with_capacity(comparisons.len()),
        pair: Vec::with_capacity(comparisons.len()),
        ends: Vec::new(),
    };
    for (i, &(a, b, item)) in comparisons.iter().enumerate() {
        if i == 0 || (comparisons[i - 1].0, comparisons[i - 1].1) != (a, b) {
            pairs.rows[a as usize + 1] += 1;
            pairs.b.push(b);
        }
        tally.items.push(item);
        tally.pair.push((pairs.b.len() - 1) as u32);
    }
    drop(comparisons);
    tally.ends = vec![(0, 0); pairs.b.len()];
    for a in 0..m {
        pairs.rows[a + 1] += pairs.rows[a];
    }
    pairs.n = vec![0.0; pairs.b.len()];
    tally.count(&mut pairs, |_| 1);

    let mut ws = Workspace::default();
    let mut fitted = vec![0.0; m];
    let mut beta = [0.0; 2];
    if m > 0 {
        fit(&pairs, &mut fitted, &mut ws);
        if options.style_control {
            fit_styled(&styled, |_| 1.0, &mut fitted, &mut beta);
        }
    }
    let mut point = Vec::new();
    ratings_of(&fitted, &mut point);

    // Bootstrap: resample whole battles, refit from the full fit.
    let rounds = if m == 0 { 0 } else { options.rounds as usize };
    let dense = if chord && !options.style_control && rounds > 0 && Dense::worth_it(m, pairs.b.len(), rounds)
    {
        gradient::<true>(&pairs, &fitted, &mut ws);
        Dense::factor(&pairs, &ws)
    } else {
        None
    };
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
        p.copy_from_slice(&fitted);
        if options.style_control {
            let mut b = beta;
            fit_styled(&styled, |k| f64::from(drawn[k]), &mut p, &mut b);
        } else {
            tally.count(&mut pairs, |b| drawn[b]);
            if !dense.as_ref().is_some_and(|d| d.refit(&pairs, &mut p, &mut ws)) {
                fit(&pairs, &mut p, &mut ws);
            }
        }
        ratings_of(&p, &mut round_ratings);
        for (c, r) in round_ratings.iter().enumerate() {
            samples[c * rounds + round] = *r;
        }
    }

    let mut ratings = Vec::new();
    let mut unrated = Vec::new();
    for (c, (reference, display_name)) in refs.iter().enumerate() {
        if battles[c] < options.min_battles {
            unrated.push(Unrated {
                reference: *reference,
                display_name: (*display_name).to_owned(),
                battles: battles[c],
                battles_needed: options.min_battles - battles[c],
            });
            continue;
        }
        let interval = if rounds == 0 || battles[c] < MIN_INTERVAL_BATTLES {
            None
        } else {
            let xs = &mut samples[c * rounds..(c + 1) * rounds];
            xs.sort_by(f64::total_cmp);
            let (lower, upper) = (quantile(xs, 0.025), quantile(xs, 0.975));
            (upper - lower >= MIN_SPREAD).then_some(Interval { lower, upper })
        };
        ratings.push(Rating {
            reference: *reference,
            display_name: (*display_name).to_owned(),
            rating: point[c],
            interval,
            battles: battles[c],
            wins: wins[c],
            losses: losses[c],
            ties: ties[c],
        });
    }
    // Descending lower bounds, `None` after every `Some`.
    let lower = |r: &Rating| r.interval.map_or(f64::NEG_INFINITY, |i| i.lower);
    ratings.sort_by(|a, b| {
        lower(b).total_cmp(&lower(a)).then(b.rating.total_cmp(&a.rating)).then(a.reference.cmp(&b.reference))
    });
    unrated.sort_by(|a, b| a.battles_needed.cmp(&b.battles_needed).then(a.reference.cmp(&b.reference)));
    let style = options.style_control.then(|| StyleEffect {
        length: ELO * beta[0],
        markdown: ELO * beta[1],
        comparisons: with_style,
    });
    Leaderboard { ratings, battles: order.len() as u32, contenders: m as u32, unrated, options, style }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BattleType, ContenderType, ResultEntry};

    fn duel(a: ContenderRef, b: ContenderRef, a_rank: u8, b_rank: u8) -> BattleResult {
        BattleResult {
            battle_id: BattleId::new(),
            tags: Vec::new(),
            battle_type: BattleType::AiVsAi,
            closed_at: Timestamp::from_micros(0),
            entries: vec![
                ResultEntry { reference: a, display_name: "a".into(), rank: a_rank, style: None },
                ResultEntry { reference: b, display_name: "b".into(), rank: b_rank, style: None },
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
        assert!(board.ratings.iter().all(|x| x.rating.is_finite()
            && x.interval.is_some_and(|i| i.lower <= x.rating && x.rating <= i.upper)));
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
        assert_eq!(
            board.unrated,
            [Unrated { reference: c, display_name: "b".into(), battles: 1, battles_needed: 4 }]
        );
        assert_eq!(board.contenders, 3);
        assert!(board.ratings.iter().all(|x| x.interval.is_none()), "no bootstrap rounds, no interval");
    }

    #[test]
    fn unrated_contenders_closest_to_a_rating_come_first() {
        let (a, b, c, d) = (r(), r(), r(), r());
        let mut results = vec![duel(a, b, 1, 2), duel(c, d, 1, 2), duel(c, d, 2, 1), duel(a, c, 1, 1)];
        results.extend((0..3).map(|_| duel(a, d, 2, 1)));
        let board =
            leaderboard(&results, LeaderboardOptions { min_battles: 5, rounds: 0, ..Default::default() });
        let needed: Vec<(ContenderRef, u32, u32)> =
            board.unrated.iter().map(|u| (u.reference, u.battles, u.battles_needed)).collect();
        // a and d fought 5 battles each (rated), c 3, b 1.
        assert_eq!(board.ratings.len(), 2);
        assert_eq!(needed, [(c, 3, 2), (b, 1, 4)]);
    }

    #[test]
    fn an_interval_with_nothing_to_resample_is_none() {
        let (a, b, c) = (r(), r(), r());
        let one = LeaderboardOptions { min_battles: 1, ..Default::default() };
        // One battle: every resample is that battle.
        let board = leaderboard(&[duel(a, b, 1, 2)], one);
        assert_eq!(board.ratings.len(), 2);
        assert!(board.ratings.iter().all(|x| x.interval.is_none()), "{board:?}");
        // Five battles that all ended the same way: every resample too.
        let same: Vec<BattleResult> = (0..5).map(|_| duel(a, b, 1, 2)).collect();
        let board = leaderboard(&same, one);
        assert!(board.ratings.iter().all(|x| x.interval.is_none()), "{board:?}");
        assert!(board.ratings[0].rating > board.ratings[1].rating, "the ratings themselves are there");
        // Outcomes that differ spread the resamples; c, with one battle,
        // has too few to estimate and is placed after those with intervals.
        let mixed = [duel(a, b, 1, 2), duel(a, b, 2, 1), duel(a, b, 1, 2), duel(b, c, 1, 2)];
        let board = leaderboard(&mixed, one);
        let order: Vec<(ContenderRef, bool)> =
            board.ratings.iter().map(|x| (x.reference, x.interval.is_some())).collect();
        assert_eq!(order.len(), 3);
        assert_eq!(order[2], (c, false), "{board:?}");
        assert!(order[..2].iter().all(|(_, has)| *has), "{board:?}");
    }

    #[test]
    fn empty_and_single_entry_results() {
        let board = leaderboard(&[], LeaderboardOptions::default());
        assert!(board.ratings.is_empty() && board.battles == 0);
        let lonely = BattleResult {
            entries: vec![ResultEntry { reference: r(), display_name: "x".into(), rank: 1, style: None }],
            ..duel(r(), r(), 1, 2)
        };
        assert_eq!(leaderboard(&[lonely], LeaderboardOptions::default()).battles, 0);
        // One reference twice in a battle: a seat, no comparison.
        let x = r();
        let twice = duel(x, x, 1, 2);
        let board = leaderboard(&[twice], LeaderboardOptions { min_battles: 1, ..Default::default() });
        assert_eq!((board.contenders, board.ratings.len()), (1, 1));
        assert_eq!((board.ratings[0].rating, board.ratings[0].wins), (1000.0, 0));
    }

    #[test]
    fn dense_solve_inverts_the_hessian() {
        // Three contenders, pairs (0,1), (0,2), (1,2) with weights 2, 1, 3.
        let pairs = Pairs { rows: vec![0, 2, 3, 3], b: vec![1, 2, 2], n: vec![], wins: vec![] };
        let ws = Workspace { diag: vec![3.5, 5.5, 4.5], h: vec![2.0, 1.0, 3.0], ..Workspace::default() };
        let dense = Dense::factor(&pairs, &ws).expect("positive definite");
        let x = [0.3, -1.2, 2.0];
        let hx = [
            3.5 * x[0] - 2.0 * x[1] - x[2],
            -2.0 * x[0] + 5.5 * x[1] - 3.0 * x[2],
            -x[0] - 3.0 * x[1] + 4.5 * x[2],
        ];
        let mut b = hx;
        dense.solve(&mut b, &mut Vec::new());
        for (got, want) in b.iter().zip(x) {
            assert!((got - want).abs() < 1e-5, "{b:?} vs {x:?} (single precision)");
        }
        let singular =
            Workspace { diag: vec![1.0, 1.0, 1.0], h: vec![2.0, 2.0, 2.0], ..Workspace::default() };
        assert!(Dense::factor(&pairs, &singular).is_none(), "not positive definite");
    }

    #[test]
    fn a_chord_refit_that_cannot_converge_hands_over_to_newton() {
        // The factor of one comparison, then data with a thousand: chord
        // steps overshoot and grow, and the refit says so.
        let one = Pairs { rows: vec![0, 1, 1], b: vec![1], n: vec![1.0], wins: vec![1.0, 0.0] };
        let mut ws = Workspace::default();
        gradient::<true>(&one, &[0.0, 0.0], &mut ws);
        let dense = Dense::factor(&one, &ws).expect("positive definite");
        let many = Pairs { n: vec![1_000.0], wins: vec![750.0, 250.0], ..one };
        let mut theta = [0.0, 0.0];
        assert!(!dense.refit(&many, &mut theta, &mut ws), "no convergence");
        fit(&many, &mut theta, &mut ws);
        gradient::<false>(&many, &theta, &mut ws);
        assert!(ws.grad.iter().all(|g| g.abs() < 1e-6), "Newton finished the fit: {:?}", ws.grad);
        // 3:1 odds, pulled a little towards even by the prior.
        let odds = (theta[0] - theta[1]).exp();
        assert!(odds > 2.9 && odds < 3.0, "{odds}");
    }

    #[test]
    fn chord_refits_agree_with_newton_refits() {
        let contenders: Vec<ContenderRef> = (0..20).map(|_| r()).collect();
        let mut g = SplitMix64::new(5);
        // Plus a newcomer with a single battle, which a resample often drops:
        // the refits where chord steps converge slowest.
        let newcomer = r();
        let mut results: Vec<BattleResult> = vec![duel(newcomer, contenders[0], 1, 2)];
        results.extend((0..3_000).map(|_| {
            let a = g.below(20);
            let b = (a + 1 + g.below(19)) % 20;
            let (ra, rb) = match g.below(5) {
                0 => (1, 1),
                k if k <= 1 + (a > b) as usize * 2 => (1, 2),
                _ => (2, 1),
            };
            duel(contenders[a], contenders[b], ra, rb)
        }));
        let options = LeaderboardOptions { rounds: 50, min_battles: 1, ..Default::default() };
        assert!(Dense::worth_it(21, 191, 50), "this case takes chord steps");
        let (chord, newton) = (rate(&results, options, true), rate(&results, options, false));
        assert_eq!(chord.ratings.len(), 21);
        for (c, n) in chord.ratings.iter().zip(&newton.ratings) {
            assert_eq!(c.reference, n.reference);
            assert_eq!(c.rating, n.rating, "the point fit is the same");
            match (c.interval, n.interval) {
                (Some(ci), Some(ni)) => assert!(
                    (ci.lower - ni.lower).abs() < 0.05 && (ci.upper - ni.upper).abs() < 0.05,
                    "{c:?} vs {n:?}"
                ),
                (ci, ni) => assert!(ci.is_none() && ni.is_none() && c.battles == 1, "{c:?} vs {n:?}"),
            }
        }
    }

    #[test]
    fn style_control_takes_back_what_a_verbose_model_won_by_length() {
        // Three equally good models; in each battle one answer is long
        // (1,000 characters) and one short (200), and the long one wins
        // four times in five. "verbose" writes the long answer in 9 of its
        // 10 battles against each of the others, who split theirs.
        let (verbose, b, c) = (r(), r(), r());
        let long = Style { chars: 1_000, markdown: 0 };
        let short = Style { chars: 200, markdown: 0 };
        let mut results = Vec::new();
        let mut battle = |x: ContenderRef, y: ContenderRef, x_long: bool, long_wins: bool| {
            let mut d = duel(x, y, 1, 2);
            let x_wins = x_long == long_wins;
            d.entries[0].rank = if x_wins { 1 } else { 2 };
            d.entries[1].rank = if x_wins { 2 } else { 1 };
            d.entries[0].style = Some(if x_long { long } else { short });
            d.entries[1].style = Some(if x_long { short } else { long });
            results.push(d);
        };
        for round in 0..20 {
            for other in [b, c] {
                for k in 0..10 {
                    battle(verbose, other, k != 0, (round + k) % 5 != 0);
                }
            }
            for k in 0..10 {
                battle(b, c, k % 2 == 0, (round + k) % 5 != 0);
            }
        }
        let plain = LeaderboardOptions { min_battles: 1, rounds: 20, ..Default::default() };
        let styled = LeaderboardOptions { style_control: true, ..plain };
        let rating = |board: &Leaderboard, who: ContenderRef| {
            board.ratings.iter().find(|x| x.reference == who).unwrap().rating
        };
        let without = leaderboard(&results, plain);
        assert!(without.style.is_none());
        let gap = rating(&without, verbose) - rating(&without, b);
        assert!(gap > 100.0, "rated up for its length: {gap}");
        let with = leaderboard(&results, styled);
        let gap = rating(&with, verbose) - rating(&with, b);
        assert!(gap.abs() < 15.0, "length explains its wins: {gap}");
        let effect = with.style.unwrap();
        // Long against short is a covariate of 2/3; winning 4 in 5 is
        // log-odds ln 4: about 2.08 per unit, 361 Elo points.
        assert!((effect.length - 361.0).abs() < 25.0, "{effect:?}");
        assert!(effect.markdown.abs() < 1.0, "no markdown anywhere: {effect:?}");
        assert_eq!(effect.comparisons, results.len() as u32);
        assert!(with.ratings.iter().all(|x| x.interval.is_some()), "bootstrapped too: {with:?}");
        // Without styles, style control changes nothing but the report.
        let bare: Vec<BattleResult> = results
            .iter()
            .cloned()
            .map(|mut d| {
                d.entries.iter_mut().for_each(|e| e.style = None);
                d
            })
            .collect();
        let (p, s) = (leaderboard(&bare, plain), leaderboard(&bare, styled));
        for x in &p.ratings {
            assert!((x.rating - rating(&s, x.reference)).abs() < 0.01, "{x:?}");
        }
        assert_eq!(s.style.unwrap().comparisons, 0);
    }

    #[test]
    fn style_counts_characters_and_markdown_marks() {
        let s = Style::of("# Título\n\n- **a** `b` | c");
        assert_eq!((s.chars, s.markdown), (25, 8));
        assert_eq!(Style::of("").density(), 0.0);
        assert!((Style { chars: 10, markdown: 1 }.density() - 0.1).abs() < 1e-12);
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
