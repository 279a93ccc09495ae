//! Text checks beyond [`crate::AutoCheck`]'s five, each with its reason:
//! one implementation shared by `auto_score` (when it grows them) and the
//! assertions of experiments (lf-eval), which use [`crate::scoring::run_check`]
//! for the five it has. Pure functions of the answer's text.

use serde_json::Value;
use serde_json_path::JsonPath;

use crate::scoring::CheckOutcome;

fn out(passed: bool, reason: String) -> CheckOutcome {
    CheckOutcome { passed, reason }
}

/// The text, trimmed, starts with `prefix`.
pub fn starts_with(text: &str, prefix: &str) -> CheckOutcome {
    let passed = text.trim_start().starts_with(prefix);
    out(passed, if passed { "Starts with the prefix." } else { "Does not start with the prefix." }.into())
}

/// The text, trimmed, equals one of `options` (trimmed).
pub fn one_of(text: &str, options: &[String]) -> CheckOutcome {
    let t = text.trim();
    match options.iter().position(|o| o.trim() == t) {
        Some(i) => out(true, format!("Is option {} of {}.", i + 1, options.len())),
        None => out(false, format!("Is none of the {} options.", options.len())),
    }
}

/// The text parses as JSON; a fenced block (```json … ```) is read inside.
pub fn parse_json(text: &str) -> Result<Value, String> {
    let t = text.trim();
    let inner = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|s| s.trim_end().strip_suffix("```"))
        .unwrap_or(t);
    serde_json::from_str(inner.trim()).map_err(|e| lf_core::clip(&e.to_string(), 200).into_owned())
}

/// The text is a JSON document.
pub fn is_json(text: &str) -> CheckOutcome {
    match parse_json(text) {
        Ok(_) => out(true, "Is JSON.".into()),
        Err(why) => out(false, format!("Is not JSON: {why}")),
    }
}

/// Reads a JSON path (RFC 9535, with `serde_json_path`, as workflow
/// steps read theirs): `$.answer.items[0].name`. `Err` says what is wrong.
pub fn parse_path(path: &str) -> Result<JsonPath, String> {
    let path = path.trim();
    if !path.starts_with('$') {
        return Err("a JSON path starts with $".into());
    }
    JsonPath::parse(path).map_err(|e| lf_core::clip(&e.to_string(), 200).into_owned())
}

/// The text is JSON whose value at `path` equals `expected` (numbers by
/// value: 1 equals 1.0).
pub fn json_path_equals(text: &str, path: &str, expected: &Value) -> CheckOutcome {
    let doc = match parse_json(text) {
        Ok(doc) => doc,
        Err(why) => return out(false, format!("Is not JSON: {why}")),
    };
    let path_read = match parse_path(path) {
        Ok(p) => p,
        Err(why) => return out(false, format!("The path is not usable: {why}")),
    };
    match path_read.query(&doc).first() {
        None => out(false, format!("Has nothing at {path}.")),
        Some(found) if same(found, expected) => out(true, format!("Has the expected value at {path}.")),
        Some(found) => out(
            false,
            format!("Has {} at {path}, not the expected value.", lf_core::clip(&found.to_string(), 100)),
        ),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// The first number in the text (`-12.5`, `3e2`, `1,234` read as 1234).
pub fn first_number(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        if starts {
            let mut j = i + 1;
            while j < bytes.len()
                && (bytes[j].is_ascii_digit()
                    || bytes[j] == b'.'
                    || (bytes[j] == b',' && bytes.get(j + 1).is_some_and(u8::is_ascii_digit))
                    || ((bytes[j] == b'e' || bytes[j] == b'E')
                        && bytes.get(j + 1).is_some_and(u8::is_ascii_digit)))
            {
                j += 1;
            }
            let s: String = text[i..j].chars().filter(|c| *c != ',').collect();
            let s = s.trim_end_matches('.');
            if let Ok(n) = s.parse() {
                return Some(n);
            }
        }
        i += 1;
    }
    None
}

/// The first number in the text is within `tolerance` of `expected`.
pub fn numeric_tolerance(text: &str, expected: f64, tolerance: f64) -> CheckOutcome {
    match first_number(text) {
        None => out(false, "Holds no number.".into()),
        Some(n) => {
            let passed = (n - expected).abs() <= tolerance;
            out(
                passed,
                format!("{n} is {} {tolerance} of {expected}.", if passed { "within" } else { "not within" }),
            )
        }
    }
}

/// Levenshtein distance in characters, stopping once past `limit`.
pub fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > limit {
            return limit + 1;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The text, trimmed, is at most `max` edits from `expected` (trimmed).
pub fn edit_distance_at_most(text: &str, expected: &str, max: u32) -> CheckOutcome {
    let d = edit_distance(text.trim(), expected.trim(), max as usize);
    if d <= max as usize {
        out(true, format!("{d} edits from the expected answer, at most {max}."))
    } else {
        out(false, format!("More than {max} edits from the expected answer."))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_read_keys_and_indexes() {
        let doc = json!({"a": [0, 1, {"b c": {"d": "found"}}]});
        let path = parse_path("$.a[2][\"b c\"].d").unwrap();
        assert_eq!(path.query(&doc).first(), Some(&json!("found")));
        assert!(parse_path("a.b").is_err() && parse_path("$.a[x]").is_err() && parse_path("$.").is_err());
        let doc = "```json\n{\"a\": [{\"n\": 1.0}]}\n```";
        assert!(json_path_equals(doc, "$.a[0].n", &json!(1)).passed);
        assert!(!json_path_equals(doc, "$.a[1].n", &json!(1)).passed);
        assert!(!json_path_equals("nope", "$.a", &json!(1)).passed);
    }

    #[test]
    fn numbers_edits_and_options() {
        assert_eq!(first_number("It is about -1,234.5 metres."), Some(-1234.5));
        assert_eq!(first_number("Answer: 42."), Some(42.0));
        assert_eq!(first_number("none"), None);
        assert!(numeric_tolerance("≈ 2.71", 2.7, 0.02).passed);
        assert!(!numeric_tolerance("3", 3.5, 0.1).passed);
        assert_eq!(edit_distance("kitten", "sitting", 10), 3);
        assert_eq!(edit_distance("a", "abcdef", 2), 3, "stops past the limit");
        assert!(edit_distance_at_most(" Paris ", "paris", 1).passed);
        assert!(!edit_distance_at_most("Lyon", "Paris", 2).passed);
        assert!(one_of(" B ", &["A".into(), "B".into()]).passed && !one_of("C", &["A".into()]).passed);
        assert!(starts_with("  Yes, because", "Yes").passed && !starts_with("No", "Yes").passed);
        assert!(is_json("[1, 2]").passed && !is_json("{").passed);
    }
}
