//! The JSON Schema validator of `auto_score` battles' `json_schema` checks,
//! backed by the `jsonschema` crate (lf-battle stays free of JSON libraries
//! and takes a [`JsonSchemaValidator`] from its caller).
//!
//! Schemas must be self-contained: no remote or file `$ref` is ever fetched
//! (the crate is built without its HTTP client, and every build is
//! offline). `pattern` keywords use the linear-time `regex` engine with a
//! size limit, so a schema cannot make validation backtrack for ever.

use jsonschema::{PatternOptions, Validator};
use lf_battle::JsonSchemaValidator;
use lf_core::{LfError, LfResult, clip};
use serde_json::Value;

/// Largest compiled `pattern` a schema may carry (as `auto_check.pattern`).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// [`JsonSchemaValidator`] over the `jsonschema` crate; the draft is read
/// from the schema's `$schema` (2020-12 when absent).
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonSchemaCheck;

fn build(schema: &str) -> Result<Validator, String> {
    let value: Value = serde_json::from_str(schema).map_err(|e| format!("it is not JSON: {e}"))?;
    if !matches!(value, Value::Object(_) | Value::Bool(_)) {
        return Err("a JSON Schema is an object (or true / false)".to_owned());
    }
    jsonschema::options()
        .offline()
        .with_pattern_options(PatternOptions::regex().size_limit(PATTERN_SIZE_LIMIT))
        .build(&value)
        .map_err(|e| e.to_string())
}

impl JsonSchemaValidator for JsonSchemaCheck {
    fn check_schema(&self, schema: &str) -> LfResult<()> {
        build(schema).map(|_| ()).map_err(|why| {
            LfError::invalid_argument(format!(
                "auto_check.schema is not a usable JSON Schema: {}. Give a self-contained schema (no remote $ref).",
                clip(&why, 300)
            ))
            .with_field("auto_check.schema")
        })
    }

    fn validate(&self, schema: &str, instance: &str) -> Result<(), String> {
        let validator = build(schema).map_err(|why| format!("the schema is unusable: {why}"))?;
        let instance: Value =
            serde_json::from_str(instance.trim()).map_err(|e| format!("the answer is not JSON: {e}"))?;
        match validator.iter_errors(&instance).next() {
            None => Ok(()),
            Some(e) => {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "the document".to_owned() } else { at };
                Err(format!("at {at}: {e}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERSON: &str = r#"{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0}}}"#;

    #[test]
    fn schemas_are_checked_at_creation() {
        let v = JsonSchemaCheck;
        assert!(v.check_schema(PERSON).is_ok());
        assert!(v.check_schema("true").is_ok());
        for bad in ["{not json", "[1]", r#"{"type": 7}"#, r#"{"$ref": "https://example.com/s.json"}"#] {
            let e = v.check_schema(bad).unwrap_err();
            assert_eq!(e.code(), lf_core::ErrorCode::InvalidArgument, "{bad}");
            assert!(e.message().starts_with("auto_check.schema is not a usable JSON Schema"), "{e}");
        }
    }

    #[test]
    fn instances_pass_or_say_why_not() {
        let v = JsonSchemaCheck;
        assert_eq!(v.validate(PERSON, " {\"name\": \"Ada\", \"age\": 36}\n"), Ok(()));
        let why = v.validate(PERSON, r#"{"name": "Ada", "age": -1}"#).unwrap_err();
        assert!(why.starts_with("at /age:"), "{why}");
        let why = v.validate(PERSON, "{}").unwrap_err();
        assert!(why.contains("name"), "{why}");
        assert!(v.validate(PERSON, "Ada, 36").unwrap_err().starts_with("the answer is not JSON"));
    }

    #[test]
    fn patterns_use_the_linear_engine() {
        let v = JsonSchemaCheck;
        // Look-around needs a backtracking engine: refused, not run.
        assert!(v.check_schema(r#"{"pattern": "(?=a)a"}"#).is_err());
        let s = r#"{"type":"string","pattern":"^(a+)+$"}"#;
        assert!(v.check_schema(s).is_ok());
        let evil = format!("\"{}b\"", "a".repeat(5_000));
        assert!(v.validate(s, &evil).is_err());
    }
}
