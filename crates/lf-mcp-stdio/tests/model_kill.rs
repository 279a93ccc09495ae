//! The built binary killed with SIGKILL while three ai_model contenders'
//! models are being asked (a scripted OpenAI-compatible server on
//! loopback, a `[[models]]` endpoint of the configuration file), then
//! started again on the same database: once the dead process's leases
//! expire the new one takes the contenders over, each contender has
//! exactly one submission, and no model was sent more requests than the
//! attempt budget allows (two here: the attempt the kill cut short, and
//! the takeover's).

#[path = "../../lf-server/tests/support/fake_models.rs"]
mod fake_models;
mod piped;

use std::time::{Duration, Instant};

use fake_models::{FakeModels, Step};
use piped::{Piped, models_home, start_on};
use serde_json::{Value, json};

const MODELS: [&str; 3] = ["k1", "k2", "k3"];

fn start(db: &str, config: &std::path::Path) -> Piped {
    start_on(db, config, "model-kill", json!({}))
}

fn submissions(b: &Value) -> Vec<Value> {
    b["submissions"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_killed_server_submits_each_model_contender_once() {
    let fake = FakeModels::start();
    for m in MODELS {
        fake.script(m, vec![Step::slow(&format!("Answer of {m}."), 1_500)]);
    }
    let dir = tempfile::tempdir().unwrap();
    let config = models_home(dir.path(), &fake.base_url());
    let db = format!("sqlite:{}", dir.path().join("asks.db").display());

    let mut first = start(&db, &config);
    let mut profiles = Vec::new();
    for m in MODELS {
        let p = first.tool("create_model_profile", json!({"name": m, "endpoint": "fake", "model": m}));
        profiles.push(p["profile_id"].as_str().unwrap().to_owned());
    }
    let battle = first.tool(
        "create_battle",
        json!({"title": "Primes", "task_prompt": "Name a prime.", "max_contenders": 3}),
    );
    let id = battle["id"].as_str().unwrap().to_owned();
    let mut contenders = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        let c = first.tool(
            "add_battle_contender",
            json!({"battle_id": id, "display_name": format!("Model {i}"), "contender_type": "ai_model", "contender_ref_id": p}),
        );
        contenders.push(c["contender_id"].as_str().unwrap().to_owned());
    }
    first.tool("set_battle_status", json!({"battle_id": id, "status": "open"}));
    first.tool("set_battle_status", json!({"battle_id": id, "status": "executing"}));
    let asked = Instant::now();
    while MODELS.iter().any(|m| fake.asked(m) == 0) {
        assert!(asked.elapsed() < Duration::from_secs(30), "the models were never asked");
        std::thread::sleep(Duration::from_millis(10));
    }
    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();
    let before: Vec<usize> = MODELS.iter().map(|m| fake.asked(m)).collect();
    assert_eq!(before, [1, 1, 1], "each model asked once before the kill");

    let mut second = start(&db, &config);
    let started = Instant::now();
    let b = loop {
        let b = second.tool("get_battle", json!({"battle_id": id}));
        if submissions(&b).len() == MODELS.len() {
            break b;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never answered: {b:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    for (c, m) in contenders.iter().zip(MODELS) {
        let of: Vec<Value> =
            submissions(&b).into_iter().filter(|s| s["contender_id"] == c.as_str()).collect();
        assert_eq!(of.len(), 1, "{b:#}");
        assert_eq!(of[0]["content_text"], format!("Answer of {m}."));
        let n = fake.asked(m);
        assert!(n <= 3, "{m} was asked {n} times, past the attempt budget");
        assert_eq!(n, 2, "{m}: the attempt the kill cut short, then the takeover's");
    }
    assert_ne!(b["status"], "executing", "the last answer moved the battle on: {b:#}");
    drop(second);
}
