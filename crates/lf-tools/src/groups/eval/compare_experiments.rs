use lf_core::LfResult;
use lf_eval::experiment::{CaseChange, Comparison, ContenderChange, ExperimentId, ToCompare};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::services::Ctx;
use crate::catalog::tool::{Safety, Tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareExperimentsIn {
    /// Baseline.
    #[schemars(extend("format" = "uuid"))]
    pub a: String,
    /// Compared with a.
    #[schemars(extend("format" = "uuid"))]
    pub b: String,
}

/// Most cases listed of each kind.
const CASES_SHOWN: usize = 100;

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// One contender's change from a to b (listed as a JSON array, its shape
/// told by the tool's description: the listing stays small).
#[derive(Serialize)]
pub struct ChangeOut {
    pub contender: String,
    /// Cases passing less in b: [case, passes in a, b] (first 100).
    pub regressions: Vec<[u32; 3]>,
    /// Cases passing more in b.
    pub fixes: Vec<[u32; 3]>,
    /// Pairs, pass→fail, fail→pass.
    pub pairs: [u64; 3],
    /// [a, b]
    pub pass_rate: [f64; 2],
    /// McNemar exact, two-sided.
    pub p_value: f64,
    pub significant: bool,
    /// Mean score b − a.
    pub score_change: f64,
    /// Paired bootstrap 95%.
    pub score_change_95: [f64; 2],
    pub score_significant: bool,
}

fn cases(changes: &[CaseChange]) -> Vec<[u32; 3]> {
    changes.iter().take(CASES_SHOWN).map(|c| [c.position, c.a.0, c.b.0]).collect()
}

impl ChangeOut {
    fn of(c: &ContenderChange) -> Self {
        let m = &c.mcnemar;
        Self {
            contender: c.contender.clone(),
            regressions: cases(&c.regressions),
            fixes: cases(&c.fixes),
            pairs: [c.pairs, m.pass_to_fail, m.fail_to_pass],
            pass_rate: [round(c.pass_rate.0), round(c.pass_rate.1)],
            p_value: m.p_value,
            significant: m.significant,
            score_change: round(c.score.mean),
            score_change_95: [round(c.score.lower), round(c.score.upper)],
            score_significant: c.score.significant,
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct CompareOut {
    /// case_and_repeat (same repeats) or case_majority.
    pub paired_by: &'static str,
    /// Cases 1 to this, those both versions have.
    pub cases: u32,
    /// Contenders in both: [ChangeOut].
    #[schemars(with = "serde_json::Value", extend("type" = "array"))]
    pub contenders: serde_json::Value,
    /// Contenders in one only.
    pub unmatched: Vec<String>,
}

impl CompareOut {
    fn of(c: &Comparison) -> Self {
        Self {
            paired_by: c.pairing.as_str(),
            cases: c.cases_compared,
            contenders: serde_json::json!(c.contenders.iter().map(ChangeOut::of).collect::<Vec<_>>()),
            unmatched: c.only_in_a.iter().chain(&c.only_in_b).cloned().collect(),
        }
    }
}

/// Each contender's change (McNemar's test and the paired bootstrap: CPU
/// work) computed off the async threads, as the leaderboard's rating is:
/// what `compare_experiments` and the comparison page pass to
/// `ExperimentService::compare_with`.
pub async fn compare_changes(all: Vec<ToCompare>) -> LfResult<Vec<ContenderChange>> {
    crate::groups::battle::off_the_async_threads("comparing the experiments", move || {
        all.iter().map(ToCompare::compare).collect()
    })
    .await
}

pub struct CompareExperiments;

impl Tool for CompareExperiments {
    const NAME: &'static str = "compare_experiments";
    const TITLE: &'static str = "Compare experiments";
    const SAFETY: Safety = Safety::Read;
    const DESCRIPTION: &'static str = "b vs a (same dataset) per contender: regressions, fixes [case, passes in a, b]; pairs [n, pass->fail, fail->pass]; pass_rate [a, b]; McNemar p_value; score_change, bootstrap 95%; p<0.05 significant.";
    type Input = CompareExperimentsIn;
    type Output = CompareOut;

    async fn call(ctx: Ctx, i: CompareExperimentsIn) -> LfResult<CompareOut> {
        let (a, b) = (ExperimentId::parse("a", &i.a)?, ExperimentId::parse("b", &i.b)?);
        let compared = ctx.services.experiments.compare_with(&ctx.principal, a, b, compare_changes).await?;
        Ok(CompareOut::of(&compared))
    }
}
