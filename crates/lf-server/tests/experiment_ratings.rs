//! Experiments' pairwise verdicts on the leaderboard, on the server's own
//! wiring (SQLite in memory, the real resolver and the runner-side cells)
//! against a scripted OpenAI-compatible server on loopback: a judge that
//! prefers model A's answers on every case moves get_leaderboard's
//! ratings exactly as that many battles won would; a category rates only
//! the cases tagged with it; another lenser's private experiment changes
//! nothing; and get_experiment's cost_usd holds the judge's dollars.

#[path = "support/fake_models.rs"]
mod fake_models;

#[path = "support/calls.rs"]
mod calls;

#[path = "support/world.rs"]
mod world;

use std::time::Duration;

use calls::{ok, until};
use fake_models::{FakeModels, Step};
use lf_battle::rating::leaderboard;
use lf_battle::{BattleResult, BattleType, ContenderRef, ContenderType, LeaderboardOptions, ResultEntry};
use lf_core::{BattleId, ContenderRefId, LenserId, Timestamp};
use lf_tools::LfServer;
use serde_json::{Value, json};
use world::{World, endpoint};

/// Model A: the expected answer.
fn right(prompt: &str) -> Step {
    Step::answer(&format!("Answer {}", prompt.trim_start_matches("Question ").trim_end_matches('?')))
}

/// Model B: never.
fn wrong(_: &str) -> Step {
    Step::answer("Something else")
}

/// The pairwise judge: 80 for an answer starting "Answer", 30 otherwise,
/// in whichever order they are shown (so always position consistent).
fn judge(user: &str) -> Step {
    let p = lf_battle::judge::parse_prompt(user).expect("a judge prompt");
    let verdicts: Vec<Value> = p
        .entries
        .iter()
        .map(|(slot, text)| {
            let score = if text.starts_with("Answer") { 80 } else { 30 };
            json!({"contender": slot.to_string(), "score": score, "reasoning": "scored"})
        })
        .collect();
    Step::answer(&json!({"verdicts": verdicts}).to_string())
}

/// A profile of `s`'s on the fake, priced per million tokens: its id.
async fn profile(s: &LfServer, name: &str, model: &str, prices: (f64, f64)) -> String {
    let made = ok(
        s,
        "create_model_profile",
        json!({"name": name, "endpoint": "one", "model": model,
               "price_per_million_input": prices.0, "price_per_million_output": prices.1}),
    )
    .await;
    made["profile_id"].as_str().unwrap().to_owned()
}

/// Six cases: 1 to 4 tagged Code, 5 and 6 poetry.
async fn dataset(s: &LfServer, visibility: &str) -> String {
    let cases: Vec<Value> = (1..=6)
        .map(
            |i| json!({"prompt": format!("Question {i}?"), "tags": [if i <= 4 { "Code" } else { "poetry" }]}),
        )
        .collect();
    calls::new_dataset(s, &format!("six {visibility}"), visibility, cases).await
}

/// Runs a, b (a judged against b) over `data` until completed: the experiment.
async fn judged_run(s: &LfServer, data: &str, visibility: &str) -> Value {
    let started = ok(
        s,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["a", "b"], "judge": "grader", "visibility": visibility,
               "assertions": [{"type": "pairwise", "baseline": 1}]}),
    )
    .await;
    let id = started["experiment_id"].as_str().unwrap().to_owned();
    until(s, &id, "completed", |e| e["experiment"]["status"] == "completed").await
}

/// The (ref id, rating, battles, wins, losses, ties) of each row.
fn rows(board: &Value) -> Vec<(String, f64, u64, u64, u64, u64)> {
    let n = |r: &Value, k: &str| r[k].as_u64().unwrap();
    board["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["contender_type"], "ai_model");
            let id = r["contender_ref_id"].as_str().unwrap().to_owned();
            (id, r["rating"].as_f64().unwrap(), n(r, "battles"), n(r, "wins"), n(r, "losses"), n(r, "ties"))
        })
        .collect()
}

/// The rating (rounded as the tool rounds) `a` gets from beating `b` in
/// `wins` battles of two.
fn as_battles(a: &str, b: &str, wins: usize) -> (f64, f64) {
    let entry = |id: &str, rank| ResultEntry {
        reference: ContenderRef {
            kind: ContenderType::AiModel,
            id: ContenderRefId::parse("id", id).unwrap(),
        },
        display_name: id.to_owned(),
        rank,
        style: None,
    };
    let results: Vec<BattleResult> = (0..wins)
        .map(|_| BattleResult {
            battle_id: BattleId::new(),
            tags: Vec::new(),
            battle_type: BattleType::AiVsAi,
            closed_at: Timestamp::from_micros(0),
            entries: vec![entry(a, 1), entry(b, 2)],
        })
        .collect();
    let board = leaderboard(&results, LeaderboardOptions::new(Some(1), None).unwrap());
    let rating = |id: &str| {
        let r = board.ratings.iter().find(|r| r.reference.id.to_string() == id).unwrap();
        (r.rating * 10.0).round() / 10.0
    };
    (rating(a), rating(b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_judge_preferring_one_model_moves_the_leaderboard_as_that_many_wins() {
    let fake = FakeModels::start();
    fake.by_prompt("m-right", right);
    fake.by_prompt("m-wrong", wrong);
    fake.by_prompt("m-judge", judge);
    let w = World::start(vec![endpoint(&fake, "one", 6, 5)], Duration::from_secs(3)).await;
    let (alice, bob) = (w.server(LenserId::new()), w.server(LenserId::new()));
    let a = profile(&alice, "a", "m-right", (100.0, 200.0)).await;
    let b = profile(&alice, "b", "m-wrong", (100.0, 200.0)).await;
    profile(&alice, "grader", "m-judge", (1_000.0, 2_000.0)).await;
    let all = json!({"min_battles": 1});
    let empty = ok(&bob, "get_leaderboard", all.clone()).await;
    assert_eq!(empty["total"], 0, "{empty:#}");

    let data = dataset(&alice, "public").await;
    let e = judged_run(&alice, &data, "community").await;
    // Each answer: 10 prompt and 5 answer tokens at 100 and 200 a million;
    // each judge call the same tokens at 1,000 and 2,000, two calls (both
    // orders) for each of a's six cells; b, the baseline, is not judged.
    let answer = 10.0 * 100.0 / 1e6 + 5.0 * 200.0 / 1e6;
    let judged = 2.0 * (10.0 * 1_000.0 / 1e6 + 5.0 * 2_000.0 / 1e6);
    let cost = |i: usize| e["contenders"][i]["cost_usd"].as_f64().unwrap();
    assert!((cost(0) - 6.0 * (answer + judged)).abs() < 1e-12, "{e:#}");
    assert!((cost(1) - 6.0 * answer).abs() < 1e-12, "{e:#}");

    // The board kept before the experiment is rated again: six wins of a
    // over b, rated exactly as six battles a won would be.
    let board = ok(&bob, "get_leaderboard", all.clone()).await;
    let (ra, rb) = as_battles(&a, &b, 6);
    assert_eq!(rows(&board), [(a.clone(), ra, 6, 6, 0, 0), (b.clone(), rb, 6, 0, 6, 0)], "{board:#}");
    assert_eq!(board["items"][0]["display_name"], "a");
    assert_eq!(board["battles_counted"], 6);
    let ai = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "battle_type": "ai_vs_ai"})).await;
    assert_eq!(rows(&ai), rows(&board), "experiments' comparisons are AI against AI");
    let human = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "battle_type": "human_vs_ai"})).await;
    assert_eq!(human["total"], 0);

    // A category rates only its cases (tags compared as battle tags are).
    let code = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "category": "code"})).await;
    let (ca, cb) = as_battles(&a, &b, 4);
    assert_eq!(rows(&code), [(a.clone(), ca, 4, 4, 0, 0), (b.clone(), cb, 4, 0, 4, 0)], "{code:#}");
    let poetry = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "category": "Poetry"})).await;
    assert_eq!(rows(&poetry).iter().map(|r| (r.3, r.4)).collect::<Vec<_>>(), [(2, 0), (0, 2)]);
    let none = ok(&bob, "get_leaderboard", json!({"min_battles": 1, "category": "chess"})).await;
    assert_eq!(none["total"], 0);

    // Bob's private experiment (his own profiles of the same models) is
    // rated for nobody: neither Alice nor Bob sees it on the board.
    profile(&bob, "a", "m-right", (0.0, 0.0)).await;
    profile(&bob, "b", "m-wrong", (0.0, 0.0)).await;
    profile(&bob, "grader", "m-judge", (0.0, 0.0)).await;
    let own = dataset(&bob, "private").await;
    judged_run(&bob, &own, "private").await;
    assert_eq!(ok(&alice, "get_leaderboard", all.clone()).await, board);
    assert_eq!(ok(&bob, "get_leaderboard", all.clone()).await, board);
}
