//! Deterministic assertions: read from a JSON object (`{"type": …, …}`),
//! checked once when an experiment starts (a bad one is an error naming its
//! place), then applied to each answer. The checks themselves are
//! lf-battle's: [`lf_battle::scoring::run_check`] for equals, contains,
//! regex, JSON Schema and length range (as `auto_score` runs them), and
//! [`lf_battle::checks`] for the rest. A value an assertion omits is the
//! case's `expected`.
//!
//! Graded assertions (`rubric`, `factuality`, `pairwise`) are read here too
//! but asked of the experiment's judge: see `graded.rs`.

use lf_battle::scoring::{CheckOutcome, run_check};
use lf_battle::{AutoCheck, JsonSchemaValidator, checks};
use lf_core::{LfError, LfResult};
use serde_json::Value;

use super::model::AssertionOutcome;
use crate::dataset::JsonObject;

/// The assertion types, as written.
pub const TYPES: &[&str] = &[
    "equals",
    "contains",
    "contains_all",
    "not_contains",
    "starts_with",
    "regex",
    "is_json",
    "json_schema",
    "json_path_equals",
    "one_of",
    "length_range",
    "numeric_tolerance",
    "edit_distance",
    "rubric",
    "factuality",
    "pairwise",
];

/// The pass mark of a graded score (0 to 1) when none is given.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// One checked assertion.
#[derive(Clone, Debug, PartialEq)]
pub enum Assertion {
    /// The answer (trimmed) equals the text (the case's expected when none).
    Equals {
        value: Option<String>,
    },
    /// The answer holds any (`all`: every) of the texts.
    Contains {
        values: Vec<String>,
        all: bool,
        case_insensitive: bool,
    },
    /// The answer holds none of the texts.
    NotContains {
        values: Vec<String>,
        case_insensitive: bool,
    },
    StartsWith {
        value: String,
    },
    Regex {
        pattern: String,
    },
    IsJson,
    JsonSchema {
        schema: String,
    },
    /// The answer is JSON with this value at `path` (the case's expected).
    JsonPathEquals {
        path: String,
        value: Option<Value>,
    },
    OneOf {
        values: Vec<String>,
    },
    LengthRange {
        min: u32,
        max: u32,
    },
    /// The answer's first number within `tolerance` of the value (the
    /// case's expected).
    NumericTolerance {
        value: Option<f64>,
        tolerance: f64,
    },
    /// The answer at most `max` edits from the text (the case's expected).
    EditDistance {
        value: Option<String>,
        max: u32,
    },
    /// Graded: the judge's score (0 to 1) of the answer on `rubric` is at
    /// least `threshold`.
    Rubric {
        rubric: lf_battle::Rubric,
        threshold: f64,
    },
    /// Graded: the judge's score (0 to 1) of the answer's agreement with
    /// the case's expected is at least `threshold`.
    Factuality {
        threshold: f64,
    },
    /// Graded: the judge prefers the answer to contender `baseline`'s for
    /// the same case and repeat, asked in both orders.
    Pairwise {
        baseline: u16,
    },
}

fn bad(place: &str, why: impl std::fmt::Display) -> LfError {
    LfError::invalid_argument(format!("{place}: {why}. Nothing was saved.")).with_field(place)
}

fn text(o: &JsonObject, key: &str, place: &str) -> LfResult<Option<String>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() && s.len() <= AutoCheck::MAX_TEXT_CHARS => {
            Ok(Some(s.clone()))
        }
        Some(_) => Err(bad(place, format!("{key} must be a non-empty text"))),
    }
}

fn texts(o: &JsonObject, place: &str) -> LfResult<Option<Vec<String>>> {
    if let Some(one) = text(o, "value", place)? {
        return Ok(Some(vec![one]));
    }
    match o.get("values") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= 100 => items
            .iter()
            .map(|v| match v {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(bad(place, "values must be non-empty texts")),
            })
            .collect::<LfResult<Vec<_>>>()
            .map(Some),
        Some(_) => Err(bad(place, "values must be a list of 1 to 100 texts")),
    }
}

fn number(o: &JsonObject, key: &str, place: &str) -> LfResult<Option<f64>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(bad(place, format!("{key} must be a number"))),
    }
}

fn count(o: &JsonObject, key: &str, place: &str) -> LfResult<Option<u32>> {
    match number(o, key, place)? {
        None => Ok(None),
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= f64::from(u32::MAX) => Ok(Some(n as u32)),
        Some(_) => Err(bad(place, format!("{key} must be a whole number of 0 or more"))),
    }
}

fn threshold(o: &JsonObject, place: &str) -> LfResult<f64> {
    match number(o, "threshold", place)? {
        None => Ok(DEFAULT_THRESHOLD),
        Some(t) if (0.0..=1.0).contains(&t) => Ok(t),
        Some(_) => Err(bad(place, "threshold must be 0 to 1")),
    }
}

fn flag(o: &JsonObject, key: &str, place: &str) -> LfResult<bool> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(place, format!("{key} must be true or false"))),
    }
}

impl Assertion {
    /// Reads the assertion at `place` (`assertions[2]`, `case 7
    /// assertions[0]`). INVALID_ARGUMENT naming the place for an unknown
    /// type, a missing or bad field, a pattern that does not compile or a
    /// schema that is not one (checked by `validator`; without one, JSON
    /// Schema assertions are refused).
    pub fn parse(o: &JsonObject, place: &str, validator: Option<&dyn JsonSchemaValidator>) -> LfResult<Self> {
        let kind = match o.get("type") {
            Some(Value::String(t)) => t.as_str(),
            _ => return Err(bad(place, format!("type is required, one of {}", TYPES.join(", ")))),
        };
        let required =
            |v: Option<String>, key: &str| v.ok_or_else(|| bad(place, format!("{key} is required")));
        Ok(match kind {
            "equals" => Assertion::Equals { value: text(o, "value", place)? },
            "contains" | "contains_all" => Assertion::Contains {
                values: texts(o, place)?.ok_or_else(|| bad(place, "value or values is required"))?,
                all: kind == "contains_all" || flag(o, "all", place)?,
                case_insensitive: flag(o, "case_insensitive", place)?,
            },
            "not_contains" => Assertion::NotContains {
                values: texts(o, place)?.ok_or_else(|| bad(place, "value or values is required"))?,
                case_insensitive: flag(o, "case_insensitive", place)?,
            },
            "starts_with" => Assertion::StartsWith { value: required(text(o, "value", place)?, "value")? },
            "regex" => {
                let pattern = required(text(o, "pattern", place)?, "pattern")?;
                AutoCheck::regex(pattern.clone())
                    .map_err(|e| bad(place, e.message().trim_end_matches('.')))?;
                Assertion::Regex { pattern }
            }
            "is_json" => Assertion::IsJson,
            "json_schema" => {
                let schema = match o.get("schema") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v @ (Value::Object(_) | Value::Bool(_))) => v.to_string(),
                    _ => return Err(bad(place, "schema is required: a JSON Schema object")),
                };
                if schema.len() > AutoCheck::MAX_TEXT_CHARS {
                    return Err(bad(
                        place,
                        format!("schema is over {} characters", AutoCheck::MAX_TEXT_CHARS),
                    ));
                }
                let v = validator.ok_or_else(|| bad(place, "JSON Schema assertions need a validator"))?;
                v.check_schema(&schema).map_err(|e| bad(place, e.message().trim_end_matches('.')))?;
                Assertion::JsonSchema { schema }
            }
            "json_path_equals" => {
                let path = required(text(o, "path", place)?, "path")?;
                checks::parse_path(&path)
                    .map_err(|why| bad(place, format!("path {:?}: {why}", lf_core::clip(&path, 60))))?;
                Assertion::JsonPathEquals { path, value: o.get("value").filter(|v| !v.is_null()).cloned() }
            }
            "one_of" => {
                Assertion::OneOf { values: texts(o, place)?.ok_or_else(|| bad(place, "values is required"))? }
            }
            "length_range" => {
                let min = count(o, "min", place)?.unwrap_or(0);
                let max = count(o, "max", place)?.ok_or_else(|| bad(place, "max is required"))?;
                if min > max {
                    return Err(bad(place, format!("min {min} is above max {max}")));
                }
                Assertion::LengthRange { min, max }
            }
            "numeric_tolerance" => {
                let tolerance = number(o, "tolerance", place)?.unwrap_or(0.0);
                if !(tolerance >= 0.0 && tolerance.is_finite()) {
                    return Err(bad(place, "tolerance must be 0 or more"));
                }
                Assertion::NumericTolerance { value: number(o, "value", place)?, tolerance }
            }
            "edit_distance" => Assertion::EditDistance {
                value: text(o, "value", place)?,
                max: count(o, "max", place)?.ok_or_else(|| bad(place, "max is required"))?,
            },
            "rubric" => {
                let text = required(text(o, "rubric", place)?, "rubric")?;
                let criterion = lf_battle::RubricCriterion::new(
                    lf_battle::CriterionTitle::parse("Rubric")?,
                    1,
                    lf_battle::CriterionDescription::parse(&text)
                        .map_err(|_| bad(place, "rubric must be 1 to 1000 characters"))?,
                )?;
                Assertion::Rubric {
                    rubric: lf_battle::Rubric::parse(vec![criterion])?,
                    threshold: threshold(o, place)?,
                }
            }
            "factuality" => Assertion::Factuality { threshold: threshold(o, place)? },
            "pairwise" => Assertion::Pairwise {
                baseline: match count(o, "baseline", place)? {
                    None => 0,
                    Some(n) => u16::try_from(n).map_err(|_| bad(place, "baseline is a contender's index"))?,
                },
            },
            other => {
                return Err(bad(
                    place,
                    format!(
                        "unknown assertion type {:?}; one of {}",
                        lf_core::clip(other, 40),
                        TYPES.join(", ")
                    ),
                ));
            }
        })
    }

    /// Applies the assertion to `answer`, with the case's `expected` for
    /// the value it omits. A check that cannot run (no expected answer, no
    /// validator) fails, saying why.
    pub fn check(
        &self,
        answer: &str,
        expected: Option<&Value>,
        validator: Option<&dyn JsonSchemaValidator>,
    ) -> CheckOutcome {
        let expected_text = || match expected {
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => Some(v.to_string()),
            None => None,
        };
        let none =
            || CheckOutcome { passed: false, reason: "The case has no expected answer to compare.".into() };
        let auto = |c: AutoCheck| {
            run_check(&c, answer, validator).unwrap_or_else(|why| CheckOutcome { passed: false, reason: why })
        };
        // How many of `values` the answer holds (each by auto_score's contains).
        let found = |values: &[String], case_insensitive: bool| {
            values
                .iter()
                .filter(|v| auto(AutoCheck::Contains { needle: (*v).clone(), case_insensitive }).passed)
                .count()
        };
        match self {
            Assertion::Equals { value } => match value.clone().or_else(expected_text) {
                Some(e) => auto(AutoCheck::Exact { expected: e.trim().to_owned() }),
                None => none(),
            },
            Assertion::Contains { values, all, case_insensitive } => {
                let found = found(values, *case_insensitive);
                let passed = if *all { found == values.len() } else { found > 0 };
                let reason = format!(
                    "Holds {found} of the {} texts ({} needed).",
                    values.len(),
                    if *all { "all" } else { "one" }
                );
                CheckOutcome { passed, reason }
            }
            Assertion::NotContains { values, case_insensitive } => {
                let found = found(values, *case_insensitive);
                CheckOutcome {
                    passed: found == 0,
                    reason: if found == 0 {
                        "Holds none of the texts.".into()
                    } else {
                        format!("Holds {found} of the texts it must not.")
                    },
                }
            }
            Assertion::StartsWith { value } => checks::starts_with(answer, value),
            Assertion::Regex { pattern } => auto(AutoCheck::Regex { pattern: pattern.clone() }),
            Assertion::IsJson => checks::is_json(answer),
            Assertion::JsonSchema { schema } => auto(AutoCheck::JsonSchema { schema: schema.clone() }),
            Assertion::JsonPathEquals { path, value } => match value.as_ref().or(expected) {
                Some(v) => checks::json_path_equals(answer, path, v),
                None => none(),
            },
            Assertion::OneOf { values } => checks::one_of(answer, values),
            Assertion::LengthRange { min, max } => {
                auto(AutoCheck::LengthRange { min_chars: *min, max_chars: *max })
            }
            Assertion::NumericTolerance { value, tolerance } => {
                let target = value.or_else(|| match expected {
                    Some(Value::Number(n)) => n.as_f64(),
                    Some(Value::String(s)) => checks::first_number(s),
                    _ => None,
                });
                match target {
                    Some(t) => checks::numeric_tolerance(answer, t, *tolerance),
                    None => none(),
                }
            }
            Assertion::EditDistance { value, max } => match value.clone().or_else(expected_text) {
                Some(e) => checks::edit_distance_at_most(answer, &e, *max),
                None => none(),
            },
            Assertion::Rubric { .. } | Assertion::Factuality { .. } | Assertion::Pairwise { .. } => {
                CheckOutcome { passed: false, reason: "Graded by the experiment's judge only.".into() }
            }
        }
    }

    /// The type, as written.
    pub fn kind(&self) -> &'static str {
        match self {
            Assertion::Equals { .. } => "equals",
            Assertion::Contains { all: false, .. } => "contains",
            Assertion::Contains { all: true, .. } => "contains_all",
            Assertion::NotContains { .. } => "not_contains",
            Assertion::StartsWith { .. } => "starts_with",
            Assertion::Regex { .. } => "regex",
            Assertion::IsJson => "is_json",
            Assertion::JsonSchema { .. } => "json_schema",
            Assertion::JsonPathEquals { .. } => "json_path_equals",
            Assertion::OneOf { .. } => "one_of",
            Assertion::LengthRange { .. } => "length_range",
            Assertion::NumericTolerance { .. } => "numeric_tolerance",
            Assertion::EditDistance { .. } => "edit_distance",
            Assertion::Rubric { .. } => "rubric",
            Assertion::Factuality { .. } => "factuality",
            Assertion::Pairwise { .. } => "pairwise",
        }
    }

    /// Whether the judge grades it (not a deterministic check).
    pub fn is_graded(&self) -> bool {
        matches!(self, Assertion::Rubric { .. } | Assertion::Factuality { .. } | Assertion::Pairwise { .. })
    }
}

/// Reads every assertion of `list`, each named `{prefix}[i]`.
pub fn parse_all(
    list: &[JsonObject],
    prefix: &str,
    validator: Option<&dyn JsonSchemaValidator>,
) -> LfResult<Vec<Assertion>> {
    list.iter().enumerate().map(|(i, o)| Assertion::parse(o, &format!("{prefix}[{i}]"), validator)).collect()
}

/// The assertions applied to each cell: the experiment's then the case's,
/// each with where it came from (`assertions[i]`, `case.assertions[i]`).
pub fn labelled<'a>(
    experiment: &'a [Assertion],
    case: &'a [Assertion],
) -> impl Iterator<Item = (String, &'a Assertion)> {
    let experiment = experiment.iter().enumerate().map(|(i, a)| (format!("assertions[{i}]"), a));
    let case = case.iter().enumerate().map(|(i, a)| (format!("case.assertions[{i}]"), a));
    experiment.chain(case)
}

/// Applies the experiment's deterministic assertions then the case's to
/// `answer` (graded ones are the judge's: `graded.rs`).
pub fn outcomes(
    experiment: &[Assertion],
    case: &[Assertion],
    answer: &str,
    expected: Option<&Value>,
    validator: Option<&dyn JsonSchemaValidator>,
) -> Vec<AssertionOutcome> {
    labelled(experiment, case)
        .filter(|(_, a)| !a.is_graded())
        .map(|(from, a)| {
            let o = a.check(answer, expected, validator);
            AssertionOutcome::checked(a.kind(), from, o.passed, o.reason)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(v: Value) -> LfResult<Assertion> {
        let Value::Object(o) = v else { panic!("an object") };
        Assertion::parse(&o, "assertions[3]", None)
    }

    fn passes(v: Value, answer: &str, expected: Option<Value>) -> bool {
        parse(v).unwrap().check(answer, expected.as_ref(), None).passed
    }

    #[test]
    fn every_type_checks() {
        assert!(passes(json!({"type": "equals"}), " Paris ", Some(json!("Paris"))));
        assert!(!passes(json!({"type": "equals", "value": "Rome"}), "Paris", Some(json!("Paris"))));
        assert!(passes(
            json!({"type": "contains", "values": ["x", "par"], "case_insensitive": true}),
            "Paris",
            None
        ));
        assert!(!passes(json!({"type": "contains_all", "values": ["Par", "Rome"]}), "Paris", None));
        assert!(passes(json!({"type": "not_contains", "value": "sorry"}), "Paris", None));
        assert!(passes(json!({"type": "starts_with", "value": "Par"}), "Paris", None));
        assert!(passes(json!({"type": "regex", "pattern": "^P\\w+$"}), "Paris", None));
        assert!(passes(json!({"type": "is_json"}), "{\"a\": 1}", None));
        assert!(passes(json!({"type": "json_path_equals", "path": "$.a"}), "{\"a\": 1}", Some(json!(1))));
        assert!(passes(json!({"type": "one_of", "values": ["A", "B"]}), "B", None));
        assert!(passes(json!({"type": "length_range", "min": 1, "max": 5}), "Paris", None));
        assert!(passes(
            json!({"type": "numeric_tolerance", "tolerance": 0.5}),
            "about 41.7",
            Some(json!(42))
        ));
        assert!(passes(json!({"type": "edit_distance", "max": 1}), "Pariss", Some(json!("Paris"))));
        assert!(!passes(json!({"type": "equals"}), "Paris", None), "no expected answer: fails, saying why");
    }

    #[test]
    fn bad_assertions_name_their_place() {
        for (v, says) in [
            (json!({"type": "matches"}), "unknown assertion type"),
            (json!({"value": "x"}), "type is required"),
            (json!({"type": "regex", "pattern": "("}), "not a usable regular expression"),
            (json!({"type": "json_schema", "schema": {"type": "object"}}), "need a validator"),
            (json!({"type": "length_range", "min": 5, "max": 2}), "above max"),
            (json!({"type": "json_path_equals", "path": "a.b"}), "starts with $"),
            (json!({"type": "contains"}), "value or values"),
        ] {
            let e = parse(v).unwrap_err();
            assert!(
                e.message().starts_with("assertions[3]: ") && e.message().contains(says),
                "{}",
                e.message()
            );
        }
    }
}
