//! The data steps that reshape one value: json_transform, set_variables,
//! extract_field, rename_field and data_mapper.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Config, NodeError, input_object, select};
use crate::json;
use crate::path::Pick;

/// The key that marks a placeholder object in a json_transform template.
const PICK_KEY: &str = "$pick";
/// Longest name between `[[` and `]]`.
const MAX_NAME_CHARS: usize = 100;

/// `text` with every `[[name]]` replaced by the field `name` of `from`
/// (the name trimmed; a string as it is, any other value as compact JSON).
/// A placeholder naming no field of `from` is left as written, so a typo
/// shows in the output instead of vanishing. Linear in the text.
pub fn fill_placeholders(text: &str, from: &Value) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("[[") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let name = after
            .char_indices()
            .take(MAX_NAME_CHARS + 1)
            .find(|(_, c)| matches!(c, '[' | ']' | '\n'))
            .filter(|(i, c)| *c == ']' && after[*i..].starts_with("]]"))
            .map(|(i, _)| &after[..i]);
        match name.and_then(|n| from.get(n.trim()).map(|v| (n, v))) {
            Some((n, v)) => {
                out.push_str(&json::text(v));
                rest = &after[n.len() + 2..];
            }
            None => {
                // Not a placeholder, or one with nothing to fill it: keep
                // the first bracket and look again from the second.
                out.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where in a template a problem is, built as the error unwinds.
struct At {
    loc: String,
    message: String,
}

fn build(t: &Value, input: &Value) -> Result<Value, At> {
    match t {
        Value::Object(m) if m.contains_key(PICK_KEY) => {
            let problem = |message: String| At { loc: String::new(), message };
            if m.len() != 1 {
                return Err(problem(format!(
                    " has {PICK_KEY} and other keys: a pick is {{\"{PICK_KEY}\": \"<field or JSONPath>\"}} alone"
                )));
            }
            let Some(s) = m[PICK_KEY].as_str() else {
                return Err(problem(format!(
                    ".{PICK_KEY} must be a string: a field name or a JSONPath such as $.item.title"
                )));
            };
            let pick = Pick::parse(PICK_KEY, s).map_err(|e| problem(format!(".{}", e.message())))?;
            Ok(pick.pick(input).map_or(Value::Null, |v| v.into_owned()))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| {
                let built = build(v, input).map_err(|mut e| {
                    e.loc.insert_str(0, &format!(".{}", lf_core::clip(k, 40)));
                    e
                })?;
                Ok((k.clone(), built))
            })
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                build(v, input).map_err(|mut e| {
                    e.loc.insert_str(0, &format!("[{i}]"));
                    e
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// `template` with each `{"$pick": …}` replaced by what it picks (null when
/// absent).
pub(super) fn json_transform(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let template = c.get("template").ok_or_else(|| NodeError::config("template is required"))?;
    build(template, input).map_err(|e| NodeError::config(format!("template{}{}", e.loc, e.message)))
}

fn fill_strings(v: &Value, from: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(fill_placeholders(s, from)),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill_strings(x, from)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), fill_strings(x, from))).collect())
        }
        other => other.clone(),
    }
}

/// The input object with `variables` set, `[[name]]` in their strings
/// filled from the input's fields.
pub(super) fn set_variables(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let mut out = input_object("set_variables", input)?.clone();
    for (k, v) in c.object("variables")? {
        out.insert(k.clone(), fill_strings(v, input));
    }
    Ok(Value::Object(out))
}

/// The part of the input at `path`; with `all`, every match as an array
/// (empty when nothing matches).
pub(super) fn extract_field(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let path = c.pick("path")?;
    if c.flag("all")? {
        return Ok(Value::Array(path.nodes(input).into_iter().cloned().collect()));
    }
    select("path", &path, input).map(|v| v.into_owned())
}

/// The input object with fields renamed, each in its place. A renamed
/// field replaces a field already of its new name; a name absent from the
/// input is skipped.
pub(super) fn rename_field(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let fields = input_object("rename_field", input)?;
    let renames = c.object("renames")?;
    let new_name = |k: &str| renames.get(k).and_then(Value::as_str);
    let taken: HashSet<&str> = fields.keys().filter_map(|k| new_name(k)).collect();
    let mut out = Map::new();
    for (k, v) in fields {
        match new_name(k) {
            Some(new) => {
                out.insert(new.to_owned(), v.clone());
            }
            None if taken.contains(k.as_str()) => {}
            None => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Object(out))
}

/// One output field per `mapping` entry: what its pick selects, or null.
pub(super) fn data_mapper(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let mut out = Map::new();
    for (k, p) in c.object("mapping")? {
        let s = p
            .as_str()
            .ok_or_else(|| NodeError::config(format!("mapping.{k} must be a field name or a JSONPath")))?;
        let pick = Pick::parse(&format!("mapping.{k}"), s).map_err(|e| NodeError::config(e.message()))?;
        out.insert(k.clone(), pick.pick(input).map_or(Value::Null, |v| v.into_owned()));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::NodeErrorCode::{ConfigInvalid, InputInvalid};
    use super::super::tests::{fails, run};
    use super::*;

    #[test]
    fn placeholders() {
        let from = json!({"topic": "ownership", "n": 3, "obj": {"a": 1}, "s p": "x"});
        assert_eq!(
            fill_placeholders("Explain [[topic]] in [[ n ]] ways", &from),
            "Explain ownership in 3 ways"
        );
        assert_eq!(fill_placeholders("[[obj]]", &from), "{\"a\":1}");
        assert_eq!(fill_placeholders("[[missing]] [[topic", &from), "[[missing]] [[topic");
        assert_eq!(fill_placeholders("[[[topic]]]", &from), "[ownership]");
        assert_eq!(fill_placeholders("[[s p]]é[[", &from), "xé[[");
        assert_eq!(fill_placeholders("[[topic]]", &json!([1])), "[[topic]]", "no fields to fill from");
        let long = format!("[[{}]]", "a".repeat(MAX_NAME_CHARS + 5));
        assert_eq!(fill_placeholders(&long, &json!({})), long);
    }

    #[test]
    fn json_transform_picks_and_keeps() {
        let t = json!({"template": {"a": {"$pick": "$.x[*]"}, "b": [{"$pick": "missing"}, 1], "c": {"$pick": "output"}}});
        assert_eq!(
            run("json_transform", t, json!({"x": [1, 2]})).unwrap(),
            json!({"a": [1, 2], "b": [null, 1], "c": {"x": [1, 2]}})
        );
        let m =
            fails("json_transform", json!({"template": {"a": [{"$pick": "$["}]}}), json!({}), ConfigInvalid);
        assert!(m.starts_with("template.a[0].$pick is not a valid JSONPath"), "{m}");
        let m = fails("json_transform", json!({"template": {"a": {"$pick": 1}}}), json!({}), ConfigInvalid);
        assert_eq!(m, "template.a.$pick must be a string: a field name or a JSONPath such as $.item.title");
        let m =
            fails("json_transform", json!({"template": {"$pick": "a", "b": 1}}), json!({}), ConfigInvalid);
        assert!(m.starts_with("template has $pick and other keys"), "{m}");
    }

    #[test]
    fn set_variables_fills_from_the_input() {
        let out = run(
            "set_variables",
            json!({"variables": {"label": "[[kind]]: [[title]]", "n": 1, "deep": ["[[kind]]"]}}),
            json!({"title": "Hi", "kind": "news"}),
        );
        assert_eq!(
            out.unwrap(),
            json!({"title": "Hi", "kind": "news", "label": "news: Hi", "n": 1, "deep": ["news"]})
        );
        let m = fails("set_variables", json!({"variables": {}}), json!([1]), InputInvalid);
        assert_eq!(m, "set_variables works on an object; its input is an array");
    }

    #[test]
    fn extract_field_one_or_all() {
        let input = json!({"items": [{"t": "a"}, {"t": "b"}]});
        assert_eq!(
            run("extract_field", json!({"path": "$.items[*].t"}), input.clone()).unwrap(),
            json!(["a", "b"])
        );
        assert_eq!(
            run("extract_field", json!({"path": "$.items[0].t", "all": true}), input.clone()).unwrap(),
            json!(["a"])
        );
        assert_eq!(
            run("extract_field", json!({"path": "$.nope", "all": true}), input.clone()).unwrap(),
            json!([])
        );
        let m = fails("extract_field", json!({"path": "$.items[5]"}), input, InputInvalid);
        assert_eq!(m, "path $.items[5] selects nothing in the input");
    }

    #[test]
    fn rename_in_place() {
        let out = run(
            "rename_field",
            json!({"renames": {"a": "b", "b": "a", "gone": "x"}}),
            json!({"a": 1, "b": 2, "c": 3}),
        );
        assert_eq!(serde_json::to_string(&out.unwrap()).unwrap(), r#"{"b":1,"a":2,"c":3}"#);
        let out = run("rename_field", json!({"renames": {"a": "c"}}), json!({"c": 3, "a": 1}));
        assert_eq!(out.unwrap(), json!({"c": 1}), "the renamed field wins");
        let m = fails("rename_field", json!({"renames": {}}), json!("text"), InputInvalid);
        assert_eq!(m, "rename_field works on an object; its input is a string");
    }

    #[test]
    fn data_mapper_nulls_what_is_absent() {
        let out = run(
            "data_mapper",
            json!({"mapping": {"t": "title", "x": "$.a.b", "all": "output"}}),
            json!({"title": "Hi"}),
        );
        assert_eq!(out.unwrap(), json!({"t": "Hi", "x": null, "all": {"title": "Hi"}}));
    }
}
