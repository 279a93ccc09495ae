//! Blueprints worth sharing between the crate's tests and the catalog's:
//! the spec's example of `create_workflow`, and the pieces of small
//! blueprints (a manual trigger, a tool step, a connection into `input`).

use lf_core::LensId;
use serde_json::{Value, json};

/// The spec's example blueprint ("Weekly AI robotics digest"), private,
/// with a Slack step (which this server runs) in place of its Notion one:
/// a schedule trigger, a lens step running `lens_id` with `topic` set,
/// and a step posting through the saved connection `team-slack`. Its
/// second connection picks `result`, as the spec's does; a lens step's
/// output has `text`, so validation warns OUTPUT_KEY_UNKNOWN.
pub fn spec_digest(lens_id: LensId) -> Value {
    json!({
        "title": "Weekly AI robotics digest",
        "visibility": "private",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Every Monday", "node_type": "schedule_trigger",
             "config": {"cronExpression": "0 9 * * 1", "timezone": "Europe/Istanbul"}},
            {"key": "research", "kind": "lens", "name": "Research Lens", "lens_id": lens_id.to_string(),
             "parameters": {"topic": "AI robotics"}},
            {"key": "publish", "kind": "tool", "name": "Post to Slack", "node_type": "slack_notify",
             "config": {"text": "[[content]]"},
             "connector": {"provider": "slack", "connection_ref": "team-slack", "capability": "channel"}}
        ],
        "connections": [
            {"from_step": "start", "to_step": "research", "input_parameter": "context"},
            {"from_step": "research", "output_key": "result", "to_step": "publish", "input_parameter": "content"}
        ]
    })
}

/// A manual trigger keyed `start`.
pub fn manual_trigger() -> Value {
    json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"})
}

/// A tool step of `node_type` keyed and named `key`, with `config`.
pub fn tool_step(key: &str, node_type: &str, config: Value) -> Value {
    json!({"key": key, "kind": "tool", "name": key, "node_type": node_type, "config": config})
}

/// A connection carrying all of `from`'s output into `to`'s `input`.
pub fn wire(from: &str, to: &str) -> Value {
    json!({"from_step": from, "to_step": to, "input_parameter": "input"})
}
