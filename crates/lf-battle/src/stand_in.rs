//! The judge's stand-in answers: what a battle is judged by when no model
//! is configured, so battles can be judged end to end on a machine without
//! network or model server.
//!
//! Every judge request carries one ([`lf_core::ChatRequest::stand_in`]):
//! valid judge JSON computed from the prompt the model would read, read back
//! by [`crate::judge::parse_prompt`], so it judges exactly what a model is
//! shown and both orders agree (every verdict is position-consistent). An
//! offline provider answers with it under [`OFFLINE_MODEL_NAME`], which the
//! judge records in every verdict; so does a [`crate::BattleService`] given
//! no provider, through [`StandInJudge`].
//!
//! The score is a transparent heuristic, not a judgement of quality: how many
//! of the task's keywords (words of 4 or more letters) the answer uses
//! (45 points), its length up to about 150 words (35 points), and the share
//! of distinct words (20 points). A rubric criterion's score blends that with
//! the share of the criterion's own keywords the answer uses.

use std::collections::BTreeSet;

use async_trait::async_trait;
use lf_core::{ChatRequest, ChatResponse, LfError, LfResult, ModelProvider, OFFLINE_MODEL_NAME};
use serde_json::json;

use crate::judge::JudgePrompt;

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

/// A score, rounded to a whole number from 0 to 100 already, written as one
/// (`87`, not `87.0`).
fn whole(score: f64) -> u32 {
    score as u32
}

/// The judge answer to `prompt`, in the format of [`crate::judge`].
pub(crate) fn answer(prompt: &JudgePrompt) -> String {
    let verdicts: Vec<serde_json::Value> = prompt
        .entries
        .iter()
        .map(|(slot, text)| {
            let a = assess(&prompt.task, text);
            if prompt.criteria.is_empty() {
                return json!({"contender": slot.to_string(), "score": whole(a.score), "reasoning": a.reasoning});
            }
            let criteria: Vec<serde_json::Value> = prompt
                .criteria
                .iter()
                .enumerate()
                .map(|(i, (title, description))| {
                    let keys = keywords(&format!("{title} {description}"));
                    let s = match coverage(&keys, &a.vocabulary) {
                        Some(c) => (0.6 * a.score + 40.0 * c).round(),
                        None => a.score,
                    };
                    json!({"criterion": i + 1, "score": whole(s)})
                })
                .collect();
            json!({"contender": slot.to_string(), "criteria": criteria, "reasoning": a.reasoning})
        })
        .collect();
    json!({ "verdicts": verdicts }).to_string()
}

/// The judge of a service given no model provider: it answers each judge
/// request with its stand-in, under [`OFFLINE_MODEL_NAME`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StandInJudge;

#[async_trait]
impl ModelProvider for StandInJudge {
    fn name(&self) -> &str {
        OFFLINE_MODEL_NAME
    }

    async fn chat(&self, request: ChatRequest) -> LfResult<ChatResponse> {
        let text = request.stand_in.ok_or_else(|| {
            LfError::internal("no model provider is configured, and the request has no stand-in answer")
        })?;
        Ok(ChatResponse::new(text, OFFLINE_MODEL_NAME))
    }
}
