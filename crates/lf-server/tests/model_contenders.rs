//! ai_model contenders answering by themselves, on the server's own wiring
//! (SQLite in memory, the real resolver and runner-side asker) against a
//! scripted OpenAI-compatible server on loopback acting as two `[[models]]`
//! endpoints: answers after a 429 with Retry-After, after 500s, after a
//! hang past the timeout and after a malformed body; the battle reaches
//! scoring by itself and the AI judge (a profile on the fake) judges; a
//! contender whose model keeps failing records its error without blocking
//! the others, after exactly the attempt budget; a profile its creator may
//! no longer use is that contender's error; another lenser's private
//! profile cannot be a contender.

#[path = "support/fake_models.rs"]
mod fake_models;

#[path = "support/calls.rs"]
mod calls;

#[path = "support/world.rs"]
mod world;

use std::time::{Duration, Instant};

use calls::{call, ok};
use fake_models::{FakeModels, Step};
use lf_core::LenserId;
use lf_tools::LfServer;
use serde_json::{Value, json};
use world::{World, endpoint};

const TASK: &str = "Name one prime number.";

async fn world(fake: &FakeModels) -> World {
    World::start(vec![endpoint(fake, "one", 2, 2), endpoint(fake, "two", 2, 2)], Duration::from_secs(2)).await
}

async fn profile(s: &LfServer, name: &str, endpoint: &str, model: &str) -> String {
    let made = ok(
        s,
        "create_model_profile",
        json!({"name": name, "endpoint": endpoint, "model": model, "parameters": {"temperature": 0.3}}),
    )
    .await;
    made["profile_id"].as_str().unwrap().to_owned()
}

/// A battle of `s`'s with an ai_model contender for each profile, open:
/// its id and its contenders' ids, in slot order.
async fn entered(s: &LfServer, extra: Value, profiles: &[&str]) -> (String, Vec<String>) {
    let mut args = json!({"title": "Primes", "task_prompt": TASK, "max_contenders": profiles.len()});
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let id = ok(s, "create_battle", args).await["id"].as_str().unwrap().to_owned();
    let mut contenders = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        let c = ok(
            s,
            "add_battle_contender",
            json!({"battle_id": id, "display_name": format!("Model {i}"), "contender_type": "ai_model", "contender_ref_id": p}),
        )
        .await;
        contenders.push(c["contender_id"].as_str().unwrap().to_owned());
    }
    ok(s, "set_battle_status", json!({"battle_id": id, "status": "open"})).await;
    (id, contenders)
}

/// [`entered`], moved to executing.
async fn battle(s: &LfServer, extra: Value, profiles: &[&str]) -> (String, Vec<String>) {
    let (id, contenders) = entered(s, extra, profiles).await;
    ok(s, "set_battle_status", json!({"battle_id": id, "status": "executing"})).await;
    (id, contenders)
}

/// Reads the battle until `done` holds of it (a minute at most).
async fn until(s: &LfServer, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let b = ok(s, "get_battle", json!({"battle_id": id})).await;
        if done(&b) {
            return b;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never {what}: {b:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn submission_of<'a>(b: &'a Value, contender: &str) -> Option<&'a Value> {
    b["submissions"].as_array()?.iter().find(|s| s["contender_id"] == contender)
}

/// The contenders' answer errors, with their contenders' ids.
fn errors(b: &Value) -> Vec<(String, Value)> {
    let contenders = b["contenders"].as_array().cloned().unwrap_or_default();
    contenders
        .into_iter()
        .filter(|c| !c["answer_error"].is_null())
        .map(|c| (c["id"].as_str().unwrap_or_default().to_owned(), c["answer_error"].clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_models_on_two_endpoints_answer_and_the_judge_judges() {
    let fake = FakeModels::start();
    // 429 twice (the client's own retry too), honoured, then an answer.
    fake.script(
        "m1",
        vec![
            Step::Throttle { retry_after_secs: 1 },
            Step::Throttle { retry_after_secs: 1 },
            Step::answer("Two."),
        ],
    );
    // 500 twice, then an answer after a delay.
    fake.script("m2", vec![Step::Status(500), Step::Status(500), Step::slow("Three.", 100)]);
    // A hang past the 2 s timeout, a malformed body, then an answer.
    fake.script("m3", vec![Step::Hang(Duration::from_secs(3)), Step::Malformed, Step::answer("Five.")]);
    let verdicts = json!({"verdicts": [
        {"contender": "A", "score": 80, "reasoning": "Right."},
        {"contender": "B", "score": 70, "reasoning": "Right."},
        {"contender": "C", "score": 60, "reasoning": "Right."}]});
    fake.script("judge-m", vec![Step::answer(&verdicts.to_string())]);

    let w = world(&fake).await;
    let alice = w.server(LenserId::new());
    let p1 = profile(&alice, "first", "one", "m1").await;
    let p2 = profile(&alice, "second", "one", "m2").await;
    let p3 = profile(&alice, "third", "two", "m3").await;
    profile(&alice, "judge", "two", "judge-m").await;
    let (id, contenders) =
        battle(&alice, json!({"judging_mode": "ai_judge", "ai_judge_model_key": "judge"}), &[&p1, &p2, &p3])
            .await;

    let judged =
        until(&alice, &id, "judged", |b| b["status"] != "executing" && b["judging"] == "judged").await;
    assert_eq!(judged["status"], "scoring", "{judged:#}");
    for (c, text) in contenders.iter().zip(["Two.", "Three.", "Five."]) {
        assert_eq!(submission_of(&judged, c).unwrap()["content_text"], text, "{judged:#}");
    }
    assert!(errors(&judged).is_empty(), "{judged:#}");
    assert!(
        judged["ai_judge_verdicts"].as_array().unwrap().iter().all(|v| v["model"] == "judge-m"),
        "{judged:#}"
    );
    assert_eq!((fake.asked("m1"), fake.asked("m2"), fake.asked("m3")), (3, 3, 3));
    // What each answer cost, recorded with it: the profile, the endpoint,
    // the model it reported, times and the endpoint's usage; the judge's too.
    let costs = judged["answer_costs"].as_array().unwrap();
    assert_eq!(costs.len(), 4, "three answers and the judge: {judged:#}");
    for ((k, c), (p, endpoint, model)) in
        costs.iter().zip(&contenders).zip([(&p1, "one", "m1"), (&p2, "one", "m2"), (&p3, "two", "m3")])
    {
        assert_eq!(
            (&k["of"], &k["contender_id"], &k["profile_id"]),
            (&json!("submission"), &json!(c), &json!(p))
        );
        assert_eq!((&k["endpoint"], &k["model"]), (&json!(endpoint), &json!(model)), "{k}");
        assert_eq!(k["tokens"], json!({"input": 10, "output": 5, "estimated": false}), "{k}");
        assert!(k["latency_ms"]["first_byte"].is_u64() && k["latency_ms"]["total"].is_u64(), "{k}");
        assert_eq!(k["finish_reason"], "stop", "{k}");
    }
    assert!(costs[1]["latency_ms"]["total"].as_u64().unwrap() >= 100, "the slow answer's time: {}", costs[1]);
    assert_eq!((&costs[3]["of"], &costs[3]["model"]), (&json!("judge"), &json!("judge-m")));
    let asked = &fake.requests("m1")[0];
    assert_eq!(asked["messages"][1]["content"], TASK);
    assert!(asked["messages"][0]["content"].as_str().unwrap().contains("battle"));
    assert_eq!(
        asked["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(3.0),
        "the profile's parameters"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failing_model_records_its_error_and_blocks_nobody() {
    let fake = FakeModels::start();
    fake.script("good", vec![Step::answer("Seven.")]);
    fake.script("broken", vec![Step::Malformed]);
    fake.script("gone", vec![Step::answer("Never asked.")]);
    let w = world(&fake).await;
    let alice = w.server(LenserId::new());
    let good = profile(&alice, "good", "one", "good").await;
    let broken = profile(&alice, "broken", "two", "broken").await;
    let gone = profile(&alice, "gone", "two", "gone").await;
    let (id, contenders) = entered(&alice, json!({}), &[&good, &broken, &gone]).await;
    // Archived after it was entered: its creator may no longer use it.
    ok(&alice, "archive_model_profile", json!({"profile_id": gone, "confirm": true})).await;
    let moved = ok(&alice, "set_battle_status", json!({"battle_id": id, "status": "executing"})).await;
    let hint = moved["next_step"].as_str().unwrap();
    assert!(
        hint.contains("ai_model contenders answer by themselves") && hint.contains("answer_error"),
        "{hint}"
    );

    let b = until(&alice, &id, "answered or failed", |b| {
        submission_of(b, &contenders[0]).is_some() && errors(b).len() == 2
    })
    .await;
    assert_eq!(b["status"], "executing", "a failed contender waits for a hand: {b:#}");
    let error_of = |c: &str| errors(&b).into_iter().find(|(id, _)| id == c).unwrap().1;
    let broken_error = error_of(&contenders[1])["message"].as_str().unwrap().to_owned();
    assert!(broken_error.contains("asked 3 times"), "{broken_error}");
    assert_eq!(
        fake.asked("broken"),
        3,
        "the attempt budget, no more (a malformed body is not retried by the client)"
    );
    let gone_error = error_of(&contenders[2])["message"].as_str().unwrap().to_owned();
    assert!(gone_error.contains("could not be asked"), "{gone_error}");
    assert_eq!(fake.asked("gone"), 0);

    // As for any contender, its creator answers for it by hand; the last
    // answer moves the battle on.
    for c in &contenders[1..] {
        ok(
            &alice,
            "submit_battle_run",
            json!({"battle_id": id, "contender_id": c, "content_text": "Eleven."}),
        )
        .await;
    }
    until(&alice, &id, "scoring", |b| b["status"] != "executing").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_lensers_private_profile_cannot_be_a_contender() {
    let fake = FakeModels::start();
    let w = world(&fake).await;
    let (alice, bob) = (w.server(LenserId::new()), w.server(LenserId::new()));
    let hers = profile(&alice, "mine", "one", "m1").await;
    let id = ok(&bob, "create_battle", json!({"title": "Primes", "task_prompt": TASK})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let add = |reference: String| json!({"battle_id": id, "display_name": "Theirs", "contender_type": "ai_model", "contender_ref_id": reference});
    let (failed, theirs) = call(&bob, "add_battle_contender", add(hers.clone())).await;
    let (_, missing) = call(&bob, "add_battle_contender", add(LenserId::new().to_string())).await;
    assert!(failed, "{theirs}");
    assert_eq!((theirs["code"].as_str(), missing["code"].as_str()), (Some("NOT_FOUND"), Some("NOT_FOUND")));
    let (failed, bad) = call(&bob, "add_battle_contender", add("not-an-id".into())).await;
    assert!(failed && bad["code"] == "INVALID_ARGUMENT", "{bad}");
    assert_eq!(fake.asked("m1"), 0);
}

/// An AI Lenser of `s`'s that joins battles, answering with `model`.
async fn battle_agent(s: &LfServer, handle: &str, model: &str) -> String {
    let made = ok(s, "create_ai_lenser", json!({"handle": handle, "display_name": handle})).await;
    let id = made["ai_lenser_id"].as_str().unwrap().to_owned();
    let patch = json!({"can_join_battles": true, "model": model, "persona": "You answer in one word."});
    ok(s, "update_ai_lenser", json!({"ai_lenser_id": id, "patch": patch})).await;
    ok(s, "assign_agent_tool", json!({"ai_lenser_id": id, "tool_id": "submit_battle_run"})).await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_answers_through_its_profile_and_records_what_it_cost() {
    let fake = FakeModels::start();
    fake.script("agent-m", vec![Step::slow("Thirteen.", 50)]);
    fake.script("private-m", vec![Step::answer("Never asked.")]);
    let w = world(&fake).await;
    let (alice, bob) = (w.server(LenserId::new()), w.server(LenserId::new()));
    // One agent of hers names her profile by its name; the other names
    // his private profile by its id, which she may not use.
    let hers = profile(&alice, "worder", "two", "agent-m").await;
    let private = profile(&bob, "secretive", "one", "private-m").await;
    let ada = battle_agent(&alice, "ada_bot", "worder").await;
    let bobby = battle_agent(&alice, "bobby_bot", &private).await;
    let id = ok(&alice, "create_battle", json!({"title": "Primes", "task_prompt": TASK})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for (name, agent) in [("Ada", &ada), ("Bobby", &bobby)] {
        let add = json!({"battle_id": id, "display_name": name, "contender_type": "ai_agent", "contender_ref_id": agent});
        ok(&alice, "add_battle_contender", add).await;
    }
    for status in ["open", "executing"] {
        ok(&alice, "set_battle_status", json!({"battle_id": id, "status": status})).await;
    }
    let b = ok(&alice, "get_battle", json!({"battle_id": id})).await;
    let hint = b["next_step"].as_str().unwrap();
    assert!(hint.contains("Submit every contender's answer with submit_battle_run"), "{hint}");

    let act = |agent: &str| json!({"ai_lenser_id": agent, "action_type": "answer_battle", "metadata": {"battle_id": id}});
    ok(&alice, "run_agent_action", act(&ada)).await;
    let (failed, refused) = call(&alice, "run_agent_action", act(&bobby)).await;
    assert!(failed && refused["code"] == "NOT_FOUND", "his private profile is not hers to use: {refused}");
    assert_eq!(fake.asked("private-m"), 0, "nothing asked");

    let b = ok(&alice, "get_battle", json!({"battle_id": id})).await;
    let subs = b["submissions"].as_array().unwrap();
    assert_eq!(subs.len(), 1, "{b:#}");
    assert_eq!((&subs[0]["content_text"], &subs[0]["submitted_by"]), (&json!("Thirteen."), &json!(ada)));
    let asked = &fake.requests("agent-m")[0];
    assert_eq!(asked["messages"][0]["content"], "You answer in one word.", "its persona");
    assert_eq!(asked["messages"][1]["content"], TASK);
    assert_eq!(
        asked["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(3.0),
        "the profile's parameters"
    );
    let costs = b["answer_costs"].as_array().unwrap();
    assert_eq!(costs.len(), 1, "{b:#}");
    let k = &costs[0];
    assert_eq!(
        (&k["profile_id"], &k["endpoint"], &k["model"]),
        (&json!(hers), &json!("two"), &json!("agent-m"))
    );
    assert_eq!(k["tokens"], json!({"input": 10, "output": 5, "estimated": false}));
    assert!(k["latency_ms"]["total"].as_u64().unwrap() >= 50, "{k}");
}
