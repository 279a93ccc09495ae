//! A `form_input_trigger`'s declared fields, applied to a run's inputs:
//! each field of its kind, required ones present, defaults filled in,
//! nothing undeclared. The declaration itself was checked when the
//! workflow was saved (catalog/check.rs).

use lf_core::{Detail, LfError, LfResult};
use serde_json::{Map, Value};

use crate::model::JsonObject;

/// The inputs as the run gets them, or INVALID_ARGUMENT naming every bad field.
pub(super) fn check_form_inputs(config: &Map<String, Value>, mut inputs: JsonObject) -> LfResult<JsonObject> {
    let fields = config.get("fields").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut problems: Vec<(String, String)> = Vec::new();
    for f in fields {
        let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
        let kind = f.get("kind").and_then(Value::as_str).unwrap_or("string");
        let required = f.get("required").and_then(Value::as_bool).unwrap_or(true);
        match inputs.get(name) {
            None | Some(Value::Null) => {
                if let Some(d) = f.get("default") {
                    inputs.insert(name.to_owned(), d.clone());
                } else if required {
                    problems.push((name.to_owned(), format!("is required ({kind})")));
                } else {
                    inputs.remove(name);
                }
            }
            Some(v) => {
                if let Err(m) = fits(kind, f.get("options"), v) {
                    problems.push((name.to_owned(), m));
                }
            }
        }
    }
    let declared = |k: &str| fields.iter().any(|f| f.get("name").and_then(Value::as_str) == Some(k));
    for k in inputs.keys().filter(|k| !declared(k)) {
        let names: Vec<&str> = fields.iter().filter_map(|f| f.get("name").and_then(Value::as_str)).collect();
        problems.push((
            lf_core::clip(k, 64).into_owned(),
            format!("is not a field of this form (its fields: {})", names.join(", ")),
        ));
    }
    if problems.is_empty() { Ok(inputs) } else { Err(field_errors(problems)) }
}

/// Details of a refused start, for clients that show each problem.
fn field_errors(problems: Vec<(String, String)>) -> LfError {
    let first = problems.first().map(|(f, m)| format!("{f}: {m}")).unwrap_or_default();
    let mut e = LfError::invalid_argument(if problems.len() == 1 {
        format!("inputs.{first}")
    } else {
        format!("{} inputs do not fit the workflow's form; first, inputs.{first}", problems.len())
    });
    if let [(f, _)] = &problems[..] {
        e = e.with_field(&format!("inputs.{f}"));
    }
    e.with_detail("fields", Detail::Strs(problems.iter().map(|(f, m)| format!("inputs.{f}: {m}")).collect()))
}

fn fits(kind: &str, options: Option<&Value>, v: &Value) -> Result<(), String> {
    let ok = match kind {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "json" => true,
        "select" => {
            let opts: Vec<&str> =
                options.and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            return match v.as_str() {
                Some(s) if opts.contains(&s) => Ok(()),
                _ => Err(format!("must be one of {}", opts.join(", "))),
            };
        }
        _ => true,
    };
    let article = if kind == "integer" { "an" } else { "a" };
    if ok { Ok(()) } else { Err(format!("must be {article} {kind}, not {}", kind_of(v))) }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number with a fraction",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form() -> Map<String, Value> {
        json!({"fields": [
            {"name": "topic", "kind": "string"},
            {"name": "tone", "kind": "select", "options": ["formal", "casual"], "required": false},
            {"name": "count", "kind": "integer", "default": 3},
        ]})
        .as_object()
        .unwrap()
        .clone()
    }

    fn inputs(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn good_inputs_get_their_defaults() {
        let got = check_form_inputs(&form(), inputs(json!({"topic": "Rust"}))).unwrap();
        assert_eq!(Value::Object(got), json!({"topic": "Rust", "count": 3}));
    }

    #[test]
    fn every_bad_field_is_named() {
        let e = check_form_inputs(&form(), inputs(json!({"tone": "angry", "count": 2.5, "extra": 1})))
            .unwrap_err();
        let m = e.message();
        assert!(m.starts_with("4 inputs do not fit"), "{m}");
        let fields = format!("{:?}", e.details());
        for f in [
            "inputs.topic: is required",
            "inputs.tone: must be one of formal, casual",
            "inputs.count: must be an integer",
            "inputs.extra: is not a field",
        ] {
            assert!(fields.contains(f), "{f} in {fields}");
        }
    }

    #[test]
    fn one_bad_field_is_the_message_and_the_field() {
        let e = check_form_inputs(&form(), inputs(json!({"topic": 5}))).unwrap_err();
        assert_eq!(e.message(), "inputs.topic: must be a string, not a number");
    }
}
