//! The pure executors: the node types whose output is a function of their
//! config and input alone (no model, network, storage, clock or runner),
//! run by [`run_pure`]. The engine calls it for every tool node and does
//! its own work for the types it answers `None` for; keeping them here
//! lets the catalog's examples be checked against what really runs.
//!
//! What goes in is the node's main input: the value of its `input`
//! parameter once configured and wired values are merged (crate docs,
//! "Data flow"). `merge` takes instead everything that reached it, an
//! object keyed by input parameter. The config is the node's as written:
//! it is checked as the validator checks it, aliases are renamed and the
//! catalog's defaults applied here. A config pick that selects several
//! nodes gives the array of them, as on a connection ([`Pick::pick`]);
//! a condition reads each node on its own ([`Condition::test`]).
//!
//! Every executor's work is bounded by the size of its input and config:
//! list steps are linear (sort `n log n`, keys read once, duplicates found
//! by a hash set of canonical JSON), text steps linear in the text, and
//! what a step may output beyond its input is capped
//! ([`NodeErrorCode::TooLarge`]).

mod data;
mod flow;
mod lists;
mod text;

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

/// A value as it reads inside a text: a string as it is, anything else as compact JSON.
pub use crate::json::text;
pub use data::fill_placeholders;
pub use flow::combine;
pub use text::{MAX_CHUNK_BYTES, MAX_CHUNKS, MAX_PARSE_STARTS, first_json};

use crate::catalog::{NodeTypeSpec, catalog, check_config, normalize_config};
use crate::condition::Condition;
use crate::engine::LogLine;
use crate::json;
use crate::model::JsonObject;
use crate::path::Pick;

lf_core::word_enum!(
    /// Why a pure step failed.
    NodeErrorCode, "code", [
        /// The config does not pass its type's check (the validator reports
        /// the same as CONFIG_INVALID before a run).
        ConfigInvalid = "config_invalid",
        /// The input is not of the shape the step works on.
        InputInvalid = "input_invalid",
        /// The output would pass a bound (too many chunks, a number too large).
        TooLarge = "too_large",
    ]
);

/// A pure step's failure: a stable code and a message that tells a person
/// what was wrong, naming the config field and what was found
/// ("items_path $.items selects nothing in the input").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeError {
    pub code: NodeErrorCode,
    pub message: String,
}

impl NodeError {
    pub(crate) fn config(message: impl Into<String>) -> Self {
        NodeError { code: NodeErrorCode::ConfigInvalid, message: message.into() }
    }
    pub(crate) fn input(message: impl Into<String>) -> Self {
        NodeError { code: NodeErrorCode::InputInvalid, message: message.into() }
    }
    pub(crate) fn too_large(message: impl Into<String>) -> Self {
        NodeError { code: NodeErrorCode::TooLarge, message: message.into() }
    }
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for NodeError {}

/// The node types [`run_pure`] runs, by canonical name.
pub const PURE_TYPES: &[&str] = &[
    "json_transform",
    "set_variables",
    "extract_field",
    "rename_field",
    "filter_items",
    "aggregate",
    "sort",
    "deduplicate",
    "text_splitter",
    "data_mapper",
    "if_condition",
    "switch",
    "merge",
    "split_in_batches",
    "stop_return",
    "noop",
    "logger",
    "debug_inspector",
    "error_catch",
    "output_parser",
];

type Executor = fn(&Config, &Value) -> Result<Value, NodeError>;

fn executor(node_type: &str) -> Option<Executor> {
    Some(match node_type {
        "json_transform" => data::json_transform,
        "set_variables" => data::set_variables,
        "extract_field" => data::extract_field,
        "rename_field" => data::rename_field,
        "data_mapper" => data::data_mapper,
        "filter_items" => lists::filter_items,
        "aggregate" => lists::aggregate,
        "sort" => lists::sort,
        "deduplicate" => lists::deduplicate,
        "split_in_batches" => lists::split_in_batches,
        "text_splitter" => text::text_splitter,
        "if_condition" => flow::if_condition,
        "switch" => flow::switch,
        "merge" => flow::merge,
        "stop_return" => flow::stop_return,
        "noop" | "logger" => flow::pass_on,
        "debug_inspector" => flow::debug_inspector,
        "error_catch" => flow::error_catch,
        "output_parser" => text::output_parser,
        _ => return None,
    })
}

/// What a pure step gives: its output, and the line it writes to the
/// run's log (`logger`'s; `None` for every other type).
#[derive(Clone, Debug, PartialEq)]
pub struct Ran {
    pub output: Value,
    pub log: Option<LogLine>,
}

/// Runs the node type `node_type` (a catalog name or alias) on `input`
/// with `config`: `None` when the type is not pure (it needs a model, the
/// network, storage, time or the runner) or is not in the catalog; else
/// what it gave, or why it failed.
///
/// Branching types output the branch taken as their only field, which is
/// how the engine knows which connections to skip: `if_condition`
/// `{"true": input}` or `{"false": input}`, `switch` `{"<case>": input}`
/// or `{"<default_branch>": input}`. `stop_return` outputs the run's
/// result; the engine reads `status` from the config. `logger` outputs its
/// input and gives its `message`, filled from the input
/// ([`fill_placeholders`]), as its log line; the runner keeps the line
/// with the step's result.
pub fn run_pure(node_type: &str, config: &JsonObject, input: &Value) -> Option<Result<Ran, NodeError>> {
    let spec = catalog().get(node_type)?;
    let run = executor(spec.node_type)?;
    Some(Config::new(spec, config).and_then(|c| {
        let log = match spec.node_type {
            "logger" => Some(flow::log_line(&c, input)?),
            _ => None,
        };
        Ok(Ran { output: run(&c, input)?, log })
    }))
}

/// A node's config, checked against its type, aliases renamed and defaults
/// applied. Its accessors fail only for a config that did not pass the
/// check, which cannot happen; they answer CONFIG_INVALID rather than panic.
pub(crate) struct Config {
    map: JsonObject,
}

impl Config {
    fn new(spec: &NodeTypeSpec, raw: &JsonObject) -> Result<Config, NodeError> {
        if let Some(p) = check_config(spec, raw, false).into_iter().find(|p| !p.unknown) {
            return Err(NodeError::config(p.message));
        }
        Ok(Config { map: normalize_config(spec, raw) })
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }

    fn missing(key: &str, what: &str) -> NodeError {
        NodeError::config(format!("{key} must be {what}"))
    }

    fn opt_pick(&self, key: &'static str) -> Result<Option<Pick>, NodeError> {
        self.get(key)
            .map(|v| {
                let s = v.as_str().ok_or_else(|| Self::missing(key, "a field name or a JSONPath"))?;
                Pick::parse(key, s).map_err(|e| NodeError::config(e.message()))
            })
            .transpose()
    }

    fn pick(&self, key: &'static str) -> Result<Pick, NodeError> {
        self.opt_pick(key)?.ok_or_else(|| Self::missing(key, "a field name or a JSONPath"))
    }

    fn str(&self, key: &str) -> Result<&str, NodeError> {
        self.get(key).and_then(Value::as_str).ok_or_else(|| Self::missing(key, "a string"))
    }

    fn uint(&self, key: &str) -> Result<u64, NodeError> {
        self.get(key).and_then(Value::as_u64).ok_or_else(|| Self::missing(key, "a whole number"))
    }

    fn flag(&self, key: &str) -> Result<bool, NodeError> {
        self.get(key).and_then(Value::as_bool).ok_or_else(|| Self::missing(key, "true or false"))
    }

    fn object(&self, key: &str) -> Result<&JsonObject, NodeError> {
        self.get(key).and_then(Value::as_object).ok_or_else(|| Self::missing(key, "an object"))
    }

    fn condition(&self, key: &str) -> Result<Condition, NodeError> {
        let v = self.get(key).ok_or_else(|| Self::missing(key, "a condition"))?;
        Condition::parse(v).map_err(|e| NodeError::config(format!("{key} is not a valid condition: {e}")))
    }
}

/// What `pick` (the config field `field`) selects in `input`; an error
/// naming both when it selects nothing.
fn select<'v>(field: &str, pick: &Pick, input: &'v Value) -> Result<Cow<'v, Value>, NodeError> {
    pick.pick(input)
        .ok_or_else(|| NodeError::input(format!("{field} {} selects nothing in the input", pick.as_str())))
}

/// Where a value was looked for: the input, or one element of a list.
#[derive(Clone, Copy)]
enum Within {
    Input,
    Element(usize),
}

/// The error for a selected value of the wrong kind.
fn not_a(field: &str, pick: &Pick, found: &Value, want: &str, within: Within) -> NodeError {
    let found = json::kind(found);
    let (subject, whole) = match within {
        Within::Input => ("the input".to_owned(), "input"),
        Within::Element(i) => (format!("element {i}"), "element"),
    };
    NodeError::input(match pick {
        Pick::Whole => format!("{subject} is {found}, not {want} ({field} is output, the whole {whole})"),
        _ => format!("{field} {} selects {found} in {subject}, not {want}", pick.as_str()),
    })
}

/// The array at the config pick `field` (`items_path`) of `input`.
fn items<'v>(c: &Config, field: &'static str, input: &'v Value) -> Result<Cow<'v, [Value]>, NodeError> {
    let pick = c.pick(field)?;
    match select(field, &pick, input)? {
        Cow::Borrowed(Value::Array(a)) => Ok(Cow::Borrowed(a.as_slice())),
        Cow::Owned(Value::Array(a)) => Ok(Cow::Owned(a)),
        other => Err(not_a(field, &pick, &other, "an array", Within::Input)),
    }
}

/// The input as an object, for the steps that change an object's fields.
fn input_object<'v>(node_type: &str, input: &'v Value) -> Result<&'v JsonObject, NodeError> {
    input.as_object().ok_or_else(|| {
        NodeError::input(format!("{node_type} works on an object; its input is {}", json::kind(input)))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    pub(super) fn run(node_type: &str, config: Value, input: Value) -> Result<Value, NodeError> {
        ran(node_type, config, input).map(|r| r.output)
    }

    pub(super) fn ran(node_type: &str, config: Value, input: Value) -> Result<Ran, NodeError> {
        run_pure(node_type, config.as_object().unwrap(), &input).expect("a pure type")
    }

    /// The message of a failed run, checked to carry `code`.
    pub(super) fn fails(node_type: &str, config: Value, input: Value, code: NodeErrorCode) -> String {
        let e = run(node_type, config, input).unwrap_err();
        assert_eq!(e.code, code, "{e}");
        e.message
    }

    #[test]
    fn not_pure_or_unknown_is_none() {
        let empty = JsonObject::new();
        for t in ["http_request", "summarizer", "wait_delay", "loop_map", "manual_trigger", "nope"] {
            assert!(run_pure(t, &empty, &json!({})).is_none(), "{t}");
        }
        for t in PURE_TYPES {
            assert!(catalog().get(t).is_some_and(|e| e.node_type == *t), "{t} is a catalog name");
        }
    }

    #[test]
    fn aliases_and_defaults_come_from_the_catalog() {
        // `filter` is filter_items, `inputPath`-style aliases are renamed,
        // and items_path defaults to the whole input.
        let out = run(
            "filter",
            json!({"condition": {"path": "ok", "op": "truthy"}}),
            json!([{"ok": 1}, {"ok": 0}]),
        );
        assert_eq!(out.unwrap(), json!({"items": [{"ok": 1}], "count": 1}));
        let out = run("batch", json!({"batchSize": 1}), json!([1, 2]));
        assert_eq!(out.unwrap(), json!({"batches": [[1], [2]]}));
    }

    #[test]
    fn every_option_the_catalog_offers_runs() {
        let cases = [
            ("aggregate", "operation", json!({"path": "v"}), json!([])),
            ("merge", "strategy", json!({}), json!({})),
        ];
        for (node_type, key, base, input) in cases {
            let field = catalog().get(node_type).and_then(|e| e.field(key)).unwrap();
            for word in field.options {
                let mut config = base.clone();
                config[key] = json!(word);
                assert!(run(node_type, config, input.clone()).is_ok(), "{node_type} {key} {word}");
            }
        }
    }

    #[test]
    fn a_config_that_fails_its_check_is_config_invalid() {
        let m = fails("extract_field", json!({}), json!({}), NodeErrorCode::ConfigInvalid);
        assert!(m.starts_with("path (jsonpath) is required"), "{m}");
        let m = fails("sort", json!({"by": "$["}), json!([]), NodeErrorCode::ConfigInvalid);
        assert!(m.contains("not a valid JSONPath"), "{m}");
        let m = fails(
            "text_splitter",
            json!({"chunk_size": 100, "chunk_overlap": 100}),
            json!("x"),
            NodeErrorCode::ConfigInvalid,
        );
        assert!(m.contains("must be smaller than chunk_size"), "{m}");
        // Unknown keys are ignored, as the validator warns.
        assert_eq!(run("noop", json!({"zzz": 1}), json!(1)).unwrap(), json!(1));
    }

    #[test]
    fn items_path_errors_name_the_field_and_what_was_found() {
        let cond = json!({"path": "a", "op": "exists"});
        let m = fails(
            "filter_items",
            json!({"condition": cond, "items_path": "$.items"}),
            json!({}),
            NodeErrorCode::InputInvalid,
        );
        assert_eq!(m, "items_path $.items selects nothing in the input");
        let m = fails(
            "filter_items",
            json!({"condition": cond, "items_path": "items"}),
            json!({"items": "x"}),
            NodeErrorCode::InputInvalid,
        );
        assert_eq!(m, "items_path items selects a string in the input, not an array");
        let m = fails("sort", json!({"by": "a"}), json!({"a": 1}), NodeErrorCode::InputInvalid);
        assert_eq!(m, "the input is an object, not an array (items_path is output, the whole input)");
        // Several matches are the array of them.
        let out = run(
            "split_in_batches",
            json!({"items_path": "$.a[*].b", "batch_size": 5}),
            json!({"a": [{"b": 1}, {"b": 2}]}),
        );
        assert_eq!(out.unwrap(), json!({"batches": [[1, 2]]}));
    }
}
