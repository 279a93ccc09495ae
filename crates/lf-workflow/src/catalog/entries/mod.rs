//! The entries, one file per group of categories (the catalog's docs say
//! which types are not listed, and why).

mod ai;
mod data;
mod logic;
mod outbound;
mod storage;
mod triggers;
mod utility;

use serde_json::{Value, json};

use super::spec::{ConfigField, FieldKind, NodeTypeSpec, field};

pub(super) fn all() -> Vec<NodeTypeSpec> {
    let mut v = triggers::entries();
    v.extend(ai::entries());
    v.extend(logic::entries());
    v.extend(data::entries());
    v.extend(storage::entries());
    v.extend(outbound::entries());
    v.extend(utility::entries());
    v
}

/// The model overrides every model-calling step takes.
fn model_fields() -> Vec<ConfigField> {
    vec![
        field(
            "model",
            "Model",
            FieldKind::String,
            "The model to ask, overriding the server's configured one (and run_workflow's global_model_id).",
        )
        .aliases(&["model_id", "modelId"]),
        field("max_tokens", "Max tokens", FieldKind::Integer, "Most tokens the answer may take.")
            .range(1.0, 32_000.0),
        field("temperature", "Temperature", FieldKind::Number, "Sampling temperature.").range(0.0, 2.0),
    ]
}

/// Which part of the input a step works on.
fn input_path(default: &str) -> ConfigField {
    field(
        "input_path",
        "Input path",
        FieldKind::JsonPath,
        "The part of the node's `input` to work on: a field name or a JSONPath.",
    )
    .default(Value::String(default.to_owned()))
    .aliases(&["inputPath"])
}

/// Which array of the input a list step works on.
fn items_path() -> ConfigField {
    field(
        "items_path",
        "Items path",
        FieldKind::JsonPath,
        "Where the array is in the node's `input`: `output` for the input itself, or a JSONPath.",
    )
    .default(json!("output"))
}

/// An HTTP step's time limit.
fn timeout_ms() -> ConfigField {
    field(
        "timeout_ms",
        "Timeout (ms)",
        FieldKind::Integer,
        "How long the request may take before it fails with `timeout`.",
    )
    .default(json!(15_000))
    .range(100.0, 60_000.0)
    .aliases(&["timeoutMs"])
}

/// What a model-calling step outputs.
fn text_output() -> Vec<super::spec::Port> {
    use super::spec::{IoType, port};
    vec![
        port("text", IoType::Text, "The model's answer."),
        port("model", IoType::Text, "The model that answered (the offline provider names itself)."),
        port("input_tokens", IoType::Number, "Tokens of the prompt."),
        port("output_tokens", IoType::Number, "Tokens of the answer."),
    ]
}

/// What a lens-running step outputs: a model step's output and the
/// version of the lens that ran.
fn lens_output() -> Vec<super::spec::Port> {
    use super::spec::{IoType, port};
    let mut ports = text_output();
    ports.push(port(
        "version",
        IoType::Object,
        "The lens version that ran: {lens_id, version_id, semver, label} (label null when none was named).",
    ));
    ports
}

/// A lens-running step's `label`: the version it points at when the step runs.
fn label_field() -> ConfigField {
    field(
        "label",
        "Lens label",
        FieldKind::Label,
        "Runs the version this label of the lens points at when the step runs (such as production); not with a pinned version.",
    )
}
