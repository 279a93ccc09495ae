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
//! and size, so testing one ([`Condition::test`]) costs at most a constant
//! times the size of the value it is tested on.
//!
//! # What a pick selecting several nodes means
//!
//! A pick selects a set of nodes: a field name or `output` at most one, a
//! JSONPath any number (`$.items[*].score`). A comparison holds when **at
//! least one** selected node satisfies it, so when none is selected it does
//! not hold; `exists` holds when at least one node is selected. The one
//! exception is `ne`, which holds exactly when `eq` does not (as `!=` and
//! `==` in RFC 9535 filters): none of the selected nodes equals `value`,
//! which is also the case when nothing is selected. This is per node, not
//! on the array [`Pick::pick`] hands a connection: `$.tags[*]` with
//! `contains` looks inside each tag, `$.tags` with `contains` looks for an
//! element of the array.

use serde_json::{Map, Value, json};

use crate::json;
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

    /// Whether one selected node `n` satisfies the comparison with `want`
    /// (`Exists` is about the selection, not a node: any node satisfies it).
    fn holds(self, n: &Value, want: &Value) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let both_str = || n.as_str().zip(want.as_str());
        match self {
            CompareOp::Eq => json::eq(n, want),
            // Per node; `test` reads `ne` over the whole selection instead.
            CompareOp::Ne => !json::eq(n, want),
            CompareOp::Gt => json::order(n, want) == Some(Greater),
            CompareOp::Gte => matches!(json::order(n, want), Some(Greater | Equal)),
            CompareOp::Lt => json::order(n, want) == Some(Less),
            CompareOp::Lte => matches!(json::order(n, want), Some(Less | Equal)),
            CompareOp::Contains => match n {
                Value::String(s) => want.as_str().is_some_and(|w| s.contains(w)),
                Value::Array(a) => a.iter().any(|x| json::eq(x, want)),
                _ => false,
            },
            CompareOp::StartsWith => both_str().is_some_and(|(s, w)| s.starts_with(w)),
            CompareOp::EndsWith => both_str().is_some_and(|(s, w)| s.ends_with(w)),
            CompareOp::In => want.as_array().is_some_and(|a| a.iter().any(|x| json::eq(n, x))),
            CompareOp::Exists => true,
            CompareOp::Truthy => json::truthy(n),
        }
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

    /// Whether the condition holds for `value`: each comparison as its
    /// [`CompareOp`] says, per selected node (see the module docs). Linear
    /// in the size of `value` times the size of the condition.
    pub fn test(&self, value: &Value) -> bool {
        match self {
            Condition::Compare { path, op, value: want } => {
                let nodes = path.nodes(value);
                let want = want.as_ref().unwrap_or(&Value::Null);
                match op {
                    CompareOp::Exists => !nodes.is_empty(),
                    CompareOp::Ne => !nodes.iter().any(|n| json::eq(n, want)),
                    op => nodes.iter().any(|n| op.holds(n, want)),
                }
            }
            Condition::All(cs) => cs.iter().all(|c| c.test(value)),
            Condition::Any(cs) => cs.iter().any(|c| c.test(value)),
            Condition::Not(c) => !c.test(value),
        }
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
    use proptest::prelude::*;

    use super::*;

    fn holds(c: Value, v: &Value) -> bool {
        Condition::parse(&c).unwrap().test(v)
    }

    #[test]
    fn each_op_as_documented() {
        let v = json!({
            "score": 80, "ratio": 0.5, "name": "Ada Lovelace", "tags": ["rust", "math"],
            "empty": "", "zero": 0, "none": null, "nested": {"ok": true}
        });
        let cases = [
            (json!({"path": "score", "op": "eq", "value": 80.0}), true),
            (json!({"path": "score", "op": "eq", "value": "80"}), false),
            (json!({"path": "nested", "op": "eq", "value": {"ok": true}}), true),
            (json!({"path": "score", "op": "ne", "value": 81}), true),
            (json!({"path": "score", "op": "gt", "value": 79.5}), true),
            (json!({"path": "score", "op": "gt", "value": 80}), false),
            (json!({"path": "score", "op": "gte", "value": 80}), true),
            (json!({"path": "ratio", "op": "lt", "value": 1}), true),
            (json!({"path": "ratio", "op": "lte", "value": 0.5}), true),
            (json!({"path": "score", "op": "gt", "value": "70"}), false),
            (json!({"path": "name", "op": "gt", "value": "Ad"}), true),
            (json!({"path": "name", "op": "lt", "value": "ada"}), true),
            (json!({"path": "name", "op": "contains", "value": "Love"}), true),
            (json!({"path": "tags", "op": "contains", "value": "rust"}), true),
            (json!({"path": "tags", "op": "contains", "value": "ru"}), false),
            (json!({"path": "score", "op": "contains", "value": 8}), false),
            (json!({"path": "name", "op": "starts_with", "value": "Ada"}), true),
            (json!({"path": "name", "op": "ends_with", "value": "Ada"}), false),
            (json!({"path": "score", "op": "in", "value": [1, 80.0]}), true),
            (json!({"path": "name", "op": "in", "value": ["Ada"]}), false),
            (json!({"path": "none", "op": "exists"}), true),
            (json!({"path": "missing", "op": "exists"}), false),
            (json!({"path": "none", "op": "truthy"}), false),
            (json!({"path": "zero", "op": "truthy"}), false),
            (json!({"path": "empty", "op": "truthy"}), false),
            (json!({"path": "tags", "op": "truthy"}), true),
            (json!({"path": "missing", "op": "truthy"}), false),
            (json!({"path": "$.nested.ok", "op": "eq", "value": true}), true),
            (json!({"path": "output", "op": "truthy"}), true),
        ];
        for (c, want) in cases {
            assert_eq!(holds(c.clone(), &v), want, "{c}");
        }
    }

    #[test]
    fn several_nodes_any_and_ne_is_not_eq() {
        let v = json!({"items": [{"s": 10}, {"s": 90}], "tags": ["rust", "math"]});
        assert!(holds(json!({"path": "$.items[*].s", "op": "gte", "value": 80}), &v));
        assert!(!holds(json!({"path": "$.items[*].s", "op": "gte", "value": 100}), &v));
        assert!(holds(json!({"path": "$.items[*].s", "op": "eq", "value": 10}), &v));
        assert!(!holds(json!({"path": "$.items[*].s", "op": "ne", "value": 10}), &v), "one of them is 10");
        assert!(holds(json!({"path": "$.items[*].s", "op": "ne", "value": 50}), &v));
        assert!(holds(json!({"path": "$.tags[*]", "op": "contains", "value": "at"}), &v), "inside a tag");
        assert!(!holds(json!({"path": "$.tags", "op": "contains", "value": "at"}), &v), "an element");
        // Nothing selected: every comparison fails, but ne holds.
        for op in ["eq", "gt", "lt", "contains", "starts_with", "in"] {
            let value = if op == "in" { json!([1]) } else { json!(1) };
            assert!(!holds(json!({"path": "$.nope[*]", "op": op, "value": value}), &v), "{op}");
        }
        assert!(holds(json!({"path": "$.nope", "op": "ne", "value": 1}), &v));
        assert!(holds(json!({"path": "missing", "op": "ne", "value": 1}), &json!(5)), "not an object");
        assert!(!holds(json!({"path": "$.items[*]", "op": "exists"}), &json!({"items": []})));
    }

    #[test]
    fn groups() {
        let v = json!({"a": 1});
        let t = Condition::parse(&json!({"path": "a", "op": "exists"})).unwrap();
        let f = Condition::parse(&json!({"path": "b", "op": "exists"})).unwrap();
        assert!(Condition::All(vec![]).test(&v) && !Condition::Any(vec![]).test(&v));
        assert!(Condition::All(vec![t.clone(), t.clone()]).test(&v));
        assert!(!Condition::All(vec![t.clone(), f.clone()]).test(&v));
        assert!(Condition::Any(vec![f.clone(), t.clone()]).test(&v));
        assert!(Condition::Not(Box::new(f)).test(&v) && !Condition::Not(Box::new(t)).test(&v));
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..4).prop_map(|n| json!(n)),
            (-3i64..4).prop_map(|n| json!(n as f64 / 2.0)),
            "[ab]{0,2}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[ab]", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn comparison() -> impl Strategy<Value = Condition> {
        let paths = prop::sample::select(vec!["output", "a", "b", "$.a", "$[*]", "$..a", "$.a[*]", "$..*"]);
        (paths, prop::sample::select(CompareOp::ALL.to_vec()), value()).prop_map(|(p, op, v)| {
            let value = match op {
                CompareOp::Exists | CompareOp::Truthy => None,
                CompareOp::In => Some(json!([v])),
                _ => Some(v),
            };
            Condition::Compare { path: Pick::parse("path", p).unwrap(), op, value }
        })
    }

    fn condition() -> impl Strategy<Value = Condition> {
        comparison().prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Condition::All),
                prop::collection::vec(inner.clone(), 0..3).prop_map(Condition::Any),
                inner.prop_map(|c| Condition::Not(Box::new(c))),
            ]
        })
    }

    proptest! {
        #[test]
        fn not_negates_and_groups_fold(c in condition(), d in condition(), v in value()) {
            prop_assert_eq!(Condition::Not(Box::new(c.clone())).test(&v), !c.test(&v));
            prop_assert_eq!(Condition::All(vec![c.clone(), d.clone()]).test(&v), c.test(&v) && d.test(&v));
            prop_assert_eq!(Condition::Any(vec![c.clone(), d.clone()]).test(&v), c.test(&v) || d.test(&v));
            prop_assert!(Condition::All(vec![]).test(&v));
            prop_assert!(!Condition::Any(vec![]).test(&v));
        }

        #[test]
        fn ne_is_not_eq_and_exists_is_a_pick(c in comparison(), v in value()) {
            let Condition::Compare { path, op, value } = &c else { return Ok(()) };
            if *op == CompareOp::Eq {
                let ne = Condition::Compare { path: path.clone(), op: CompareOp::Ne, value: value.clone() };
                prop_assert_eq!(ne.test(&v), !c.test(&v));
            }
            let exists = Condition::Compare { path: path.clone(), op: CompareOp::Exists, value: None };
            prop_assert_eq!(exists.test(&v), path.pick(&v).is_some());
            if *op != CompareOp::Ne && c.test(&v) {
                prop_assert!(exists.test(&v), "a comparison holds only of something selected");
            }
        }
    }

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
