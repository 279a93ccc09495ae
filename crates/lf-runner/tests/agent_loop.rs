//! The agent step's tool-calling loop with the real OpenAI-compatible
//! client against a scripted model server on 127.0.0.1: granted calls
//! run, an ungranted one is refused and the refusal reaches the model, the
//! turn cap stops the loop, an approval wait is kept as JSON and resumed
//! in a new client (as after a restart) running the held call once without
//! asking the model again, and a slow model is stopped by the time cap.

#[path = "support/scripted.rs"]
mod scripted;

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use lf_core::{ChatRequest, ModelProvider, ToolCall, ToolSpec};
use lf_runner::agent_loop::{
    Caps, Check, LoopEnd, LoopState, Outcome, Resume, Stop, ToolBox, call_from_json, call_json, run_loop,
};
use scripted::{Model, client, tool_calls};
use serde_json::{Value, json};

fn calls(calls: &[(&str, &str)]) -> Value {
    tool_calls(calls, None, 10)
}

fn answer(text: &str) -> Value {
    scripted::answer(text, 5)
}

/// Grants `granted`; `held` needs approval; counts the calls it runs.
#[derive(Default)]
struct Grants {
    granted: Vec<&'static str>,
    held: Vec<&'static str>,
    ran: Mutex<Vec<String>>,
    heard: Mutex<Vec<(String, Outcome)>>,
}

#[async_trait]
impl ToolBox for Grants {
    fn tools(&self) -> Vec<ToolSpec> {
        self.granted
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: format!("The {n} tool."),
                parameters: r#"{"type":"object"}"#.into(),
            })
            .collect()
    }
    async fn check(&self, call: &ToolCall) -> Check {
        if !self.granted.contains(&call.name.as_str()) {
            Check::Refused(format!(
                "{} is not granted to this agent: its owner grants it with assign_agent_tool",
                call.name
            ))
        } else if self.held.contains(&call.name.as_str()) {
            Check::NeedsApproval
        } else {
            Check::Allowed
        }
    }
    async fn call(&self, call: &ToolCall) -> Result<String, String> {
        self.ran.lock().unwrap().push(call.id.clone());
        Ok(json!({"ok": call.name}).to_string())
    }
    fn record(&self, call: &ToolCall, outcome: &Outcome) {
        self.heard.lock().unwrap().push((call.id.clone(), outcome.clone()));
    }
}

fn chat() -> ChatRequest {
    ChatRequest::new("You are Ada, an agent.", "Tidy my lenses.")
}

#[tokio::test]
async fn granted_calls_run_and_an_ungranted_one_is_refused_back_to_the_model() {
    let (m, base) =
        Model::start(vec![calls(&[("c1", "get_lens"), ("c2", "delete_lens")]), answer("Done.")]).await;
    let tools = Grants { granted: vec!["get_lens"], ..Grants::default() };
    let (end, state) =
        run_loop(&client(&base), &chat(), &tools, Caps::default(), LoopState::default(), Resume::Continue)
            .await
            .unwrap();
    assert_eq!(end, LoopEnd::Answered);
    assert_eq!(
        (state.last_answer.as_str(), state.model_calls, state.tool_calls, state.tokens),
        ("Done.", 2, 2, 15)
    );
    assert_eq!(*tools.ran.lock().unwrap(), vec!["c1"], "only the granted call ran");
    let r = m.results(1);
    assert_eq!(r[0], ("c1".into(), json!({"ok": "get_lens"})));
    assert_eq!(r[1].0, "c2");
    assert_eq!(r[1].1["error"], "refused");
    assert!(r[1].1["message"].as_str().unwrap().contains("assign_agent_tool"), "{r:?}");
    let heard = tools.heard.lock().unwrap();
    assert_eq!(heard[0], ("c1".into(), Outcome::Ran));
    assert!(matches!(&heard[1], (id, Outcome::Refused(_)) if id == "c2"));
    // Only the granted tool is offered.
    let first = &m.seen.lock().unwrap()[0];
    assert_eq!(first["tools"].as_array().unwrap().len(), 1);
    assert_eq!(first["tools"][0]["function"]["name"], "get_lens");
}

#[tokio::test]
async fn the_turn_cap_stops_the_loop_with_its_last_answer() {
    let many: Vec<Value> = (0..5).map(|i| calls(&[(["a", "b", "c", "d", "e"][i], "get_lens")])).collect();
    let (m, base) = Model::start(many).await;
    let tools = Grants { granted: vec!["get_lens"], ..Grants::default() };
    let caps = Caps { max_turns: 3, ..Caps::default() };
    let (end, state) =
        run_loop(&client(&base), &chat(), &tools, caps, LoopState::default(), Resume::Continue)
            .await
            .unwrap();
    assert_eq!(end, LoopEnd::Stopped(Stop::MaxTurns));
    assert_eq!(Stop::MaxTurns.as_str(), "max_turns");
    assert_eq!((m.asked(), state.model_calls, tools.ran.lock().unwrap().len()), (3, 3, 3));

    // The token cap is the budget.
    let (_, base) = Model::start(vec![calls(&[("x", "get_lens")])]).await;
    let caps = Caps { max_tokens: 10, ..Caps::default() };
    let (end, _) = run_loop(&client(&base), &chat(), &tools, caps, LoopState::default(), Resume::Continue)
        .await
        .unwrap();
    assert_eq!(end, LoopEnd::Stopped(Stop::Budget));
}

#[tokio::test]
async fn an_approval_wait_is_kept_and_resumed_running_the_held_call_once() {
    let (m, base) = Model::start(vec![calls(&[("h1", "archive_lens")]), answer("Archived it.")]).await;
    let tools = Grants { granted: vec!["archive_lens"], held: vec!["archive_lens"], ..Grants::default() };
    let (end, state) =
        run_loop(&client(&base), &chat(), &tools, Caps::default(), LoopState::default(), Resume::Continue)
            .await
            .unwrap();
    let LoopEnd::Waiting(held) = end else { panic!("{end:?}") };
    assert_eq!(held.id, "h1");
    assert!(tools.ran.lock().unwrap().is_empty(), "nothing runs before approval");
    // What a waiting step keeps: JSON, read back in a new process.
    let kept = json!({"state": state.to_json(), "call": call_json(&held)}).to_string();
    drop((state, held));

    let kept: Value = serde_json::from_str(&kept).unwrap();
    let state = LoopState::from_json(&kept["state"]).expect("the kept state");
    let held = call_from_json(&kept["call"]).expect("the kept call");
    let (end, state) =
        run_loop(&client(&base), &chat(), &tools, Caps::default(), state, Resume::Approved(held))
            .await
            .unwrap();
    assert_eq!(end, LoopEnd::Answered);
    assert_eq!(state.last_answer, "Archived it.");
    assert_eq!(*tools.ran.lock().unwrap(), vec!["h1"], "the held call ran once");
    assert_eq!(m.asked(), 2, "the model was not asked again for the held call");
    assert_eq!(m.results(1), vec![("h1".to_owned(), json!({"ok": "archive_lens"}))]);

    // Rejected, the rejection is the call's result, and nothing runs.
    let (m, base) = Model::start(vec![answer("Understood.")]).await;
    let rejected = ToolCall { id: "h2".into(), name: "archive_lens".into(), arguments: "{}".into() };
    let (end, _) = run_loop(
        &client(&base),
        &chat(),
        &tools,
        Caps::default(),
        LoopState::default(),
        Resume::Rejected(rejected, "not this one".into()),
    )
    .await
    .unwrap();
    assert_eq!(end, LoopEnd::Answered);
    assert_eq!(tools.ran.lock().unwrap().len(), 1);
    assert!(m.results(0)[0].1["message"].as_str().unwrap().contains("not this one"));
}

#[tokio::test]
async fn a_slow_model_is_stopped_by_the_time_cap() {
    let (m, base) = Model::start(vec![]).await;
    m.replies.lock().unwrap().push_back((answer("late"), Duration::from_secs(5)));
    let tools = Grants::default();
    let caps = Caps { max_time: Duration::from_millis(200), ..Caps::default() };
    let (end, state) =
        run_loop(&client(&base), &chat(), &tools, caps, LoopState::default(), Resume::Continue)
            .await
            .unwrap();
    assert_eq!(end, LoopEnd::Stopped(Stop::Time));
    assert_eq!(state.model_calls, 0);
}

#[tokio::test]
async fn the_offline_provider_answers_at_once_under_its_own_name() {
    let tools = Grants { granted: vec!["get_lens"], ..Grants::default() };
    let provider: &dyn ModelProvider = &lf_model::OfflineProvider;
    let (end, state) =
        run_loop(provider, &chat(), &tools, Caps::default(), LoopState::default(), Resume::Continue)
            .await
            .unwrap();
    assert_eq!(end, LoopEnd::Answered);
    assert_eq!((state.model.as_str(), state.tool_calls), (lf_model::OFFLINE_MODEL_NAME, 0));
    assert!(state.last_answer.contains(lf_model::OFFLINE_MODEL_NAME));
}

/// Keeps every state it is given, as JSON (what a step's checkpoint holds).
#[derive(Default)]
struct Kept(Mutex<Vec<Value>>);

#[async_trait]
impl lf_runner::agent_loop::Saver for Kept {
    async fn save(&self, state: &LoopState) -> lf_core::LfResult<()> {
        self.0.lock().unwrap().push(state.to_json());
        Ok(())
    }
}

#[tokio::test]
async fn after_an_approval_the_rest_of_that_answers_calls_run_before_the_model_is_asked() {
    let (m, base) = Model::start(vec![
        calls(&[("a", "get_lens"), ("h", "archive_lens"), ("b", "get_lens")]),
        answer("All three done."),
    ])
    .await;
    let tools =
        Grants { granted: vec!["get_lens", "archive_lens"], held: vec!["archive_lens"], ..Grants::default() };
    let kept = Kept::default();
    let (end, state) = lf_runner::agent_loop::run_loop_with(
        &client(&base),
        &chat(),
        &tools,
        Caps::default(),
        LoopState::default(),
        Resume::Continue,
        &kept,
    )
    .await
    .unwrap();
    let LoopEnd::Waiting(held) = end else { panic!("{end:?}") };
    assert_eq!((held.id.as_str(), tools.ran.lock().unwrap().clone()), ("h", vec!["a".to_owned()]));
    // Saved after the answer, before and after the call that ran.
    assert_eq!(kept.0.lock().unwrap().len(), 3);
    assert_eq!(kept.0.lock().unwrap()[1]["running"]["id"], "a", "marked running while it runs");

    let (end, state) = lf_runner::agent_loop::run_loop_with(
        &client(&base),
        &chat(),
        &tools,
        Caps::default(),
        state,
        Resume::Approved(held),
        &kept,
    )
    .await
    .unwrap();
    assert_eq!(end, LoopEnd::Answered);
    assert_eq!(*tools.ran.lock().unwrap(), vec!["a", "h", "b"], "the held call, then the one after it");
    assert_eq!((m.asked(), state.tool_calls), (2, 3));
    let answered: Vec<String> = m.results(1).into_iter().map(|r| r.0).collect();
    assert_eq!(answered, ["a", "h", "b"], "every call of the answer has its result");
}

#[tokio::test]
async fn a_call_that_was_running_when_the_process_stopped_is_not_run_again() {
    let (m, base) =
        Model::start(vec![calls(&[("x", "archive_lens"), ("y", "get_lens")]), answer("ok")]).await;
    let tools = Grants { granted: vec!["get_lens", "archive_lens"], ..Grants::default() };
    // The process dies while x runs: its last save marks x running.
    struct DiesDuringX<'a>(&'a Kept);
    #[async_trait]
    impl lf_runner::agent_loop::Saver for DiesDuringX<'_> {
        async fn save(&self, state: &LoopState) -> lf_core::LfResult<()> {
            self.0.save(state).await?;
            if state.running.as_ref().is_some_and(|c| c.id == "x") {
                return Err(lf_core::LfError::internal("the process stopped"));
            }
            Ok(())
        }
    }
    let kept = Kept::default();
    let died = lf_runner::agent_loop::run_loop_with(
        &client(&base),
        &chat(),
        &tools,
        Caps::default(),
        LoopState::default(),
        Resume::Continue,
        &DiesDuringX(&kept),
    )
    .await;
    assert!(died.is_err());
    assert!(tools.ran.lock().unwrap().is_empty(), "nothing ran after the failed save");

    let last = LoopState::from_json(kept.0.lock().unwrap().last().unwrap()).unwrap();
    assert_eq!(last.running.as_ref().map(|c| c.id.as_str()), Some("x"));
    let (end, _) =
        run_loop(&client(&base), &chat(), &tools, Caps::default(), last, Resume::Continue).await.unwrap();
    assert_eq!(end, LoopEnd::Answered);
    assert_eq!(*tools.ran.lock().unwrap(), vec!["y"], "x is not run again; y, never started, runs");
    let r = m.results(1);
    assert_eq!(r[0].0, "x");
    assert!(r[0].1["error"].as_str().unwrap().contains("unknown"), "{r:?}");
    let heard = tools.heard.lock().unwrap();
    assert!(matches!(&heard[0], (id, Outcome::Failed(_)) if id == "x"));
}
