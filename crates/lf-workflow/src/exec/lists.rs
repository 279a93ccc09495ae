//! The list steps: filter_items, aggregate, sort, deduplicate and
//! split_in_batches, each over the array at `items_path`. Linear in the
//! array (sort: `n log n` comparisons of keys read once).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Number, Value, json};

use super::{Config, NodeError, Within, items, not_a};
use crate::json;
use crate::path::Pick;

/// The elements for which `condition` holds, and how many.
pub(super) fn filter_items(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let condition = c.condition("condition")?;
    let kept: Vec<Value> =
        items(c, "items_path", input)?.iter().filter(|e| condition.test(e)).cloned().collect();
    let count = kept.len();
    Ok(json!({"items": kept, "count": count}))
}

/// Consecutive arrays of `batch_size` elements (the last may be shorter).
pub(super) fn split_in_batches(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let size = usize::try_from(c.uint("batch_size")?.max(1)).unwrap_or(usize::MAX);
    let batches: Vec<Value> =
        items(c, "items_path", input)?.chunks(size).map(|b| Value::Array(b.to_vec())).collect();
    Ok(json!({ "batches": batches }))
}

/// Where a sort key falls: numbers, then strings, then everything else
/// (other kinds, several matches, nothing) last, in either order.
fn sort_rank(k: Option<&Value>) -> u8 {
    match k {
        Some(Value::Number(_)) => 0,
        Some(Value::String(_)) => 1,
        _ => 2,
    }
}

/// Numbers as numbers, then strings by code point (what `sort`, `min` and
/// `max` share); `None` for other values.
fn sort_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    let (ra, rb) = (sort_rank(Some(a)), sort_rank(Some(b)));
    if ra == 2 || rb == 2 {
        return None;
    }
    Some(ra.cmp(&rb).then_with(|| json::order(a, b).unwrap_or(Ordering::Equal)))
}

/// Two sort keys: numbers and strings by [`sort_cmp`] (reversed for
/// `desc`), anything else after them and equal among themselves.
fn key_cmp(a: Option<&Value>, b: Option<&Value>, desc: bool) -> Ordering {
    match a.zip(b).and_then(|(a, b)| sort_cmp(a, b)) {
        Some(o) if desc => o.reverse(),
        Some(o) => o,
        None => sort_rank(a).cmp(&sort_rank(b)),
    }
}

/// The elements, stably sorted by their `by` value.
pub(super) fn sort(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let by = c.pick("by")?;
    let desc = c.str("order")? == "desc";
    let items = items(c, "items_path", input)?;
    let keys: Vec<Option<Cow<Value>>> = items.iter().map(|e| by.pick(e)).collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&i, &j| key_cmp(keys[i].as_deref(), keys[j].as_deref(), desc));
    Ok(Value::Array(order.into_iter().map(|i| items[i].clone()).collect()))
}

/// The elements whose key (the `key_path` value, or the whole element) was
/// not seen before, in order. Keys are compared as [`json::eq`] does, by
/// their canonical text in a hash set; an element whose `key_path` selects
/// nothing has no key and is kept.
pub(super) fn deduplicate(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let key = c.opt_pick("key_path")?.unwrap_or(Pick::Whole);
    let mut seen = HashSet::new();
    let kept = items(c, "items_path", input)?
        .iter()
        .filter(|e| key.pick(e).is_none_or(|k| seen.insert(json::canonical(&k))))
        .cloned()
        .collect();
    Ok(Value::Array(kept))
}

/// aggregate's `operation`, one of its catalog field's options.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operation {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Collect,
}

impl Operation {
    fn from_option(word: &str) -> Result<Operation, NodeError> {
        Ok(match word {
            "count" => Operation::Count,
            "sum" => Operation::Sum,
            "avg" => Operation::Avg,
            "min" => Operation::Min,
            "max" => Operation::Max,
            "collect" => Operation::Collect,
            other => {
                return Err(NodeError::config(format!("operation \"{other}\" is not one aggregate runs")));
            }
        })
    }
}

/// One group: how many elements it has and the values its `path` selected,
/// with their element's index (for messages).
#[derive(Default)]
struct Group<'v> {
    elements: u64,
    values: Vec<(usize, Cow<'v, Value>)>,
}

/// count, sum, avg, min, max or collect over the elements' `path` values,
/// as a whole or per `group_by` value (an object keyed by that value: a
/// string as it is, another value as its JSON text, `null` for an element
/// that has none), groups in the order first seen. Missing values are
/// skipped; `count` with a `path` counts the elements that have one.
pub(super) fn aggregate(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let op = Operation::from_option(c.str("operation")?)?;
    let path = c.opt_pick("path")?;
    let group_by = c.opt_pick("group_by")?;
    let items = items(c, "items_path", input)?;
    let mut groups: Vec<(String, Group)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, e) in items.iter().enumerate() {
        let g = match &group_by {
            None => {
                if groups.is_empty() {
                    groups.push((String::new(), Group::default()));
                }
                &mut groups[0].1
            }
            Some(by) => {
                let key = by.pick(e).map_or_else(
                    || "null".to_owned(),
                    |k| match k.as_ref() {
                        Value::String(s) => s.clone(),
                        other => json::canonical(other),
                    },
                );
                let at = *index.entry(key.clone()).or_insert_with(|| {
                    groups.push((key, Group::default()));
                    groups.len() - 1
                });
                &mut groups[at].1
            }
        };
        g.elements += 1;
        if let Some(p) = &path
            && let Some(v) = p.pick(e)
        {
            g.values.push((i, v));
        }
    }
    let result = |g: &Group| reduce(op, path.as_ref(), g);
    match group_by {
        None => groups.first().map_or_else(|| result(&Group::default()), |(_, g)| result(g)),
        Some(_) => {
            let mut out = Map::new();
            for (k, g) in &groups {
                out.insert(k.clone(), result(g)?);
            }
            Ok(Value::Object(out))
        }
    }
}

fn reduce(op: Operation, path: Option<&Pick>, g: &Group) -> Result<Value, NodeError> {
    let want = |i: usize, v: &Value, what: &str| match path {
        Some(p) => not_a("path", p, v, what, Within::Element(i)),
        None => NodeError::config("path is required for this operation"),
    };
    match op {
        Operation::Count => Ok(json!(if path.is_some() { g.values.len() as u64 } else { g.elements })),
        Operation::Collect => Ok(Value::Array(g.values.iter().map(|(_, v)| v.as_ref().clone()).collect())),
        Operation::Sum | Operation::Avg => {
            let mut nums = Vec::with_capacity(g.values.len());
            for (i, v) in &g.values {
                nums.push(v.as_ref().as_number().ok_or_else(|| want(*i, v, "a number"))?);
            }
            if op == Operation::Avg {
                if nums.is_empty() {
                    return Ok(Value::Null);
                }
                let sum: f64 = nums.iter().map(|n| n.as_f64().unwrap_or(0.0)).sum();
                return finite(sum / nums.len() as f64, "average");
            }
            let ints: Option<i128> = nums.iter().try_fold(0i128, |acc, n| {
                n.as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
                    .and_then(|x| acc.checked_add(x))
            });
            match ints {
                Some(s) => match (i64::try_from(s), u64::try_from(s)) {
                    (Ok(x), _) => Ok(json!(x)),
                    (_, Ok(x)) => Ok(json!(x)),
                    _ => finite(s as f64, "sum"),
                },
                None => finite(nums.iter().map(|n| n.as_f64().unwrap_or(0.0)).sum(), "sum"),
            }
        }
        Operation::Min | Operation::Max => {
            let mut best: Option<&Value> = None;
            for (i, v) in &g.values {
                let v = v.as_ref();
                if sort_rank(Some(v)) == 2 {
                    return Err(want(*i, v, "a number or a string"));
                }
                let better = best.is_none_or(|b| {
                    let o = sort_cmp(v, b).unwrap_or(Ordering::Equal);
                    if op == Operation::Min { o == Ordering::Less } else { o == Ordering::Greater }
                });
                if better {
                    best = Some(v);
                }
            }
            Ok(best.cloned().unwrap_or(Value::Null))
        }
    }
}

fn finite(x: f64, what: &str) -> Result<Value, NodeError> {
    Number::from_f64(x)
        .map(Value::Number)
        .ok_or_else(|| NodeError::too_large(format!("the {what} is too large for a JSON number")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::NodeErrorCode::{InputInvalid, TooLarge};
    use super::super::tests::{fails, run};

    #[test]
    fn sort_numbers_then_strings_missing_last_stably() {
        let input = json!([{"k": "b"}, {"k": 10}, {"n": 1}, {"k": 9.5}, {"k": "a"}, {"k": true}, {"k": 10.0, "second": 1}]);
        let out = run("sort", json!({"by": "k"}), input.clone()).unwrap();
        assert_eq!(
            out,
            json!([{"k": 9.5}, {"k": 10}, {"k": 10.0, "second": 1}, {"k": "a"}, {"k": "b"}, {"n": 1}, {"k": true}])
        );
        let out = run("sort", json!({"by": "k", "order": "desc"}), input).unwrap();
        assert_eq!(
            out,
            json!([{"k": "b"}, {"k": "a"}, {"k": 10}, {"k": 10.0, "second": 1}, {"k": 9.5}, {"n": 1}, {"k": true}])
        );
    }

    #[test]
    fn deduplicate_by_key_or_whole() {
        let input = json!([{"u": 1, "x": 1}, {"u": 1.0, "x": 2}, {"x": 3}, {"x": 4}, {"u": "1"}]);
        assert_eq!(
            run("deduplicate", json!({"key_path": "u"}), input).unwrap(),
            json!([{"u": 1, "x": 1}, {"x": 3}, {"x": 4}, {"u": "1"}])
        );
        let input = json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}, [1], [1], "1", 1]);
        assert_eq!(run("deduplicate", json!({}), input).unwrap(), json!([{"a": 1, "b": 2}, [1], "1", 1]));
    }

    #[test]
    fn aggregate_operations() {
        let input =
            json!([{"s": "a", "v": 2}, {"s": "b", "v": 3.5}, {"s": "a", "v": 4}, {"s": "a"}, {"v": 1}]);
        let agg = |config| run("aggregate", config, input.clone()).unwrap();
        assert_eq!(agg(json!({})), json!(5));
        assert_eq!(agg(json!({"operation": "count", "path": "v"})), json!(4));
        assert_eq!(agg(json!({"operation": "sum", "path": "v"})), json!(10.5));
        assert_eq!(
            agg(json!({"operation": "sum", "path": "v", "group_by": "s"})),
            json!({"a": 6, "b": 3.5, "null": 1})
        );
        assert_eq!(
            agg(json!({"operation": "avg", "path": "v", "group_by": "s"})),
            json!({"a": 3.0, "b": 3.5, "null": 1.0})
        );
        assert_eq!(agg(json!({"operation": "min", "path": "v"})), json!(1));
        assert_eq!(agg(json!({"operation": "max", "path": "s"})), json!("b"));
        assert_eq!(
            agg(json!({"operation": "collect", "path": "s", "group_by": "v"})),
            json!({"2": ["a"], "3.5": ["b"], "4": ["a"], "null": ["a"], "1": []})
        );
        assert_eq!(agg(json!({"operation": "avg", "path": "missing"})), json!(null));
        assert_eq!(agg(json!({"operation": "sum", "path": "missing"})), json!(0));
        assert_eq!(
            run("aggregate", json!({"operation": "max", "path": "v"}), json!([])).unwrap(),
            json!(null)
        );
        assert_eq!(run("aggregate", json!({"group_by": "s"}), json!([])).unwrap(), json!({}));
        let big = json!([{"v": u64::MAX}, {"v": u64::MAX}]);
        assert_eq!(
            run("aggregate", json!({"operation": "sum", "path": "v"}), big).unwrap(),
            json!(2.0 * u64::MAX as f64)
        );
    }

    #[test]
    fn aggregate_errors_name_the_element() {
        let input = json!([{"v": 1}, {"v": "2"}]);
        let m = fails("aggregate", json!({"operation": "sum", "path": "v"}), input, InputInvalid);
        assert_eq!(m, "path v selects a string in element 1, not a number");
        let m =
            fails("aggregate", json!({"operation": "min", "path": "output"}), json!([1, [2]]), InputInvalid);
        assert_eq!(m, "element 1 is an array, not a number or a string (path is output, the whole element)");
        let m = fails(
            "aggregate",
            json!({"operation": "sum", "path": "v"}),
            json!([{"v": 1e308}, {"v": 1e308}]),
            TooLarge,
        );
        assert_eq!(m, "the sum is too large for a JSON number");
    }

    #[test]
    fn filter_reads_paths_from_each_element() {
        let input = json!({"items": [{"tags": ["a", "b"]}, {"tags": []}, 5]});
        let config =
            json!({"items_path": "items", "condition": {"path": "$.tags[*]", "op": "eq", "value": "b"}});
        assert_eq!(
            run("filter_items", config, input).unwrap(),
            json!({"items": [{"tags": ["a", "b"]}], "count": 1})
        );
    }

    #[test]
    fn batches() {
        assert_eq!(run("split_in_batches", json!({}), json!([])).unwrap(), json!({"batches": []}));
        let out = run("split_in_batches", json!({"batch_size": 2}), json!([1, 2, 3, 4])).unwrap();
        assert_eq!(out, json!({"batches": [[1, 2], [3, 4]]}));
        let m = fails(
            "split_in_batches",
            json!({"items_path": "$.rows"}),
            json!({"rows": {"a": 1}}),
            InputInvalid,
        );
        assert_eq!(m, "items_path $.rows selects an object in the input, not an array");
    }
}
