//! The `contender_run` step on the servers' own wiring (SQLite in memory,
//! the real runner, `CatalogTools`): an AI Lenser answers as its ai_agent
//! contender through `call_as_agent` with the action word `answer_battle`,
//! so its policy gates the answer and its action log shows it; a stranger
//! to the agent and a human contender fail the step.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use lf_core::{
    ChatRequest, ChatResponse, LenserId, LfResult, ModelProvider, PageRequest, Principal, Scopes, WorkflowId,
};
use lf_server::{Background, Database, KeySealer, RunSettings};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, StartRun};
use lf_workflow::{NewWorkflow, RawBlueprint};
use serde_json::{Value, json};

/// Answers in the voice of its system prompt, and notes what it was asked.
#[derive(Default)]
struct Voice {
    asked: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ModelProvider for Voice {
    fn name(&self) -> &str {
        "voice"
    }

    async fn chat(&self, r: ChatRequest) -> LfResult<ChatResponse> {
        self.asked.lock().unwrap().push((r.system.clone(), r.user.clone()));
        Ok(ChatResponse::new(format!("{} says: {}", r.system, r.user), "voice"))
    }
}

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

fn server(services: &Arc<Services>, id: LenserId) -> LfServer {
    LfServer::new(Arc::new(Catalog::new()), services.clone(), CatalogOptions::default(), lenser(id))
}

/// Calls `tool`, which must succeed: its structured content.
async fn ok(s: &LfServer, tool: &str, args: Value) -> Value {
    let r = s.call(tool, args.as_object().unwrap().clone()).await.expect("a known tool");
    let out = r.structured_content.clone().expect("structured content");
    assert_ne!(r.is_error, Some(true), "{tool} failed: {out}");
    out
}

/// A workflow of `owner`'s: a trigger, then contender_run with its ids
/// from the run's inputs.
async fn workflow(services: &Services, owner: LenserId) -> WorkflowId {
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Take my turn",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "answer", "kind": "tool", "name": "Answer", "node_type": "contender_run",
                "config": {"battleId": "[[battle_id]]", "contenderId": "[[contender_id]]"}}
        ],
        "connections": [{"from_step": "start", "to_step": "answer", "input_parameter": "input"}]
    }))
    .unwrap();
    let created = services.workflow.create(&lenser(owner), NewWorkflow { blueprint, owner: None }).await;
    created.expect("the original's camelCase config names are accepted").workflow.id
}

/// A run of `w` by `starter` answering `contender` of `battle`, ended.
async fn answered(
    services: &Services,
    starter: LenserId,
    w: WorkflowId,
    battle: &str,
    contender: &str,
) -> Run {
    let inputs = json!({"battle_id": battle, "contender_id": contender}).as_object().unwrap().clone();
    let start = StartRun { workflow_id: Some(w), inputs, ..StartRun::default() };
    let id = services.runs.start(&lenser(starter), start).await.unwrap().run.id;
    for _ in 0..1_000 {
        let run = services.runs.store().load_run(id).await.unwrap();
        if run.status().is_final() {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the run did not end: {:#?}", services.runs.store().load_run(id).await.unwrap());
}

/// The failed step's error: code, message.
fn step_error(run: &Run) -> (String, String) {
    assert_eq!(run.status(), RunStatus::Failed, "{:#?}", run.state);
    let e = run.state.slots.values().find_map(|n| n.error.clone()).expect("a step failed");
    (e.code, e.message)
}

#[tokio::test]
async fn an_ai_lenser_answers_its_battle_from_a_workflow_step_through_its_action_word() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let voice = Arc::new(Voice::default());
    let (services, runner) = lf_server::services(
        &db,
        voice.clone(),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(None),
        &RunSettings::default(),
    );
    runner.start();
    let (alice_id, bob_id) = (LenserId::new(), LenserId::new());
    let alice = server(&services, alice_id);

    let created =
        ok(&alice, "create_ai_lenser", json!({"handle": "ada_contends", "display_name": "Ada"})).await;
    let agent = created["ai_lenser_id"].as_str().unwrap().to_owned();
    let persona = json!({"persona": "Ada, who mentions borrowing"});
    ok(&alice, "update_ai_lenser", json!({"ai_lenser_id": agent, "patch": persona})).await;
    // Only an AI Lenser whose policy lets it join battles is entered in one.
    let joins = |on: bool| json!({"ai_lenser_id": agent, "patch": {"can_join_battles": on}});
    ok(&alice, "update_ai_lenser", joins(true)).await;
    ok(&alice, "assign_agent_tool", json!({"ai_lenser_id": agent, "tool_id": "submit_battle_run"})).await;
    let battle = ok(
        &alice,
        "create_battle",
        json!({"title": "Ownership", "task_prompt": "Explain Rust ownership in one sentence.",
            "battle_type": "lenser_battle", "max_contenders": 2}),
    )
    .await;
    let b = battle["id"].as_str().unwrap().to_owned();
    let mut contenders = Vec::new();
    for (name, kind, reference) in
        [("Ada", "ai_agent", agent.clone()), ("Alice", "human", alice_id.to_string())]
    {
        let added = ok(
            &alice,
            "add_battle_contender",
            json!({"battle_id": b, "display_name": name, "contender_type": kind, "contender_ref_id": reference}),
        )
        .await;
        contenders.push(added["contender_id"].as_str().unwrap().to_owned());
    }
    ok(&alice, "set_battle_status", json!({"battle_id": b, "status": "open"})).await;
    let mine = workflow(&services, alice_id).await;
    ok(&alice, "update_ai_lenser", joins(false)).await;

    // Its policy, changed since, gates the answer as it gates
    // run_agent_action: refused, and logged.
    let (code, message) = step_error(&answered(&services, alice_id, mine, &b, &contenders[0]).await);
    assert_eq!(code, "permission_denied");
    assert!(message.contains("can_join_battles"), "{message}");
    let log = ok(&alice, "list_agent_actions", json!({"ai_lenser_id": agent})).await;
    assert_eq!(
        (log["items"][0]["action"].as_str(), log["items"][0]["outcome"].as_str()),
        (Some("answer_battle"), Some("refused"))
    );
    assert!(voice.asked.lock().unwrap().is_empty(), "a refused answer asks no model");

    ok(&alice, "update_ai_lenser", joins(true)).await;
    let run = answered(&services, alice_id, mine, &b, &contenders[0]).await;
    assert_eq!(run.status(), RunStatus::Completed, "{:#?}", run.state);
    let out = run.state.result.clone().unwrap();
    let said = "Ada, who mentions borrowing says: Explain Rust ownership in one sentence.";
    assert_eq!(
        (out["contender_id"].as_str(), out["text"].as_str()),
        (Some(contenders[0].as_str()), Some(said))
    );
    let sheet = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    let submission = &sheet["submissions"][0];
    assert_eq!(
        (submission["submitted_by"].as_str(), &submission["id"], submission["content_text"].as_str()),
        (Some(agent.as_str()), &out["submission_id"], Some(said)),
        "submitted as the agent: {sheet}"
    );
    assert_eq!(voice.asked.lock().unwrap().len(), 1, "one model call");
    let log = ok(&alice, "list_agent_actions", json!({"ai_lenser_id": agent})).await;
    assert_eq!(
        (
            log["items"][0]["action"].as_str(),
            log["items"][0]["tool"].as_str(),
            log["items"][0]["outcome"].as_str()
        ),
        (Some("answer_battle"), Some("submit_battle_run"), Some("succeeded"))
    );
    let agent_id = LenserId::parse("ai_lenser_id", &agent).unwrap();
    let page = PageRequest::new(Some(1), None).unwrap();
    let entries = services.agents.list_actions(&lenser(alice_id), agent_id, page).await.unwrap();
    let arguments = entries.items[0].arguments.as_str();
    assert!(arguments.starts_with("contender_run ") && arguments.contains(&b), "{arguments}");

    // A stranger to the agent: the battle is open to all, the agent is not Bob's.
    let bobs = workflow(&services, bob_id).await;
    let (code, message) = step_error(&answered(&services, bob_id, bobs, &b, &contenders[0]).await);
    assert_eq!(code, "not_found", "{message}");
    // A human contender is not answered by an agent.
    let (code, message) = step_error(&answered(&services, alice_id, mine, &b, &contenders[1]).await);
    assert_eq!(code, "invalid_input");
    assert!(message.contains("submit_battle_run"), "{message}");
    assert_eq!(voice.asked.lock().unwrap().len(), 1, "neither asked the model");
    runner.shutdown().await;
}
