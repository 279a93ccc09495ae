//! Experiments on the server's own wiring (SQLite in memory, the real
//! resolver and the runner-side cells) against a scripted
//! OpenAI-compatible server on loopback that answers by prompt: a 50-case
//! dataset over three model profiles with two repeats gives exactly the
//! pass counts the script implies (one model always right, one wrong on
//! every fifth case, one wrong on odd cases and failing with 500s on one);
//! results filter by contender, tag and pass; a budget stops the cells;
//! cancelling stops them; two lensers see what the visibility rules let
//! them; bad assertions are reported by their place with nothing saved.

#[path = "support/fake_models.rs"]
mod fake_models;

#[path = "support/calls.rs"]
mod calls;

#[path = "support/world.rs"]
mod world;

use std::time::Duration;

use calls::{err, ok, until};
use fake_models::{FakeModels, Step};
use lf_core::LenserId;
use lf_tools::LfServer;
use serde_json::{Value, json};
use world::{World, endpoint};

async fn world(fake: &FakeModels) -> World {
    World::start(vec![endpoint(fake, "one", 6, 5)], Duration::from_secs(3)).await
}

/// The case number of a prompt `Question 17?`.
fn number(prompt: &str) -> u32 {
    prompt.trim_start_matches("Question ").trim_end_matches('?').parse().unwrap_or(0)
}

/// Always right.
fn right(prompt: &str) -> Step {
    Step::answer(&format!("Answer {}", number(prompt)))
}

/// Wrong on every fifth case.
fn fifths_wrong(prompt: &str) -> Step {
    let n = number(prompt);
    if n.is_multiple_of(5) { Step::answer("No idea") } else { Step::answer(&format!("Answer {n}")) }
}

/// Right on even cases, wrong on odd ones, and case 7 always a 500.
fn odd_wrong(prompt: &str) -> Step {
    match number(prompt) {
        7 => Step::Status(500),
        n if n.is_multiple_of(2) => Step::slow(&format!("Answer {n}"), 5),
        _ => Step::answer("Something else"),
    }
}

/// Right but for cases 41 to 50: the change a second experiment catches.
fn right_until_forty(prompt: &str) -> Step {
    match number(prompt) {
        n @ 41..=50 => Step::answer(&format!("Answer {}", n + 1)),
        n => Step::answer(&format!("Answer {n}")),
    }
}

/// Slow: for cancelling.
fn slow(prompt: &str) -> Step {
    Step::slow(&format!("Answer {}", number(prompt)), 150)
}

/// A profile of `s`'s on the fake: its id.
async fn profile(s: &LfServer, name: &str, model: &str) -> String {
    let made = ok(s, "create_model_profile", json!({"name": name, "endpoint": "one", "model": model})).await;
    made["profile_id"].as_str().unwrap().to_owned()
}

/// How a scripted model answers a prompt.
type Script = fn(&str) -> Step;

/// A fake answering each model of `models` by prompt.
fn scripted(models: &[(&str, Script)]) -> FakeModels {
    let fake = FakeModels::start();
    for (model, answer) in models {
        fake.by_prompt(model, *answer);
    }
    fake
}

/// A world on `fake` and a lenser of it with a profile `(name, model)` each.
async fn alice_with(fake: &FakeModels, profiles: &[(&str, &str)]) -> (World, LfServer) {
    let w = world(fake).await;
    let alice = w.server(LenserId::new());
    for (name, model) in profiles {
        profile(&alice, name, model).await;
    }
    (w, alice)
}

/// A dataset of `n` cases `Question i?` expecting `Answer i`, tagged odd or even.
async fn dataset(s: &LfServer, n: u32, visibility: &str) -> String {
    let cases: Vec<Value> = (1..=n)
        .map(|i| {
            json!({"prompt": format!("Question {i}?"), "expected": format!("Answer {i}"),
                   "tags": [if i.is_multiple_of(2) { "even" } else { "odd" }]})
        })
        .collect();
    calls::new_dataset(s, &format!("qa {n} {visibility}"), visibility, cases).await
}

fn figures(e: &Value, i: usize) -> (u64, u64, u64) {
    let c = &e["contenders"][i];
    (c["cells"].as_u64().unwrap(), c["passed"].as_u64().unwrap(), c["errors"].as_u64().unwrap())
}

async fn results(s: &LfServer, args: Value) -> Value {
    ok(s, "list_experiment_results", args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_cases_three_models_two_repeats_give_the_scripted_pass_counts() {
    let fake = scripted(&[("m-right", right), ("m-fifths", fifths_wrong), ("m-odd", odd_wrong)]);
    let (_w, alice) =
        alice_with(&fake, &[("right", "m-right"), ("fifths", "m-fifths"), ("odd", "m-odd")]).await;
    let data = dataset(&alice, 50, "private").await;
    let started = ok(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["right", "fifths", "odd"], "repeats": 2, "concurrency": 8,
               "assertions": [{"type": "equals"}, {"type": "starts_with", "value": "Answer"}]}),
    )
    .await;
    assert_eq!((started["status"].as_str(), started["cells"].as_u64()), (Some("running"), Some(300)));
    let id = started["experiment_id"].as_str().unwrap().to_owned();

    let e = until(&alice, &id, "completed", |e| e["experiment"]["status"] == "completed").await;
    assert_eq!(e["done"], 300, "{e:#}");
    assert_eq!(figures(&e, 0), (100, 100, 0), "always right: {e:#}");
    assert_eq!(figures(&e, 1), (100, 80, 0), "wrong on 10 of 50 cases, twice each: {e:#}");
    // Right on 25 even cases twice; case 7 errs twice.
    assert_eq!(figures(&e, 2), (100, 50, 2), "{e:#}");
    let right = &e["contenders"][0];
    assert_eq!((right["pass_rate"].as_f64(), right["mean_score"].as_f64()), (Some(1.0), Some(1.0)));
    let lo = right["pass_rate_95"][0].as_f64().unwrap();
    assert!((lo - 0.963).abs() < 0.001, "Wilson's lower bound of 100/100: {lo}");
    assert_eq!(right["tokens"], json!([1000, 500]));
    assert_eq!(right["credits"], 100, "15 tokens a cell, one credit each");
    assert!(right["latency_p50_ms"].as_u64().is_some() && right["latency_p95_ms"].as_u64().is_some());
    assert_eq!(
        e["contenders"][2]["mean_score"].as_f64(),
        Some(0.5),
        "both assertions on 50 cells, none on 50"
    );

    // Each cell asked once; case 7 on the failing model: 3 attempts of
    // the client's call and its one retry, twice.
    assert_eq!((fake.asked("m-right"), fake.asked("m-fifths")), (100, 100));
    assert_eq!(fake.asked("m-odd"), 98 + 2 * 3 * 2);

    let failed =
        results(&alice, json!({"experiment_id": id, "contender": 1, "passed": false, "limit": 100})).await;
    assert_eq!(failed["total"], 20);
    let items = failed["items"].as_array().unwrap();
    assert!(items.iter().all(|r| r["position"].as_u64().unwrap() % 5 == 0 && r["answer"] == "No idea"));
    let first = &items[0];
    assert_eq!((first["position"].as_u64(), first["repeat"].as_u64()), (Some(5), Some(1)));
    assert_eq!(first["assertions"][0]["type"], "equals");
    assert_eq!(first["assertions"][0]["passed"], false);
    assert_eq!(first["assertions"][1]["passed"], false);
    let odd = results(&alice, json!({"experiment_id": id, "contender": 2, "tag": "odd"})).await;
    assert_eq!(odd["total"], 50, "25 odd cases, twice");
    let errors =
        results(&alice, json!({"experiment_id": id, "contender": 2, "tag": "odd", "limit": 100})).await;
    let errored: Vec<&Value> =
        errors["items"].as_array().unwrap().iter().filter(|r| !r["error"].is_null()).collect();
    assert_eq!(errored.len(), 2);
    assert!(errored.iter().all(|r| r["position"] == 7 && r["attempts"] == 3 && r["answer"].is_null()));
    let page = results(&alice, json!({"experiment_id": id, "limit": 4, "offset": 3})).await;
    let keys: Vec<(u64, u64, u64)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (r["position"].as_u64().unwrap(), r["contender"].as_u64().unwrap(), r["repeat"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(keys, [(1, 1, 2), (1, 2, 1), (1, 2, 2), (2, 0, 1)], "by case, contender, repeat");

    // Completed: nothing to cancel.
    let e = err(&alice, "cancel_experiment", json!({"experiment_id": id})).await;
    assert_eq!(e["code"], "CONFLICT", "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_budget_and_a_cancel_stop_the_cells() {
    let fake = FakeModels::start();
    fake.by_prompt("m-right", right);
    fake.by_prompt("m-slow", slow);
    let w = world(&fake).await;
    let alice = w.server(LenserId::new());
    profile(&alice, "right", "m-right").await;
    profile(&alice, "slow", "m-slow").await;
    let data = dataset(&alice, 20, "private").await;

    // One credit a cell, one cell at a time: exactly five cells.
    let id = ok(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["right"], "concurrency": 1, "budget_credits": 5}),
    )
    .await["experiment_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let e = until(&alice, &id, "stopped at its budget", |e| e["experiment"]["status"] != "running").await;
    assert_eq!(e["experiment"]["status"], "budget_spent", "{e:#}");
    assert_eq!((e["done"].as_u64(), e["spent_credits"].as_u64()), (Some(5), Some(5)));
    assert_eq!(fake.asked("m-right"), 5);

    let id =
        ok(&alice, "run_experiment", json!({"dataset_id": data, "contenders": ["slow"], "concurrency": 1}))
            .await["experiment_id"]
            .as_str()
            .unwrap()
            .to_owned();
    until(&alice, &id, "started", |e| e["done"].as_u64() >= Some(1)).await;
    let cancelled = ok(&alice, "cancel_experiment", json!({"experiment_id": id})).await;
    assert_eq!(cancelled["status"], "cancelled");
    // The cell being asked when the cancel was seen finishes; then nothing.
    let settled = async || {
        let mut last = u64::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(800)).await;
            let e = ok(&alice, "get_experiment", json!({"experiment_id": id})).await;
            let done = e["done"].as_u64().unwrap();
            if done == last {
                return e;
            }
            last = done;
        }
    };
    let e = settled().await;
    assert_eq!(e["experiment"]["status"], "cancelled");
    let done = e["done"].as_u64().unwrap();
    assert!(done < 20, "cancelled before its end: {e:#}");
    assert_eq!(fake.asked("m-slow") as u64, done, "no cell asked after the cancel was seen");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn only_who_reads_an_experiment_sees_it_and_only_its_owner_cancels() {
    let fake = FakeModels::start();
    fake.by_prompt("m-slow", slow);
    let w = world(&fake).await;
    let (alice, bob) = (w.server(LenserId::new()), w.server(LenserId::new()));
    let slow_profile = profile(&alice, "slow", "m-slow").await;
    let data = dataset(&alice, 10, "community").await;
    let private = ok(&alice, "run_experiment", json!({"dataset_id": data, "contenders": ["slow"]})).await;
    let private = private["experiment_id"].as_str().unwrap();
    let shared = ok(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["slow"], "visibility": "community"}),
    )
    .await;
    let shared = shared["experiment_id"].as_str().unwrap();

    for (tool, args) in [
        ("get_experiment", json!({"experiment_id": private})),
        ("list_experiment_results", json!({"experiment_id": private})),
        ("cancel_experiment", json!({"experiment_id": private})),
    ] {
        let e = err(&bob, tool, args).await;
        assert_eq!(e["code"], "NOT_FOUND", "{tool}: {e}");
    }
    let seen = ok(&bob, "get_experiment", json!({"experiment_id": shared})).await;
    assert_eq!(seen["experiment"]["contenders"], json!(["slow"]));
    ok(&bob, "list_experiment_results", json!({"experiment_id": shared})).await;
    let e = err(&bob, "cancel_experiment", json!({"experiment_id": shared})).await;
    assert_eq!(e["code"], "FORBIDDEN", "{e}");
    // Bob may not use Alice's private profile as a contender.
    let e = err(&bob, "run_experiment", json!({"dataset_id": data, "contenders": [slow_profile]})).await;
    assert_eq!(e["code"], "NOT_FOUND", "{e}");
    assert!(e["message"].as_str().unwrap().starts_with("contenders[0]"), "{e}");
    for id in [private, shared] {
        ok(&alice, "cancel_experiment", json!({"experiment_id": id})).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_assertions_are_named_by_their_place_and_nothing_is_saved() {
    let fake = FakeModels::start();
    let w = world(&fake).await;
    let alice = w.server(LenserId::new());
    profile(&alice, "right", "m-right").await;
    let data = dataset(&alice, 3, "private").await;
    let before = w.services.experiments.store().running().await.unwrap().len();
    for (assertions, place, says) in [
        (json!([{"type": "equals"}, {"type": "sounds_like"}]), "assertions[1]", "unknown assertion type"),
        (json!([{"type": "regex", "pattern": "(unclosed"}]), "assertions[0]", "regular expression"),
        (json!([{"type": "json_schema", "schema": {"type": "no such type"}}]), "assertions[0]", "schema"),
        (json!([{"type": "length_range", "max": -1}]), "assertions[0]", "whole number"),
        (json!(["equals"]), "assertions[0]", "object"),
    ] {
        let e = err(
            &alice,
            "run_experiment",
            json!({"dataset_id": data, "contenders": ["right"], "assertions": assertions}),
        )
        .await;
        assert_eq!(e["code"], "INVALID_ARGUMENT", "{e}");
        assert_eq!(e["details"]["field"], place, "{e}");
        assert!(e["message"].as_str().unwrap().contains(says), "{says}: {e}");
    }
    // A case's own assertion, by its case.
    let made = ok(
        &alice,
        "create_dataset",
        json!({"name": "bad case", "cases": [{"prompt": "a"}, {"prompt": "b", "assertions": [{"type": "regex", "pattern": "["}]}]}),
    )
    .await;
    let bad = made["dataset"]["dataset_id"].as_str().unwrap();
    let e = err(&alice, "run_experiment", json!({"dataset_id": bad, "contenders": ["right"]})).await;
    assert_eq!(e["details"]["field"], "case 2 assertions[0]", "{e}");
    for (args, field) in [
        (json!({"dataset_id": data, "contenders": ["right"], "repeats": 11}), "repeats"),
        (json!({"dataset_id": data, "contenders": [LenserId::new().to_string()]}), "contenders"),
        (json!({"dataset_id": data, "contenders": ["right", "right"]}), "contenders"),
        (json!({"dataset_id": data, "contenders": ["right"], "dataset_version": 2}), "dataset_version"),
    ] {
        let e = err(&alice, "run_experiment", args).await;
        assert_eq!(e["details"]["field"], field, "{e}");
    }
    assert_eq!(w.services.experiments.store().running().await.unwrap().len(), before, "nothing saved");
    assert_eq!(fake.asked("m-right"), 0);
}

/// The judge's scripted replies, read from its prompt (lf-battle's format):
/// a rubric scores 90 an answer starting "Answer", else 20; factuality 100
/// an answer equal to the reference, else 0 (on case 7 the first reply of
/// all is not JSON, so it is asked again); pairwise 80 for an "Answer …", else 30,
/// except on case 3, where the answer shown first scores 70 and the other
/// 40 (a position bias).
fn judge(user: &str) -> Step {
    static MALFORMED_ONCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let p = lf_battle::judge::parse_prompt(user).expect("a judge prompt");
    let verdict = |slot: char, score: u32| json!({"contender": slot.to_string(), "score": score, "reasoning": format!("{slot} scored {score}.")});
    match p.criteria.first().map(|(title, _)| title.as_str()) {
        Some(title) => {
            let (slot, text) = &p.entries[0];
            let score = if title == "Rubric" {
                if text.starts_with("Answer") { 90 } else { 20 }
            } else {
                let (question, reference) = p.task.split_once("\n\nReference answer:\n").unwrap();
                if number(question) == 7 && !MALFORMED_ONCE.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    return Step::answer("I think it is right.");
                }
                if text == reference { 100 } else { 0 }
            };
            let reply = json!({"verdicts": [{"contender": slot.to_string(),
                "criteria": [{"criterion": 1, "score": score}], "reasoning": format!("Scored {score}.")}]});
            Step::answer(&reply.to_string())
        }
        None => {
            let verdicts: Vec<Value> = p
                .entries
                .iter()
                .enumerate()
                .map(|(i, (slot, text))| match (number(&p.task), i) {
                    (3, 0) => verdict(*slot, 70),
                    (3, _) => verdict(*slot, 40),
                    _ if text.starts_with("Answer") => verdict(*slot, 80),
                    _ => verdict(*slot, 30),
                })
                .collect();
            Step::answer(&json!({"verdicts": verdicts}).to_string())
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_judge_grades_rubric_factuality_and_pairwise_as_its_replies_imply() {
    let fake = scripted(&[("m-right", right), ("m-fifths", fifths_wrong), ("m-judge", judge)]);
    let (_w, alice) =
        alice_with(&fake, &[("right", "m-right"), ("fifths", "m-fifths"), ("grader", "m-judge")]).await;
    let data = dataset(&alice, 10, "private").await;
    let assertions = json!([
        {"type": "rubric", "rubric": "Gives the answer's number.", "threshold": 0.6},
        {"type": "factuality"},
        {"type": "pairwise", "baseline": 1},
    ]);
    // Graded assertions need a judge; a baseline must be a contender.
    let e = err(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["right", "fifths"], "assertions": assertions}),
    )
    .await;
    assert_eq!(
        (e["code"].as_str(), e["details"]["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("judge")),
        "{e}"
    );
    let e = err(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["right"], "judge": "grader", "assertions": [{"type": "pairwise", "baseline": 1}]}),
    )
    .await;
    assert_eq!(e["details"]["field"], "assertions[0]", "{e}");
    let e = err(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["right", "fifths"], "judge": LenserId::new().to_string(), "assertions": assertions}),
    )
    .await;
    assert_eq!(
        (e["code"].as_str(), e["details"]["field"].as_str()),
        (Some("NOT_FOUND"), Some("judge")),
        "{e}"
    );

    let started = ok(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["right", "fifths"], "judge": "grader", "assertions": assertions, "concurrency": 1}),
    )
    .await;
    let id = started["experiment_id"].as_str().unwrap().to_owned();
    let e = until(&alice, &id, "completed", |e| e["experiment"]["status"] == "completed").await;
    // Right: rubric and factuality pass everywhere; pairwise against
    // fifths is preferred on cases 5 and 10 and a tie (0.5) elsewhere.
    assert_eq!(figures(&e, 0), (10, 2, 0), "{e:#}");
    let mean = e["contenders"][0]["mean_score"].as_f64().unwrap();
    // A cell's score is its outcomes' mean, graded ones at the judge's
    // score: (0.9 + 1 + 1) / 3 on cases 5 and 10, (0.9 + 1 + 0.5) / 3 elsewhere.
    assert!((mean - (2.0 * 2.9 / 3.0 + 8.0 * 2.4 / 3.0) / 10.0).abs() < 1e-3, "{mean}");
    // Fifths (the baseline: no pairwise of its own) fails both on 5 and 10.
    assert_eq!(figures(&e, 1), (10, 8, 0), "{e:#}");
    let mean = e["contenders"][1]["mean_score"].as_f64().unwrap();
    assert!((mean - (8.0 * 0.95 + 2.0 * 0.1) / 10.0).abs() < 1e-3, "{mean}");
    // 4 judge calls a cell of right, 2 of fifths, and one asked again.
    assert_eq!(fake.asked("m-judge"), 10 * 4 + 10 * 2 + 1);
    assert_eq!((fake.asked("m-right"), fake.asked("m-fifths")), (10, 10));
    // Each cell's credits: its answer's and each judgement's (15 tokens, 1 credit).
    assert_eq!(
        (e["contenders"][0]["credits"].as_u64(), e["contenders"][1]["credits"].as_u64()),
        (Some(40), Some(30))
    );

    let cells = results(&alice, json!({"experiment_id": id, "contender": 0, "limit": 10})).await;
    let items = cells["items"].as_array().unwrap();
    let three = &items[2]["assertions"];
    assert_eq!(three[0]["type"], "rubric");
    assert_eq!(three[0]["judged"]["score"], 0.9);
    assert_eq!(three[0]["judged"]["tokens"], json!([10, 5]));
    assert_eq!(three[2]["type"], "pairwise");
    assert_eq!(three[2]["judged"]["position_consistent"], false, "{three:#}");
    assert_eq!(three[2]["judged"]["score"], 0.5);
    assert!(three[2]["reason"].as_str().unwrap().contains("tied"), "{three:#}");
    let five = &items[4]["assertions"][2];
    assert_eq!(
        (five["passed"].as_bool(), five["judged"]["position_consistent"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(five["judged"]["tokens"], json!([20, 10]), "both orders");
    // The baseline's cells are asked first: its case 7 met the malformed reply.
    let all = results(&alice, json!({"experiment_id": id, "contender": 1, "limit": 10})).await;
    let seven = &all["items"][6]["assertions"][1];
    assert_eq!((seven["passed"].as_bool(), seven["judged"]["tokens"].clone()), (Some(true), json!([20, 10])));
    assert_eq!(items[6]["assertions"][1]["judged"]["tokens"], json!([10, 5]));
    let fifths = results(&alice, json!({"experiment_id": id, "contender": 1, "passed": false})).await;
    let failed = fifths["items"].as_array().unwrap();
    assert_eq!(failed.len(), 2);
    let outcomes = failed[0]["assertions"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2, "the baseline is not compared with itself");
    assert_eq!(outcomes[0]["judged"]["score"], 0.2);
    assert!(
        outcomes[0]["reason"].as_str().unwrap().starts_with("Scored 20 of 100 (below the pass mark of 60)")
    );
    assert_eq!(
        (outcomes[1]["type"].as_str(), outcomes[1]["passed"].as_bool()),
        (Some("factuality"), Some(false))
    );

    // The judge's prompts carry the answers as data, in both orders.
    let bodies = fake.requests("m-judge");
    let pairwise: Vec<&Value> = bodies
        .iter()
        .filter(|b| b["messages"][1]["content"].as_str().unwrap().contains("Contenders (2)"))
        .collect();
    assert_eq!(pairwise.len(), 20);
}

/// Runs the 50-case experiment of `contenders` with two repeats: its id,
/// once completed.
async fn completed(s: &LfServer, data: &str, contenders: Value) -> String {
    let started = ok(
        s,
        "run_experiment",
        json!({"dataset_id": data, "contenders": contenders, "repeats": 2, "concurrency": 8,
               "assertions": [{"type": "equals"}, {"type": "starts_with", "value": "Answer"}]}),
    )
    .await;
    let id = started["experiment_id"].as_str().unwrap().to_owned();
    until(s, &id, "completed", |e| e["experiment"]["status"] == "completed").await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_second_experiment_reports_exactly_the_changed_models_regressions() {
    let fake = scripted(&[("m-right", right), ("m-fifths", fifths_wrong), ("m-odd", odd_wrong)]);
    let (w, alice) =
        alice_with(&fake, &[("right", "m-right"), ("fifths", "m-fifths"), ("odd", "m-odd")]).await;
    let data = dataset(&alice, 50, "private").await;
    let bob = w.server(LenserId::new());
    let first = completed(&alice, &data, json!(["right", "fifths", "odd"])).await;
    // "right" now misses cases 41 to 50; the others answer as before.
    fake.by_prompt("m-right", right_until_forty);
    let second = completed(&alice, &data, json!(["right", "fifths", "odd"])).await;

    let c = ok(&alice, "compare_experiments", json!({"a": first, "b": second})).await;
    assert_eq!((c["paired_by"].as_str(), c["cases"].as_u64()), (Some("case_and_repeat"), Some(50)));
    assert_eq!(c["unmatched"], json!([]));
    let right = &c["contenders"][0];
    assert_eq!(right["contender"], "right");
    let regressed: Vec<Value> = (41..=50).map(|n| json!([n, 2, 0])).collect();
    assert_eq!(right["regressions"], json!(regressed), "{c:#}");
    assert_eq!(right["fixes"], json!([]));
    // 100 cell pairs, 20 pass → fail, none back: p = 2 / 2^20.
    assert_eq!(right["pairs"], json!([100, 20, 0]));
    assert_eq!(right["pass_rate"], json!([1.0, 0.8]));
    assert!((right["p_value"].as_f64().unwrap() - 2.0 / 1_048_576.0).abs() < 1e-12, "{right}");
    assert_eq!(right["significant"], true);
    // equals fails, starts_with still passes: −0.5 on 10 of 50 cases.
    assert_eq!(right["score_change"].as_f64(), Some(-0.1));
    let interval = right["score_change_95"].as_array().unwrap();
    assert!(interval[1].as_f64().unwrap() < 0.0, "{right}");
    assert_eq!(right["score_significant"], true);
    for (i, name) in [(1, "fifths"), (2, "odd")] {
        let other = &c["contenders"][i];
        assert_eq!(other["contender"], name);
        assert_eq!((&other["regressions"], &other["fixes"]), (&json!([]), &json!([])), "{other}");
        assert_eq!(other["pairs"], json!([100, 0, 0]));
        assert_eq!((other["p_value"].as_f64(), other["significant"].as_bool()), (Some(1.0), Some(false)));
        assert_eq!(
            (other["score_change"].as_f64(), other["score_significant"].as_bool()),
            (Some(0.0), Some(false))
        );
    }
    // Backwards, the same cases are fixes.
    let back = ok(&alice, "compare_experiments", json!({"a": second, "b": first})).await;
    assert_eq!(back["contenders"][0]["fixes"].as_array().unwrap().len(), 10);
    assert_eq!(back["contenders"][0]["regressions"], json!([]));

    // One contender in common, one repeat: by case majority, on the
    // first ten cases of a dataset version that has more.
    let more = ok(
        &alice,
        "add_dataset_cases",
        json!({"dataset_id": data, "cases": [{"prompt": "Question 51?", "expected": "Answer 51"}]}),
    )
    .await;
    assert_eq!(more["version"]["version"], 2, "{more}");
    let third = ok(
        &alice,
        "run_experiment",
        json!({"dataset_id": data, "contenders": ["fifths"], "assertions": [{"type": "equals"}]}),
    )
    .await["experiment_id"]
        .as_str()
        .unwrap()
        .to_owned();
    until(&alice, &third, "completed", |e| e["experiment"]["status"] == "completed").await;
    let c = ok(&alice, "compare_experiments", json!({"a": first, "b": third})).await;
    assert_eq!((c["paired_by"].as_str(), c["cases"].as_u64()), (Some("case_majority"), Some(50)));
    assert_eq!(c["unmatched"], json!(["right", "odd"]));
    assert_eq!(c["contenders"][0]["pairs"], json!([50, 0, 0]));

    // Another's private experiment is not found; another dataset is refused.
    let e = err(&bob, "compare_experiments", json!({"a": first, "b": second})).await;
    assert_eq!((e["code"].as_str(), e["details"]["field"].as_str()), (Some("NOT_FOUND"), Some("a")), "{e}");
    let other = dataset(&alice, 3, "private").await;
    let elsewhere = completed(&alice, &other, json!(["right"])).await;
    let e = err(&alice, "compare_experiments", json!({"a": first, "b": elsewhere})).await;
    assert_eq!(
        (e["code"].as_str(), e["details"]["field"].as_str()),
        (Some("INVALID_ARGUMENT"), Some("b")),
        "{e}"
    );
    assert!(e["message"].as_str().unwrap().contains("different datasets"), "{e}");
}
