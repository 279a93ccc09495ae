//! Secrets never appear in a workflow: a step names a saved connection
//! instead. These walks find secret-named fields at any depth, redact them,
//! and bound the size of a step's JSON. Each is iterative, so a value
//! nested thousands deep costs no stack.

use serde_json::Value;

use crate::model::JsonObject;

/// Field names that hold credentials, compared case-insensitively: the
/// original's list, plus `authorization`.
pub const SECRET_FIELDS: &[&str] = &[
    "api_key",
    "key_ref_id",
    "local_key_id",
    "password",
    "secret",
    "token",
    "webhook_secret",
    "authorization",
];

/// What a redacted value reads as.
pub const REDACTED: &str = "[redacted]";

fn is_secret(key: &str) -> bool {
    SECRET_FIELDS.iter().any(|s| s.eq_ignore_ascii_case(key))
}

/// The first secret-named field of `objects`, at any depth, in document
/// order: the field's name as written.
pub fn find_secret_field<'a>(objects: impl IntoIterator<Item = &'a JsonObject>) -> Option<&'a str> {
    let mut stack: Vec<&Value> = Vec::new();
    for o in objects {
        if let Some(k) = o.keys().find(|k| is_secret(k)) {
            return Some(k);
        }
        stack.extend(o.values().rev());
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(m) => {
                    if let Some(k) = m.keys().find(|k| is_secret(k)) {
                        return Some(k);
                    }
                    stack.extend(m.values().rev());
                }
                Value::Array(a) => stack.extend(a.iter().rev()),
                _ => {}
            }
        }
    }
    None
}

/// Replaces the value of every secret-named field of `o`, at any depth,
/// with [`REDACTED`].
pub fn redact(o: &mut JsonObject) {
    let mut stack: Vec<&mut Value> = Vec::new();
    visit(o, &mut stack);
    redact_all(stack);
}

/// [`redact`] for any JSON value (a step's input or output, which need not
/// be an object).
pub fn redact_value(v: &mut Value) {
    redact_all(vec![v]);
}

fn visit<'v>(m: &'v mut JsonObject, stack: &mut Vec<&'v mut Value>) {
    for (k, v) in m.iter_mut() {
        if is_secret(k) {
            *v = Value::String(REDACTED.to_owned());
        } else {
            stack.push(v);
        }
    }
}

fn redact_all(mut stack: Vec<&mut Value>) {
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => visit(m, &mut stack),
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

/// How deep `o` nests (an object of scalars is 1) and roughly how many
/// bytes it takes as JSON, counting no further than just past `max_bytes`.
pub fn shape(o: &JsonObject, max_bytes: usize) -> (usize, usize) {
    let mut bytes = 2 + o.keys().map(|k| k.len() + 4).sum::<usize>();
    let mut depth = 1;
    let mut stack: Vec<(&Value, usize)> = o.values().map(|v| (v, 1)).collect();
    while let Some((v, d)) = stack.pop() {
        if bytes > max_bytes {
            break;
        }
        match v {
            Value::Object(m) => {
                depth = depth.max(d + 1);
                bytes += 2 + m.keys().map(|k| k.len() + 4).sum::<usize>();
                stack.extend(m.values().map(|v| (v, d + 1)));
            }
            Value::Array(a) => {
                depth = depth.max(d + 1);
                bytes += 2 + a.len();
                stack.extend(a.iter().map(|v| (v, d + 1)));
            }
            Value::String(s) => bytes += s.len() + 2,
            _ => bytes += 8,
        }
    }
    (depth, bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn finds_secrets_at_any_depth_in_any_case() {
        let c = obj(json!({"a": [{"b": {"Api_Key": "x"}}], "token2": 1}));
        assert_eq!(find_secret_field([&c]), Some("Api_Key"));
        let p = obj(json!({"headers": {"Authorization": "Bearer x"}}));
        assert_eq!(find_secret_field([&obj(json!({"ok": 1})), &p]), Some("Authorization"));
        assert_eq!(find_secret_field([&obj(json!({"tokens": 3, "secretary": "x"}))]), None);
    }

    #[test]
    fn redacts_everywhere() {
        let mut c = obj(json!({"password": "p", "x": [{"TOKEN": "t", "keep": 1}]}));
        redact(&mut c);
        assert_eq!(
            Value::Object(c),
            json!({"password": "[redacted]", "x": [{"TOKEN": "[redacted]", "keep": 1}]})
        );
        let mut v = json!([{"secret": {"a": 1}}, "token", [{"deep": {"Api_Key": 2}}]]);
        redact_value(&mut v);
        assert_eq!(v, json!([{"secret": "[redacted]"}, "token", [{"deep": {"Api_Key": "[redacted]"}}]]));
    }

    #[test]
    fn shapes_are_bounded() {
        let mut v = json!(1);
        for _ in 0..999 {
            v = json!({ "a": v });
        }
        let o = obj(v);
        assert_eq!(shape(&o, usize::MAX).0, 999);
        let big = obj(json!({"s": "x".repeat(1_000_000)}));
        assert!(shape(&big, 1_000).1 > 1_000);
    }
}
