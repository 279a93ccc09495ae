//! Experiments whose contenders are not model profiles, on the server's
//! own wiring (SQLite in memory, the real resolver, runner and cells)
//! against a scripted OpenAI-compatible server on loopback: an AI Lenser
//! answers with its persona as the system message and its model; a lens
//! label sent to a profile is pinned when the experiment starts (moving
//! it mid-run changes nothing; a later experiment reads the new version),
//! the fake receiving the rendered lens; a workflow's output answers and a
//! re-attempt of its cell finds the run it started; bad contenders are
//! refused naming `contenders[i]`, nothing saved.

#[path = "support/fake_models.rs"]
mod fake_models;

#[path = "support/calls.rs"]
mod calls;

#[path = "support/world.rs"]
mod world;

use std::time::Duration;

use calls::{err, ok, until};
use fake_models::{FakeModels, Step};
use lf_core::{LenserId, PageRequest, Principal, Scopes, WorkflowId};
use lf_eval::experiment::{CellKey, ExperimentId};
use lf_lens::{LabelName, LensUpdate, NewLens, SetLabel, TemplateBody, Title, VersionSelector, Visibility};
use lf_tools::LfServer;
use lf_workflow::run::{IdempotencyKey, RunFilter, StartRun};
use lf_workflow::{NewWorkflow, RawBlueprint};
use serde_json::{Value, json};
use world::{World, endpoint};

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

/// The case number of a prompt ending `Question 17?`.
fn number(prompt: &str) -> u32 {
    let tail = prompt.rsplit("Question ").next().unwrap_or_default();
    tail.trim_end_matches('?').parse().unwrap_or(0)
}

fn right(prompt: &str) -> Step {
    Step::answer(&format!("Answer {}", number(prompt)))
}

/// Answers with the prompt itself, a little slowly.
fn echo(prompt: &str) -> Step {
    Step::slow(prompt, 60)
}

async fn profile(s: &LfServer, name: &str, model: &str) {
    ok(s, "create_model_profile", json!({"name": name, "endpoint": "one", "model": model})).await;
}

/// A dataset of `n` cases `Question i?` expecting `expected(i)`.
async fn dataset(s: &LfServer, n: u32, expected: impl Fn(u32) -> String) -> String {
    let cases: Vec<Value> =
        (1..=n).map(|i| json!({"prompt": format!("Question {i}?"), "expected": expected(i)})).collect();
    let made = ok(s, "create_dataset", json!({"name": format!("qa {n}"), "cases": cases})).await;
    made["dataset"]["dataset_id"].as_str().unwrap().to_owned()
}

async fn completed(s: &LfServer, id: &str) -> Value {
    until(s, id, "completed", |e| e["experiment"]["status"] == "completed").await
}

async fn started(s: &LfServer, args: Value) -> String {
    ok(s, "run_experiment", args).await["experiment_id"].as_str().unwrap().to_owned()
}

fn figures(e: &Value, i: usize) -> (u64, u64, u64) {
    let c = &e["contenders"][i];
    (c["cells"].as_u64().unwrap(), c["passed"].as_u64().unwrap(), c["errors"].as_u64().unwrap())
}

/// Every answer of experiment `id`, with its error, by case.
async fn answers(s: &LfServer, id: &str) -> Vec<(Value, Value)> {
    let r = ok(s, "list_experiment_results", json!({"experiment_id": id, "limit": 100})).await;
    r["items"].as_array().unwrap().iter().map(|c| (c["answer"].clone(), c["error"].clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_ai_lenser_answers_with_its_persona_as_system_and_its_model() {
    let fake = FakeModels::start();
    fake.by_prompt("agent-m", right);
    let w = World::start(vec![endpoint(&fake, "one", 4, 5)], Duration::from_secs(3)).await;
    let alice = w.server(LenserId::new());
    profile(&alice, "agentp", "agent-m").await;
    let made = ok(&alice, "create_ai_lenser", json!({"handle": "ada_eval", "display_name": "Ada"})).await;
    let agent = made["ai_lenser_id"].as_str().unwrap().to_owned();
    let patch = json!({"model": "agentp", "persona": "You are Ada. Answer tersely."});
    ok(&alice, "update_ai_lenser", json!({"ai_lenser_id": agent, "patch": patch})).await;
    let data = dataset(&alice, 3, |i| format!("Answer {i}")).await;

    let by_id = format!("lenser:{agent}");
    let contenders = json!(["lenser:ada_eval", by_id]);
    let id = started(
        &alice,
        json!({"dataset_id": data, "contenders": contenders, "assertions": [{"type": "equals"}]}),
    )
    .await;
    let e = completed(&alice, &id).await;
    assert_eq!(e["experiment"]["contenders"], contenders, "named as given");
    assert_eq!((figures(&e, 0), figures(&e, 1)), ((3, 3, 0), (3, 3, 0)), "{e:#}");
    assert_eq!(e["contenders"][0]["tokens"], json!([30, 15]), "the model's usage");
    let asked = fake.requests("agent-m");
    assert_eq!(asked.len(), 6);
    for body in &asked {
        assert_eq!(body["messages"][0]["content"], "You are Ada. Answer tersely.", "its persona: {body}");
        assert!(body["messages"][1]["content"].as_str().unwrap().starts_with("Question "), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lens_label_is_pinned_to_its_version_when_the_experiment_starts() {
    let fake = FakeModels::start();
    fake.by_prompt("lens-m", echo);
    let w = World::start(vec![endpoint(&fake, "one", 4, 5)], Duration::from_secs(3)).await;
    let alice_id = LenserId::new();
    let (alice, me) = (w.server(alice_id), lenser(alice_id));
    profile(&alice, "org/lens:7b", "lens-m").await;
    let lenses = &w.services.lens;
    let new = |title: &str, body: &str| NewLens {
        title: Title::parse(title).unwrap(),
        description: None,
        body: TemplateBody::parse(body).unwrap(),
        visibility: Visibility::Private,
        params: vec![],
    };
    let v1 = lenses
        .create(&me, new("Careful", "V1, carefully, in one short and clear sentence: [[Question]]"))
        .await
        .unwrap();
    let lens = v1.lens.id;
    let update = LensUpdate {
        body: Some(TemplateBody::parse("V2, boldly, in one short and clear sentence: [[Question]]").unwrap()),
        ..LensUpdate::new(lens)
    };
    lenses.update(&me, update).await.unwrap();
    let v2 = lenses.view(&me, lens, VersionSelector::Head).await.unwrap().version.id;
    let point = |version| SetLabel {
        lens_id: lens,
        label: LabelName::parse("label", "prod").unwrap(),
        version: VersionSelector::Id(version),
        protect: None,
    };
    lenses.set_label(&me, point(v1.version.id), false).await.unwrap();
    // Two parameters: a prompt case cannot fill it.
    let two = lenses
        .create(&me, new("Two", "Answer [[Question]] in the language [[Language]], in one sentence."))
        .await
        .unwrap()
        .lens
        .id;

    let data =
        dataset(&alice, 6, |i| format!("V1, carefully, in one short and clear sentence: Question {i}?"))
            .await;
    let given = format!("lens:{lens}@prod:org/lens:7b");
    let two_given = format!("lens:{two}@latest:org/lens:7b");
    let args = json!({"dataset_id": data, "contenders": [given, two_given], "concurrency": 1,
                      "assertions": [{"type": "equals"}]});
    let first = started(&alice, args.clone()).await;
    // Moved once the first cell has its result, while the rest are asked.
    until(&alice, &first, "one cell done", |e| e["done"].as_u64() >= Some(1)).await;
    lenses.set_label(&me, point(v2), false).await.unwrap();
    let e = completed(&alice, &first).await;
    assert_eq!(e["experiment"]["contenders"][0], json!(given), "named as given");
    assert_eq!(figures(&e, 0), (6, 6, 0), "every case sent version 1: {e:#}");
    assert_eq!(figures(&e, 1), (6, 0, 6), "{e:#}");
    let cells = answers(&alice, &first).await;
    let failed = cells.iter().filter_map(|(_, why)| why.as_str()).collect::<Vec<_>>();
    assert_eq!(failed.len(), 6);
    assert!(failed.iter().all(|why| why.contains("exactly one parameter")), "{failed:?}");
    let sent: Vec<String> = fake
        .requests("lens-m")
        .iter()
        .map(|b| b["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sent.len(), 6, "the two-parameter lens asked nothing");
    for i in 1..=6 {
        assert!(
            sent.contains(&format!("V1, carefully, in one short and clear sentence: Question {i}?")),
            "the rendered lens: {sent:?}"
        );
    }

    // A later experiment reads the label where it points now.
    let second = started(&alice, args).await;
    let e = completed(&alice, &second).await;
    assert_eq!(figures(&e, 0), (6, 0, 0), "version 2 answers otherwise: {e:#}");
    let cells = answers(&alice, &second).await;
    assert!(
        cells
            .iter()
            .any(|(a, _)| a.as_str() == Some("V2, boldly, in one short and clear sentence: Question 1?")),
        "{cells:?}"
    );
    // Compared by the contender as given: the regression is version 2's.
    let c = ok(&alice, "compare_experiments", json!({"a": first, "b": second})).await;
    assert_eq!(c["contenders"][0]["contender"], json!(given), "{c:#}");
    // The first experiment still names what it ran.
    let e = ok(&alice, "get_experiment", json!({"experiment_id": first})).await;
    assert_eq!(figures(&e, 0), (6, 6, 0));
}

/// A workflow of `owner`'s answering `Echo <prompt>` after a short wait.
async fn echo_workflow(w: &World, owner: LenserId) -> WorkflowId {
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Echo",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "set", "kind": "tool", "name": "Set", "node_type": "set_variables",
                "config": {"variables": {"answer": "Echo [[prompt]]"}}},
            {"key": "wait", "kind": "tool", "name": "Wait", "node_type": "wait_delay", "config": {"delay_ms": 50}},
            {"key": "pick", "kind": "tool", "name": "Pick", "node_type": "data_mapper",
                "config": {"mapping": {"answer": "answer"}}}
        ],
        "connections": [
            {"from_step": "start", "to_step": "set", "input_parameter": "input"},
            {"from_step": "set", "to_step": "wait", "input_parameter": "input"},
            {"from_step": "wait", "to_step": "pick", "input_parameter": "input"}
        ]
    }))
    .unwrap();
    let made = w.services.workflow.create(&lenser(owner), NewWorkflow { blueprint, owner: None }).await;
    made.expect("the echo workflow is valid").workflow.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_workflow_answers_with_its_output_and_a_cell_starts_one_run() {
    let fake = FakeModels::start();
    let w = World::start(vec![endpoint(&fake, "one", 4, 5)], Duration::from_secs(3)).await;
    w.run_workflows();
    let alice_id = LenserId::new();
    let alice = w.server(alice_id);
    let flow = echo_workflow(&w, alice_id).await;
    let data = dataset(&alice, 3, |i| format!("Echo Question {i}?")).await;
    let given = format!("workflow:{flow}");
    let id = started(
        &alice,
        json!({"dataset_id": data, "contenders": [given], "repeats": 2, "assertions": [{"type": "equals"}]}),
    )
    .await;
    let e = completed(&alice, &id).await;
    assert_eq!(figures(&e, 0), (6, 6, 0), "{e:#}");
    assert!(answers(&alice, &id).await.iter().any(|(a, _)| a.as_str() == Some("Echo Question 2?")));

    let runs = |w: &World| {
        let store = w.services.runs.store().clone();
        async move {
            let filter = RunFilter { workflow_id: Some(flow), ..RunFilter::default() };
            let page = PageRequest::new(Some(100), None).unwrap();
            store.list_runs(alice_id, &filter, page).await.unwrap().items
        }
    };
    let ran = runs(&w).await;
    assert_eq!(ran.len(), 6, "one run a cell");
    // Another attempt at a cell (a takeover after a kill) starts with the
    // cell's key: it finds the run the first attempt started.
    let experiment = ExperimentId::parse("id", &id).unwrap();
    let key = CellKey { experiment, position: 2, contender: 0, repeat: 2 };
    let again = StartRun {
        workflow_id: Some(flow),
        inputs: json!({"prompt": "Question 2?"}).as_object().unwrap().clone(),
        idempotency_key: Some(
            IdempotencyKey::parse("k", &lf_runner::ExperimentContenders::run_key(key)).unwrap(),
        ),
        ..StartRun::default()
    };
    let found = w.services.runs.start(&lenser(alice_id), again).await.unwrap();
    assert!(!found.created, "the cell's run is found, not started again");
    assert!(ran.iter().any(|r| r.id == found.run.id));
    assert_eq!(runs(&w).await.len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_contenders_are_refused_by_their_place_and_nothing_is_saved() {
    let fake = FakeModels::start();
    let w = World::start(vec![endpoint(&fake, "one", 4, 5)], Duration::from_secs(3)).await;
    let (alice_id, bob_id) = (LenserId::new(), LenserId::new());
    let (alice, bob) = (w.server(alice_id), w.server(bob_id));
    profile(&alice, "fast", "m").await;
    let lens = w
        .services
        .lens
        .create(
            &lenser(alice_id),
            NewLens {
                title: Title::parse("One").unwrap(),
                description: None,
                body: TemplateBody::parse("Say the answer to [[Question]] in one short and clear sentence.")
                    .unwrap(),
                visibility: Visibility::Private,
                params: vec![],
            },
        )
        .await
        .unwrap()
        .lens
        .id;
    let bobs_flow = echo_workflow(&w, bob_id).await;
    let bobs = ok(&bob, "create_ai_lenser", json!({"handle": "bobs_own", "display_name": "B"})).await;
    let data = dataset(&alice, 2, |i| format!("Answer {i}")).await;
    let before = w.services.experiments.store().running().await.unwrap().len();
    let cases = [
        (json!(["fast", "lenser:nobody_here"]), 1, "NOT_FOUND"),
        (json!(["fast", format!("lenser:{}", bobs["ai_lenser_id"].as_str().unwrap())]), 1, "NOT_FOUND"),
        (json!([format!("lens:{lens}@staging:fast")]), 0, "NOT_FOUND"),
        (json!([format!("lens:{lens}@9.9.9:fast")]), 0, "NOT_FOUND"),
        (json!(["fast", "fast", format!("workflow:{bobs_flow}")]), 1, "INVALID_ARGUMENT"),
        (json!(["fast", format!("workflow:{bobs_flow}")]), 1, "NOT_FOUND"),
        (json!(["fast", "lens:not-a-lens@1.0.0:fast"]), 1, "INVALID_ARGUMENT"),
        (json!(["workflow:"]), 0, "INVALID_ARGUMENT"),
    ];
    for (contenders, i, code) in cases {
        let e = err(&alice, "run_experiment", json!({"dataset_id": data, "contenders": contenders})).await;
        assert_eq!(e["code"], code, "{contenders}: {e}");
        let message = e["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("contenders[{i}]")), "{contenders}: {e}");
    }
    assert_eq!(w.services.experiments.store().running().await.unwrap().len(), before, "nothing saved");
}
