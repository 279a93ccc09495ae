//! What the experiment tools answer: an experiment, its figures, its cells.

use lf_core::LfResult;
use lf_eval::experiment::{CellResult, ContenderFigures, Experiment, ExperimentId, ExperimentView};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

/// An experiment by id.
pub fn experiment_id(s: &str) -> LfResult<ExperimentId> {
    ExperimentId::parse("experiment_id", s)
}

/// An experiment as started.
#[derive(Serialize, JsonSchema)]
pub struct ExperimentOut {
    /// The experiment (what a client of MCP's tasks extension follows).
    #[serde(skip)]
    #[schemars(skip)]
    pub id: ExperimentId,
    pub experiment_id: String,
    /// running, completed, cancelled, budget_spent.
    pub status: &'static str,
    pub dataset_id: String,
    pub dataset_version: u32,
    /// By index.
    pub contenders: Vec<String>,
    pub repeats: u8,
    pub budget_credits: Option<u64>,
    pub cells: u64,
}

impl ExperimentOut {
    pub fn of(e: &Experiment) -> Self {
        Self {
            id: e.id,
            experiment_id: e.id.to_string(),
            status: e.status.as_str(),
            dataset_id: e.dataset.to_string(),
            dataset_version: e.dataset_version,
            contenders: e.contenders.iter().map(|c| c.key().to_owned()).collect(),
            repeats: e.repeats,
            budget_credits: e.budget_credits,
            cells: e.cell_count(),
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A contender's figures over its cells with a result.
#[derive(Serialize, JsonSchema)]
pub struct FiguresOut {
    pub contender: String,
    pub cells: u64,
    pub passed: u64,
    pub errors: u64,
    pub pass_rate: f64,
    /// Wilson 95% [low, high].
    pub pass_rate_95: [f64; 2],
    pub mean_score: f64,
    /// [input, output]
    pub tokens: [u64; 2],
    pub cost_usd: f64,
    pub credits: u64,
    pub latency_p50_ms: Option<u64>,
    pub latency_p95_ms: Option<u64>,
}

impl FiguresOut {
    fn of(f: &ContenderFigures) -> Self {
        let t = &f.tally;
        Self {
            contender: f.contender.key().to_owned(),
            cells: t.cells,
            passed: t.passed,
            errors: t.errors,
            pass_rate: round(f.pass_rate),
            pass_rate_95: [round(f.interval.0), round(f.interval.1)],
            mean_score: round(f.mean_score),
            tokens: [t.input_tokens, t.output_tokens],
            cost_usd: t.cost_usd,
            credits: t.credits,
            latency_p50_ms: t.latency_p50_ms,
            latency_p95_ms: t.latency_p95_ms,
        }
    }
}

/// An experiment with its progress and each contender's figures.
#[derive(Serialize, JsonSchema)]
pub struct ExperimentViewOut {
    pub experiment: ExperimentOut,
    /// Cells with a result.
    pub done: u64,
    pub spent_credits: u64,
    /// By index.
    pub contenders: Vec<FiguresOut>,
}

impl ExperimentViewOut {
    pub fn of(v: &ExperimentView) -> Self {
        Self {
            experiment: ExperimentOut::of(&v.experiment),
            done: v.done,
            spent_credits: v.spent_credits,
            contenders: v.contenders.iter().map(FiguresOut::of).collect(),
        }
    }
}

/// One cell's result.
#[derive(Serialize, JsonSchema)]
pub struct CellOut {
    /// The case's.
    pub position: u32,
    pub contender: u16,
    pub repeat: u8,
    pub tags: Vec<String>,
    pub answer: Option<String>,
    pub passed: bool,
    pub score: f64,
    pub error: Option<String>,
    /// [{type, from, passed, reason, judged?}]
    #[schemars(with = "serde_json::Value", extend("type" = "array"))]
    pub assertions: Value,
    /// [input, output]
    pub tokens: [u64; 2],
    pub cost_usd: f64,
    pub latency_ms: u64,
    pub attempts: u32,
}

impl CellOut {
    pub fn of(r: CellResult) -> Self {
        let assertions = r
            .outcomes
            .iter()
            .map(|o| {
                let mut v = json!({"type": o.kind, "from": o.from, "passed": o.passed, "reason": o.reason});
                if let Some(j) = &o.judged {
                    v["judged"] = json!({"score": round(j.score), "position_consistent": j.position_consistent,
                        "model": j.model, "tokens": [j.input_tokens, j.output_tokens], "cost_usd": j.cost_usd});
                }
                v
            })
            .collect();
        Self {
            position: r.key.position,
            contender: r.key.contender,
            repeat: r.key.repeat,
            tags: r.tags,
            answer: r.answer,
            passed: r.passed,
            score: round(r.score),
            error: r.error,
            assertions: Value::Array(assertions),
            tokens: [r.input_tokens, r.output_tokens],
            cost_usd: r.cost_usd,
            latency_ms: r.latency_ms,
            attempts: r.attempts,
        }
    }
}
