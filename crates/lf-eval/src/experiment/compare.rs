//! Comparing two experiments on one dataset, contender by contender: the
//! change in pass rate with McNemar's exact test, the change in mean score
//! with a paired bootstrap, and the cases that went from pass to fail and
//! back.
//!
//! Cases are matched by position: a dataset's positions are only ever
//! appended, so position `n` is the same case in every version that has it,
//! and two versions share their first `min(case_count)` positions.
//! Contenders are matched by the profile named.
//!
//! Pairing for McNemar: when both experiments ran the same number of
//! repeats, each cell is paired with the cell of the same case and repeat
//! ([`Pairing::CaseAndRepeat`]); otherwise each case is paired by its
//! majority (passed when more than half its cells passed,
//! [`Pairing::CaseMajority`]). Only units with a result on both sides count.
//! The pass rates shown are over those same units.
//!
//! The score's bootstrap resamples cases (a case's repeats stay together):
//! the statistic is the mean over cases of (case's mean score in b − in a),
//! its 95% interval the 2.5th and 97.5th percentiles of
//! [`BOOTSTRAP_ROUNDS`] resamples drawn from a generator of fixed seed, so
//! one comparison always gives the same interval. Significant when the
//! interval leaves out 0.

use lf_battle::rating::SplitMix64;

/// Resamples of the paired bootstrap.
pub const BOOTSTRAP_ROUNDS: u32 = 2_000;
/// Seed of the paired bootstrap's generator.
pub const BOOTSTRAP_SEED: u64 = 0x4C46_4576_616C_4350;
/// The significance level of both tests.
pub const ALPHA: f64 = 0.05;

/// One cell's outcome, as [`super::ExperimentStore::outcomes`] reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub position: u32,
    pub repeat: u8,
    pub passed: bool,
    pub score: f64,
}

/// How cells were paired for McNemar's test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// Cell with cell: same case, same repeat.
    CaseAndRepeat,
    /// Case with case, each passed when most of its cells passed.
    CaseMajority,
}

impl Pairing {
    /// The pairing of experiments of `repeats_a` and `repeats_b` repeats.
    pub fn of(repeats_a: u8, repeats_b: u8) -> Self {
        if repeats_a == repeats_b { Self::CaseAndRepeat } else { Self::CaseMajority }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::CaseAndRepeat => "case_and_repeat",
            Self::CaseMajority => "case_majority",
        }
    }
}

/// McNemar's exact test on `b` pairs that went pass → fail and `c` that
/// went fail → pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McNemar {
    pub pass_to_fail: u64,
    pub fail_to_pass: u64,
    pub p_value: f64,
    pub significant: bool,
}

/// The two-sided exact p-value of McNemar's test: twice the binomial tail
/// (n = b + c, ½) below min(b, c), at most 1; 1 with no discordant pair.
/// Summed in logarithms, so large counts do not underflow.
pub fn mcnemar(b: u64, c: u64) -> McNemar {
    let n = b + c;
    let k = b.min(c);
    let p_value = if n == 0 {
        1.0
    } else {
        let ln_half_n = n as f64 * std::f64::consts::LN_2;
        let (mut ln_choose, mut tail) = (0.0_f64, 0.0_f64);
        for i in 0..=k {
            if i > 0 {
                ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
            }
            tail += (ln_choose - ln_half_n).exp();
        }
        (2.0 * tail).min(1.0)
    };
    McNemar { pass_to_fail: b, fail_to_pass: c, p_value, significant: p_value < ALPHA }
}

/// A paired bootstrap's mean and 95% percentile interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bootstrap {
    pub mean: f64,
    pub lower: f64,
    pub upper: f64,
    pub significant: bool,
}

/// The mean of `diffs` and its 95% percentile interval over `rounds`
/// resamples (with replacement, each of `diffs.len()`) drawn from `seed`.
/// With no differences: 0 and [0, 0].
pub fn paired_bootstrap(diffs: &[f64], rounds: u32, seed: u64) -> Bootstrap {
    let n = diffs.len();
    if n == 0 {
        return Bootstrap { mean: 0.0, lower: 0.0, upper: 0.0, significant: false };
    }
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let mut g = SplitMix64::new(seed);
    let mut means: Vec<f64> =
        (0..rounds.max(1)).map(|_| (0..n).map(|_| diffs[g.below(n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (means.len() - 1) as f64).round() as usize).min(means.len() - 1)];
    let (lower, upper) = (at(0.025), at(0.975));
    Bootstrap { mean, lower, upper, significant: lower > 0.0 || upper < 0.0 }
}

/// A case whose share of passed cells changed: passed and cells in a, in b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaseChange {
    pub position: u32,
    pub a: (u32, u32),
    pub b: (u32, u32),
}

/// One contender's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct ContenderChange {
    /// The profile named, as in both experiments.
    pub contender: String,
    /// Its index in a and in b.
    pub index: (u16, u16),
    /// Units paired (cells or cases, by the pairing).
    pub pairs: u64,
    /// Pass rates over the paired units, in a and in b.
    pub pass_rate: (f64, f64),
    pub mcnemar: McNemar,
    /// Mean score change (b − a) over the cases with results on both sides.
    pub score: Bootstrap,
    /// Cases whose share of passed cells fell, by position.
    pub regressions: Vec<CaseChange>,
    /// Cases whose share of passed cells rose, by position.
    pub fixes: Vec<CaseChange>,
}

/// Per case: (position, cells' outcomes) in position order, from outcomes
/// sorted by position and repeat.
fn by_case(outcomes: &[Outcome]) -> Vec<(u32, &[Outcome])> {
    outcomes.chunk_by(|x, y| x.position == y.position).map(|c| (c[0].position, c)).collect()
}

fn passed(cells: &[Outcome]) -> u32 {
    cells.iter().filter(|o| o.passed).count() as u32
}

fn mean_score(cells: &[Outcome]) -> f64 {
    cells.iter().map(|o| o.score).sum::<f64>() / cells.len() as f64
}

/// Compares one contender's outcomes in a with those in b (each sorted by
/// position then repeat, as the store reads them).
pub fn compare_contender(
    contender: &str,
    index: (u16, u16),
    pairing: Pairing,
    a: &[Outcome],
    b: &[Outcome],
) -> ContenderChange {
    let (cases_a, cases_b) = (by_case(a), by_case(b));
    let (mut i, mut j) = (0, 0);
    let (mut pairs, mut passed_a, mut passed_b, mut to_fail, mut to_pass) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut count = |x: bool, y: bool| {
        pairs += 1;
        passed_a += u64::from(x);
        passed_b += u64::from(y);
        to_fail += u64::from(x && !y);
        to_pass += u64::from(!x && y);
    };
    let (mut diffs, mut regressions, mut fixes) = (Vec::new(), Vec::new(), Vec::new());
    while i < cases_a.len() && j < cases_b.len() {
        let ((pa, ca), (pb, cb)) = (cases_a[i], cases_b[j]);
        if pa < pb {
            i += 1;
            continue;
        }
        if pb < pa {
            j += 1;
            continue;
        }
        (i, j) = (i + 1, j + 1);
        match pairing {
            Pairing::CaseAndRepeat => {
                for x in ca {
                    if let Some(y) = cb.iter().find(|y| y.repeat == x.repeat) {
                        count(x.passed, y.passed);
                    }
                }
            }
            Pairing::CaseMajority => {
                count(2 * passed(ca) as usize > ca.len(), 2 * passed(cb) as usize > cb.len())
            }
        }
        diffs.push(mean_score(cb) - mean_score(ca));
        let change =
            CaseChange { position: pa, a: (passed(ca), ca.len() as u32), b: (passed(cb), cb.len() as u32) };
        // passed_b / cells_b against passed_a / cells_a, in whole numbers.
        let (left, right) =
            (u64::from(change.b.0) * u64::from(change.a.1), u64::from(change.a.0) * u64::from(change.b.1));
        if left < right {
            regressions.push(change);
        } else if left > right {
            fixes.push(change);
        }
    }
    let rate = |k: u64| if pairs == 0 { 0.0 } else { k as f64 / pairs as f64 };
    ContenderChange {
        contender: contender.to_owned(),
        index,
        pairs,
        pass_rate: (rate(passed_a), rate(passed_b)),
        mcnemar: mcnemar(to_fail, to_pass),
        score: paired_bootstrap(&diffs, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED),
        regressions,
        fixes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_matches_the_binomial_by_hand() {
        // n = 12: 2 · (1 + 12 + 66) / 4096 = 0.0385742…
        let t = mcnemar(10, 2);
        assert!((t.p_value - 158.0 / 4096.0).abs() < 1e-12, "{t:?}");
        assert!(t.significant);
        assert_eq!(mcnemar(2, 10).p_value, t.p_value, "two-sided: symmetric");
        // n = 6, k = 1: 2 · 7/64 = 0.21875.
        let t = mcnemar(5, 1);
        assert!((t.p_value - 0.21875).abs() < 1e-12 && !t.significant, "{t:?}");
        assert_eq!(mcnemar(0, 0).p_value, 1.0);
        assert_eq!(mcnemar(3, 3).p_value, 1.0, "capped at 1");
        // 20 of 20 one way: 2 / 2^20.
        assert!((mcnemar(20, 0).p_value - 2.0 / 1_048_576.0).abs() < 1e-15);
        // Large counts stay finite: 5000 vs 5000 is far from significant.
        let big = mcnemar(5_000, 5_000);
        assert!(big.p_value > 0.9 && big.p_value <= 1.0, "{big:?}");
        let big = mcnemar(3_000, 2_000);
        assert!(big.p_value > 0.0 && big.p_value < 1e-40, "{big:?}");
    }

    #[test]
    fn the_bootstrap_is_reproducible_and_near_the_normal_interval() {
        // 25 ones and 25 zeros: mean 0.5, standard error √(0.25/50) ≈
        // 0.0707, so about 0.5 ± 0.139 (the percentile interval of a
        // discrete mean lands within a step of 1/50 of it).
        let diffs: Vec<f64> = (0..50).map(|i| f64::from(i % 2)).collect();
        let b = paired_bootstrap(&diffs, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED);
        assert_eq!(b.mean, 0.5);
        assert!((b.lower - 0.361).abs() < 0.025 && (b.upper - 0.639).abs() < 0.025, "{b:?}");
        assert!(b.significant);
        assert_eq!(b, paired_bootstrap(&diffs, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED), "same seed, same interval");
        // Differences centred on 0 are not significant; none at all are 0.
        let centred: Vec<f64> = (0..50).map(|i| if i % 2 == 0 { 0.5 } else { -0.5 }).collect();
        let c = paired_bootstrap(&centred, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED);
        assert!(c.lower < 0.0 && c.upper > 0.0 && !c.significant, "{c:?}");
        let same = paired_bootstrap(&[0.0; 30], BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED);
        assert_eq!((same.lower, same.upper, same.significant), (0.0, 0.0, false));
        assert!(!paired_bootstrap(&[], 10, 1).significant);
    }

    fn cell(position: u32, repeat: u8, passed: bool) -> Outcome {
        Outcome { position, repeat, passed, score: if passed { 1.0 } else { 0.0 } }
    }

    #[test]
    fn cells_pair_by_case_and_repeat_and_changes_are_listed() {
        // Four cases, two repeats; b loses case 2 entirely, gains case 3's
        // second repeat, and has no result for case 4.
        let a: Vec<Outcome> = [(1, true, true), (2, true, true), (3, false, false), (4, true, true)]
            .iter()
            .flat_map(|&(p, x, y)| [cell(p, 1, x), cell(p, 2, y)])
            .collect();
        let b: Vec<Outcome> = [(1, true, true), (2, false, false), (3, false, true)]
            .iter()
            .flat_map(|&(p, x, y)| [cell(p, 1, x), cell(p, 2, y)])
            .collect();
        let c = compare_contender("m", (0, 1), Pairing::CaseAndRepeat, &a, &b);
        assert_eq!(c.pairs, 6, "case 4 has no pair");
        assert_eq!((c.mcnemar.pass_to_fail, c.mcnemar.fail_to_pass), (2, 1));
        assert_eq!(c.pass_rate, (4.0 / 6.0, 3.0 / 6.0));
        assert_eq!(c.regressions, [CaseChange { position: 2, a: (2, 2), b: (0, 2) }]);
        assert_eq!(c.fixes, [CaseChange { position: 3, a: (0, 2), b: (1, 2) }]);
        assert!((c.score.mean - (-1.0 + 0.5) / 3.0).abs() < 1e-12);
        // By majority (b with one repeat): case 3's 1 of 2 is no majority.
        let one: Vec<Outcome> = b.iter().filter(|o| o.repeat == 1).copied().collect();
        let m = compare_contender("m", (0, 0), Pairing::CaseMajority, &a, &one);
        assert_eq!((m.pairs, m.mcnemar.pass_to_fail, m.mcnemar.fail_to_pass), (3, 1, 0));
        assert_eq!(m.regressions.len(), 1);
        assert!(m.fixes.is_empty(), "case 3: 0 of 2, then 0 of 1");
    }
}
