//! The steps that route or pass their input: if_condition, switch, merge,
//! stop_return, noop, logger (which also writes a line to the run's log)
//! and debug_inspector.

use serde_json::{Map, Value, json};

use super::data::fill_placeholders;
use super::{Config, NodeError, select};
use crate::condition::Condition;
use crate::engine::{LogLevel, LogLine};
use crate::json;
use crate::model::MergeStrategy;
use crate::path::Pick;
use crate::secrets::redact_value;

/// `{"true": input}` when `condition` holds, else `{"false": input}`.
pub(super) fn if_condition(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let branch = if c.condition("condition")?.test(input) { "true" } else { "false" };
    Ok(json!({ branch: input }))
}

/// `{"<name>": input}` for the first case whose `when` holds, else
/// `{"<default_branch>": input}`.
pub(super) fn switch(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let cases = c
        .get("cases")
        .and_then(Value::as_array)
        .ok_or_else(|| NodeError::config("cases must be an array"))?;
    for (i, case) in cases.iter().enumerate() {
        let name = case.get("name").and_then(Value::as_str);
        let when = case.get("when").map(Condition::parse);
        let (Some(name), Some(Ok(when))) = (name, when) else {
            return Err(NodeError::config(format!("cases[{i}] must have a name and a valid when")));
        };
        if when.test(input) {
            return Ok(json!({ name: input }));
        }
    }
    Ok(json!({ c.str("default_branch")?: input }))
}

/// Combines what reached a merge, or what was wired into one input
/// parameter, as `strategy` says: `json_object` an object of the entries
/// by key (a later entry of the same key replacing an earlier one),
/// `array` their values in order, `concat` their texts joined by a blank
/// line (a string as it is, another value as its JSON text),
/// `last_write_wins` the last value (null when there is none).
pub fn combine<'a>(
    strategy: MergeStrategy,
    entries: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> Value {
    let entries = entries.into_iter();
    match strategy {
        MergeStrategy::JsonObject => {
            Value::Object(entries.map(|(k, v)| (k.to_owned(), v.clone())).collect::<Map<_, _>>())
        }
        MergeStrategy::Array => Value::Array(entries.map(|(_, v)| v.clone()).collect()),
        MergeStrategy::Concat => {
            Value::String(entries.map(|(_, v)| json::text(v)).collect::<Vec<_>>().join("\n\n"))
        }
        MergeStrategy::LastWriteWins => entries.last().map_or(Value::Null, |(_, v)| v.clone()),
    }
}

/// [`combine`] by `strategy` over what reached the merge: an object keyed
/// by input parameter, in connection order (an array of the values, too,
/// for the strategies that need no keys).
pub(super) fn merge(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let word = c.str("strategy")?;
    let strategy = MergeStrategy::parse(word).map_err(|e| NodeError::config(e.message()))?;
    match input {
        Value::Object(m) => Ok(combine(strategy, m.iter().map(|(k, v)| (k.as_str(), v)))),
        Value::Array(a) if strategy != MergeStrategy::JsonObject => {
            Ok(combine(strategy, a.iter().map(|v| ("", v))))
        }
        other => Err(NodeError::input(format!(
            "merge with strategy {word} takes what reached it as an object keyed by input parameter; its input is {}",
            json::kind(other)
        ))),
    }
}

/// The part of the input at `return_path`: the run's result.
pub(super) fn stop_return(c: &Config, input: &Value) -> Result<Value, NodeError> {
    select("return_path", &c.pick("return_path")?, input).map(|v| v.into_owned())
}

/// `fallback_value` when it is set, else the caught error itself (the
/// engine ends the run after it when `continue_on_error` is false).
pub(super) fn error_catch(c: &Config, input: &Value) -> Result<Value, NodeError> {
    Ok(match c.get("fallback_value") {
        Some(v) if !v.is_null() => v.clone(),
        _ => input.clone(),
    })
}

/// The input, unchanged (noop; logger, which also writes [`log_line`]).
pub(super) fn pass_on(_: &Config, input: &Value) -> Result<Value, NodeError> {
    Ok(input.clone())
}

/// The line a `logger` step writes to its run's log, at `level`: its
/// `message` with every `[[name]]` filled from the input's fields, or
/// without a `message` the input itself as text. The input's secret-named
/// fields read as `[redacted]`, as get_workflow_run_logs shows the input.
/// A NUL reads as U+FFFD: PostgreSQL's `text`, where the run's log is
/// kept, cannot hold one.
pub(super) fn log_line(c: &Config, input: &Value) -> Result<LogLine, NodeError> {
    let level = c.str("level")?;
    let level = LogLevel::from_word(level)
        .ok_or_else(|| NodeError::config(format!("level {level} is not a log level")))?;
    let shown = || {
        let mut v = input.clone();
        redact_value(&mut v);
        v
    };
    let message = match c.get("message").and_then(Value::as_str) {
        Some(m) if !m.contains("[[") => m.to_owned(),
        Some(m) => fill_placeholders(m, &shown()),
        None => json::text(&shown()).into_owned(),
    };
    let message = if message.contains('\0') { message.replace('\0', "\u{fffd}") } else { message };
    Ok(LogLine { level, message })
}

/// `{input, captured}`: the input, and what each of `capture_paths`
/// selects in it by the path as written (null when nothing); without
/// `capture_paths`, the whole input as `output`.
pub(super) fn debug_inspector(c: &Config, input: &Value) -> Result<Value, NodeError> {
    let mut captured = Map::new();
    match c.get("capture_paths").and_then(Value::as_array) {
        None => {
            captured.insert(Pick::Whole.as_str().to_owned(), input.clone());
        }
        Some(paths) => {
            for (i, p) in paths.iter().enumerate() {
                let field = format!("capture_paths[{i}]");
                let s = p.as_str().ok_or_else(|| NodeError::config(format!("{field} must be a string")))?;
                let pick = Pick::parse(&field, s).map_err(|e| NodeError::config(e.message()))?;
                captured.insert(s.to_owned(), pick.pick(input).map_or(Value::Null, |v| v.into_owned()));
            }
        }
    }
    Ok(json!({"input": input, "captured": captured}))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::NodeErrorCode::{ConfigInvalid, InputInvalid};
    use super::super::tests::{fails, ran, run};
    use crate::engine::{LogLevel, LogLine};

    #[test]
    fn branches_name_the_output_taken() {
        let cond = json!({"condition": {"path": "$.score", "op": "gte", "value": 7}});
        assert_eq!(
            run("if_condition", cond.clone(), json!({"score": 3})).unwrap(),
            json!({"false": {"score": 3}})
        );
        assert_eq!(run("if", cond, json!("text")).unwrap(), json!({"false": "text"}));
        let cases = json!([
            {"name": "high", "when": {"path": "score", "op": "gte", "value": 8}},
            {"name": "mid", "when": {"path": "score", "op": "gte", "value": 5}},
            {"name": "also_mid", "when": {"path": "score", "op": "gte", "value": 5}}
        ]);
        let switch = |input, default: Option<&str>| {
            let mut config = json!({"cases": cases});
            if let Some(d) = default {
                config["default_branch"] = json!(d);
            }
            run("switch", config, input).unwrap()
        };
        assert_eq!(switch(json!({"score": 9}), None), json!({"high": {"score": 9}}));
        assert_eq!(switch(json!({"score": 6}), None), json!({"mid": {"score": 6}}), "the first that holds");
        assert_eq!(switch(json!({"score": 1}), None), json!({"default": {"score": 1}}));
        assert_eq!(switch(json!({}), Some("other")), json!({"other": {}}));
    }

    #[test]
    fn merge_strategies() {
        let input = json!({"news": "N", "papers": {"n": 2}});
        let merge = |s: &str| run("merge", json!({"strategy": s}), input.clone()).unwrap();
        assert_eq!(merge("json_object"), input);
        assert_eq!(merge("array"), json!(["N", {"n": 2}]));
        assert_eq!(merge("concat"), json!("N\n\n{\"n\":2}"));
        assert_eq!(merge("last_write_wins"), json!({"n": 2}));
        assert_eq!(run("merge", json!({}), json!({})).unwrap(), json!({}), "json_object by default");
        assert_eq!(run("merge", json!({"strategy": "last_write_wins"}), json!({})).unwrap(), json!(null));
        assert_eq!(run("merge", json!({"strategy": "concat"}), json!(["a", "b"])).unwrap(), json!("a\n\nb"));
        let m = fails("merge", json!({}), json!(["a"]), InputInvalid);
        assert_eq!(
            m,
            "merge with strategy json_object takes what reached it as an object keyed by input parameter; its input is an array"
        );
        let m = fails("merge", json!({"strategy": "zip"}), json!({}), ConfigInvalid);
        assert!(m.starts_with("strategy must be one of json_object"), "{m}");
    }

    #[test]
    fn stop_return_and_passing_on() {
        assert_eq!(run("stop_return", json!({}), json!({"a": 1})).unwrap(), json!({"a": 1}));
        assert_eq!(run("stop_return", json!({"return_path": "$.a"}), json!({"a": [1]})).unwrap(), json!([1]));
        let m = fails("stop_return", json!({"return_path": "text"}), json!({"a": 1}), InputInvalid);
        assert_eq!(m, "return_path text selects nothing in the input");
        assert_eq!(
            run("logger", json!({"message": "[[x]]", "level": "warn"}), json!({"x": 1})).unwrap(),
            json!({"x": 1})
        );
        assert_eq!(run("noop", json!({}), json!(null)).unwrap(), json!(null));
    }

    #[test]
    fn logger_writes_its_message_filled_from_the_input_and_passes_the_input_on() {
        let line = |level, message: &str| Some(LogLine { level, message: message.to_owned() });
        let input = json!({"count": 3, "who": {"name": "ada"}, "note": "a [[b]] c"});
        let out = ran("logger", json!({"message": "fetched [[count]] items for [[ who ]]"}), input.clone());
        let out = out.unwrap();
        assert_eq!(out.output, input, "the output is the input, unchanged");
        assert_eq!(out.log, line(LogLevel::Info, r#"fetched 3 items for {"name":"ada"}"#), "info by default");
        // A placeholder naming no field stays as written; a filled value is not filled again.
        let out = ran("log", json!({"message": "[[note]] [[missing]]", "level": "error"}), input.clone());
        assert_eq!(out.unwrap().log, line(LogLevel::Error, "a [[b]] c [[missing]]"));
        for (word, level) in [("debug", LogLevel::Debug), ("warn", LogLevel::Warn)] {
            let out = ran("logger", json!({"message": "plain", "level": word}), json!(null));
            assert_eq!(out.unwrap().log, line(level, "plain"));
        }
        // Without a message, the input itself: a string as it is, anything else as JSON.
        assert_eq!(
            ran("logger", json!({}), json!("just text")).unwrap().log,
            line(LogLevel::Info, "just text")
        );
        assert_eq!(
            ran("logger", json!({}), json!([1, {"a": true}])).unwrap().log,
            line(LogLevel::Info, r#"[1,{"a":true}]"#)
        );
        // What get_workflow_run_logs hides of the input, the line hides too.
        let secret = json!({"user": "ada", "token": "s3cr3t", "deep": [{"Password": "p"}]});
        let out = ran("logger", json!({"message": "[[user]] [[token]]"}), secret.clone()).unwrap();
        assert_eq!((out.output, out.log), (secret.clone(), line(LogLevel::Info, "ada [redacted]")));
        assert_eq!(
            ran("logger", json!({}), secret).unwrap().log,
            line(LogLevel::Info, r#"{"user":"ada","token":"[redacted]","deep":[{"Password":"[redacted]"}]}"#)
        );
        let out = ran("logger", json!({"message": "a\u{0}[[b]]"}), json!({"b": "c\u{0}d"})).unwrap();
        assert_eq!(out.log, line(LogLevel::Info, "a\u{fffd}c\u{fffd}d"), "no NUL reaches the store");
        let m = fails("logger", json!({"level": "loud"}), json!({}), ConfigInvalid);
        assert!(m.contains("level"), "{m}");
        // No other type writes a line.
        assert_eq!(ran("noop", json!({}), json!({"a": 1})).unwrap().log, None);
    }

    #[test]
    fn debug_inspector_captures() {
        let out = run(
            "debug_inspector",
            json!({"capture_paths": ["$.a", "b", "$.none"]}),
            json!({"a": 1, "b": [2]}),
        );
        assert_eq!(
            out.unwrap(),
            json!({"input": {"a": 1, "b": [2]}, "captured": {"$.a": 1, "b": [2], "$.none": null}})
        );
        let out = run("debug_inspector", json!({}), json!([1]));
        assert_eq!(out.unwrap(), json!({"input": [1], "captured": {"output": [1]}}));
        let m = fails("debug_inspector", json!({"capture_paths": ["$["]}), json!({}), ConfigInvalid);
        assert!(m.starts_with("capture_paths[0] is not a valid JSONPath"), "{m}");
    }
}
