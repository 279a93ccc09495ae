//! Triggers and the lens step.

use serde_json::json;

use super::super::Category::{Lens, Trigger};
use super::super::spec::{FieldKind, IoType, NodeTypeSpec, entry, field, port};
use super::{label_field, lens_output, model_fields};

const EVENTS: &[&str] = &[
    "lens.created",
    "lens.updated",
    "lens.label_moved",
    "battle.closed",
    "workflow.run.completed",
    "workflow.run.failed",
];

fn trigger(t: &'static str, display: &'static str, description: &'static str) -> NodeTypeSpec {
    entry(t, Trigger, display, description)
        .inputs(vec![])
        .io(&[IoType::Void], IoType::Json)
        .open_outputs(vec![port("output", IoType::Json, "The run's inputs.")])
}

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        trigger("manual_trigger", "Manual trigger", "Starts a run when run_workflow is called; its output is the run's inputs.")
            .aliases(&["manual", "start"])
            .caps(&["start", "manual"])
            .example("Start a digest by hand with a topic.", json!({}), json!(null), json!({"topic": "AI robotics"}), Some(("lens", "topic → topic")))
            .use_case("Run a research pipeline on demand from an assistant."),
        trigger("schedule_trigger", "Schedule trigger", "Starts a run on a five-field cron schedule in an IANA time zone; after downtime it fires once, not once per missed tick. Its output is `{scheduled_for, timezone}` in UTC.")
            .aliases(&["cron", "schedule"])
            .caps(&["schedule", "cron", "recurring"])
            .fields(vec![
                field("cron", "Cron expression", FieldKind::Cron, "minute hour day-of-month month day-of-week, such as \"0 9 * * 1\" (Mondays at 09:00).")
                    .required()
                    .aliases(&["cronExpression"]),
                field("timezone", "Time zone", FieldKind::TimeZone, "The IANA time zone the schedule is read in, such as Europe/Istanbul.")
                    .default(json!("UTC"))
                    .aliases(&["timeZone"]),
            ])
            .example("Every Monday at 09:00 in Istanbul.", json!({"cron": "0 9 * * 1", "timezone": "Europe/Istanbul"}), json!(null), json!({"scheduled_for": "2026-06-01T06:00:00Z", "timezone": "Europe/Istanbul"}), Some(("lens", "scheduled_for → date")))
            .use_case("A weekly digest that runs without anyone asking."),
        trigger("webhook_trigger", "Webhook trigger", "Starts a run on POST /hooks/{workflow_id} of the HTTP server (the stdio server has no webhooks) with the workflow's webhook secret in X-Webhook-Secret (made by the server, shown once by create_workflow, update_workflow or rotate_webhook_secret, stored hashed); the JSON object body is the run's inputs. Idempotency-Key is honoured.")
            .aliases(&["webhook"])
            .caps(&["webhook", "http", "inbound"])
            .example("A form service posts each new signup.", json!({}), json!(null), json!({"email": "ada@example.com", "plan": "pro"}), Some(("data_mapper", "output → input")))
            .use_case("React to events of another system that can call a URL."),
        trigger("event_trigger", "Event trigger", "Starts a run when an event happens that the workflow's owner may see: a lens created or updated, a lens label moved, a battle closed, a workflow run completed or failed. The event is the run's inputs.")
            .aliases(&["event"])
            .caps(&["event", "subscribe"])
            .fields(vec![field("event_type", "Event", FieldKind::Select, "The event that starts a run.")
                .required()
                .options(EVENTS)
                .aliases(&["eventType"])])
            .example("When a battle closes, announce the winner.", json!({"event_type": "battle.closed"}), json!(null), json!({"event": "battle.closed", "battle_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "winner": "A"}), Some(("slack_notify", "output → input")))
            .use_case("Chain workflows, or follow what happens on the server."),
        trigger("form_input_trigger", "Form input trigger", "Starts a run from declared fields: the run's inputs are checked against them (INVALID_ARGUMENT naming each bad field) and are its output.")
            .aliases(&["form", "form_trigger"])
            .caps(&["form", "inputs", "typed"])
            .fields(vec![field("fields", "Fields", FieldKind::FormFields, "The inputs a run takes: [{\"name\", \"kind\" (string, number, integer, boolean, select, json), \"required\" (default true), \"options\", \"description\", \"default\"}].").required()])
            .example("Ask for a topic and a tone.", json!({"fields": [{"name": "topic", "kind": "string"}, {"name": "tone", "kind": "select", "options": ["formal", "casual"], "required": false}]}), json!(null), json!({"topic": "Rust ownership", "tone": "casual"}), Some(("lens", "topic → topic")))
            .use_case("A workflow people start by filling in a few typed fields."),
        entry("lens", Lens, "Lens step", "Resolves a lens (its head version, the pinned one, or the one its `label` points at when it runs) with its parameters, configured and wired, and asks the model provider. A lens step's input parameters are its lens's parameters.")
            .caps(&["prompt", "llm", "lens"])
            .inputs(vec![port("<lens parameter>", IoType::Text, "Each parameter of the lens, by label (case-insensitive).")])
            .io(&[IoType::Text, IoType::Json, IoType::Object], IoType::LensResult)
            .outputs(lens_output())
            .fields([vec![label_field()], model_fields()].concat())
            .example("Research a topic with the version of a lens that takes [[Topic]] labelled production.", json!({"label": "production", "max_tokens": 800}), json!({"topic": "AI robotics"}), json!({"text": "Three developments in AI robotics…", "model": "offline-deterministic", "input_tokens": 42, "output_tokens": 180, "version": {"lens_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "version_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4e", "semver": "1.2.0", "label": "production"}}), Some(("slack_notify", "text → text")))
            .use_case("Every AI step whose instructions are a reusable lens."),
    ]
}
