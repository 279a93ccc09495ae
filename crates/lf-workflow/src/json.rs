//! How workflow data compares: the one meaning of "equal", "less than",
//! "truthy" and "the same key" that conditions and the data steps share.
//! Numbers compare as numbers (`1` equals `1.0`), strings by code point,
//! objects regardless of key order.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt::Write;

use serde_json::{Number, Value};

/// The kind of `v`, with its article, for messages ("an object").
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn int(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// Numbers by value, exactly (an integer against a float too; JSON numbers
/// are finite, so the order is total).
pub(crate) fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => cmp_int_float(x, b.as_f64().unwrap_or(0.0)),
        (None, Some(y)) => cmp_int_float(y, a.as_f64().unwrap_or(0.0)).reverse(),
        (None, None) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

const TWO_127: f64 = 1.7014118346046923e38;

fn cmp_int_float(i: i128, f: f64) -> Ordering {
    if f >= TWO_127 {
        return Ordering::Less;
    }
    if f < -TWO_127 {
        return Ordering::Greater;
    }
    let whole = f.trunc();
    // Exact: `whole` is integral and within i128.
    i.cmp(&(whole as i128)).then(whole.partial_cmp(&f).unwrap_or(Ordering::Equal))
}

/// Equal JSON values, numbers compared as numbers at any depth.
pub(crate) fn eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| eq(p, q)))
        }
        _ => a == b,
    }
}

/// Two numbers or two strings in order; `None` for anything else (such
/// values are neither less nor greater than each other).
pub(crate) fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Some(cmp_numbers(x, y)),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Not `false`, `null`, `0`, `""`, `[]` or `{}`.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => cmp_numbers(n, &Number::from(0)) != Ordering::Equal,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// A string as it is, anything else as compact JSON: how a value reads
/// inside a text.
pub fn text(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// A text that two values share exactly when [`eq`] holds between them:
/// object keys sorted, integral numbers written as integers. Linear in
/// the size of `v` (plus sorting each object's keys).
pub(crate) fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Number(n) => match (int(n), n.as_f64()) {
            (Some(i), _) => {
                let _ = write!(out, "{i}");
            }
            // An integral float reads as the integer it equals; -0.0 is 0.
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < TWO_127 => {
                let _ = write!(out, "{}", f as i128);
            }
            _ => out.push_str(&n.to_string()),
        },
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&o[k], out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_compare_as_numbers() {
        assert!(eq(&json!(1), &json!(1.0)));
        assert!(eq(&json!({"a": [1, {"b": 2.0}], "c": 3}), &json!({"c": 3.0, "a": [1.0, {"b": 2}]})));
        assert!(!eq(&json!([1, 2]), &json!([2, 1])));
        assert!(!eq(&json!("1"), &json!(1)));
        assert_eq!(order(&json!(-1), &json!(u64::MAX)), Some(Ordering::Less));
        assert_eq!(order(&json!(2.5), &json!(2)), Some(Ordering::Greater));
        assert_eq!(order(&json!(-2.5), &json!(-2)), Some(Ordering::Less));
        assert_eq!(
            order(&json!(9_007_199_254_740_993_u64), &json!(9_007_199_254_740_992.0)),
            Some(Ordering::Greater)
        );
        assert_eq!(order(&json!(1e300), &json!(u64::MAX)), Some(Ordering::Greater));
        assert_eq!(order(&json!("b"), &json!("ab")), Some(Ordering::Greater));
        assert_eq!(order(&json!("1"), &json!(1)), None);
        assert_eq!(order(&json!(null), &json!(null)), None);
    }

    #[test]
    fn canonical_agrees_with_eq() {
        let pairs = [
            (json!({"a": 1, "b": [1.0, "x"]}), json!({"b": [1, "x"], "a": 1.0})),
            (json!(-0.0), json!(0)),
            (json!(1_152_921_504_606_846_976_u64), json!(1_152_921_504_606_846_976.0)),
            (json!("é\"\n"), json!("é\"\n")),
        ];
        for (a, b) in pairs {
            assert!(eq(&a, &b));
            assert_eq!(canonical(&a), canonical(&b), "{a} {b}");
        }
        assert_ne!(canonical(&json!({"a": "1"})), canonical(&json!({"a": 1})));
        assert_ne!(canonical(&json!(1.5)), canonical(&json!(1)));
        assert_ne!(canonical(&json!({"a,b": 1})), canonical(&json!({"a": 1, "b": 1})));
    }

    #[test]
    fn truthiness() {
        for v in [json!(false), json!(null), json!(0), json!(0.0), json!(""), json!([]), json!({})] {
            assert!(!truthy(&v), "{v}");
        }
        for v in [json!(true), json!(-1), json!(0.5), json!("0"), json!([0]), json!({"a": null})] {
            assert!(truthy(&v), "{v}");
        }
    }
}
