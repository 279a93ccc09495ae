//! Every battle rule through the catalog: a tool called by name with JSON
//! arguments (`LfServer::call`), a structured result or an error code out.
//! The store is built by [`battle_store`] alone, so the same tests can run
//! over another `BattleStore`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lf_battle::{BattleService, BattleStore};
use lf_core::{
    BattleId, ChatRequest, ChatResponse, ContenderId, LenserId, LfError, LfResult, ModelProvider,
    OFFLINE_MODEL_NAME, Principal, Scopes,
};
use lf_lens::{LensService, MemoryLensStore};
use lf_model::OfflineProvider;
use lf_tools::{Catalog, CatalogOptions, Group, LfServer, Reaches, Services};
use serde_json::{Value, json};

mod common;
use common::{err, ok};

/// The store every test runs on: a fresh in-memory SQLite database through
/// lf-store (the in-memory store passes the same contract suite).
async fn battle_store() -> Arc<dyn BattleStore> {
    lf_store::Database::connect("sqlite::memory:").await.expect("an in-memory SQLite database").battle_store()
}

async fn services() -> Arc<Services> {
    Arc::new(
        Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(BattleService::new(battle_store().await))
            .workflow(common::memory_workflows())
            .connections(common::memory_connections())
            .build(),
    )
}

fn lenser() -> (LenserId, Principal) {
    let id = LenserId::new();
    (id, Principal::Lenser { id, scopes: Scopes::READ_WRITE })
}

/// A server over `services` calling as `principal`.
fn server(services: Arc<Services>, principal: Principal) -> LfServer {
    LfServer::new(Arc::new(Catalog::new()), services, CatalogOptions::default(), principal)
}

/// A new lenser on new services: its id and its server.
async fn first_lenser() -> (LenserId, LfServer) {
    let (id, p) = lenser();
    (id, server(services().await, p))
}

/// Another lenser on the services of `s`: its id and its server.
fn another(s: &LfServer) -> (LenserId, LfServer) {
    let (id, p) = lenser();
    (id, s.for_principal(p))
}

/// Alice (a lenser who creates battles) and Bob (another lenser), on one set of services.
async fn alice_and_bob() -> (LfServer, LfServer) {
    let alice = first_lenser().await.1;
    let bob = another(&alice).1;
    (alice, bob)
}

fn id(v: &Value) -> String {
    v["id"].as_str().or_else(|| v["contender_id"].as_str()).expect("an id").to_owned()
}

fn code(e: &Value) -> &str {
    e["code"].as_str().unwrap()
}

async fn create(s: &LfServer, extra: Value) -> String {
    let mut a = json!({"title": "Explain ownership", "task_prompt": "Explain Rust ownership and borrowing to a Python programmer."});
    a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    id(&ok(s, "create_battle", a).await)
}

async fn add(s: &LfServer, battle: &str, name: &str, kind: &str, reference: &str) -> Value {
    ok(
        s,
        "add_battle_contender",
        json!({"battle_id": battle, "display_name": name, "contender_type": kind, "contender_ref_id": reference}),
    )
    .await
}

fn new_ref() -> String {
    LenserId::new().to_string()
}

async fn set(s: &LfServer, battle: &str, status: &str) -> Value {
    let confirm = matches!(status, "closed" | "archived");
    let mut a = json!({"battle_id": battle, "status": status});
    if confirm {
        a["confirm"] = json!(true);
    }
    ok(s, "set_battle_status", a).await
}

async fn submit(s: &LfServer, battle: &str, contender: &str, text: &str) -> Value {
    ok(s, "submit_battle_run", json!({"battle_id": battle, "contender_id": contender, "content_text": text}))
        .await
}

/// A submission that must be refused: its error.
async fn refused_submit(s: &LfServer, battle: &str, contender: &str, text: &str) -> Value {
    err(s, "submit_battle_run", json!({"battle_id": battle, "contender_id": contender, "content_text": text}))
        .await
}

/// A battle with two AI contenders, moved to executing: its id and the contenders' ids.
async fn executing_duel(s: &LfServer, extra: Value) -> (String, String, String) {
    let b = create(s, extra).await;
    let a = id(&add(s, &b, "Model one", "ai_model", &new_ref()).await);
    let c = id(&add(s, &b, "Model two", "ai_model", &new_ref()).await);
    set(s, &b, "open").await;
    set(s, &b, "executing").await;
    (b, a, c)
}

const GOOD: &str = "Ownership: every value has one owner; borrowing lends references to a value, like Python names but checked at compile time by the borrow checker.";
const WEAK: &str = "It is about memory.";

/// Polls get_battle_score until judging is neither pending nor running (at most 5 s).
async fn judged(s: &LfServer, battle: &str) -> Value {
    for _ in 0..500 {
        let score = ok(s, "get_battle_score", json!({"battle_id": battle})).await;
        if score["judging"] != "pending" && score["judging"] != "running" {
            return score;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("battle {battle} was not judged within 5 s");
}

// ---------------------------------------------------------------- lifecycle

#[tokio::test]
async fn lifecycle_and_its_codes() {
    let (alice, bob) = alice_and_bob().await;
    let b = ok(
        &alice,
        "create_battle",
        json!({"title": "  Haiku duel ", "task_prompt": "Write a haiku about Rust."}),
    )
    .await;
    assert_eq!(
        (&b["status"], &b["battle_type"], &b["judging_mode"], &b["max_contenders"], &b["title"]),
        (&json!("draft"), &json!("ai_vs_ai"), &json!("ai_judge"), &json!(2), &json!("Haiku duel"))
    );
    let b = id(&b);
    assert_eq!(
        code(&err(&bob, "get_battle", json!({"battle_id": b})).await),
        "NOT_FOUND",
        "a draft is its creator's"
    );
    let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": "executing"})).await;
    assert_eq!(code(&e), "INVALID_TRANSITION");
    set(&alice, &b, "open").await;
    let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": "executing"})).await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "fewer than two contenders");
    add(&alice, &b, "One", "ai_model", &new_ref()).await;
    add(&alice, &b, "Two", "ai_agent", &new_ref()).await;
    let e = err(&bob, "set_battle_status", json!({"battle_id": b, "status": "executing"})).await;
    assert_eq!(code(&e), "FORBIDDEN", "only the creator moves a battle");
    let e =
        err(&bob, "set_battle_status", json!({"battle_id": b, "status": "archived", "confirm": true})).await;
    assert_eq!(code(&e), "FORBIDDEN");
    let moved = set(&alice, &b, "executing").await;
    assert_eq!((&moved["battle_id"], &moved["status"]), (&json!(b), &json!("executing")));
    let e =
        err(&alice, "set_battle_status", json!({"battle_id": b, "status": "closed", "confirm": true})).await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "executing never closes directly");
    let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": "archived"})).await;
    assert_eq!(code(&e), "CONFIRMATION_REQUIRED");
    let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": "archived", "confirm": false}))
        .await;
    assert_eq!(code(&e), "CONFIRMATION_REQUIRED");
    assert_eq!(ok(&bob, "get_battle", json!({"battle_id": b})).await["status"], "executing");
    set(&alice, &b, "archived").await;
    for to in ["open", "executing", "voting", "scoring", "published"] {
        let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": to})).await;
        assert_eq!(code(&e), "INVALID_TRANSITION", "nothing leaves archived ({to})");
    }
    let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": "draft"})).await;
    assert_eq!((code(&e), &e["details"]["field"]), ("INVALID_ARGUMENT", &json!("status")));
    let listed = ok(&alice, "list_battles", json!({})).await;
    assert_eq!(listed["total"], 0, "archived battles are listed only when asked for");
    let listed = ok(&alice, "list_battles", json!({"status": "archived"})).await;
    assert_eq!((&listed["total"], &listed["items"][0]["id"]), (&json!(1), &json!(b)));
    let e = err(&alice, "get_battle", json!({"battle_id": BattleId::new().to_string()})).await;
    assert_eq!(code(&e), "NOT_FOUND");
}

#[tokio::test]
async fn lists_filter_and_page() {
    let (alice, bob) = alice_and_bob().await;
    let a1 = create(&alice, json!({})).await;
    let a2 = create(&alice, json!({"battle_type": "human_vs_ai", "max_contenders": 3})).await;
    set(&alice, &a2, "open").await;
    let b1 = create(&bob, json!({"battle_type": "workflow_battle"})).await;
    set(&bob, &b1, "open").await;
    let mine = ok(&alice, "list_battles", json!({})).await;
    let ids: Vec<&str> =
        mine["items"].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [b1.as_str(), a2.as_str(), a1.as_str()], "newest first; Bob's draft-free battles only");
    let page = ok(&alice, "list_battles", json!({"limit": 1, "offset": 1})).await;
    assert_eq!(
        (&page["total"], &page["limit"], &page["offset"], &page["has_more"]),
        (&json!(3), &json!(1), &json!(1), &json!(true))
    );
    assert_eq!(page["items"][0]["id"], a2);
    let open = ok(&bob, "list_battles", json!({"status": "open"})).await;
    assert_eq!(open["total"], 2);
    let typed = ok(&bob, "list_battles", json!({"battle_type": "human_vs_ai"})).await;
    assert_eq!((&typed["total"], &typed["items"][0]["contender_count"]), (&json!(1), &json!(0)));
    let bobs = ok(
        &alice,
        "list_battles",
        json!({"creator_lenser_id": bob.principal().lenser().unwrap().to_string()}),
    )
    .await;
    assert_eq!((&bobs["total"], &bobs["items"][0]["id"]), (&json!(1), &json!(b1)));
}

// ---------------------------------------------------------------- contenders

#[tokio::test]
async fn slots_are_given_in_order_until_full() {
    let (alice, bob) = alice_and_bob().await;
    let b = create(&alice, json!({"max_contenders": 26})).await;
    for n in 0..26u8 {
        let c = add(&alice, &b, &format!("Model {n}"), "ai_model", &new_ref()).await;
        assert_eq!(c["slot_label"], char::from(b'A' + n).to_string());
        assert_eq!(c["battle_id"], b);
    }
    let e = err(
        &alice,
        "add_battle_contender",
        json!({"battle_id": b, "display_name": "One too many", "contender_type": "ai_model", "contender_ref_id": new_ref()}),
    )
    .await;
    assert_eq!(code(&e), "SLOTS_FULL");
    let sheet = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    let slots: String =
        sheet["contenders"].as_array().unwrap().iter().map(|c| c["slot"].as_str().unwrap()).collect();
    assert_eq!(slots, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");

    let d = create(&alice, json!({"max_contenders": 3})).await;
    set(&alice, &d, "open").await;
    let add_as = |slot: &str| json!({"battle_id": d, "display_name": "X", "contender_type": "ai_agent", "contender_ref_id": new_ref(), "slot": slot});
    let e = err(&alice, "add_battle_contender", add_as("B")).await;
    assert_eq!((code(&e), &e["details"]["field"]), ("INVALID_ARGUMENT", &json!("slot")));
    assert_eq!(ok(&alice, "add_battle_contender", add_as("A")).await["slot_label"], "A");
    let e = err(&bob, "add_battle_contender", add_as("B")).await;
    assert_eq!(code(&e), "FORBIDDEN", "only the creator adds contenders");
    let twice = new_ref();
    add(&alice, &d, "Same", "ai_model", &twice).await;
    let e = err(
        &alice,
        "add_battle_contender",
        json!({"battle_id": d, "display_name": "Same again", "contender_type": "ai_model", "contender_ref_id": twice}),
    )
    .await;
    assert_eq!((code(&e), &e["details"]["field"]), ("INVALID_ARGUMENT", &json!("contender_ref_id")));
    set(&alice, &d, "executing").await;
    let e = err(&alice, "add_battle_contender", add_as("C")).await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "contenders join in draft or open only");
}

#[tokio::test]
async fn contender_types_follow_the_battle_type() {
    let (alice, _) = alice_and_bob().await;
    let refused = |battle: &str, kind: &str| json!({"battle_id": battle, "display_name": "Wrong", "contender_type": kind, "contender_ref_id": new_ref()});
    for (battle_type, allowed, refused_types) in [
        ("ai_vs_ai", &["ai_model", "ai_agent"][..], &["human", "workflow"][..]),
        ("human_vs_human_ai_votes", &["human"][..], &["ai_model", "ai_agent", "workflow"][..]),
        ("human_vs_human_open_votes", &["human"][..], &["ai_model", "workflow"][..]),
        ("workflow_battle", &["workflow"][..], &["human", "ai_agent"][..]),
        ("lenser_battle", &["human", "ai_agent"][..], &["ai_model", "workflow"][..]),
    ] {
        let b = create(&alice, json!({"battle_type": battle_type, "max_contenders": 4})).await;
        for kind in refused_types {
            let e = err(&alice, "add_battle_contender", refused(&b, kind)).await;
            assert_eq!(
                (code(&e), &e["details"]["field"]),
                ("INVALID_ARGUMENT", &json!("contender_type")),
                "{battle_type} {kind}"
            );
        }
        for kind in allowed {
            let c = add(&alice, &b, "Right", kind, &new_ref()).await;
            assert_eq!(c["contender_type"], *kind);
        }
    }

    // human_vs_ai needs a human and an AI before it executes.
    let b = create(&alice, json!({"battle_type": "human_vs_ai", "max_contenders": 3})).await;
    add(&alice, &b, "Ann", "human", &new_ref()).await;
    add(&alice, &b, "Ben", "human", &new_ref()).await;
    let e = err(&alice, "add_battle_contender", refused(&b, "human")).await;
    assert_eq!(code(&e), "INVALID_ARGUMENT", "the last slot is kept for the AI");
    set(&alice, &b, "open").await;
    let e = err(&alice, "set_battle_status", json!({"battle_id": b, "status": "executing"})).await;
    assert_eq!(code(&e), "INVALID_TRANSITION");
    assert!(e["message"].as_str().unwrap().contains("one human and one AI"), "{e}");
    add(&alice, &b, "Model", "ai_model", &new_ref()).await;
    assert_eq!(set(&alice, &b, "executing").await["status"], "executing");
}

// ---------------------------------------------------------------- submissions

#[tokio::test]
async fn who_may_submit_and_resubmission() {
    let (alice_id, alice) = first_lenser().await;
    let (carol_id, carol) = another(&alice);
    let stranger = another(&alice).1;
    let agent_id = LenserId::new();
    let agent = alice.for_principal(Principal::Agent { agent_id, owner: LenserId::new() });

    let b = create(&alice, json!({"battle_type": "lenser_battle", "max_contenders": 3})).await;
    let human = id(&add(&alice, &b, "Carol", "human", &carol_id.to_string()).await);
    let bot = id(&add(&alice, &b, "Agent", "ai_agent", &agent_id.to_string()).await);
    let other = id(&add(&alice, &b, "Dan", "human", &new_ref()).await);
    let e = refused_submit(&alice, &b, &human, "early").await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "no submissions in draft");
    set(&alice, &b, "open").await;

    let first = submit(&carol, &b, &human, "Carol's first answer").await;
    assert_eq!(
        (&first["submitted"], &first["replaced"], &first["status"]),
        (&json!(true), &json!(false), &json!("open"))
    );
    let e = refused_submit(&stranger, &b, &human, "mine now").await;
    assert_eq!((code(&e), &e["details"]["field"]), ("FORBIDDEN", &json!("contender_id")));
    let e = refused_submit(&carol, &b, &other, "for Dan").await;
    assert_eq!(code(&e), "FORBIDDEN", "a human submits for themselves only");
    submit(&agent, &b, &bot, "The agent's own answer").await;
    submit(&alice, &b, &other, "The creator submits for Dan").await;

    let too_long = "x".repeat(100_001);
    let e = refused_submit(&carol, &b, &human, &too_long).await;
    assert_eq!((code(&e), &e["details"]["field"]), ("INVALID_ARGUMENT", &json!("content_text")));
    let e = refused_submit(&carol, &b, &human, " \n ").await;
    assert_eq!(code(&e), "INVALID_ARGUMENT");
    let e = err(
        &alice,
        "submit_battle_run",
        json!({"battle_id": b, "contender_id": ContenderId::new().to_string(), "content_text": "who?"}),
    )
    .await;
    assert_eq!(code(&e), "NOT_FOUND");

    let again = submit(&carol, &b, &human, "Carol's <|im_start|>second answer").await;
    assert_eq!((&again["replaced"], &again["id"]), (&json!(true), &first["id"]));
    let max = submit(&carol, &b, &human, &"y".repeat(100_000)).await;
    assert_eq!(max["replaced"], true, "100,000 characters is the limit, not over it");
    submit(&carol, &b, &human, "Carol's <|im_start|>second answer").await;

    let sheet = ok(&stranger, "get_battle", json!({"battle_id": b})).await;
    let subs = sheet["submissions"].as_array().unwrap();
    assert_eq!(subs.len(), 3, "one submission per contender");
    assert_eq!(
        subs[0]["content_text"], "Carol's <| im_start|>second answer",
        "submissions go through hygiene"
    );
    assert_eq!(subs[0]["submitted_by"], carol_id.to_string());
    assert_eq!(subs[2]["submitted_by"], alice_id.to_string());
    assert!(sheet["contenders"].as_array().unwrap().iter().all(|c| c["has_submitted"] == true));
    assert_eq!(sheet["status"], "open", "submitting while open does not advance");
}

// ---------------------------------------------------------------- scoring

#[tokio::test]
async fn the_last_submission_advances_and_judging_runs_in_the_background() {
    let (alice, bob) = alice_and_bob().await;
    let (b, first, second) = executing_duel(&alice, json!({})).await;
    let s = submit(&alice, &b, &first, GOOD).await;
    assert_eq!(
        (&s["advanced"], &s["status"], &s["scoring_started"]),
        (&json!(false), &json!("executing"), &json!(false))
    );
    let s = submit(&alice, &b, &second, WEAK).await;
    assert_eq!(
        (&s["advanced"], &s["status"], &s["scoring_started"]),
        (&json!(true), &json!("scoring"), &json!(true))
    );
    let e = refused_submit(&alice, &b, &first, "late").await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "submissions freeze once scoring starts");

    let score = judged(&bob, &b).await;
    assert_eq!(score["judging"], "judged");
    let verdicts = score["ai_judge_verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2, "every contender is judged, not only A and B's pair");
    assert!(verdicts.iter().all(|v| v["model"] == OFFLINE_MODEL_NAME && v["position_consistent"] == true));
    assert_eq!((&verdicts[0]["slot"], &verdicts[0]["verdict"]), (&json!("A"), &json!("winner")));
    assert!(verdicts[0]["score"].as_f64().unwrap() > verdicts[1]["score"].as_f64().unwrap());
    assert!(verdicts[0]["reasoning"].as_str().unwrap().contains("Offline deterministic judge"));
    assert_eq!(
        ok(&bob, "get_battle", json!({"battle_id": b})).await["ai_judge_verdicts"],
        score["ai_judge_verdicts"]
    );

    let e =
        err(&bob, "set_battle_status", json!({"battle_id": b, "status": "closed", "confirm": true})).await;
    assert_eq!(code(&e), "FORBIDDEN");
    let closed = set(&alice, &b, "closed").await;
    assert_eq!((&closed["status"], &closed["winner_contender_id"]), (&json!("closed"), &json!(first)));
    let sheet = ok(&bob, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(sheet["winner_contender_id"], first);
    let standings: Vec<(Value, Value, Value)> = sheet["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["slot"].clone(), s["position"].clone(), s["rank"].clone()))
        .collect();
    assert_eq!(standings, [(json!("A"), json!(1), json!(1)), (json!("B"), json!(2), json!(2))]);
    assert!(sheet["closed_at"].is_string());
    assert_eq!(set(&alice, &b, "published").await["status"], "published");
}

#[tokio::test]
async fn answers_in_before_executing_move_it_on_when_it_executes() {
    let (alice, bob) = alice_and_bob().await;
    let b = create(&alice, json!({})).await;
    let first = id(&add(&alice, &b, "Model one", "ai_model", &new_ref()).await);
    let second = id(&add(&alice, &b, "Model two", "ai_model", &new_ref()).await);
    set(&alice, &b, "open").await;
    submit(&alice, &b, &first, GOOD).await;
    let s = submit(&alice, &b, &second, WEAK).await;
    assert_eq!((&s["advanced"], &s["status"]), (&json!(false), &json!("open")), "open: nothing moves");
    let moved = set(&alice, &b, "executing").await;
    assert_eq!(
        (&moved["status"], &moved["advanced"], &moved["scoring_started"]),
        (&json!("scoring"), &json!(true), &json!(true)),
        "{moved}"
    );
    assert_eq!(judged(&bob, &b).await["judging"], "judged");

    let (b, first, _) = executing_duel(&alice, json!({})).await;
    let moved = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(moved["status"], "executing");
    submit(&alice, &b, &first, GOOD).await;
    let still = set(&alice, &b, "archived").await;
    assert_eq!((&still["status"], &still["advanced"]), (&json!("archived"), &json!(false)));
}

#[tokio::test]
async fn moving_a_judged_battle_to_scoring_judges_it() {
    let (alice, _) = alice_and_bob().await;
    let criteria = json!([
        {"title": "Correctness", "weight": 3, "description": "Ownership, borrowing and the borrow checker are explained right."},
        {"title": "Clarity"}
    ]);
    let b = create(&alice, json!({"judging_mode": "rubric_score", "rubric": criteria, "max_contenders": 3}))
        .await;
    let first = id(&add(&alice, &b, "Model one", "ai_model", &new_ref()).await);
    let second = id(&add(&alice, &b, "Model two", "ai_model", &new_ref()).await);
    add(&alice, &b, "Model three", "ai_model", &new_ref()).await;
    set(&alice, &b, "open").await;
    set(&alice, &b, "executing").await;
    submit(&alice, &b, &first, GOOD).await;
    submit(&alice, &b, &second, WEAK).await;
    let sheet = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(sheet["status"], "executing", "the third contender has not submitted");
    let moved = set(&alice, &b, "scoring").await;
    assert_eq!((&moved["status"], &moved["scoring_started"]), (&json!("scoring"), &json!(true)));
    let score = judged(&alice, &b).await;
    let v = &score["ai_judge_verdicts"][0];
    assert_eq!(
        score["ai_judge_verdicts"].as_array().unwrap().len(),
        2,
        "only contenders who submitted are judged"
    );
    assert_eq!(v["criteria"].as_array().unwrap().len(), 2);
    assert_eq!((&v["criteria"][0]["title"], &v["criteria"][0]["weight"]), (&json!("Correctness"), &json!(3)));
    assert_eq!(sheet["rubric"][1], json!({"title": "Clarity", "weight": 1, "description": ""}));
}

#[tokio::test]
async fn automatic_checks_score_pass_and_fail() {
    let (alice, bob) = alice_and_bob().await;
    let (b, first, second) = executing_duel(
        &alice,
        json!({"judging_mode": "auto_score", "auto_check": {"kind": "exact", "expected": "42"}}),
    )
    .await;
    let hidden = ok(&bob, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(
        hidden["auto_check"],
        json!({"kind": "exact", "revealed": false}),
        "the expected answer stays secret"
    );
    let shown = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    assert_eq!(shown["auto_check"]["expected"], "42");
    submit(&alice, &b, &first, "41").await;
    submit(&alice, &b, &second, " 42\n").await;
    let score = judged(&alice, &b).await;
    let scores: Vec<(f64, &str)> = score["ai_judge_verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["score"].as_f64().unwrap(), v["model"].as_str().unwrap()))
        .collect();
    assert_eq!(scores, [(0.0, "auto_score:exact"), (100.0, "auto_score:exact")]);
    assert_eq!(set(&alice, &b, "closed").await["winner_contender_id"], second);
    assert_eq!(
        ok(&bob, "get_battle", json!({"battle_id": b})).await["auto_check"]["expected"],
        "42",
        "shown once closed"
    );

    let schema = json!({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}});
    let (b, first, second) = executing_duel(
        &alice,
        json!({"judging_mode": "auto_score", "auto_check": {"kind": "json_schema", "schema": schema}}),
    )
    .await;
    submit(&alice, &b, &first, r#"{"name": "Ada"}"#).await;
    submit(&alice, &b, &second, r#"{"name": 7}"#).await;
    let score = judged(&alice, &b).await;
    let v = score["ai_judge_verdicts"].as_array().unwrap();
    assert_eq!((v[0]["score"].as_f64(), v[1]["score"].as_f64()), (Some(100.0), Some(0.0)));
    assert!(v[1]["reasoning"].as_str().unwrap().contains("/name"), "{}", v[1]["reasoning"]);
}

/// A model server that fails its first `failures` calls, then answers as the
/// offline provider; `calls` counts every call.
#[derive(Default)]
struct Flaky {
    failures: AtomicUsize,
    calls: AtomicUsize,
}

impl ModelProvider for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }

    fn chat<'a, 'b>(
        &'a self,
        request: ChatRequest,
    ) -> Pin<Box<dyn Future<Output = LfResult<ChatResponse>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let left = self.failures.load(Ordering::SeqCst);
            if left > 0 {
                self.failures.store(left - 1, Ordering::SeqCst);
                return Err(LfError::internal("the model server is down"));
            }
            OfflineProvider.chat(request).await
        })
    }
}

#[tokio::test]
async fn a_judge_error_stays_visible_and_scoring_again_recovers() {
    let flaky = Arc::new(Flaky { failures: AtomicUsize::new(2), ..Flaky::default() });
    let services = Arc::new(
        Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(BattleService::new(battle_store().await))
            .workflow(common::memory_workflows())
            .connections(common::memory_connections())
            .model(flaky.clone())
            .build(),
    );
    assert_eq!(services.model().name(), "flaky");
    let alice = server(services, lenser().1);
    let bob = alice.for_principal(lenser().1);
    let (b, first, second) = executing_duel(&alice, json!({})).await;
    submit(&alice, &b, &first, GOOD).await;
    submit(&alice, &b, &second, WEAK).await;
    let score = judged(&bob, &b).await;
    assert_eq!(score["judging"], "failed");
    assert_eq!(score["ai_judge_verdicts"], json!([]));
    assert_eq!(score["judge_errors"].as_array().unwrap().len(), 1);
    assert!(score["next_step"].as_str().unwrap().contains("status scoring to judge it again"));
    let e =
        err(&alice, "set_battle_status", json!({"battle_id": b, "status": "closed", "confirm": true})).await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "no verdicts, no closing");
    let e = err(&bob, "set_battle_status", json!({"battle_id": b, "status": "scoring"})).await;
    assert_eq!(code(&e), "FORBIDDEN", "only the creator has a battle judged again");

    let again = set(&alice, &b, "scoring").await;
    assert_eq!((&again["status"], &again["scoring_started"]), (&json!("scoring"), &json!(true)));
    let score = judged(&bob, &b).await;
    assert_eq!(score["judging"], "judged");
    assert_eq!(score["ai_judge_verdicts"].as_array().unwrap().len(), 2);
    assert_eq!(score["judge_errors"].as_array().unwrap().len(), 1, "the failed attempt stays on record");
    assert_eq!(set(&alice, &b, "closed").await["winner_contender_id"], first);
}

// ---------------------------------------------------------------- votes

#[tokio::test]
async fn votes_rules_replace_tie_and_close_by_votes() {
    let alice = first_lenser().await.1;
    let (carol_id, carol) = another(&alice);
    let (bob, erin, fay) = (another(&alice).1, another(&alice).1, another(&alice).1);
    let nobody = alice.for_principal(Principal::Service { acting_as: None });

    let b = create(&alice, json!({"battle_type": "human_vs_human_open_votes"})).await;
    assert_eq!(ok(&alice, "get_battle", json!({"battle_id": b})).await["judging_mode"], "community_vote");
    let c_carol = id(&add(&alice, &b, "Carol", "human", &carol_id.to_string()).await);
    let c_dan = id(&add(&alice, &b, "Dan", "human", &new_ref()).await);
    set(&alice, &b, "open").await;
    set(&alice, &b, "executing").await;
    let vote = |contender: &str| json!({"battle_id": b, "contender_id": contender});
    let e = err(&bob, "cast_battle_vote", vote(&c_carol)).await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "no votes outside voting");
    submit(&carol, &b, &c_carol, "Carol's answer").await;
    let last = submit(&alice, &b, &c_dan, "Dan's answer").await;
    assert_eq!((&last["status"], &last["scoring_started"]), (&json!("voting"), &json!(false)));

    let e = err(&carol, "cast_battle_vote", vote(&c_carol)).await;
    assert_eq!((code(&e), &e["details"]["field"]), ("FORBIDDEN", &json!("contender_id")), "no self vote");
    let v = ok(
        &bob,
        "cast_battle_vote",
        json!({"battle_id": b, "contender_id": c_carol, "rationale": "Clearer."}),
    )
    .await;
    assert_eq!(
        (&v["replaced"], &v["tie"], &v["contender_id"]),
        (&json!(false), &json!(false), &json!(c_carol))
    );
    assert_eq!(v["vote_aggregates"][0]["vote_count"], 1);
    let again = ok(&bob, "cast_battle_vote", vote(&c_dan)).await;
    assert_eq!((&again["replaced"], &again["vote_id"]), (&json!(true), &v["vote_id"]));
    let counts = |v: &Value| -> Vec<u64> {
        v["vote_aggregates"].as_array().unwrap().iter().map(|a| a["vote_count"].as_u64().unwrap()).collect()
    };
    assert_eq!(counts(&again), [0, 1], "a second vote replaces the first");
    let tie = ok(&erin, "cast_battle_vote", json!({"battle_id": b, "tie": true})).await;
    assert_eq!(
        (&tie["tie"], &tie["contender_id"], &tie["tie_votes"], &tie["total_vote_count"]),
        (&json!(true), &Value::Null, &json!(1), &json!(2))
    );
    let mine = ok(&carol, "cast_battle_vote", vote(&c_dan)).await;
    assert_eq!(counts(&mine), [0, 2], "voting for someone else is fine");
    assert_eq!(mine["vote_aggregates"][1]["vote_score"], 2.0 / 3.0);

    for (a, expected) in [
        (json!({"battle_id": b}), "BAD_INPUT"),
        (json!({"battle_id": b, "tie": false}), "INVALID_ARGUMENT"),
        (json!({"battle_id": b, "contender_id": c_dan, "tie": true}), "BAD_INPUT"),
        (json!({"battle_id": b, "contender_id": ContenderId::new().to_string()}), "NOT_FOUND"),
        (json!({"battle_id": b, "contender_id": c_dan, "rationale": "r".repeat(2_001)}), "INVALID_ARGUMENT"),
        (json!({"battle_id": b, "tie": "yes"}), "INVALID_ARGUMENT"),
    ] {
        assert_eq!(code(&err(&fay, "cast_battle_vote", a.clone()).await), expected, "{a}");
    }
    assert_eq!(code(&err(&nobody, "cast_battle_vote", vote(&c_dan)).await), "MISSING_LENSER");
    let score = ok(&fay, "get_battle_score", json!({"battle_id": b})).await;
    assert_eq!(
        (counts(&score), &score["total_vote_count"], &score["judging"]),
        (vec![0, 2], &json!(3), &json!("votes"))
    );

    let moved = set(&alice, &b, "scoring").await;
    assert_eq!(moved["scoring_started"], false, "votes need no judge");
    let e = err(&bob, "cast_battle_vote", vote(&c_carol)).await;
    assert_eq!(code(&e), "INVALID_TRANSITION", "votes close with voting");
    let closed = set(&alice, &b, "closed").await;
    assert_eq!(closed["winner_contender_id"], c_dan);
    let standings = ok(&bob, "get_battle", json!({"battle_id": b})).await["standings"].clone();
    assert_eq!(
        standings[0],
        json!({"contender_id": c_dan, "slot": "B", "position": 1, "rank": 1, "score": null, "votes": 2})
    );
    assert_eq!((&standings[1]["position"], &standings[1]["rank"]), (&json!(2), &json!(2)));
}

// ---------------------------------------------------------------- history and leaderboard

/// Closes an auto_score duel of `x` and `y` (both AI model references) that `x` wins.
async fn duel_won_by(s: &LfServer, x: &str, y: &str) -> String {
    tagged_duel_won_by(s, x, y, json!([])).await
}

/// [`duel_won_by`], the battle tagged `tags`.
async fn tagged_duel_won_by(s: &LfServer, x: &str, y: &str, tags: Value) -> String {
    let b = create(
        s,
        json!({"judging_mode": "auto_score", "auto_check": {"kind": "contains", "needle": "borrow"}, "tags": tags}),
    )
    .await;
    let cx = id(&add(s, &b, "X", "ai_model", x).await);
    let cy = id(&add(s, &b, "Y", "ai_model", y).await);
    set(s, &b, "open").await;
    set(s, &b, "executing").await;
    submit(s, &b, &cy, WEAK).await;
    submit(s, &b, &cx, GOOD).await;
    judged(s, &b).await;
    assert_eq!(set(s, &b, "closed").await["winner_contender_id"], cx);
    b
}

#[tokio::test]
async fn leaderboard_rates_closed_battles() {
    let (alice, bob) = alice_and_bob().await;
    let (x, y) = (new_ref(), new_ref());
    let empty = ok(&bob, "get_leaderboard", json!({})).await;
    assert_eq!((&empty["total"], &empty["items"]), (&json!(0), &json!([])));
    let mut duels = Vec::new();
    for _ in 0..5 {
        duels.push(duel_won_by(&alice, &x, &y).await);
    }
    let board = ok(&bob, "get_leaderboard", json!({})).await;
    assert_eq!(
        (&board["total"], &board["battles_counted"], &board["min_battles"]),
        (&json!(2), &json!(5), &json!(5))
    );
    let top = &board["items"][0];
    assert_eq!(
        (&top["rank"], &top["contender_ref_id"], &top["contender_type"]),
        (&json!(1), &json!(x), &json!("ai_model"))
    );
    assert_eq!((&top["battles"], &top["wins"], &top["losses"]), (&json!(5), &json!(5), &json!(0)));
    // Five duels that all ended the same way: every bootstrap resample is
    // the same, so there is no interval to give (not a zero-width one).
    assert!(top["rating"].as_f64().unwrap() > 1000.0, "{top}");
    assert_eq!((&top["lower"], &top["upper"]), (&Value::Null, &Value::Null), "{top}");
    assert!(board["items"][1]["rating"].as_f64().unwrap() < 1000.0);
    let page = ok(&bob, "get_leaderboard", json!({"limit": 1, "offset": 1})).await;
    assert_eq!(
        (&page["items"][0]["contender_ref_id"], &page["items"][0]["rank"], &page["has_more"]),
        (&json!(y), &json!(2), &json!(false))
    );
    let strict = ok(&bob, "get_leaderboard", json!({"min_battles": 6})).await;
    assert_eq!((&strict["total"], &strict["unrated"]), (&json!(0), &json!(2)));
    let waiting: Vec<(&Value, &Value, &Value)> = strict["unrated_contenders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (&u["contender_ref_id"], &u["battles"], &u["battles_needed"]))
        .collect();
    assert_eq!(waiting.len(), 2, "{strict}");
    assert!(
        waiting.iter().all(|(_, battles, needed)| (*battles, *needed) == (&json!(5), &json!(1))),
        "{strict}"
    );
    let other = ok(&bob, "get_leaderboard", json!({"battle_type": "human_vs_ai", "min_battles": 1})).await;
    assert_eq!((&other["total"], &other["battles_counted"]), (&json!(0), &json!(0)));
    for a in [json!({"min_battles": 0}), json!({"limit": 101}), json!({"battle_type": "chess"})] {
        assert_eq!(code(&err(&bob, "get_leaderboard", a.clone()).await), "INVALID_ARGUMENT", "{a}");
    }
    // The leaderboard is kept between calls, and rated again once a battle
    // leaves: the archived duel no longer counts.
    assert_eq!(ok(&bob, "get_leaderboard", json!({})).await, board);
    set(&alice, &duels[0], "archived").await;
    let after = ok(&bob, "get_leaderboard", json!({})).await;
    assert_eq!((&after["battles_counted"], &after["unrated"]), (&json!(4), &json!(2)), "{after}");

    // Another outcome gives the resamples something to vary: intervals.
    duel_won_by(&alice, &y, &x).await;
    let varied = ok(&bob, "get_leaderboard", json!({})).await;
    assert_eq!(varied["total"], 2, "{varied}");
    for item in varied["items"].as_array().unwrap() {
        let (lower, rating, upper) = (
            item["lower"].as_f64().unwrap(),
            item["rating"].as_f64().unwrap(),
            item["upper"].as_f64().unwrap(),
        );
        assert!(lower < upper && lower <= rating && rating <= upper, "{item}");
    }

    // The winning answer was always the one that says "borrow": with its
    // length and markdown as covariates, the style takes some of the credit,
    // and the result says style control was on.
    assert_eq!(varied["style_control"], json!({"on": false}));
    let styled = ok(&bob, "get_leaderboard", json!({"style_control": true})).await;
    assert_eq!(
        (&styled["style_control"]["on"], &styled["style_control"]["comparisons"]),
        (&json!(true), &json!(5))
    );
    let gap = |board: &Value| {
        let items = board["items"].as_array().unwrap();
        items[0]["rating"].as_f64().unwrap() - items[1]["rating"].as_f64().unwrap()
    };
    assert!(gap(&styled) < gap(&varied), "{styled} against {varied}");
    assert_ne!(styled["style_control"]["length_elo"], json!(0.0), "{styled}");
}

#[tokio::test]
async fn the_leaderboard_rates_one_category() {
    let (alice, bob) = alice_and_bob().await;
    let (x, y) = (new_ref(), new_ref());
    for _ in 0..2 {
        tagged_duel_won_by(&alice, &x, &y, json!(["Code", "rust", "code"])).await;
        tagged_duel_won_by(&alice, &y, &x, json!(["poetry"])).await;
    }
    let all = ok(&bob, "get_leaderboard", json!({"min_battles": 1})).await;
    assert_eq!((&all["battles_counted"], &all["category"]), (&json!(4), &Value::Null));
    let coding = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "category": "code"})).await;
    assert_eq!((&coding["battles_counted"], &coding["category"]), (&json!(2), &json!("code")), "{coding}");
    assert_eq!(coding["items"][0]["contender_ref_id"], json!(x), "x won every code duel: {coding}");
    let poetry = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "category": " Poetry"})).await;
    assert_eq!((&poetry["battles_counted"], &poetry["category"]), (&json!(2), &json!("poetry")));
    assert_eq!(poetry["items"][0]["contender_ref_id"], json!(y), "{poetry}");
    let none = ok(&bob, "get_leaderboard", json!({"category": "chess"})).await;
    assert_eq!((&none["battles_counted"], &none["total"]), (&json!(0), &json!(0)));
    for tags in [json!(["a", "b", "c", "d", "e", "f"]), json!(["  "]), json!(["x".repeat(33)])] {
        let e = err(&alice, "create_battle", json!({"title": "t", "task_prompt": "p", "tags": tags})).await;
        assert_eq!((code(&e), &e["details"]["field"]), ("INVALID_ARGUMENT", &json!("tags")), "{e}");
    }
}

/// On a multi-threaded runtime (as lf-mcp-http runs) the rating runs in
/// place with block_in_place; the tests above run on a single-threaded one
/// (as lf-mcp-stdio does), where it runs on a blocking thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaderboard_on_a_multi_threaded_runtime() {
    let (alice, bob) = alice_and_bob().await;
    duel_won_by(&alice, &new_ref(), &new_ref()).await;
    let board = ok(&bob, "get_leaderboard", json!({"min_battles": 1})).await;
    assert_eq!((&board["total"], &board["battles_counted"]), (&json!(2), &json!(1)), "{board}");
}

#[tokio::test]
async fn history_covers_created_and_joined_battles() {
    let (alice_id, alice) = first_lenser().await;
    let (carol_id, carol) = another(&alice);
    let nobody = alice.for_principal(Principal::Service { acting_as: None });

    let made = duel_won_by(&alice, &new_ref(), &new_ref()).await;
    let joined = create(&alice, json!({"battle_type": "lenser_battle"})).await;
    add(&alice, &joined, "Carol", "human", &carol_id.to_string()).await;
    set(&alice, &joined, "open").await;
    let carols = ok(&carol, "get_battle_history", json!({})).await;
    assert_eq!(
        (&carols["total"], &carols["items"][0]["id"]),
        (&json!(1), &json!(joined)),
        "defaults to the caller"
    );
    let alices = ok(&carol, "get_battle_history", json!({"lenser_id": alice_id.to_string()})).await;
    assert_eq!(alices["total"], 2);
    let closed =
        ok(&carol, "get_battle_history", json!({"lenser_id": alice_id.to_string(), "status": "closed"}))
            .await;
    assert_eq!((&closed["total"], &closed["items"][0]["id"]), (&json!(1), &json!(made)));
    let e = err(&nobody, "get_battle_history", json!({})).await;
    assert_eq!((code(&e), &e["details"]["field"]), ("MISSING_LENSER", &json!("lenser_id")));
    let e = err(&carol, "get_battle_history", json!({"status": "open"})).await;
    assert_eq!(code(&e), "INVALID_ARGUMENT", "history filters by final statuses only");
}

// ---------------------------------------------------------------- bad input

#[tokio::test]
async fn bad_input_answers_its_code_and_writes_nothing() {
    let (alice, bob) = alice_and_bob().await;
    let (b, first, _) = executing_duel(&alice, json!({"max_contenders": 3})).await;
    let before = ok(&alice, "get_battle", json!({"battle_id": b})).await;
    let listed_before = ok(&alice, "list_battles", json!({"status": "draft"})).await;
    let unknown = BattleId::new().to_string();
    let create_with = |extra: Value| {
        let mut a = json!({"title": "T", "task_prompt": "P"});
        a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        a
    };
    let cases = [
        ("list_battles", json!({"limit": 0}), "INVALID_ARGUMENT"),
        ("list_battles", json!({"limit": 101}), "INVALID_ARGUMENT"),
        ("list_battles", json!({"limit": "5"}), "INVALID_ARGUMENT"),
        ("list_battles", json!({"offset": -1}), "INVALID_ARGUMENT"),
        ("list_battles", json!({"status": "finished"}), "INVALID_ARGUMENT"),
        ("list_battles", json!({"creator_lenser_id": "me"}), "INVALID_ARGUMENT"),
        ("get_battle", json!({"battle_id": "nope"}), "INVALID_ARGUMENT"),
        ("get_battle", json!({"battle_id": 7}), "INVALID_ARGUMENT"),
        ("get_battle", json!({}), "INVALID_ARGUMENT"),
        ("get_battle", json!({"battle_id": b, "extra": 1}), "INVALID_ARGUMENT"),
        ("get_battle", json!({"battle_id": unknown}), "NOT_FOUND"),
        ("get_battle_score", json!({"battle_id": unknown}), "NOT_FOUND"),
        ("get_battle_history", json!({"lenser_id": "x"}), "INVALID_ARGUMENT"),
        ("get_battle_history", json!({"limit": 1000}), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"title": ""})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"title": "t".repeat(201)})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"task_prompt": "p".repeat(32_001)})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"max_contenders": 1})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"max_contenders": 27})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"max_contenders": "2"})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"max_contenders": 2.5})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"battle_type": "chess"})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"judging_mode": "rubric_score"})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"judging_mode": "auto_score"})), "INVALID_ARGUMENT"),
        ("create_battle", create_with(json!({"rubric": [{"title": "A"}]})), "INVALID_ARGUMENT"),
        (
            "create_battle",
            create_with(json!({"judging_mode": "rubric_score", "rubric": [{"title": "A", "weight": 0}]})),
            "INVALID_ARGUMENT",
        ),
        (
            "create_battle",
            create_with(
                json!({"judging_mode": "auto_score", "auto_check": {"kind": "exact", "pattern": "x"}}),
            ),
            "INVALID_ARGUMENT",
        ),
        (
            "create_battle",
            create_with(
                json!({"judging_mode": "auto_score", "auto_check": {"kind": "regex", "pattern": "(open"}}),
            ),
            "INVALID_ARGUMENT",
        ),
        (
            "create_battle",
            create_with(
                json!({"judging_mode": "auto_score", "auto_check": {"kind": "json_schema", "schema": {"type": 5}}}),
            ),
            "INVALID_ARGUMENT",
        ),
        (
            "create_battle",
            create_with(
                json!({"judging_mode": "auto_score", "auto_check": {"kind": "length_range", "min_chars": 9, "max_chars": 3}}),
            ),
            "INVALID_ARGUMENT",
        ),
        (
            "create_battle",
            create_with(json!({"judging_mode": "community_vote", "ai_judge_model_key": "gpt"})),
            "INVALID_ARGUMENT",
        ),
        (
            "create_battle",
            create_with(json!({"battle_type": "human_vs_human_open_votes", "judging_mode": "ai_judge"})),
            "INVALID_ARGUMENT",
        ),
        (
            "add_battle_contender",
            json!({"battle_id": b, "display_name": "n".repeat(101), "contender_type": "ai_model", "contender_ref_id": new_ref()}),
            "INVALID_ARGUMENT",
        ),
        (
            "add_battle_contender",
            json!({"battle_id": b, "display_name": "N", "contender_type": "robot", "contender_ref_id": new_ref()}),
            "INVALID_ARGUMENT",
        ),
        (
            "add_battle_contender",
            json!({"battle_id": b, "display_name": "N", "contender_type": "ai_model", "contender_ref_id": "x"}),
            "INVALID_ARGUMENT",
        ),
        (
            "add_battle_contender",
            json!({"battle_id": unknown, "display_name": "N", "contender_type": "ai_model", "contender_ref_id": new_ref()}),
            "NOT_FOUND",
        ),
        (
            "add_battle_contender",
            json!({"battle_id": b, "display_name": "N", "contender_type": "ai_model", "contender_ref_id": new_ref()}),
            "INVALID_TRANSITION",
        ),
        (
            "submit_battle_run",
            json!({"battle_id": b, "contender_id": first, "content_text": "z".repeat(100_001)}),
            "INVALID_ARGUMENT",
        ),
        (
            "submit_battle_run",
            json!({"battle_id": b, "contender_id": first, "content_text": ""}),
            "INVALID_ARGUMENT",
        ),
        (
            "submit_battle_run",
            json!({"battle_id": b, "contender_id": first, "content_text": 42}),
            "INVALID_ARGUMENT",
        ),
        (
            "submit_battle_run",
            json!({"battle_id": unknown, "contender_id": first, "content_text": "a"}),
            "NOT_FOUND",
        ),
        ("set_battle_status", json!({"battle_id": b, "status": "draft"}), "INVALID_ARGUMENT"),
        (
            "set_battle_status",
            json!({"battle_id": b, "status": "archived", "confirm": "yes"}),
            "INVALID_ARGUMENT",
        ),
        (
            "set_battle_status",
            json!({"battle_id": b, "status": "closed", "confirm": true}),
            "INVALID_TRANSITION",
        ),
        ("set_battle_status", json!({"battle_id": b, "status": "open"}), "INVALID_TRANSITION"),
        ("set_battle_status", json!({"battle_id": unknown, "status": "open"}), "NOT_FOUND"),
        ("cast_battle_vote", json!({"battle_id": b, "contender_id": first}), "INVALID_TRANSITION"),
        ("cast_battle_vote", json!({"battle_id": b, "contender_id": "A"}), "INVALID_ARGUMENT"),
        ("get_leaderboard", json!({"min_battles": 10_001}), "INVALID_ARGUMENT"),
    ];
    for (tool, a, expected) in &cases {
        let e = err(&alice, tool, a.clone()).await;
        assert_eq!(code(&e), *expected, "{tool} {a}: {e}");
    }
    for (tool, a) in [
        ("set_battle_status", json!({"battle_id": b, "status": "archived", "confirm": true})),
        ("set_battle_status", json!({"battle_id": b, "status": "voting"})),
        ("submit_battle_run", json!({"battle_id": b, "contender_id": first, "content_text": "not yours"})),
        (
            "add_battle_contender",
            json!({"battle_id": b, "display_name": "N", "contender_type": "ai_model", "contender_ref_id": new_ref()}),
        ),
    ] {
        assert_eq!(code(&err(&bob, tool, a.clone()).await), "FORBIDDEN", "{tool} by a non-creator");
    }
    assert_eq!(ok(&alice, "get_battle", json!({"battle_id": b})).await, before, "nothing was written");
    assert_eq!(
        ok(&alice, "list_battles", json!({"status": "draft"})).await,
        listed_before,
        "no battle was created"
    );
}

#[tokio::test]
async fn toolsets_and_read_only_select_battle_tools() {
    let battle_only = LfServer::new(
        Arc::new(Catalog::new()),
        services().await,
        CatalogOptions { toolsets: Some(vec![Group::parse("battle").unwrap()]), ..Default::default() },
        lenser().1,
    );
    assert!(battle_only.required_scope("create_battle").is_some());
    assert!(battle_only.required_scope("create_lens").is_none());
    let read_only = LfServer::new(
        Arc::new(Catalog::new()),
        services().await,
        CatalogOptions {
            toolsets: Some(vec![Group::parse("battle").unwrap()]),
            read_only: true,
            ..Default::default()
        },
        lenser().1,
    );
    for (tool, listed) in [
        ("get_leaderboard", true),
        ("get_battle_score", true),
        ("cast_battle_vote", false),
        ("set_battle_status", false),
    ] {
        assert_eq!(read_only.required_scope(tool).is_some(), listed, "{tool}");
    }
    let refused =
        read_only.call("create_battle", common::args(json!({"title": "T", "task_prompt": "P"}))).await;
    assert!(refused.unwrap_err().message.contains("not enabled"));
}

// ---------------------------------------------------------------- what tools reach

/// openWorldHint is declared by what a tool reaches: every tool whose call
/// reached the model in a full battle's life (judging runs before the call
/// returns when no spawner is given) is declared `Reaches::Model`, and every
/// tool so declared did reach it.
#[tokio::test]
async fn the_tools_that_reach_the_model_say_so() {
    let counting = Arc::new(Flaky::default());
    let services = Arc::new(
        Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(BattleService::new(battle_store().await))
            .workflow(common::memory_workflows())
            .connections(common::memory_connections())
            .model(counting.clone())
            .build(),
    );
    let alice = server(services, lenser().1);
    let bob = alice.for_principal(lenser().1);
    let reached = std::sync::Mutex::new(std::collections::BTreeMap::<&str, bool>::new());
    let call = async |s: &LfServer, tool: &'static str, args: Value| -> Value {
        let before = counting.calls.load(Ordering::SeqCst);
        let (_, out) = common::call(s, tool, args).await;
        let after = counting.calls.load(Ordering::SeqCst);
        *reached.lock().unwrap().entry(tool).or_default() |= after > before;
        out
    };
    let b = id(&call(&alice, "create_battle", json!({"title": "Explain ownership", "task_prompt": "Explain Rust ownership and borrowing to a Python programmer."})).await);
    let mut contenders = Vec::new();
    for name in ["Model one", "Model two"] {
        let args = json!({"battle_id": b, "display_name": name, "contender_type": "ai_model", "contender_ref_id": new_ref()});
        contenders.push(id(&call(&alice, "add_battle_contender", args).await));
    }
    for status in ["open", "executing"] {
        call(&alice, "set_battle_status", json!({"battle_id": b, "status": status})).await;
    }
    for (c, text) in contenders.iter().zip([GOOD, WEAK]) {
        call(&alice, "submit_battle_run", json!({"battle_id": b, "contender_id": c, "content_text": text}))
            .await;
    }
    call(&alice, "set_battle_status", json!({"battle_id": b, "status": "scoring"})).await;
    call(&bob, "get_battle", json!({"battle_id": b})).await;
    call(&bob, "get_battle_score", json!({"battle_id": b})).await;
    call(&alice, "set_battle_status", json!({"battle_id": b, "status": "closed", "confirm": true})).await;
    call(&bob, "list_battles", json!({})).await;
    call(&bob, "get_battle_history", json!({"lenser_id": lenser().0.to_string()})).await;
    call(&bob, "get_leaderboard", json!({"min_battles": 1})).await;
    let (v, first, second) = executing_duel(&alice, json!({"judging_mode": "community_vote"})).await;
    submit(&alice, &v, &first, GOOD).await;
    submit(&alice, &v, &second, WEAK).await;
    call(&bob, "cast_battle_vote", json!({"battle_id": v, "contender_id": first})).await;

    let reached = reached.into_inner().unwrap();
    let catalog = Catalog::new();
    let battle_tools: Vec<_> = catalog.tools().iter().filter(|t| t.group.id == "battle").collect();
    assert_eq!(reached.len(), battle_tools.len(), "every battle tool was called: {reached:?}");
    for tool in battle_tools {
        assert_eq!(
            tool.open_world(),
            reached[tool.name],
            "{}: declared {:?} but {} the model",
            tool.name,
            tool.reaches,
            if reached[tool.name] { "reached" } else { "never reached" }
        );
    }
    // Outside the Battle group, only the tools that start workflow runs
    // reach out (whatever a run's steps reach), run_agent_action, which
    // calls whichever tool the agent was granted, and
    // refresh_connection_tools, which asks an outside MCP server.
    for tool in catalog.tools().iter().filter(|t| t.open_world() && t.group.id != "battle") {
        let group = if tool.group.id == "agent" {
            assert!(["run_agent_action", "start_agent_team_run"].contains(&tool.name), "{}", tool.name);
            "agent"
        } else if tool.group.id == "connections" {
            // Listing an outside MCP server's tools asks that server.
            assert_eq!(tool.name, "refresh_connection_tools");
            "connections"
        } else {
            "workflow"
        };
        assert_eq!((tool.group.id, tool.reaches), (group, Reaches::Outside), "{}", tool.name);
    }
}

/// Services whose battles check contender references as the server's do
/// (lf-runner's `OwnServices` as their `ContenderRefs`), over memory
/// stores that know the lensers of `accounts`.
fn checked_services(accounts: &[LenserId]) -> Arc<Services> {
    let own = lf_runner::OwnServices::new();
    let lensers = Arc::new(lf_agent::MemoryLensers::new());
    for (i, id) in accounts.iter().enumerate() {
        lensers.add(*id, &format!("lenser_{i}"));
    }
    let services = Arc::new(
        Services::builder()
            .lens(LensService::new(Arc::new(MemoryLensStore::new())))
            .battle(
                BattleService::new(Arc::new(lf_battle::MemoryBattleStore::new()))
                    .with_contender_refs(Arc::new(own.clone())),
            )
            .workflow(common::memory_workflows())
            .connections(common::memory_connections())
            .agents(lf_agent::AgentService::new(Arc::new(lf_agent::MemoryAgentStore::new()), lensers))
            .build(),
    );
    let workflows = services.workflow.store().clone();
    own.bind(
        services.runs.clone(),
        services.battle.clone(),
        workflows,
        tokio_util::sync::CancellationToken::new(),
    );
    own.bind_agents(services.agents.clone());
    services
}

#[tokio::test]
async fn contender_references_name_what_their_type_says() {
    let (alice_id, alice_p) = lenser();
    let (bob_id, bob_p) = lenser();
    let services = checked_services(&[bob_id]);
    let (alice, bob) = (server(services.clone(), alice_p), server(services.clone(), bob_p));
    let agent = |s: &LfServer, handle: &'static str, joins: bool| {
        let s = s.clone();
        async move {
            let made = ok(&s, "create_ai_lenser", json!({"handle": handle, "display_name": "Bot"})).await;
            let id = made["ai_lenser_id"].as_str().unwrap().to_owned();
            let patch = json!({"ai_lenser_id": id, "patch": {"can_join_battles": joins}});
            ok(&s, "update_ai_lenser", patch).await;
            id
        }
    };
    let (hers, her_shy, his) = (
        agent(&alice, "alice_bot", true).await,
        agent(&alice, "alice_shy", false).await,
        agent(&bob, "bob_bot", true).await,
    );
    let his_public = common::small_workflow(&bob, "Public flow", "public").await;
    let his_private = common::small_workflow(&bob, "Private flow", "private").await;
    let lenser_battle = create(&alice, json!({"battle_type": "lenser_battle", "max_contenders": 26})).await;
    let model_battle = create(&alice, json!({"max_contenders": 26})).await;
    let workflow_battle =
        create(&alice, json!({"battle_type": "workflow_battle", "max_contenders": 26})).await;

    // What each type names joins.
    for (b, kind, reference) in [
        (&lenser_battle, "human", bob_id.to_string()),
        (&lenser_battle, "human", alice_id.to_string()),
        (&lenser_battle, "ai_agent", hers.clone()),
        (&model_battle, "ai_model", her_shy.clone()),
        (&workflow_battle, "workflow", his_public.clone()),
    ] {
        let added = add(&alice, b, "Someone", kind, &reference).await;
        assert_eq!(added["contender_ref_id"], reference.as_str());
    }

    // Anything else is NOT_FOUND naming the type, the same for someone
    // else's private one as for none, and saves nothing.
    for (b, kind, refused) in [
        (&lenser_battle, "human", his.clone()),
        (&lenser_battle, "ai_agent", his.clone()),
        (&lenser_battle, "ai_agent", her_shy.clone()),
        (&model_battle, "ai_model", his.clone()),
        (&workflow_battle, "workflow", his_private.clone()),
    ] {
        let before = ok(&alice, "get_battle", json!({"battle_id": b})).await["contenders"].clone();
        let args = |r: &str| json!({"battle_id": b, "display_name": "Someone", "contender_type": kind, "contender_ref_id": r});
        let e = err(&alice, "add_battle_contender", args(&refused)).await;
        let unknown = new_ref();
        let none = err(&alice, "add_battle_contender", args(&unknown)).await;
        assert_eq!(code(&e), "NOT_FOUND", "{kind} {refused}: {e}");
        assert_eq!(e["details"], json!({"field": "contender_ref_id", "contender_type": kind}), "{e}");
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(&format!("{kind} contender")), "{message}");
        assert_eq!(
            message.replace(&refused, "<id>"),
            none["message"].as_str().unwrap().replace(&unknown, "<id>"),
            "nothing tells {kind} {refused} from nothing"
        );
        assert_eq!(e["details"], none["details"]);
        let after = ok(&alice, "get_battle", json!({"battle_id": b})).await["contenders"].clone();
        assert_eq!(before, after, "nothing saved");
    }

    // The owner of an AI Lenser or workflow answers for it; a person for themselves.
    let owners = |sheet: &Value| -> Vec<Value> {
        sheet["contenders"].as_array().unwrap().iter().map(|c| c["owner_lenser_id"].clone()).collect()
    };
    let sheet = ok(&alice, "get_battle", json!({"battle_id": lenser_battle})).await;
    assert_eq!(
        owners(&sheet),
        [json!(bob_id.to_string()), json!(alice_id.to_string()), json!(alice_id.to_string())],
        "{sheet}"
    );
    let sheet = ok(&alice, "get_battle", json!({"battle_id": workflow_battle})).await;
    assert_eq!(owners(&sheet), [json!(bob_id.to_string())]);
    let contender = sheet["contenders"][0]["id"].as_str().unwrap().to_owned();
    set(&alice, &workflow_battle, "open").await;
    submit(&bob, &workflow_battle, &contender, "Bob answers for his workflow.").await;
}
