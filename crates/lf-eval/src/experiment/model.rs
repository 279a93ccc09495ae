//! An experiment, its cells and their results, and the figures of each
//! contender.

use lf_core::{ErrorCode, LenserId, LfError, Timestamp};

pub use super::contender::Contender;
use crate::dataset::{DatasetId, JsonObject, Visibility};

lf_core::id_newtype!(
    /// An experiment: every contender asked every case of a dataset version.
    ExperimentId
);

lf_core::word_enum!(
    /// Where an experiment is.
    ExperimentStatus, "status", [
        /// Cells are being asked.
        Running = "running",
        /// Every cell has its result.
        Completed = "completed",
        /// Stopped by its owner: no further cell is asked.
        Cancelled = "cancelled",
        /// Stopped once its cells had spent its `budget_credits`.
        BudgetSpent = "budget_spent",
    ]
);

/// Most contenders of an experiment.
pub const MAX_CONTENDERS: usize = 10;
/// Most repeats of each (case, contender).
pub const MAX_REPEATS: u8 = 10;
/// Most cells asked at once, by default.
pub const DEFAULT_CONCURRENCY: u16 = 4;
/// Most cells asked at once, at most.
pub const MAX_CONCURRENCY: u16 = 64;
/// Most cells of one experiment.
pub const MAX_CELLS: u64 = 200_000;
/// Most attempts at one cell, across every process.
pub const CELL_ATTEMPTS: u32 = 3;
/// Longest answer kept, in characters.
pub const MAX_ANSWER_CHARS: usize = 20_000;

/// A saved experiment.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    pub id: ExperimentId,
    pub owner: LenserId,
    pub visibility: Visibility,
    pub dataset: DatasetId,
    /// The dataset version pinned, and how many cases it holds.
    pub dataset_version: u32,
    pub case_count: u32,
    /// By index (a cell names its contender by index).
    pub contenders: Vec<Contender>,
    /// Assertions applied to every cell (each case adds its own), as given
    /// and checked ([`crate::experiment::Assertion::parse`]).
    pub assertions: Vec<JsonObject>,
    /// The model profile that grades rubric, factuality and pairwise
    /// assertions, as given.
    pub judge: Option<String>,
    pub repeats: u8,
    pub concurrency: u16,
    pub budget_credits: Option<u64>,
    pub status: ExperimentStatus,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Who started it: the lenser, or the AI Lenser acting for its owner.
    pub created_by: LenserId,
    pub agent: Option<LenserId>,
}

impl Experiment {
    /// Cells in all: cases × contenders × repeats.
    pub fn cell_count(&self) -> u64 {
        u64::from(self.case_count) * self.contenders.len() as u64 * u64::from(self.repeats)
    }
}

/// One cell: a case (by position), a contender (by index), a repeat (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellKey {
    pub experiment: ExperimentId,
    pub position: u32,
    pub contender: u16,
    pub repeat: u8,
}

/// What one assertion said of one answer.
#[derive(Clone, Debug, PartialEq)]
pub struct AssertionOutcome {
    /// The assertion's type (`contains`, `json_schema`, …).
    pub kind: String,
    /// Where it came from: `assertions[i]` (the experiment's) or
    /// `case.assertions[i]` (the case's).
    pub from: String,
    pub passed: bool,
    pub reason: String,
    /// A graded assertion's judgement; none for a deterministic check.
    pub judged: Option<Judged>,
}

/// What the judge made of a graded assertion, and what asking it cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Judged {
    /// 0 to 1: the rubric or factuality score; for pairwise 1 when the
    /// answer is preferred, 0.5 for a tie, 0 when the baseline is.
    pub score: f64,
    /// Pairwise: whether both orders ranked the two answers alike.
    pub position_consistent: Option<bool>,
    /// The judge's model, as it answered.
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

impl AssertionOutcome {
    /// A deterministic check's outcome.
    pub fn checked(kind: &str, from: String, passed: bool, reason: String) -> Self {
        Self { kind: kind.to_owned(), from, passed, reason, judged: None }
    }

    /// What the outcome counts for in the cell's score: the judge's score
    /// when graded, else 1 or 0.
    pub fn score(&self) -> f64 {
        self.judged.as_ref().map_or(if self.passed { 1.0 } else { 0.0 }, |j| j.score)
    }
}

/// The result of one cell, written once.
#[derive(Clone, Debug, PartialEq)]
pub struct CellResult {
    pub key: CellKey,
    /// The case's tags, kept for filtering.
    pub tags: Vec<String>,
    /// The answer (clipped to [`MAX_ANSWER_CHARS`]); none on error.
    pub answer: Option<String>,
    pub outcomes: Vec<AssertionOutcome>,
    /// Answered and every assertion passed.
    pub passed: bool,
    /// The share of assertions passed, 0 to 1 (1 with none; 0 on error).
    pub score: f64,
    /// Why the cell has no answer.
    pub error: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub credits: u64,
    pub latency_ms: u64,
    /// Attempts made (each one call of the endpoint's client).
    pub attempts: u32,
    pub created_at: Timestamp,
    /// Its judged pairwise verdicts, as the leaderboard rates them
    /// ([`super::ratings`]).
    pub matchups: Vec<super::ratings::Matchup>,
}

impl CellResult {
    /// What the judge's calls for its graded assertions cost, in dollars.
    pub fn judge_cost_usd(&self) -> f64 {
        self.outcomes.iter().filter_map(|o| o.judged.as_ref()).map(|j| j.cost_usd).sum()
    }
}

/// A contender's figures as a store sums them: over its cells with a
/// result; the latencies over those answered (nearest rank).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub contender: u16,
    pub cells: u64,
    pub passed: u64,
    pub errors: u64,
    pub score_sum: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The answers' dollars and the judge's.
    pub cost_usd: f64,
    pub credits: u64,
    pub latency_p50_ms: Option<u64>,
    pub latency_p95_ms: Option<u64>,
}

/// Which results to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultFilter {
    pub contender: Option<u16>,
    /// Cells of cases carrying this tag.
    pub tag: Option<String>,
    /// Passed (true) or not (false: failed or errored).
    pub passed: Option<bool>,
    /// Cells of cases at positions `first..=last` (a page of the matrix,
    /// or one case).
    pub positions: Option<(u32, u32)>,
}

impl ResultFilter {
    /// Whether `r` is one to list.
    pub fn keeps(&self, r: &CellResult) -> bool {
        self.contender.is_none_or(|c| c == r.key.contender)
            && self.tag.as_ref().is_none_or(|t| r.tags.contains(t))
            && self.passed.is_none_or(|p| p == r.passed)
            && self.positions.is_none_or(|(first, last)| (first..=last).contains(&r.key.position))
    }
}

/// The nearest-rank index (from 0) of percentile `p` (0 to 100) among `n`
/// sorted values; `None` when there are none.
pub fn rank_of(p: u32, n: u64) -> Option<u64> {
    (n > 0).then(|| (u64::from(p) * n).div_ceil(100).max(1) - 1)
}

/// The 95% Wilson score interval of `passed` out of `n`.
pub fn wilson(passed: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (n, p) = (n as f64, passed as f64 / n as f64);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

pub fn experiment_not_found(id: &str) -> LfError {
    LfError::new(ErrorCode::NotFound, format!("No experiment {id} that you can read."))
        .with_field("experiment_id")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_known_values() {
        let (lo, hi) = wilson(8, 10);
        assert!((lo - 0.4902).abs() < 1e-3 && (hi - 0.9433).abs() < 1e-3, "{lo} {hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        let (lo, hi) = wilson(0, 50);
        assert!(lo.abs() < 1e-12 && (hi - 0.0713).abs() < 1e-3, "{lo} {hi}");
    }

    #[test]
    fn nearest_ranks() {
        assert_eq!(rank_of(50, 1), Some(0));
        assert_eq!(rank_of(50, 4), Some(1));
        assert_eq!(rank_of(95, 100), Some(94));
        assert_eq!(rank_of(95, 10), Some(9));
        assert_eq!(rank_of(50, 0), None);
    }
}
