//! Logic: branches, merges, loops, waits and error paths. A branch is an
//! output field: a connection from `true`, a case name or `catch` carries a
//! value only when that branch is taken, and a step none of whose
//! connections carried one is skipped.

use serde_json::{Map, Value, json};

use super::super::Category::Logic;
use super::super::spec::{FieldKind, IoType, NodeTypeSpec, entry, field, port};
use super::items_path;

const MAX_WAIT_MS: f64 = 7.0 * 24.0 * 3_600_000.0;

fn wait_rule(c: &Map<String, Value>, _: bool) -> Option<(&'static str, String)> {
    (c.contains_key("until") && c.contains_key("delay_ms"))
        .then(|| ("until", "give delay_ms or until, not both".to_owned()))
}

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        entry("if_condition", Logic, "If", "Tests `condition` on its input; the input flows on from the `true` output when it holds, from `false` when not.")
            .aliases(&["if", "condition"])
            .caps(&["branching", "condition", "routing"])
            .io(&[IoType::Any], IoType::Json)
            .outputs(vec![port("true", IoType::Any, "The input, when the condition holds."), port("false", IoType::Any, "The input, when it does not.")])
            .fields(vec![field("condition", "Condition", FieldKind::Condition, "A structured condition on the input, such as {\"path\": \"$.score\", \"op\": \"gte\", \"value\": 7}.").required()])
            .example("Publish only good drafts.", json!({"condition": {"path": "$.score", "op": "gte", "value": 7}}), json!({"score": 8}), json!({"true": {"score": 8}}), Some(("slack_notify", "true → input")))
            .use_case("Gate a side effect on a judge's score."),
        entry("switch", Logic, "Switch", "Tests `cases` in order on its input; the input flows on from the first case that holds, or from `default_branch`.")
            .caps(&["routing", "branching"])
            .io(&[IoType::Any], IoType::Json)
            .switch_outputs(vec![port("<case name>", IoType::Any, "The input, when that case is the first to hold."), port("default", IoType::Any, "The input, when no case holds (named by default_branch).")])
            .fields(vec![
                field("cases", "Cases", FieldKind::SwitchCases, "[{\"name\": \"high\", \"when\": <condition>}], tested in order.").required(),
                field("default_branch", "Default output", FieldKind::String, "The output used when no case holds.").default(json!("default")).aliases(&["defaultBranch"]),
            ])
            .example("Route by label.", json!({"cases": [{"name": "billing", "when": {"path": "label", "op": "eq", "value": "billing"}}]}), json!({"label": "billing"}), json!({"billing": {"label": "billing"}}), Some(("email_send", "billing → input")))
            .use_case("Send each classified item to its own handler."),
        entry("merge", Logic, "Merge", "Waits for every connection that reaches it (branches not taken are not waited for) and combines what arrived by `strategy`.")
            .caps(&["merge", "join", "combine"])
            .inputs(vec![port("<any>", IoType::Any, "Every incoming connection, by its input parameter.")])
            .fields(vec![field("strategy", "Strategy", FieldKind::Select, "json_object: an object keyed by input parameter; array: the values in connection order; concat: texts joined by a blank line; last_write_wins: the last value.")
                .default(json!("json_object"))
                .options(&["json_object", "array", "concat", "last_write_wins"])])
            .example("Join two research branches.", json!({"strategy": "json_object"}), json!({"news": "…", "papers": "…"}), json!({"news": "…", "papers": "…"}), Some(("summarizer", "output → input")))
            .use_case("Bring parallel branches back together."),
        entry("loop_map", Logic, "Loop", "Runs the steps connected from its `item` output once per element of the array at `items_path` (at most `max_items`), and outputs their results in order from `results`.")
            .aliases(&["loop", "for_each", "map"])
            .caps(&["loop", "iterate", "map"])
            .io(&[IoType::Array, IoType::Json], IoType::Array)
            .outputs(vec![port("item", IoType::Any, "One element, for the loop's body."), port("results", IoType::Array, "The body's result per element.")])
            .fields(vec![
                items_path().aliases(&["arrayPath"]),
                field("max_items", "Most items", FieldKind::Integer, "Elements past this many fail the node.").default(json!(100)).range(1.0, 1_000.0).aliases(&["maxItems"]),
            ])
            .example("Summarize each feed item.", json!({"items_path": "$.items"}), json!({"items": [{"title": "a"}, {"title": "b"}]}), json!({"results": ["…", "…"]}), Some(("summarizer", "item → input")))
            .use_case("Apply the same steps to every element of a list."),
        entry("wait_delay", Logic, "Wait", "Waits `delay_ms`, or until `until`, on a durable timer (no sleeping task; survives restarts), then passes its input on. Up to 7 days.")
            .aliases(&["wait", "delay", "sleep"])
            .caps(&["wait", "delay", "timer"])
            .fields(vec![
                field("delay_ms", "Delay (ms)", FieldKind::Integer, "How long to wait.").default(json!(5_000)).range(0.0, MAX_WAIT_MS).aliases(&["delayMs"]),
                field("until", "Until", FieldKind::DateTime, "An RFC 3339 instant to wait for instead, such as 2026-06-01T09:00:00Z.").aliases(&["delayUntil"]),
            ])
            .rule(wait_rule)
            .example("Wait an hour before a reminder.", json!({"delay_ms": 3_600_000}), json!({"text": "reminder"}), json!({"text": "reminder"}), Some(("email_send", "output → input")))
            .use_case("Space out follow-ups."),
        entry("error_catch", Logic, "Catch error", "Receives the error of the step it is connected from (its `error` output); outputs `fallback_value`, or the error itself, and the run goes on when `continue_on_error`.")
            .aliases(&["catch", "on_error"])
            .caps(&["error", "fallback"])
            .inputs(vec![port("error", IoType::Error, "The failed step's error: {code, message, node}.")])
            .io(&[IoType::Error], IoType::Json)
            .fields(vec![
                field("fallback_value", "Fallback value", FieldKind::Json, "What to output instead of the error.").aliases(&["fallbackValue"]),
                field("continue_on_error", "Continue", FieldKind::Boolean, "Whether the run goes on (otherwise it fails after this step).").default(json!(true)).aliases(&["continueOnError"]),
            ])
            .example("Post a notice when a fetch fails.", json!({"fallback_value": {"items": []}}), json!({"code": "timeout", "message": "…"}), json!({"items": []}), Some(("logger", "output → input")))
            .use_case("Keep a run going past an unreliable outside service."),
        entry("try_catch", Logic, "Try", "Runs the steps connected from its `try` output; if one of them fails, the error flows from its `catch` output instead and the run goes on.")
            .aliases(&["try"])
            .caps(&["error", "fallback", "branching"])
            .outputs(vec![port("try", IoType::Any, "The input, for the guarded steps."), port("catch", IoType::Error, "The error, when a guarded step failed.")])
            .fields(vec![field("catch_branch", "Catch output", FieldKind::String, "The name of the error output.").default(json!("catch")).aliases(&["catchBranch"])])
            .example("Guard a webhook call.", json!({}), json!({"text": "hi"}), json!({"try": {"text": "hi"}}), Some(("webhook_sender", "try → input")))
            .use_case("Handle the failure of a group of steps in one place."),
        entry("stop_return", Logic, "Stop", "Ends the run with `status` and, as its result, the part of its input at `return_path`.")
            .aliases(&["stop", "return"])
            .caps(&["stop", "return", "result"])
            .io(&[IoType::Any], IoType::WorkflowResult)
            .fields(vec![
                field("return_path", "Result path", FieldKind::JsonPath, "The part of the input that is the run's result.").default(json!("output")).aliases(&["returnPath"]),
                field("status", "Status", FieldKind::Select, "How the run ends.").default(json!("completed")).options(&["completed", "failed"]),
            ])
            .example("Return the summary as the run's result.", json!({"return_path": "text"}), json!({"text": "done"}), json!("done"), None)
            .use_case("Give a run (or a sub-workflow) a precise result."),
        entry("sub_workflow", Logic, "Sub-workflow", "Runs another workflow the owner can read with its input as the inputs, and outputs its result; nesting is limited by `max_depth`.")
            .aliases(&["workflow", "call_workflow"])
            .caps(&["compose", "workflow", "reuse"])
            .io(&[IoType::Json], IoType::WorkflowResult)
            .fields(vec![
                field("workflow_id", "Workflow", FieldKind::Uuid, "The workflow to run.").required().aliases(&["workflowId"]),
                field("version", "Version", FieldKind::Integer, "Pins a version number; omit to run its head.").range(1.0, 1_000_000.0),
                field("input_mapping", "Input mapping", FieldKind::PathMap, "Its inputs: {input name: a pick of this node's input}; omit to pass the input as it is.").aliases(&["inputMapping"]),
                field("max_depth", "Most nesting", FieldKind::Integer, "How deep sub-workflows may nest.").default(json!(2)).range(1.0, 8.0).aliases(&["maxDepth"]),
            ])
            .example("Reuse a shared formatting workflow.", json!({"workflow_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d"}), json!({"text": "raw"}), json!({"text": "formatted"}), Some(("slack_notify", "text → text")))
            .use_case("Share a sequence of steps between workflows."),
    ]
}
