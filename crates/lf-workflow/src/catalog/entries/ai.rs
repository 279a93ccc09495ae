//! AI steps: each asks the model provider once (the offline provider by
//! default, naming itself in the output), except `output_parser`, which
//! reads a model's text.

use serde_json::{Map, Value, json};

use super::super::Category::AiPrimitive;
use super::super::spec::{FieldKind, IoType, NodeTypeSpec, SideEffect, entry, field, port};
use super::{input_path, label_field, lens_output, model_fields, text_output};

fn ai(t: &'static str, display: &'static str, description: &'static str) -> NodeTypeSpec {
    entry(t, AiPrimitive, display, description)
        .outputs(text_output())
        .io(&[IoType::Text, IoType::Json], IoType::Text)
}

/// The lens a lens-running step names: required for `lens_execute`, in
/// place of a template for `prompt_template`.
fn lens_fields(required: bool) -> Vec<super::ConfigField> {
    let lens =
        field("lens_id", "Lens", FieldKind::Uuid, "The lens to run (one the workflow's owner can read).")
            .aliases(&["lensId"]);
    vec![
        if required { lens.required() } else { lens },
        field(
            "version_id",
            "Lens version",
            FieldKind::Uuid,
            "Pins a version of the lens; omit to use its head (or label's version).",
        )
        .aliases(&["versionId"]),
        label_field(),
    ]
}

/// A prompt step asks its template or a lens's prompt: one of the two, and
/// a version or label only of a lens.
fn template_or_lens(c: &Map<String, Value>, _: bool) -> Option<(&'static str, String)> {
    let has = |k: &str| c.contains_key(k);
    match (has("template"), has("lens_id")) {
        (false, false) => Some((
            "template",
            "template is required unless lens_id names the lens whose prompt the step asks".to_owned(),
        )),
        (true, true) => Some((
            "lens_id",
            "the step has a template and a lens_id: give one (the lens's prompt is its template)".to_owned(),
        )),
        (true, false) if has("version_id") || has("label") => Some((
            "lens_id",
            "version_id and label choose a version of a lens: name it with lens_id, or remove them"
                .to_owned(),
        )),
        _ => None,
    }
}

fn with_model(mut fields: Vec<super::ConfigField>) -> Vec<super::ConfigField> {
    fields.extend(model_fields());
    fields
}

pub(super) fn entries() -> Vec<NodeTypeSpec> {
    vec![
        ai("lens_execute", "Run lens", "Runs the lens named in its config like a lens step (its parameters from the node's parameters and wired inputs): the tool form of a lens step.")
            .aliases(&["run_lens"])
            .caps(&["prompt", "llm", "lens"])
            .io(&[IoType::Text, IoType::Json], IoType::LensResult)
            .outputs(lens_output())
            .fields(with_model(lens_fields(true)))
            .example("Run a code-review lens on a diff.", json!({"lens_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d"}), json!({"code": "fn main() {}"}), json!({"text": "Looks fine.", "model": "offline-deterministic", "input_tokens": 30, "output_tokens": 4, "version": {"lens_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "version_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4e", "semver": "1.0.0", "label": null}}), Some(("github_issue_create", "text → body")))
            .use_case("A lens chosen by id inside a tool-only blueprint."),
        ai("prompt_template", "Prompt", "Fills `template`'s [[name]] placeholders from the node's inputs and asks the model; with `lens_id` instead, the prompt is that lens's (its head, pinned version or label's version), its parameters filled from the inputs.")
            .aliases(&["prompt", "llm"])
            .caps(&["prompt", "llm", "template"])
            .outputs({
                let mut ports = text_output();
                ports.push(port("version", IoType::Object, "With lens_id: the lens version that ran, {lens_id, version_id, semver, label}."));
                ports
            })
            .fields(with_model({
                let mut fields = vec![
                    field("template", "Prompt", FieldKind::Template, "The prompt, with [[name]] placeholders for inputs (unless lens_id names the prompt)."),
                    field("system", "System message", FieldKind::Template, "Instructions sent as the system message."),
                ];
                fields.extend(lens_fields(false));
                fields
            }))
            .rule(template_or_lens)
            .example("Write a headline for an article.", json!({"template": "Write one headline for: [[input]]", "max_tokens": 40}), json!({"input": "Rust 2024 ships let chains."}), json!({"text": "Let chains land in Rust 2024", "model": "offline-deterministic", "input_tokens": 14, "output_tokens": 7}), Some(("slack_notify", "text → text")))
            .use_case("A one-off AI instruction too small to be a lens."),
        ai("summarizer", "Summarizer", "Summarizes the text at `input_path` of its input.")
            .aliases(&["summarize", "summary"])
            .caps(&["summarize", "llm", "text"])
            .io(&[IoType::Text, IoType::Documents, IoType::Json], IoType::Text)
            .fields(with_model(vec![
                input_path("output"),
                field("max_words", "Most words", FieldKind::Integer, "Roughly how long the summary may be.").default(json!(150)).range(10.0, 2_000.0),
                field("instructions", "Instructions", FieldKind::Template, "What to focus on."),
            ]))
            .example("Summarize an article in 50 words.", json!({"max_words": 50}), json!({"input": "A long article…"}), json!({"text": "In short…", "model": "offline-deterministic", "input_tokens": 900, "output_tokens": 60}), Some(("email_send", "text → body")))
            .use_case("Digest long pages, feeds or transcripts."),
        ai("classifier", "Classifier", "Asks the model which of `labels` fits the input; outputs the label (or labels) and the model's text.")
            .aliases(&["classify"])
            .caps(&["classify", "llm", "routing"])
            .io(&[IoType::Text, IoType::Json], IoType::Json)
            .outputs(vec![
                port("label", IoType::Text, "The chosen label (the first, with multi_label)."),
                port("labels", IoType::Array, "Every chosen label."),
                port("text", IoType::Text, "The model's answer."),
                port("model", IoType::Text, "The model that answered."),
                port("input_tokens", IoType::Number, "Tokens of the prompt."),
                port("output_tokens", IoType::Number, "Tokens of the answer."),
            ])
            .fields(with_model(vec![
                field("labels", "Labels", FieldKind::StringList, "The labels to choose from.").required(),
                field("multi_label", "Several labels", FieldKind::Boolean, "Whether several labels may apply.").default(json!(false)),
                input_path("output"),
            ]))
            .example("Sort support mail.", json!({"labels": ["billing", "bug", "other"]}), json!({"input": "I was charged twice."}), json!({"label": "billing", "labels": ["billing"], "text": "billing", "model": "offline-deterministic", "input_tokens": 25, "output_tokens": 1}), Some(("switch", "label → input")))
            .use_case("Route items by topic before a switch."),
        ai("translator", "Translator", "Translates the text at `input_path` into `target_language`.")
            .aliases(&["translate"])
            .caps(&["translate", "llm", "text"])
            .fields(with_model(vec![
                field("target_language", "Target language", FieldKind::String, "The language to translate into, such as French.").required().aliases(&["targetLanguage"]),
                field("source_language", "Source language", FieldKind::String, "The language of the text; omit to let the model tell."),
                input_path("output"),
            ]))
            .example("Translate a post into French.", json!({"target_language": "French"}), json!({"input": "Hello, world"}), json!({"text": "Bonjour, le monde", "model": "offline-deterministic", "input_tokens": 12, "output_tokens": 5}), Some(("telegram_notify", "text → text")))
            .use_case("Publish one text in several languages."),
        ai("judge_evaluator", "Judge", "Scores its input against `rubric` from 0 to `max_score` and explains why.")
            .aliases(&["judge", "evaluate"])
            .caps(&["judge", "score", "evaluate", "llm"])
            .io(&[IoType::Text, IoType::Json, IoType::LensResult, IoType::AgentResult], IoType::Json)
            .outputs(vec![
                port("score", IoType::Number, "The score, 0 to max_score."),
                port("rationale", IoType::Text, "Why."),
                port("model", IoType::Text, "The model that judged."),
                port("input_tokens", IoType::Number, "Tokens of the prompt."),
                port("output_tokens", IoType::Number, "Tokens of the answer."),
            ])
            .fields(with_model(vec![
                field("rubric", "Rubric", FieldKind::Template, "What a good answer does.").required(),
                field("max_score", "Highest score", FieldKind::Number, "The top of the scale.").default(json!(10)).range(1.0, 1_000.0).aliases(&["scoringScale"]),
                input_path("output"),
            ]))
            .example("Grade an answer for accuracy.", json!({"rubric": "Accurate, cites a source, under 100 words.", "max_score": 10}), json!({"input": "Rust was first released in 2015."}), json!({"score": 7, "rationale": "Accurate; no source.", "model": "offline-deterministic", "input_tokens": 40, "output_tokens": 12}), Some(("if_condition", "score → input")))
            .use_case("Gate publishing on a quality score."),
        entry("agent_execute", AiPrimitive, "AI Lenser", "Runs an AI Lenser's tool-calling loop on `prompt`: its persona is the system message, its model (else the server's) is asked with the catalog tools it was granted, each call the model makes is checked (granted, within the agent's policy and daily caps) and run as the agent before the model is asked again, until it answers or a cap stops it. A call of a Destructive tool waits for an owner's approval (in a team run: decide_agent_approval) and then runs once; refused and rejected calls are told to the model. The run's starter must be one the agent acts for. Output `{text, model, turns, tool_calls, tokens}`; a cap ends it with `{stopped: max_turns | budget | time, last_answer, ..}` instead of failing.")
            .aliases(&["agent", "ai_lenser"])
            .caps(&["agent", "tools", "llm", "approval"])
            .io(&[IoType::Text, IoType::Json], IoType::AgentResult)
            .side_effect(SideEffect::InternalWrite)
            .open_outputs(vec![
                port("text", IoType::Text, "The agent's answer (absent when a cap stopped it)."),
                port("stopped", IoType::Text, "Set when a cap ended the loop: max_turns, budget (tokens, tool calls or the run's credits) or time."),
                port("last_answer", IoType::Text, "With stopped: the model's last text."),
                port("model", IoType::Text, "The model that answered last (the offline provider names itself)."),
                port("turns", IoType::Number, "Model calls made."),
                port("tool_calls", IoType::Number, "Tool calls the model asked for (run, refused or held)."),
                port("tokens", IoType::Number, "Tokens over all turns."),
            ])
            .fields(vec![
                field("ai_lenser_id", "AI Lenser", FieldKind::Uuid, "The agent that works this step: one the run's starter owns or acts for (in a team run, the team run's agent).").required().aliases(&["agent_id", "aiLenserId"]),
                field("prompt", "Task", FieldKind::Template, "What the agent is asked to do, with [[name]] placeholders for the step's inputs or the fields of its main input.").required(),
                field("max_turns", "Most turns", FieldKind::Integer, "Most model calls.").default(json!(10)).range(1.0, 50.0).aliases(&["maxTurns"]),
                field("max_tool_calls", "Most tool calls", FieldKind::Integer, "Most tool calls, refused ones included.").default(json!(20)).range(1.0, 100.0),
                field("max_tokens", "Most tokens", FieldKind::Integer, "Most tokens over all turns (the run's credit budget may stop it sooner).").default(json!(100_000)).range(100.0, 1_000_000.0),
                field("timeout_s", "Time limit (s)", FieldKind::Integer, "Most seconds of work in one go (a wait for approval does not count).").default(json!(300)).range(5.0, 1_800.0),
            ])
            .example("Let an agent tidy its owner's lenses.", json!({"ai_lenser_id": "0190f5a2-7c1e-7d3a-9b2c-5e8f1a2b3c4d", "prompt": "Archive my lenses about [[topic]] that nobody ran this year.", "max_turns": 6}), json!({"topic": "regex"}), json!({"text": "Archived 2 lenses.", "model": "offline-deterministic", "turns": 3, "tool_calls": 3, "tokens": 1800}), Some(("slack_notify", "text → text")))
            .use_case("Hand a task to an AI Lenser inside a workflow or its team run, with hard caps and an approval for destructive calls."),
        entry("output_parser", AiPrimitive, "Output parser", "Reads JSON out of a model's text (the first JSON object or array in it); with `strict`, text that holds none fails the node.")
            .aliases(&["parse_json", "json_parser"])
            .caps(&["parse", "json", "structured"])
            .io(&[IoType::Text], IoType::Json)
            .side_effect(SideEffect::None)
            .retry(super::super::spec::NO_RETRY)
            .fields(vec![
                input_path("text"),
                field("strict", "Strict", FieldKind::Boolean, "Fail when no JSON is found (otherwise output null).").default(json!(true)),
            ])
            .example("Read the JSON a model was asked for.", json!({"strict": true}), json!({"text": "Here you go: {\"title\": \"Hi\"}"}), json!({"title": "Hi"}), Some(("data_mapper", "output → input")))
            .use_case("Turn a model's structured answer into data for the next steps."),
    ]
}
