//! The Agent tools through `LfServer::call`: profiles, ownership, grants of
//! catalog tools, `run_agent_action` as `Principal::Agent` (only granted
//! tools, the owner's reach, the policy, the day's caps and credit limit,
//! the action log), and team runs (service only, approval, cancel, events).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::TimeDelta;
use lf_agent::{AgentService, MemoryAgentStore, NoLensers};
use lf_battle::BattleService;
use lf_core::{
    ChatRequest, ChatResponse, FixedClock, LenserId, LfResult, ModelProvider, Principal, Scopes, Timestamp,
};
use lf_lens::{LensService, MemoryLensStore};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services, tool_id};
use serde_json::{Value, json};

mod common;
use common::{err, ok};

struct World {
    services: Arc<Services>,
    clock: Arc<FixedClock>,
}

/// A model that answers in the voice its system prompt gives, and notes
/// what it was asked: an agent's persona is its system prompt.
#[derive(Default)]
struct Voices {
    asked: Mutex<Vec<(Option<String>, String, String)>>,
}

impl ModelProvider for Voices {
    fn name(&self) -> &str {
        "voices"
    }

    fn chat<'a, 'b>(
        &'a self,
        r: ChatRequest,
    ) -> Pin<Box<dyn Future<Output = LfResult<ChatResponse>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        self.asked.lock().unwrap().push((r.model.clone(), r.system.clone(), r.user.clone()));
        let text = if r.system.contains("Judge") || r.system.contains("judge") {
            "{}".to_owned()
        } else {
            format!("{} says: {}", r.system, r.user)
        };
        Box::pin(async move { Ok(ChatResponse::new(text, r.model.unwrap_or_else(|| "voices".into()))) })
    }
}

impl World {
    async fn new() -> World {
        Self::with_model(None).await
    }

    async fn with_model(model: Option<Arc<dyn ModelProvider>>) -> World {
        let clock = Arc::new(FixedClock::new(
            Timestamp::from_micros(1_780_000_000_000_000),
            TimeDelta::milliseconds(1),
        ));
        let battles = lf_store::Database::connect("sqlite::memory:").await.unwrap().battle_store();
        let agents = AgentService::new(Arc::new(MemoryAgentStore::new()), Arc::new(NoLensers))
            .with_clock(clock.clone());
        let builder = Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(BattleService::new(battles))
            .workflow(common::memory_workflows())
            .connections(common::memory_connections())
            .agents(agents);
        let services = match model {
            Some(m) => builder.model(m).build(),
            None => builder.build(),
        };
        World { services: Arc::new(services), clock }
    }

    fn server(&self, principal: Principal) -> LfServer {
        LfServer::new(Arc::new(Catalog::new()), self.services.clone(), CatalogOptions::default(), principal)
    }

    fn person(&self) -> (LenserId, LfServer) {
        let id = LenserId::new();
        (id, self.server(Principal::Lenser { id, scopes: Scopes::READ_WRITE }))
    }
}

async fn agent(s: &LfServer, handle: &str) -> String {
    let out = ok(s, "create_ai_lenser", json!({"handle": handle, "display_name": "Ada Bot"})).await;
    assert_eq!(out["status"], "created");
    out["ai_lenser_id"].as_str().unwrap().to_owned()
}

/// An agent of `s`'s that joins battles and may submit to them, with
/// `patch` applied too.
async fn battle_agent(s: &LfServer, handle: &str, mut patch: Value) -> String {
    let id = agent(s, handle).await;
    patch["can_join_battles"] = json!(true);
    ok(s, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": patch})).await;
    ok(s, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "submit_battle_run"})).await;
    id
}

/// A battle `s` creates with `new`, and the ids of the contenders it adds
/// (name, type, reference), in order.
async fn battle_of(s: &LfServer, new: Value, contenders: [(&str, &str, String); 3]) -> (String, Vec<String>) {
    let battle = ok(s, "create_battle", new).await;
    let b = battle["id"].as_str().unwrap().to_owned();
    let mut ids = Vec::new();
    for (name, kind, reference) in contenders {
        let added = ok(
            s,
            "add_battle_contender",
            json!({"battle_id": b, "display_name": name, "contender_type": kind, "contender_ref_id": reference}),
        )
        .await;
        ids.push(added["contender_id"].as_str().unwrap().to_owned());
    }
    (b, ids)
}

async fn private_lens(s: &LfServer, title: &str) -> String {
    let out = ok(
        s,
        "create_lens",
        json!({"title": title, "template_body": "Summarize [[Text]] in three bullet points for a busy reader.", "visibility": "private"}),
    )
    .await;
    out["id"].as_str().unwrap().to_owned()
}

async fn act(s: &LfServer, agent: &str, action: &str, metadata: Value) -> (bool, Value) {
    common::call(
        s,
        "run_agent_action",
        json!({"ai_lenser_id": agent, "action_type": action, "metadata": metadata}),
    )
    .await
}

#[tokio::test]
async fn profiles_handles_limits_and_patches() {
    let w = World::new().await;
    let (alice, a) = w.person();
    let id = agent(&a, "Ada_Bot").await;
    let got = ok(&a, "get_ai_lenser", json!({"ai_lenser_id": id})).await;
    assert_eq!(got["handle"], "ada_bot", "handles are lowercased");
    assert_eq!(got["owner_lenser_id"], alice.to_string());
    assert_eq!(got["your_role"], "owner");
    assert_eq!(got["policy"]["can_vote"], false, "a new agent may do none of the gated things");
    assert_eq!(got["usage"]["tool_calls_used"], 0);

    let taken = err(&a, "create_ai_lenser", json!({"handle": "ADA_BOT", "display_name": "Again"})).await;
    assert_eq!(taken["code"], "CONFLICT");
    assert!(taken["message"].as_str().unwrap().contains("ada_bot"), "{taken}");
    for bad in ["ab", "has-dash", "x".repeat(25).as_str()] {
        let e = err(&a, "create_ai_lenser", json!({"handle": bad, "display_name": "Bad"})).await;
        assert_eq!(
            (e["code"].as_str(), e["details"]["field"].as_str()),
            (Some("INVALID_ARGUMENT"), Some("handle"))
        );
    }
    let long =
        err(&a, "create_ai_lenser", json!({"handle": "longname", "display_name": "n".repeat(61)})).await;
    assert_eq!(long["details"]["field"], "display_name");

    for n in 2..=5 {
        agent(&a, &format!("bot_{n}")).await;
    }
    let full = err(&a, "create_ai_lenser", json!({"handle": "bot_six", "display_name": "Six"})).await;
    assert_eq!(full["code"], "SLOTS_FULL", "five active agents per owner: {full}");

    let u = ok(
        &a,
        "update_ai_lenser",
        json!({"ai_lenser_id": id, "patch": {"bio": "Reads lenses.", "display_name": "Ada Bot", "can_vote": true, "max_daily_votes": 3}}),
    )
    .await;
    assert_eq!(
        u["patched_keys"],
        json!(["bio", "can_vote", "max_daily_votes"]),
        "what changed, not what was sent"
    );
    let cleared = ok(&a, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": {"bio": null}})).await;
    assert_eq!(cleared["patched_keys"], json!(["bio"]));
    let unknown = err(&a, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": {"colour": "red"}})).await;
    assert_eq!(unknown["code"], "INVALID_ARGUMENT");
    let empty = err(&a, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": {}})).await;
    assert_eq!(empty["details"]["field"], "patch");

    let (_, b) = w.person();
    let hidden = err(&b, "get_ai_lenser", json!({"ai_lenser_id": id})).await;
    assert_eq!(hidden["code"], "NOT_FOUND", "another person's agent does not exist for them");
    let listed = ok(&b, "list_ai_lensers", json!({})).await;
    assert_eq!(listed["total"], 0);
    assert_eq!(ok(&a, "list_ai_lensers", json!({})).await["total"], 5);

    let unconfirmed = err(&a, "archive_ai_lenser", json!({"ai_lenser_id": id})).await;
    assert_eq!(unconfirmed["code"], "CONFIRMATION_REQUIRED");
    let archived = ok(&a, "archive_ai_lenser", json!({"ai_lenser_id": id, "confirm": true})).await;
    assert_eq!(archived["status"], "archived");
    agent(&a, "bot_six").await; // archiving freed a slot
    assert_eq!(ok(&a, "list_ai_lensers", json!({"include_archived": true})).await["total"], 6);
}

#[tokio::test]
async fn grants_are_catalog_tools_by_id_or_name() {
    let w = World::new().await;
    let (_, a) = w.person();
    let id = agent(&a, "granted").await;
    let by_name = ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "get_lens"})).await;
    assert_eq!(by_name["tool_id"], tool_id("get_lens").to_string());
    assert_eq!((by_name["group"].as_str(), by_name["safety"].as_str()), (Some("lens"), Some("read")));
    assert_eq!(by_name["created"], true);
    let again =
        ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": tool_id("get_lens").to_string()}))
            .await;
    assert_eq!(again["created"], false, "the same tool by its id: nothing new");

    let agent_tool =
        err(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "run_agent_action"})).await;
    assert_eq!(agent_tool["code"], "INVALID_ARGUMENT", "no Agent tool is grantable: {agent_tool}");
    let destructive =
        err(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "delete_lens"})).await;
    assert_eq!(destructive["code"], "CONFIRMATION_REQUIRED");
    ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "delete_lens", "confirm": true})).await;
    let unknown = err(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "no_such_tool"})).await;
    assert_eq!(
        (unknown["code"].as_str(), unknown["details"]["field"].as_str()),
        (Some("NOT_FOUND"), Some("tool_id"))
    );

    let listed = ok(&a, "list_agent_tools", json!({"ai_lenser_id": id})).await;
    let names: Vec<&str> =
        listed["items"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["delete_lens", "get_lens"], "grants by name");
    assert_eq!(listed["limit"], 50, "the spec's default");

    let revoked = ok(&a, "revoke_agent_tool", json!({"ai_lenser_id": id, "tool_id": "delete_lens"})).await;
    assert_eq!(revoked["revoked"], true);
    let twice = ok(&a, "revoke_agent_tool", json!({"ai_lenser_id": id, "tool_id": "delete_lens"})).await;
    assert_eq!(twice["revoked"], false);
    assert_eq!(ok(&a, "list_agent_tools", json!({"ai_lenser_id": id})).await["total"], 1);
}

#[tokio::test]
async fn an_agent_calls_only_granted_tools_with_its_owners_reach() {
    let w = World::new().await;
    let (_, a) = w.person();
    let (_, b) = w.person();
    let id = agent(&a, "reader").await;
    let mine = private_lens(&a, "Alice's notes").await;
    let theirs = private_lens(&b, "Bob's notes").await;

    let (refused, e) = act(&a, &id, "get_lens", json!({"lens_id": mine})).await;
    assert!(refused);
    assert_eq!(e["code"], "PERMISSION_DENIED");
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("get_lens") && m.contains("assign_agent_tool"),
        "names the tool and how to grant it: {m}"
    );

    ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "get_lens"})).await;
    let (failed, got) = act(&a, &id, "get_lens", json!({"lens_id": mine})).await;
    assert!(!failed, "{got}");
    assert_eq!(got["result"]["title"], "Alice's notes");
    assert_eq!((got["tool"].as_str(), got["agent_id"].as_str()), (Some("get_lens"), Some(id.as_str())));
    let (failed, e) = act(&a, &id, "get_lens", json!({"lens_id": theirs})).await;
    assert!(failed);
    assert_eq!(e["code"], "NOT_FOUND", "an agent never reaches past its owner: {e}");

    // Only its owners and operators act through it.
    let (_, e) = act(&b, &id, "get_lens", json!({"lens_id": mine})).await;
    assert_eq!(e["code"], "NOT_FOUND");

    let log = ok(&a, "list_agent_actions", json!({"ai_lenser_id": id})).await;
    let outcomes: Vec<&str> =
        log["items"].as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    assert_eq!(
        outcomes,
        ["failed", "succeeded", "refused"],
        "newest first, bob's call never reached the log"
    );
    assert_eq!(log["items"][1]["action_log_id"], got["action_log_id"]);
}

/// What an agent writes is its owner's and names the agent (`by_agent`);
/// what the owner writes names none.
#[tokio::test]
async fn an_agent_is_named_on_the_lenses_it_writes() {
    let w = World::new().await;
    let (owner, a) = w.person();
    let id = agent(&a, "scribe").await;
    for tool in ["create_lens", "update_lens", "fork_lens"] {
        ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": tool})).await;
    }
    let body = "Summarize [[Text]] in three bullet points for a busy reader.";
    let (failed, made) =
        act(&a, &id, "create_lens", json!({"title": "By the agent", "template_body": body})).await;
    assert!(!failed, "{made}");
    let lens = made["result"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["result"]["lenser_id"], owner.to_string(), "the owner owns it");
    assert_eq!(made["result"]["by_agent"], id.as_str());
    assert_eq!(made["result"]["head_version"]["by_agent"], id.as_str());

    let got = ok(&a, "get_lens", json!({"lens_id": lens})).await;
    assert_eq!(
        (got["by_agent"].as_str(), got["versions"]["by_agent"].as_str()),
        (Some(id.as_str()), Some(id.as_str()))
    );
    let doc = ok(&a, "fetch", json!({"id": format!("lens:{lens}")})).await;
    assert_eq!(doc["metadata"]["by_agent"], id.as_str(), "its document names the agent too");
    let (failed, fork) = act(&a, &id, "fork_lens", json!({"source_lens_id": lens})).await;
    assert!(!failed, "{fork}");
    assert_eq!(fork["result"]["by_agent"], id.as_str());

    // The owner writes the next version: the lens still names the agent
    // that created it, the new version names none.
    let changed = "Summarize [[Text]] in five bullet points for a busy reader, please.";
    let update = ok(&a, "update_lens", json!({"lens_id": lens, "template_body": changed})).await;
    assert_eq!(update["lens"]["by_agent"], id.as_str());
    assert!(update["version"]["by_agent"].is_null(), "{update}");
    let versions = ok(&a, "list_lens_versions", json!({"lens_id": lens})).await;
    let writers: Vec<Option<&str>> =
        versions["versions"].as_array().unwrap().iter().map(|v| v["by_agent"].as_str()).collect();
    assert_eq!(writers, [None, Some(id.as_str())], "newest first");

    let own = ok(&a, "create_lens", json!({"title": "By the owner", "template_body": body})).await;
    assert!(own["by_agent"].is_null() && own["head_version"]["by_agent"].is_null(), "{own}");
}

#[tokio::test]
async fn action_words_policy_flags_and_daily_caps() {
    let w = World::new().await;
    let (_, a) = w.person();
    let id = agent(&a, "voter").await;
    ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "add_battle_contender"})).await;
    ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "list_lenses"})).await;
    let battle = ok(&a, "create_battle", json!({"title": "Duel", "task_prompt": "Name a sea."})).await;
    let join = json!({"battle_id": battle["id"], "display_name": "Voter", "contender_type": "ai_agent", "contender_ref_id": id});
    let (_, e) = act(&a, &id, "join_battle", join.clone()).await;
    assert_eq!(e["code"], "PERMISSION_DENIED");
    assert!(e["message"].as_str().unwrap().contains("can_join_battles"), "{e}");
    ok(
        &a,
        "update_ai_lenser",
        json!({"ai_lenser_id": id, "patch": {"can_join_battles": true, "max_daily_tool_calls": 3}}),
    )
    .await;
    let (failed, joined) = act(&a, &id, "join_battle", join).await;
    assert!(!failed, "{joined}");
    assert_eq!(
        (joined["action"].as_str(), joined["tool"].as_str()),
        (Some("join_battle"), Some("add_battle_contender"))
    );

    // Three calls a day: the third passes (the join was the first), the fourth is throttled.
    assert!(!act(&a, &id, "list_lenses", json!({})).await.0);
    assert!(!act(&a, &id, "list_lenses", json!({})).await.0);
    let (_, e) = act(&a, &id, "list_lenses", json!({})).await;
    assert_eq!(e["code"], "THROTTLED");
    assert_eq!(e["details"]["cap"], "max_daily_tool_calls");
    let resets = e["details"]["resets_at"].as_str().unwrap().to_owned();
    assert!(
        resets.ends_with("T00:00:00+00:00") || resets.ends_with("T00:00:00Z"),
        "the next UTC midnight: {resets}"
    );
    let got = ok(&a, "get_ai_lenser", json!({"ai_lenser_id": id})).await;
    assert_eq!(
        (got["usage"]["tool_calls_used"].as_u64(), got["usage"]["battles_used"].as_u64()),
        (Some(3), Some(1))
    );

    // A new UTC day starts the counts again.
    w.clock.advance(TimeDelta::hours(24));
    assert!(!act(&a, &id, "list_lenses", json!({})).await.0, "the cap resets at the day boundary");
}

#[tokio::test]
async fn operators_act_but_do_not_change_the_agent() {
    let w = World::new().await;
    let (_, a) = w.person();
    let (bob, b) = w.person();
    let id = agent(&a, "shared").await;
    ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "list_lenses"})).await;
    let members = ok(
        &a,
        "set_ai_lenser_member",
        json!({"ai_lenser_id": id, "lenser_id": bob.to_string(), "role": "operator"}),
    )
    .await;
    assert_eq!(members["members"], json!([{"lenser_id": bob.to_string(), "role": "operator"}]));
    assert_eq!(ok(&b, "get_ai_lenser", json!({"ai_lenser_id": id})).await["your_role"], "operator");
    assert!(!act(&b, &id, "list_lenses", json!({})).await.0, "an operator runs it");
    let e = err(&b, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": {"bio": "mine now"}})).await;
    assert_eq!(e["code"], "FORBIDDEN");
    let e = err(&b, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "get_lens"})).await;
    assert_eq!(e["code"], "FORBIDDEN");
    ok(&a, "set_ai_lenser_member", json!({"ai_lenser_id": id, "lenser_id": bob.to_string(), "role": "none"}))
        .await;
    assert_eq!(err(&b, "get_ai_lenser", json!({"ai_lenser_id": id})).await["code"], "NOT_FOUND");
}

#[tokio::test]
async fn team_runs_are_the_services_and_move_in_order() {
    let w = World::new().await;
    let (alice, a) = w.person();
    let id = agent(&a, "teamer").await;
    let flow = ok(
        &a,
        "create_workflow",
        json!({"title": "Flow", "visibility": "private",
            "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                      {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}],
            "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]}),
    )
    .await;
    let start = json!({"ai_lenser_id": id, "workflow_id": flow["id"], "policy": "approval_required"});
    let over_http = err(&a, "start_agent_team_run", start.clone()).await;
    assert_eq!(over_http["code"], "PERMISSION_DENIED", "service role only: {over_http}");

    let service = w.server(Principal::Service { acting_as: Some(alice) });
    let run = ok(&service, "start_agent_team_run", start).await;
    assert_eq!(run["status"], "awaiting_approval");
    let team_run = run["team_run_id"].as_str().unwrap();
    let decided = ok(
        &a,
        "decide_agent_approval",
        json!({"ai_lenser_id": id, "team_run_id": team_run, "decision": "approve", "reason": "fine"}),
    )
    .await;
    assert_eq!(decided["status"], "queued");
    let cancelled = ok(&a, "cancel_agent_run", json!({"ai_lenser_id": id, "team_run_id": team_run})).await;
    assert_eq!(cancelled["status"], "cancelled");
    let again = err(&a, "cancel_agent_run", json!({"ai_lenser_id": id, "team_run_id": team_run})).await;
    assert_eq!(again["code"], "INVALID_TRANSITION", "a finished run is not cancelled again");

    let events = ok(&a, "list_agent_run_events", json!({"ai_lenser_id": id, "run_id": team_run})).await;
    let kinds: Vec<&str> =
        events["items"].as_array().unwrap().iter().map(|e| e["event_type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["run_cancelled", "dispatch_queued", "approval_granted", "approval_requested"],
        "newest first"
    );
    assert_eq!(events["items"][2]["payload"]["note"], "fine");
    let only =
        ok(&a, "list_agent_run_events", json!({"ai_lenser_id": id, "event_type": "approval_granted"})).await;
    assert_eq!(only["total"], 1);

    // A workflow its owner cannot read is not run for the agent.
    let (_, b) = w.person();
    let bobs = ok(&b, "create_workflow", json!({"title": "Bob's", "visibility": "private"})).await;
    let e =
        err(&service, "start_agent_team_run", json!({"ai_lenser_id": id, "workflow_id": bobs["id"]})).await;
    assert_eq!(e["code"], "NOT_FOUND");
}

#[tokio::test]
async fn two_agents_and_a_person_fight_a_battle_the_agents_answer_themselves() {
    let voices = Arc::new(Voices::default());
    let w = World::with_model(Some(voices.clone())).await;
    let (_, alice) = w.person();
    let (_, bob) = w.person();
    let (carol_id, carol) = w.person();
    let mut agents = Vec::new();
    for (s, handle, persona, model) in [
        (&alice, "ada_bot", "Ada, who always mentions borrow checking", "model-a"),
        (&bob, "bobby_bot", "Bobby", "model-b"),
    ] {
        agents.push(battle_agent(s, handle, json!({"persona": persona, "model": model})).await);
    }
    let (b, contenders) = battle_of(
        &alice,
        json!({"title": "Explain ownership", "task_prompt": "Explain Rust ownership in one sentence.",
            "battle_type": "human_vs_ai", "max_contenders": 3, "judging_mode": "auto_score",
            "auto_check": {"kind": "contains", "needle": "borrow"}}),
        [
            ("Ada", "ai_agent", agents[0].clone()),
            ("Bobby", "ai_agent", agents[1].clone()),
            ("Carol", "human", carol_id.to_string()),
        ],
    )
    .await;
    for status in ["open", "executing"] {
        ok(&alice, "set_battle_status", json!({"battle_id": b, "status": status})).await;
    }

    // Not answering a battle it is no contender of, nor without its policy.
    let stranger = agent(&alice, "idle_bot").await;
    ok(&alice, "assign_agent_tool", json!({"ai_lenser_id": stranger, "tool_id": "submit_battle_run"})).await;
    let (_, e) = act(&alice, &stranger, "answer_battle", json!({"battle_id": b})).await;
    assert_eq!(e["code"], "PERMISSION_DENIED", "can_join_battles is off: {e}");

    // Each agent answers for itself, through its owner.
    let (failed, ada) = act(&alice, &agents[0], "answer_battle", json!({"battle_id": b})).await;
    assert!(!failed, "{ada}");
    assert_eq!(
        (ada["tool"].as_str(), ada["action"].as_str()),
        (Some("submit_battle_run"), Some("answer_battle"))
    );
    let (failed, bobby) = act(&bob, &agents[1], "answer_battle", json!({"battle_id": b})).await;
    assert!(!failed, "{bobby}");
    {
        let asked = voices.asked.lock().unwrap();
        assert_eq!(asked.len(), 2, "one model call per answer");
        assert_eq!(asked[0].0.as_deref(), Some("model-a"), "the agent's model");
        assert!(asked[0].1.contains("borrow checking"), "its persona is the system prompt");
        assert_eq!(asked[1].2, "Explain Rust ownership in one sentence.", "the task prompt");
    }
    let sheet = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    let texts: Vec<String> = sheet["submissions"].as_array().unwrap().iter().map(|s| s.to_string()).collect();
    assert!(texts.iter().any(|t| t.contains("Ada, who always mentions borrow checking says")), "{sheet}");
    let by: Vec<&str> = sheet["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["submitted_by"].as_str().unwrap())
        .collect();
    assert!(
        by.contains(&agents[0].as_str()) && by.contains(&agents[1].as_str()),
        "submitted as the agents: {by:?}"
    );
    // Each answer is recorded with what it cost: tokens estimated (the
    // provider reported no usage), on `default`, the model it named.
    let costs = sheet["answer_costs"].as_array().unwrap();
    assert_eq!(costs.len(), 2, "{sheet}");
    for (k, model) in costs.iter().zip(["model-a", "model-b"]) {
        assert_eq!(
            (&k["of"], &k["endpoint"], &k["model"]),
            (&json!("submission"), &json!("default"), &json!(model))
        );
        assert_eq!(k["tokens"]["estimated"], true, "{k}");
        assert!(k["tokens"]["output"].as_u64().unwrap() > 0 && k["latency_ms"]["total"].is_u64(), "{k}");
    }
    let again = act(&alice, &agents[0], "answer_battle", json!({"battle_id": b})).await;
    assert!(!again.0, "an agent may replace its answer while the battle runs: {}", again.1);

    ok(
        &carol,
        "submit_battle_run",
        json!({"battle_id": b, "contender_id": contenders[2], "content_text": "Values have one owner."}),
    )
    .await;
    let mut score = Value::Null;
    for _ in 0..500 {
        score = ok(&alice, "get_battle_score", json!({"battle_id": b})).await;
        if score["judging"] != "pending" && score["judging"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(score["judging"], "judged", "{score}");
    let closed =
        ok(&alice, "set_battle_status", json!({"battle_id": b, "status": "closed", "confirm": true})).await;
    assert_eq!(closed["winner_contender_id"], contenders[0], "Ada's answer has the needle: {closed}");

    let board = ok(&carol, "get_leaderboard", json!({"battle_type": "human_vs_ai", "min_battles": 1})).await;
    let rated: Vec<(&str, &str)> = board["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["contender_ref_id"].as_str().unwrap(), i["contender_type"].as_str().unwrap()))
        .collect();
    assert_eq!(rated.len(), 3, "{board}");
    assert_eq!(rated[0], (agents[0].as_str(), "ai_agent"), "the winning agent leads: {board}");
    assert!(rated.contains(&(agents[1].as_str(), "ai_agent")));

    let log = ok(&bob, "list_agent_actions", json!({"ai_lenser_id": agents[1]})).await;
    assert_eq!(
        (log["items"][0]["action"].as_str(), log["items"][0]["outcome"].as_str()),
        (Some("answer_battle"), Some("succeeded"))
    );
}

#[tokio::test]
async fn an_agent_answers_only_as_its_own_contender() {
    let voices = Arc::new(Voices::default());
    let w = World::with_model(Some(voices.clone())).await;
    let (alice_id, alice) = w.person();
    let mut agents = Vec::new();
    for handle in ["ada_answers", "eve_answers"] {
        agents.push(battle_agent(&alice, handle, json!({})).await);
    }
    let (b, contenders) = battle_of(
        &alice,
        json!({"title": "Seas", "task_prompt": "Name a sea.", "battle_type": "lenser_battle", "max_contenders": 3}),
        [
            ("Ada", "ai_agent", agents[0].clone()),
            ("Eve", "ai_agent", agents[1].clone()),
            ("Alice", "human", alice_id.to_string()),
        ],
    )
    .await;
    ok(&alice, "set_battle_status", json!({"battle_id": b, "status": "open"})).await;

    // Ada's owner answers for Alice's human contender and for Eve's; Ada does not.
    for (other, kind) in [(&contenders[2], "a human"), (&contenders[1], "an ai_agent")] {
        let (_, e) =
            act(&alice, &agents[0], "answer_battle", json!({"battle_id": b, "contender_id": other})).await;
        assert_eq!(e["code"], "PERMISSION_DENIED", "{e}");
        assert_eq!(e["details"]["field"], "contender_id");
        assert!(e["message"].as_str().unwrap().contains(&format!("{kind} contender")), "{e}");
    }
    let sheet = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(sheet["submissions"], json!([]), "nothing was submitted: {sheet}");
    assert!(voices.asked.lock().unwrap().is_empty(), "the model was not asked");
    let log = ok(&alice, "list_agent_actions", json!({"ai_lenser_id": agents[0]})).await;
    assert_eq!(
        (log["items"][0]["action"].as_str(), log["items"][0]["outcome"].as_str()),
        (Some("answer_battle"), Some("failed"))
    );

    // Its own contender, named or not, it answers.
    let (failed, named) =
        act(&alice, &agents[0], "answer_battle", json!({"battle_id": b, "contender_id": contenders[0]}))
            .await;
    assert!(!failed, "{named}");
    let sheet = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    let by: Vec<(&str, &str)> = sheet["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["contender_id"].as_str().unwrap(), s["submitted_by"].as_str().unwrap()))
        .collect();
    assert_eq!(by, [(contenders[0].as_str(), agents[0].as_str())]);
    let (failed, unnamed) = act(&alice, &agents[1], "answer_battle", json!({"battle_id": b})).await;
    assert!(!failed, "{unnamed}");
}

/// DESIGN §5: an agent is the actor of every row it writes, its owner owns
/// the row. A battle and a contender made through run_agent_action answer
/// and read back with `by_agent`, the agent's id; the same tools called by
/// the owner answer it null.
#[tokio::test]
async fn what_an_agent_makes_names_it_and_what_its_owner_makes_does_not() {
    let w = World::new().await;
    let (owner, a) = w.person();
    let id = agent(&a, "maker").await;
    let patch = json!({"can_create_battles": true, "can_join_battles": true});
    ok(&a, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": patch})).await;
    for tool in ["create_battle", "add_battle_contender"] {
        ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": tool})).await;
    }

    let new = json!({"title": "The agent's duel", "task_prompt": "Name a sea."});
    let (failed, made) = act(&a, &id, "create_battle", new).await;
    assert!(!failed, "{made}");
    let made = &made["result"];
    assert_eq!(made["by_agent"].as_str(), Some(id.as_str()), "{made}");
    assert_eq!(made["creator_lenser_id"], owner.to_string(), "its owner owns it");
    let b = made["id"].as_str().unwrap().to_owned();
    let join = json!({"battle_id": b, "display_name": "Maker", "contender_type": "ai_agent", "contender_ref_id": id});
    let (failed, joined) = act(&a, &id, "add_battle_contender", join).await;
    assert!(!failed, "{joined}");
    assert_eq!(joined["result"]["by_agent"].as_str(), Some(id.as_str()), "{joined}");
    let model = json!({"battle_id": b, "display_name": "A model", "contender_type": "ai_model", "contender_ref_id": LenserId::new().to_string()});
    let by_hand = ok(&a, "add_battle_contender", model).await;
    assert_eq!(
        by_hand.get("by_agent"),
        Some(&Value::Null),
        "the owner's contender names no agent: {by_hand}"
    );

    let sheet = ok(&a, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(sheet["by_agent"].as_str(), Some(id.as_str()), "{sheet}");
    let doc = ok(&a, "fetch", json!({"id": format!("battle:{b}")})).await;
    assert_eq!(doc["metadata"]["by_agent"], id.as_str(), "its document names the agent too");
    let contenders = sheet["contenders"].as_array().unwrap();
    let agents: Vec<(&str, Option<&Value>)> =
        contenders.iter().map(|c| (c["display_name"].as_str().unwrap(), c.get("by_agent"))).collect();
    assert_eq!(agents, [("Maker", Some(&json!(id))), ("A model", Some(&Value::Null))]);

    let mine =
        ok(&a, "create_battle", json!({"title": "The owner's duel", "task_prompt": "Name a lake."})).await;
    assert_eq!(mine.get("by_agent"), Some(&Value::Null), "{mine}");
    assert_eq!(mine["creator_lenser_id"], owner.to_string());
    let got = ok(&a, "get_battle", json!({"battle_id": mine["id"]})).await;
    assert_eq!(got.get("by_agent"), Some(&Value::Null), "{got}");

    let listed = ok(&a, "list_battles", json!({"creator_lenser_id": owner.to_string()})).await;
    let listed: Vec<(&str, Option<&Value>)> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["title"].as_str().unwrap(), i.get("by_agent")))
        .collect();
    assert_eq!(
        listed,
        [("The owner's duel", Some(&Value::Null)), ("The agent's duel", Some(&json!(id)))],
        "list_battles names the agent of each battle, newest first"
    );
}

/// DESIGN: an agent is recorded as the actor of the rows it writes, its
/// owner still owning them; what a person writes names no agent.
#[tokio::test]
async fn what_an_agent_creates_and_runs_names_it_and_what_its_owner_does_does_not() {
    let w = World::new().await;
    let (alice, a) = w.person();
    let id = agent(&a, "builder").await;
    for tool in ["create_workflow", "run_workflow"] {
        ok(&a, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": tool})).await;
    }
    let blueprint = json!({"title": "Flow", "visibility": "private",
        "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                  {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}],
        "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]});

    let (failed, created) = act(&a, &id, "create_workflow", blueprint.clone()).await;
    assert!(!failed, "{created}");
    let made = &created["result"];
    assert_eq!(made["lenser_id"], alice.to_string(), "its owner owns it");
    assert_eq!(made["by_agent"], id, "the agent created it");
    let flow = made["id"].as_str().unwrap().to_owned();
    let (failed, started) = act(&a, &id, "run_workflow", json!({"workflow_id": flow})).await;
    assert!(!failed, "{started}");
    assert_eq!(started["result"]["by_agent"], id, "the agent started the run: {started}");
    let run = started["result"]["id"].as_str().unwrap().to_owned();

    let got = ok(&a, "get_workflow", json!({"workflow_id": flow})).await;
    assert_eq!((&got["by_agent"], &got["head"]["by_agent"]), (&json!(id), &json!(id)), "{got}");
    let status = ok(&a, "get_workflow_run_status", json!({"run_id": run})).await;
    assert_eq!(status["by_agent"], id, "the agent started the run: {status}");
    let doc = ok(&a, "fetch", json!({"id": format!("workflow:{flow}")})).await;
    assert_eq!(doc["metadata"]["by_agent"], id, "its document names the agent too");

    // The same tools called by the owner: by_agent null everywhere.
    let mine = ok(&a, "create_workflow", blueprint).await;
    assert!(mine["by_agent"].is_null(), "{mine}");
    let own = mine["id"].as_str().unwrap().to_owned();
    let got = ok(&a, "get_workflow", json!({"workflow_id": own})).await;
    assert!(got["by_agent"].is_null() && got["head"]["by_agent"].is_null(), "{got}");
    // Running the agent's workflow is the owner's run when the owner starts it.
    for workflow in [&own, &flow] {
        let started = ok(&a, "run_workflow", json!({"workflow_id": workflow})).await;
        assert!(started["by_agent"].is_null(), "{started}");
        let status = ok(&a, "get_workflow_run_status", json!({"run_id": started["id"]})).await;
        assert!(status["by_agent"].is_null(), "{status}");
        assert_eq!(status["status"], "pending", "nothing runs it here");
    }
    let listed = ok(&a, "list_workflow_runs", json!({"workflow_id": flow})).await;
    let by: Vec<Option<&str>> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.get("by_agent").and_then(Value::as_str))
        .collect();
    assert_eq!(by, [None, Some(id.as_str())], "the owner's run, then the agent's: {listed}");
}
