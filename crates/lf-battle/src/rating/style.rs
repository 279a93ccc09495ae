//! The style-controlled fit: Bradley–Terry strengths with answer length
//! and markdown density as covariates, as Arena's style control takes them.

use super::{MAX_NEWTON_STEPS, MAX_STEP, PRIOR_GAMES, TOLERANCE};
use crate::model::Style;

/// One comparison of a style-controlled fit: `a` against `b` (indices),
/// the battle it came from (canonical index), what `a` scored (1, ½, 0)
/// and its covariates.
#[derive(Clone, Copy, Debug)]
pub(super) struct Styled {
    pub a: u32,
    pub b: u32,
    pub battle: u32,
    pub y: f64,
    pub x: [f64; 2],
}

/// Ridge on the style coefficients: keeps them finite, and the fit unique
/// when no comparison has a covariate.
const STYLE_RIDGE: f64 = 1e-3;

/// The covariates of `a`'s answer against `b`'s: the normalised
/// differences (−1 to 1) of their lengths and of their markdown densities,
/// as Arena's style control takes them; `None` when either has no style.
pub(super) fn covariates(a: Option<Style>, b: Option<Style>) -> Option<[f64; 2]> {
    let (a, b) = (a?, b?);
    let norm = |x: f64, y: f64| if x + y > 0.0 { (x - y) / (x + y) } else { 0.0 };
    Some([norm(f64::from(a.chars), f64::from(b.chars)), norm(a.density(), b.density())])
}

/// Fits log-strengths `theta` and style coefficients `beta` together, from
/// their values, by Newton's method: `a` beats `b` with probability
/// `σ(θ_a − θ_b + β·x)`, each comparison weighted by `weight(battle)`, plus
/// the prior of the plain fit (a virtual draw against strength 1 for each
/// contender) and [`STYLE_RIDGE`]. The comparisons cannot be aggregated by
/// pair (each has its own covariates), and the negative Hessian, m + 2
/// square, is solved dense by Cholesky: a fit costs a pass over the
/// comparisons and (m + 2)³/6 a step, for boards of hundreds of
/// contenders.
pub(super) fn fit_styled(
    comparisons: &[Styled],
    weight: impl Fn(usize) -> f64,
    theta: &mut [f64],
    beta: &mut [f64; 2],
) {
    let m = theta.len();
    let n = m + 2;
    let (mut g, mut h) = (vec![0.0; n], vec![0.0; n * n]);
    for _ in 0..MAX_NEWTON_STEPS {
        g.iter_mut().for_each(|v| *v = 0.0);
        h.iter_mut().for_each(|v| *v = 0.0);
        for (c, t) in theta.iter().enumerate() {
            let s = 1.0 / (1.0 + (-t).exp());
            g[c] = PRIOR_GAMES * (0.5 - s);
            h[c * n + c] = PRIOR_GAMES * s * (1.0 - s);
        }
        for k in 0..2 {
            g[m + k] = -STYLE_RIDGE * beta[k];
            h[(m + k) * n + m + k] = STYLE_RIDGE;
        }
        for c in comparisons {
            let w = weight(c.battle as usize);
            if w == 0.0 {
                continue;
            }
            let (a, b) = (c.a as usize, c.b as usize);
            let eta = theta[a] - theta[b] + beta[0] * c.x[0] + beta[1] * c.x[1];
            let p = 1.0 / (1.0 + (-eta).exp());
            let (r, q) = (w * (c.y - p), w * p * (1.0 - p));
            let d = [(a, 1.0), (b, -1.0), (m, c.x[0]), (m + 1, c.x[1])];
            for &(i, di) in &d {
                g[i] += r * di;
                for &(j, dj) in &d {
                    h[i * n + j] += q * di * dj;
                }
            }
        }
        if !cholesky_solve(&mut h, n, &mut g) {
            break;
        }
        let biggest = g.iter().fold(0.0f64, |acc, v| acc.max(v.abs()));
        let scale = if biggest > MAX_STEP { MAX_STEP / biggest } else { 1.0 };
        for (t, step) in theta.iter_mut().zip(&g) {
            *t += scale * step;
        }
        beta[0] += scale * g[m];
        beta[1] += scale * g[m + 1];
        if biggest * scale <= TOLERANCE {
            break;
        }
    }
}

/// Solves `h·x = g` for a symmetric positive-definite `h` (n × n, row
/// major), `x` into `g`, `h` overwritten by its Cholesky factor; false
/// (and `g` unusable) when `h` is not positive definite.
fn cholesky_solve(h: &mut [f64], n: usize, g: &mut [f64]) -> bool {
    for j in 0..n {
        let d = h[j * n + j] - (0..j).map(|k| h[j * n + k] * h[j * n + k]).sum::<f64>();
        if d <= 0.0 || !d.is_finite() {
            return false;
        }
        let d = d.sqrt();
        h[j * n + j] = d;
        for i in j + 1..n {
            let s = h[i * n + j] - (0..j).map(|k| h[i * n + k] * h[j * n + k]).sum::<f64>();
            h[i * n + j] = s / d;
        }
    }
    for i in 0..n {
        let s = g[i] - (0..i).map(|k| h[i * n + k] * g[k]).sum::<f64>();
        g[i] = s / h[i * n + i];
    }
    for i in (0..n).rev() {
        let s = g[i] - (i + 1..n).map(|k| h[k * n + i] * g[k]).sum::<f64>();
        g[i] = s / h[i * n + i];
    }
    true
}
