//! What a starter may hand a run: inputs of a bounded size and depth with
//! no secret in them, and a model override that names a model. Checked
//! before anything is looked up, so a refusal says what to change in the
//! arguments themselves.

use lf_core::{LfError, LfResult, clip};

use super::service::StartRun;
use crate::blueprint::MAX_JSON_DEPTH;
use crate::secrets::{find_secret_field, shape};

/// Most bytes (as JSON, roughly) of a run's inputs: large data belongs in
/// what a step fetches, not in the run record every read returns.
pub const MAX_INPUT_BYTES: usize = 256 * 1024;
/// Longest `global_model_id`.
pub const MAX_MODEL_ID_CHARS: usize = 200;

/// INVALID_ARGUMENT naming `inputs` when they cannot go into a run: too
/// deep, too large, or holding a secret-named field. Also what a team run's
/// inputs are checked by before it is kept.
pub fn check_inputs(inputs: &crate::JsonObject) -> LfResult<()> {
    let (depth, bytes) = shape(inputs, MAX_INPUT_BYTES);
    if depth > MAX_JSON_DEPTH {
        return Err(LfError::invalid_argument(format!(
            "inputs nest deeper than {MAX_JSON_DEPTH} levels: flatten them."
        ))
        .with_field("inputs"));
    }
    if bytes > MAX_INPUT_BYTES {
        return Err(LfError::invalid_argument(format!(
            "inputs take more than {} KiB: pass a reference (a URL, an id) to large data instead.",
            MAX_INPUT_BYTES / 1024
        ))
        .with_field("inputs"));
    }
    if let Some(field) = find_secret_field([inputs]) {
        return Err(LfError::invalid_argument(format!(
            "inputs include the secret field \"{}\": runs keep their inputs readable, so credentials go in a saved connection (list_connections) that a step names.",
            clip(field, 60)
        ))
        .with_field("inputs"));
    }
    Ok(())
}

/// INVALID_ARGUMENT naming the field when `s`'s inputs or model override
/// cannot go into a run.
pub(super) fn check_start(s: &StartRun) -> LfResult<()> {
    check_inputs(&s.inputs)?;
    if let Some(m) = &s.global_model_id
        && (m.trim().is_empty()
            || m.chars().nth(MAX_MODEL_ID_CHARS).is_some()
            || m.chars().any(char::is_control))
    {
        return Err(LfError::invalid_argument(format!(
            "global_model_id must be a model name of 1 to {MAX_MODEL_ID_CHARS} characters without control characters; leave it out for each step's own model."
        ))
        .with_field("global_model_id"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn start(inputs: Value, model: Option<&str>) -> StartRun {
        StartRun {
            inputs: inputs.as_object().unwrap().clone(),
            global_model_id: model.map(str::to_owned),
            ..Default::default()
        }
    }

    fn field(s: StartRun) -> String {
        let e = check_start(&s).unwrap_err();
        assert!(e.message().len() < 300, "{}", e.message());
        format!("{:?}", e.details())
    }

    #[test]
    fn ordinary_inputs_pass() {
        check_start(&start(json!({"topic": "tides", "n": [1, 2, {"x": true}]}), Some("gpt-4o-mini")))
            .unwrap();
        check_start(&start(json!({}), None)).unwrap();
    }

    #[test]
    fn size_depth_secrets_and_model_names_are_bounded() {
        let mut deep = json!({"leaf": 1});
        for _ in 0..MAX_JSON_DEPTH {
            deep = json!({"inner": deep});
        }
        let cases = [
            start(json!({"text": "x".repeat(MAX_INPUT_BYTES)}), None),
            start(deep, None),
            start(json!({"headers": [{"Api_Key": "sk-1"}]}), None),
        ];
        for s in cases {
            assert!(field(s).contains("inputs"));
        }
        for m in ["", "  ", "a\nb", &"m".repeat(MAX_MODEL_ID_CHARS + 1)] {
            assert!(field(start(json!({}), Some(m))).contains("global_model_id"), "{m:?}");
        }
    }
}
