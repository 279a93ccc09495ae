//! The deterministic offline [`ModelProvider`]: the default when no model is
//! configured, so battles can be judged end to end on a machine without
//! network or model server.
//!
//! It lives in lf-battle because judging is the only model call that needs a
//! structured answer today, and reading the judge's prompt back takes
//! [`crate::judge::parse_prompt`]. For a judge request it answers valid judge
//! JSON computed from the submissions alone (so both orders agree and every
//! verdict is position-consistent); for any other request, a short
//! deterministic text saying no model is configured. It names itself,
//! [`OFFLINE_MODEL_NAME`], as the `model` of every answer, which the judge
//! records in every verdict: nobody mistakes its scores for a model's.
//!
//! Its score is a transparent heuristic, not a judgement of quality: how many
//! of the task's keywords (words of 4 or more letters) the answer uses
//! (45 points), its length up to about 150 words (35 points), and the share
//! of distinct words (20 points). A rubric criterion's score blends that with
//! the share of the criterion's own keywords the answer uses.

use std::collections::BTreeSet;

use async_trait::async_trait;
use lf_core::{ChatRequest, ChatResponse, LfResult, ModelProvider};

use crate::json::quote;
use crate::judge::{JUDGE_MARKER, parse_prompt};

/// The name the offline provider gives itself and every verdict it produces.
pub const OFFLINE_MODEL_NAME: &str = "offline-deterministic";

/// See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct OfflineProvider;

impl OfflineProvider {
    /// The provider.
    pub const fn new() -> Self {
        OfflineProvider
    }
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

fn keywords(s: &str) -> BTreeSet<String> {
    words(s).into_iter().filter(|w| w.chars().count() >= 4).collect()
}

fn coverage(keys: &BTreeSet<String>, have: &BTreeSet<String>) -> Option<f64> {
    (!keys.is_empty()).then(|| keys.intersection(have).count() as f64 / keys.len() as f64)
}

struct Assessment {
    score: f64,
    reasoning: String,
    vocabulary: BTreeSet<String>,
}

fn assess(task: &str, text: &str) -> Assessment {
    let all = words(text);
    let vocabulary: BTreeSet<String> = all.iter().cloned().collect();
    let task_keys = keywords(task);
    let used = task_keys.intersection(&vocabulary).count();
    let cover = coverage(&task_keys, &vocabulary).unwrap_or(0.5);
    let length = ((1.0 + all.len() as f64).ln() / 151f64.ln()).min(1.0);
    let distinct = if all.is_empty() { 0.0 } else { vocabulary.len() as f64 / all.len() as f64 };
    let score = (45.0 * cover + 35.0 * length + 20.0 * distinct).round().clamp(0.0, 100.0);
    let reasoning = format!(
        "Offline deterministic judge (no model configured): uses {used} of {} task keywords, {} words, {}% distinct.",
        task_keys.len(),
        all.len(),
        (distinct * 100.0).round()
    );
    Assessment { score, reasoning, vocabulary }
}

/// The judge answer for a judge request's user message; `None` when it is
/// not one.
fn judge_answer(user: &str) -> Option<String> {
    let prompt = parse_prompt(user)?;
    let mut items = Vec::with_capacity(prompt.entries.len());
    for (slot, text) in &prompt.entries {
        let a = assess(&prompt.task, text);
        let slot = quote(&slot.to_string());
        let reasoning = quote(&a.reasoning);
        if prompt.criteria.is_empty() {
            items.push(format!(r#"{{"contender":{slot},"score":{},"reasoning":{reasoning}}}"#, a.score));
        } else {
            let criteria: Vec<String> = prompt
                .criteria
                .iter()
                .enumerate()
                .map(|(i, (title, description))| {
                    let keys = keywords(&format!("{title} {description}"));
                    let s = match coverage(&keys, &a.vocabulary) {
                        Some(c) => (0.6 * a.score + 40.0 * c).round(),
                        None => a.score,
                    };
                    format!(r#"{{"criterion":{},"score":{s}}}"#, i + 1)
                })
                .collect();
            items.push(format!(
                r#"{{"contender":{slot},"criteria":[{}],"reasoning":{reasoning}}}"#,
                criteria.join(",")
            ));
        }
    }
    Some(format!(r#"{{"verdicts":[{}]}}"#, items.join(",")))
}

#[async_trait]
impl ModelProvider for OfflineProvider {
    fn name(&self) -> &str {
        OFFLINE_MODEL_NAME
    }

    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        let judge = request.system.starts_with(JUDGE_MARKER).then(|| judge_answer(&request.user)).flatten();
        let text = judge.unwrap_or_else(|| {
            format!(
                "[{OFFLINE_MODEL_NAME}] No model is configured on this server, so this is a placeholder answer ({} characters of input received). Set LENSERFIGHT_MODEL_BASE_URL (and _MODEL_API_KEY, _MODEL_NAME) to use a real model.",
                request.system.chars().count() + request.user.chars().count()
            )
        });
        Ok(ChatResponse { text, model: OFFLINE_MODEL_NAME.to_owned() })
    }
}
