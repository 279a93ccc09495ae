//! output_parser and error_catch, beyond their catalog examples.

use lf_workflow::run_pure;
use serde_json::{Value, json};

fn parse(config: Value, text: &str) -> Result<Value, String> {
    let config = config.as_object().unwrap().clone();
    run_pure("output_parser", &config, &json!({"text": text}))
        .unwrap()
        .map(|r| r.output)
        .map_err(|e| e.to_string())
}

#[test]
fn the_first_json_value_is_found_in_prose_and_fences() {
    assert_eq!(parse(json!({}), "Sure:\n```json\n{\"a\": [1, 2]}\n```\nDone."), Ok(json!({"a": [1, 2]})));
    assert_eq!(parse(json!({}), "[1, 2] then {\"b\": 1}"), Ok(json!([1, 2])));
    assert_eq!(
        parse(json!({}), "a {broken then {\"ok\": true}"),
        Ok(json!({"ok": true})),
        "a bracket that starts no JSON is passed over"
    );
}

#[test]
fn text_without_json_fails_when_strict_and_is_null_otherwise() {
    let e = parse(json!({"strict": true}), "no json here").unwrap_err();
    assert!(e.contains("holds no JSON object or array"), "{e}");
    assert_eq!(parse(json!({"strict": false}), "no json here"), Ok(Value::Null));
    let many = "{".repeat(10_000);
    assert!(parse(json!({}), &many).is_err(), "bounded: at most a fixed number of tries");
}

#[test]
fn an_error_catch_outputs_its_fallback_or_the_error() {
    let error = json!({"code": "timeout", "message": "slow", "node": "fetch"});
    let with = json!({"fallback_value": {"items": []}}).as_object().unwrap().clone();
    assert_eq!(run_pure("error_catch", &with, &error).unwrap().map(|r| r.output), Ok(json!({"items": []})));
    let without = serde_json::Map::new();
    assert_eq!(run_pure("error_catch", &without, &error).unwrap().map(|r| r.output), Ok(error));
}
