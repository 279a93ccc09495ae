//! The catalog's examples are true of the pure executors: for every type
//! `run_pure` runs, its example's config on its example's input gives
//! exactly its example's output.

use std::collections::BTreeSet;

use lf_workflow::catalog::catalog;
use lf_workflow::exec::PURE_TYPES;
use lf_workflow::run_pure;

/// The pure types, written out here too, so that a type dropped from the
/// executors and from `PURE_TYPES` at once still fails this test.
const EXPECTED: &[&str] = &[
    "aggregate",
    "data_mapper",
    "debug_inspector",
    "error_catch",
    "output_parser",
    "deduplicate",
    "extract_field",
    "filter_items",
    "if_condition",
    "json_transform",
    "logger",
    "merge",
    "noop",
    "rename_field",
    "set_variables",
    "sort",
    "split_in_batches",
    "stop_return",
    "switch",
    "text_splitter",
];

#[test]
fn every_pure_example_runs_as_written() {
    let mut checked = BTreeSet::new();
    for e in catalog().entries() {
        let x = &e.example;
        let config = x.config.as_object().expect("an example's config is an object");
        let Some(result) = run_pure(e.node_type, config, &x.expected_input) else { continue };
        let out = result.unwrap_or_else(|err| panic!("{}: {err}", e.node_type)).output;
        assert_eq!(out, x.expected_output, "{}: {}", e.node_type, x.scenario);
        // Key order is part of what a reader of the example sees.
        assert_eq!(out.to_string(), x.expected_output.to_string(), "{}: field order", e.node_type);
        checked.insert(e.node_type);
    }
    assert_eq!(checked, EXPECTED.iter().copied().collect::<BTreeSet<_>>());
    assert_eq!(checked, PURE_TYPES.iter().copied().collect::<BTreeSet<_>>());
}

#[test]
fn every_alias_of_a_pure_type_runs_it() {
    for e in catalog().entries().iter().filter(|e| PURE_TYPES.contains(&e.node_type)) {
        let config = e.example.config.as_object().expect("an object");
        for alias in e.aliases {
            let out = run_pure(alias, config, &e.example.expected_input).expect("pure by its alias too");
            assert_eq!(out.ok().map(|r| r.output).as_ref(), Some(&e.example.expected_output), "{alias}");
        }
    }
}

#[test]
fn the_logger_example_writes_its_message_filled() {
    let e = catalog().get("logger").expect("logger is in the catalog");
    let config = e.example.config.as_object().expect("an object");
    let ran = run_pure("logger", config, &e.example.expected_input).expect("pure").expect("runs");
    let line = ran.log.expect("a logger writes a line");
    assert_eq!((line.level.as_str(), line.message.as_str()), ("info", "fetched 3 items"));
    assert_eq!(ran.output, e.example.expected_output);
}
