//! Battle steps and utilities.

use serde_json::{Map, Value, json};

use super::super::Category::{Battle, Utility};
use super::super::spec::{FieldKind, IoType, NodeTypeSpec, STORE_RETRY, SideEffect, entry, field, port};

/// lf-battle's formats and the judging modes a step can set up alone
/// (rubric and automatic scoring need more than a step's config).
const BATTLE_TYPES: &[&str] = &[
    "ai_vs_ai",
    "human_vs_human_ai_votes",
    "human_vs_human_open_votes",
    "human_vs_ai",
    "workflow_battle",
    "lenser_battle",
];
const JUDGING: &[&str] = &["ai_judge", "community_vote"];

/// contender_run's ids: each a UUID, or text with a `[[name]]` placeholder
/// (checked once filled, at run time).
fn ids_or_placeholders(c: &Map<String, Value>, _: bool) -> Option<(&'static str, String)> {
    ["battle_id", "contender_id"].into_iter().find_map(|key| {
        let text = c.get(key)?.as_str()?;
        let ok = text.contains("[[") || lf_core::parse_uuid(key, text.trim()).is_ok();
        (!ok).then(|| {
            let what = key.trim_end_matches("_id");
            (key, format!("{key} must be a {what}'s id (a UUID) or [[name]] placeholders filled from the step's input; got {}", lf_core::clip(text, 60)))
        })
    })
}

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        entry("battle_create", Battle, "Create battle", "Creates a battle in draft as the workflow's owner, through the Battle service.")
            .aliases(&["create_battle"])
            .caps(&["battle", "create", "compete"])
            .io(&[IoType::Json, IoType::Text], IoType::Json)
            .outputs(vec![port("battle_id", IoType::Text, "The new battle."), port("status", IoType::Text, "Its status (draft).")])
            .fields(vec![
                field("title", "Title", FieldKind::Template, "The battle's title (1 to 200 characters once filled).").required(),
                field("task_prompt", "Task", FieldKind::Template, "What every contender answers.").required().aliases(&["taskPrompt", "prompt"]),
                field("battle_type", "Format", FieldKind::Select, "Which kinds of contender it takes.").default(json!("ai_vs_ai")).options(BATTLE_TYPES),
                field("judging_mode", "Judging", FieldKind::Select, "How it is judged.").options(JUDGING),
                field("max_contenders", "Contenders", FieldKind::Integer, "How many contenders it takes.").default(json!(2)).range(2.0, 26.0),
            ])
            .example("Open a battle on each new question.", json!({"title": "Explain [[topic]]", "task_prompt": "Explain [[topic]] to a beginner."}), json!({"topic": "ownership"}), json!({"battle_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "status": "draft"}), Some(("slack_notify", "battle_id → text")))
            .use_case("Let models compete on questions a workflow collects."),
        entry("contender_run", Battle, "Answer as contender", "Has an AI Lenser answer a battle as its ai_agent contender, as run_agent_action's action word answer_battle does: the agent (the contender's reference) answers the task prompt with its persona and model, checked and counted against its policy (can_join_battles, submit_battle_run granted), daily caps and credit limit, written to its action log, and submitted as its answer (replacing an earlier one). The run's starter must be one the agent acts for. Only ai_agent contenders: a workflow contender answers by its own run, a human or ai_model contender through submit_battle_run.")
            .aliases(&["answer_battle"])
            .caps(&["battle", "agent", "answer", "compete"])
            .io(&[IoType::Text, IoType::Json], IoType::LensResult)
            .outputs(vec![
                port("battle_id", IoType::Text, "The battle answered."),
                port("contender_id", IoType::Text, "The contender answered for."),
                port("submission_id", IoType::Text, "Its submission (kept when an answer replaces an earlier one)."),
                port("text", IoType::Text, "The agent's answer, as submitted."),
            ])
            .fields(vec![
                field("battle_id", "Battle", FieldKind::Template, "The battle, open or executing: its id, or [[name]] placeholders filled from the step's input (a trigger's battle_id).").required().aliases(&["battleId"]),
                field("contender_id", "Contender", FieldKind::Template, "The battle's ai_agent contender that answers: its id, or [[name]] placeholders filled from the step's input.").required().aliases(&["contenderId"]),
            ])
            .rule(ids_or_placeholders)
            .example("Take an AI Lenser's turn in a battle it joined.", json!({"battle_id": "[[battle_id]]", "contender_id": "[[contender_id]]"}), json!({"battle_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "contender_id": "0190f5a2-8d2f-7e4b-8c3d-6f9a2b3c4d5e"}), json!({"battle_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "contender_id": "0190f5a2-8d2f-7e4b-8c3d-6f9a2b3c4d5e", "submission_id": "0190f5a2-9e3a-7f5c-9d4e-7a0b3c4d5e6f", "text": "Ownership gives every value one owner, which frees it when it goes out of scope."}), Some(("judge_evaluator", "text → input")))
            .use_case("Let an AI Lenser take its turn in a battle from a workflow: a run its owner starts, a schedule, or a team run of the agent."),
        entry("logger", Utility, "Log", "Writes `message`, its placeholders filled from the input, to the run's log at `level` (the step's `log` in get_workflow_run_logs, and the server's log) and passes its input on unchanged.")
            .aliases(&["log"])
            .caps(&["log", "debug", "audit"])
            .io(&[IoType::Any], IoType::Any)
            .fields(vec![
                field("message", "Message", FieldKind::Template, "What to log; [[name]] is the input's field name (secret-named fields read [redacted]). Omit to log the input."),
                field("level", "Level", FieldKind::Select, "The log level.").default(json!("info")).options(&["debug", "info", "warn", "error"]),
            ])
            .example("Note what a run fetched.", json!({"message": "fetched [[count]] items"}), json!({"count": 3}), json!({"count": 3}), None)
            .use_case("Leave a trace in get_workflow_run_logs."),
        entry("debug_inspector", Utility, "Inspect", "Records the parts of its input at `capture_paths` in its result and passes the input on.")
            .aliases(&["inspect", "debug"])
            .caps(&["debug", "inspect"])
            .open_outputs(vec![port("input", IoType::Any, "The input, unchanged."), port("captured", IoType::Object, "Each capture path and what it selected.")])
            .fields(vec![field("capture_paths", "Capture", FieldKind::StringList, "Picks to record; omit to record the whole input.").aliases(&["capturePaths"])])
            .example("See what a branch receives.", json!({"capture_paths": ["$.score"]}), json!({"score": 8}), json!({"input": {"score": 8}, "captured": {"$.score": 8}}), None)
            .use_case("Debug a workflow's data flow without changing it."),
        entry("rate_limit", Utility, "Rate limit", "Lets at most `limit` runs of this step through per `window_seconds` for the workflow's owner; past that it waits (a durable timer) or fails, by `on_limit`.")
            .aliases(&["throttle"])
            .caps(&["rate", "limit", "throttle"])
            .side_effect(SideEffect::InternalWrite)
            .retry(STORE_RETRY)
            .io(&[IoType::Any], IoType::Any)
            .fields(vec![
                field("limit", "Limit", FieldKind::Integer, "Passes per window.").required().range(1.0, 100_000.0),
                field("window_seconds", "Window (s)", FieldKind::Integer, "The window's length.").default(json!(60)).range(1.0, 86_400.0),
                field("on_limit", "When over", FieldKind::Select, "Wait for the window to free up, or fail the step with THROTTLED.").default(json!("wait")).options(&["wait", "fail"]),
            ])
            .example("At most 10 posts a minute.", json!({"limit": 10, "window_seconds": 60}), json!({"text": "hi"}), json!({"text": "hi"}), Some(("slack_notify", "output → input")))
            .use_case("Stay inside an outside service's rate limits."),
        entry("noop", Utility, "No-op", "Passes its input on unchanged: a placeholder, or a join point on the canvas.")
            .aliases(&["pass", "passthrough"])
            .caps(&["noop", "pass"])
            .io(&[IoType::Any], IoType::Any)
            .example("A named join point.", json!({}), json!({"x": 1}), json!({"x": 1}), None)
            .use_case("Keep a slot in a workflow for a step to come."),
    ]
}
