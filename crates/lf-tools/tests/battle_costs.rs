//! What models' answers cost, through the catalog: an `ai_model`
//! contender's answer delivered with its cost, the AI judge's calls, and
//! the leaderboard's means (issue 34 item 4).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use lf_battle::{Answer, BattleService};
use lf_core::{
    AnswerCost, BattleId, CallStats, ChatRequest, ChatResponse, ContenderId, LenserId, LfResult,
    ModelProfileId, ModelProvider, Principal, Scopes,
};
use lf_lens::{LensService, MemoryLensStore};
use lf_model::OfflineProvider;
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use serde_json::{Value, json};

mod common;
use common::{err, ok};

/// A judge that answers as the offline provider (its stand-in verdicts),
/// reporting usage and times as an endpoint would.
struct Counted;

impl ModelProvider for Counted {
    fn name(&self) -> &str {
        "counted"
    }

    fn chat<'a, 'b>(
        &'a self,
        request: ChatRequest,
    ) -> Pin<Box<dyn Future<Output = LfResult<ChatResponse>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(async move {
            let answer = OfflineProvider.chat(request).await?;
            let stats = CallStats {
                input_tokens: Some(120),
                output_tokens: Some(30),
                finish_reason: Some("stop".into()),
                first_byte_ms: Some(5),
                total_ms: Some(9),
            };
            Ok(ChatResponse { stats, ..ChatResponse::new(answer.text, "judge-7b") })
        })
    }
}

fn asked_cost(profile: ModelProfileId) -> AnswerCost {
    AnswerCost {
        profile_id: Some(profile),
        endpoint: "ollama".into(),
        model: "llama3.2:3b".into(),
        first_byte_ms: Some(180),
        total_ms: 950,
        input_tokens: 42,
        output_tokens: 310,
        tokens_estimated: false,
        cost_usd: 0.0021,
        finish_reason: Some("stop".into()),
    }
}

#[tokio::test]
async fn answers_and_the_judge_record_what_they_cost_and_the_leaderboard_averages_it() {
    let store = lf_store::Database::connect("sqlite::memory:").await.unwrap().battle_store();
    let services = Arc::new(
        Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(BattleService::new(store))
            .workflow(common::memory_workflows())
            .connections(common::memory_connections())
            .model(Arc::new(Counted))
            .build(),
    );
    let alice = LfServer::new(
        Arc::new(Catalog::new()),
        services.clone(),
        CatalogOptions::default(),
        Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE },
    );
    let b =
        ok(&alice, "create_battle", json!({"title": "Haiku", "task_prompt": "Write a haiku about rust."}))
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
    let profile = ModelProfileId::new();
    let add = |name: &str| json!({"battle_id": b, "display_name": name, "contender_type": "ai_model", "contender_ref_id": LenserId::new().to_string()});
    let asked =
        ok(&alice, "add_battle_contender", add("Llama")).await["contender_id"].as_str().unwrap().to_owned();
    let pasted =
        ok(&alice, "add_battle_contender", add("Pasted")).await["contender_id"].as_str().unwrap().to_owned();
    for status in ["open", "executing"] {
        ok(&alice, "set_battle_status", json!({"battle_id": b, "status": status})).await;
    }
    ok(
        &alice,
        "submit_battle_run",
        json!({"battle_id": b, "contender_id": pasted, "content_text": "Red bloom on iron."}),
    )
    .await;
    // The ai_model contender's answer, as its ask delivers it (item 3):
    // the last answer, so judging starts (inline: no spawner).
    let battle_id = BattleId::parse("battle_id", &b).unwrap();
    let contender = ContenderId::parse("contender_id", &asked).unwrap();
    let answer =
        Answer::Asked { text: "Iron sleeps in rain / orange blooms".into(), cost: asked_cost(profile) };
    services.battle.deliver_answer(battle_id, contender, answer).await.unwrap();

    let score = ok(&alice, "get_battle_score", json!({"battle_id": b})).await;
    assert_eq!(score["judging"], "judged", "{score}");
    let costs = score["answer_costs"].as_array().unwrap().clone();
    assert_eq!(costs.len(), 2, "the asked answer and the judge, not the pasted one: {costs:?}");
    assert_eq!(
        costs[0],
        json!({
            "of": "submission", "contender_id": asked, "slot": "A", "profile_id": profile.to_string(),
            "endpoint": "ollama", "model": "llama3.2:3b",
            "latency_ms": {"first_byte": 180, "total": 950},
            "tokens": {"input": 42, "output": 310, "estimated": false},
            "cost_usd": 0.0021, "finish_reason": "stop", "at": costs[0]["at"].clone(),
        })
    );
    // Two orders, one call each: their usage and times added up.
    let judge = &costs[1];
    assert_eq!(
        (&judge["of"], &judge["contender_id"], &judge["slot"]),
        (&json!("judge"), &Value::Null, &Value::Null)
    );
    assert_eq!((&judge["endpoint"], &judge["model"]), (&json!("default"), &json!("judge-7b")));
    assert_eq!(judge["tokens"], json!({"input": 240, "output": 60, "estimated": false}));
    assert_eq!(judge["latency_ms"], json!({"first_byte": 5, "total": 18}));
    assert_eq!((&judge["cost_usd"], &judge["finish_reason"]), (&json!(0.0), &json!("stop")));
    let battle = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(battle["answer_costs"], json!(costs), "get_battle shows the same");

    ok(&alice, "set_battle_status", json!({"battle_id": b, "status": "closed", "confirm": true})).await;
    let board = ok(&alice, "get_leaderboard", json!({"min_battles": 1})).await;
    let row = |name: &str| {
        let mut all =
            board["items"].as_array().unwrap().iter().chain(board["unrated_contenders"].as_array().unwrap());
        all.find(|&r| r["display_name"] == name).cloned().unwrap_or_else(|| panic!("{name} in {board}"))
    };
    assert_eq!(
        row("Llama")["costs"],
        json!({"answers": 1, "mean_cost_usd": 0.0021, "mean_latency_ms": 950.0})
    );
    assert!(row("Pasted").get("costs").is_none(), "no model answer, no costs");
    let missing = err(&alice, "get_battle_score", json!({"battle_id": BattleId::new().to_string()})).await;
    assert_eq!(missing["code"], "NOT_FOUND");
}
