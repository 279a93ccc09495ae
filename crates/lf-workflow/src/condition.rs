//! Conditions: structured JSON operators, never a textual expression
//! language (DESIGN §8). A condition is one of
//!
//! ```json
//! {"path": "$.score", "op": "gte", "value": 80}
//! {"all": [ … ]}   {"any": [ … ]}   {"not": { … }}
//! ```
//!
//! `path` is a pick (a top-level field name, `output`, or a `$` JSONPath)
//! of the value the condition is tested on. Conditions are bounded in depth
//! and size, so testing one costs at most a constant times the size of the
//! value it is tested on. This module parses them; part 2's engine
//! evaluates them.

use serde_json::{Map, Value, json};

use crate::path::Pick;

/// Deepest nesting of `all`, `any` and `not`.
pub const MAX_DEPTH: usize = 8;
/// Most comparisons and groups in one condition.
pub const MAX_TERMS: usize = 64;

lf_core::word_enum!(
    /// A comparison of the picked value.
    CompareOp, "op", [
        /// Equal JSON values (numbers compared as numbers).
        Eq = "eq",
        /// Not equal.
        Ne = "ne",
        /// Greater than (numbers, or strings in code-point order).
        Gt = "gt",
        Gte = "gte",
        Lt = "lt",
        Lte = "lte",
        /// A string containing `value`, or an array with an element equal to it.
        Contains = "contains",
        StartsWith = "starts_with",
        EndsWith = "ends_with",
        /// Equal to one of the elements of the array `value`.
        In = "in",
        /// The path selects something (no `value`).
        Exists = "exists",
        /// The picked value is present and not `false`, `null`, `0`, `""`, `[]` or `{}` (no `value`).
        Truthy = "truthy",
    ]
);

impl CompareOp {
    /// Whether the comparison takes a `value`.
    pub const fn takes_value(self) -> bool {
        !matches!(self, CompareOp::Exists | CompareOp::Truthy)
    }
}

/// A parsed condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Compare { path: Pick, op: CompareOp, value: Option<Value> },
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
}

impl Condition {
    /// Parses `v`. The error says where (`all[1].op`) and what to write.
    pub fn parse(v: &Value) -> Result<Condition, String> {
        let mut terms = 0;
        parse_at(v, "", 0, &mut terms)
    }

    /// The JSON form, as [`Condition::parse`] reads it.
    pub fn to_json(&self) -> Value {
        match self {
            Condition::Compare { path, op, value } => {
                let mut m = Map::new();
                m.insert("path".into(), Value::String(path.as_str().to_owned()));
                m.insert("op".into(), Value::String(op.as_str().to_owned()));
                if let Some(v) = value {
                    m.insert("value".into(), v.clone());
                }
                Value::Object(m)
            }
            Condition::All(cs) => json!({ "all": cs.iter().map(Condition::to_json).collect::<Vec<_>>() }),
            Condition::Any(cs) => json!({ "any": cs.iter().map(Condition::to_json).collect::<Vec<_>>() }),
            Condition::Not(c) => json!({ "not": c.to_json() }),
        }
    }
}

const SHAPE: &str = "write {\"path\": \"$.score\", \"op\": \"gte\", \"value\": 80}, or {\"all\": [...]}, {\"any\": [...]}, {\"not\": {...}}";

fn at(loc: &str, key: &str) -> String {
    if loc.is_empty() { key.to_owned() } else { format!("{loc}.{key}") }
}

fn parse_at(v: &Value, loc: &str, depth: usize, terms: &mut usize) -> Result<Condition, String> {
    *terms += 1;
    if *terms > MAX_TERMS {
        return Err(format!("a condition may have at most {MAX_TERMS} comparisons and groups"));
    }
    let here = if loc.is_empty() { "the condition".to_owned() } else { loc.to_owned() };
    let Some(m) = v.as_object() else {
        return Err(format!("{here} must be an object: {SHAPE}"));
    };
    if let Some((key, g)) = ["all", "any", "not"].into_iter().find_map(|k| m.get(k).map(|g| (k, g))) {
        if m.len() != 1 {
            return Err(format!("{here} has \"{key}\" and other keys: a group has exactly one key"));
        }
        if depth == MAX_DEPTH {
            return Err(format!("{here} is nested more than {MAX_DEPTH} levels deep"));
        }
        let inner = at(loc, key);
        if key == "not" {
            return Ok(Condition::Not(Box::new(parse_at(g, &inner, depth + 1, terms)?)));
        }
        let Some(items) = g.as_array().filter(|a| !a.is_empty()) else {
            return Err(format!("{inner} must be a non-empty array of conditions"));
        };
        let cs = items
            .iter()
            .enumerate()
            .map(|(i, c)| parse_at(c, &format!("{inner}[{i}]"), depth + 1, terms))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(if key == "all" { Condition::All(cs) } else { Condition::Any(cs) });
    }
    if let Some(k) = m.keys().find(|k| !matches!(k.as_str(), "path" | "op" | "value")) {
        return Err(format!("{here} has an unknown key \"{}\": {SHAPE}", lf_core::clip(k, 40)));
    }
    let path = match m.get("path") {
        Some(Value::String(s)) => Pick::parse(&at(loc, "path"), s).map_err(|e| e.message().to_owned())?,
        _ => {
            return Err(format!(
                "{} must be a string: a field name or a JSONPath such as $.score",
                at(loc, "path")
            ));
        }
    };
    let ops = || CompareOp::ALL.iter().map(|o| o.as_str()).collect::<Vec<_>>().join(", ");
    let op = match m.get("op") {
        Some(Value::String(s)) => CompareOp::from_word(s).ok_or_else(|| {
            format!("{} must be one of {}; got \"{}\"", at(loc, "op"), ops(), lf_core::clip(s, 40))
        })?,
        _ => return Err(format!("{} must be one of {}", at(loc, "op"), ops())),
    };
    let value = m.get("value").cloned();
    match (op.takes_value(), &value) {
        (true, None) => return Err(format!("{} is required with op \"{op}\"", at(loc, "value"))),
        (false, Some(_)) => return Err(format!("op \"{op}\" takes no value: remove {}", at(loc, "value"))),
        _ => {}
    }
    if op == CompareOp::In && !value.as_ref().is_some_and(Value::is_array) {
        return Err(format!("{} must be an array with op \"in\"", at(loc, "value")));
    }
    Ok(Condition::Compare { path, op, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let v = json!({"all": [
            {"path": "$.score", "op": "gte", "value": 80},
            {"not": {"path": "status", "op": "in", "value": ["spam", "draft"]}},
            {"any": [{"path": "$.tags[*]", "op": "exists"}, {"path": "text", "op": "truthy"}]}
        ]});
        let c = Condition::parse(&v).unwrap();
        assert_eq!(c.to_json(), v);
        assert_eq!(Condition::parse(&c.to_json()).unwrap(), c);
    }

    #[test]
    fn errors_say_where() {
        let cases = [
            (json!("score > 80"), "the condition must be an object"),
            (json!({"path": "$.a", "op": "bigger", "value": 1}), "op must be one of eq"),
            (json!({"all": [{"path": "$.a", "op": "eq"}]}), "all[0].value is required"),
            (json!({"any": []}), "any must be a non-empty array"),
            (json!({"path": "$.a", "op": "exists", "value": 1}), "takes no value"),
            (json!({"path": "$.a", "op": "in", "value": 1}), "must be an array"),
            (json!({"path": "$[", "op": "exists"}), "not a valid JSONPath"),
            (json!({"all": [], "any": []}), "exactly one key"),
            (json!({"path": "a", "op": "eq", "value": 1, "expr": "x"}), "unknown key \"expr\""),
        ];
        for (v, want) in cases {
            let e = Condition::parse(&v).unwrap_err();
            assert!(e.contains(want), "{v}: {e}");
        }
    }

    #[test]
    fn bounded() {
        let mut deep = json!({"path": "a", "op": "truthy"});
        for _ in 0..=MAX_DEPTH {
            deep = json!({ "not": deep });
        }
        assert!(Condition::parse(&deep).unwrap_err().contains("nested more than"));
        let wide = json!({ "all": vec![json!({"path": "a", "op": "truthy"}); MAX_TERMS] });
        assert!(Condition::parse(&wide).unwrap_err().contains("at most"));
    }
}
