//! Lens labels in workflows on the servers' own wiring (SQLite in memory,
//! the real runner, the offline model): a lens step following `production`
//! runs the version the label points at when it runs, so moving the label
//! changes what the same workflow version runs, and the run log names each
//! version; a workflow following `lens.label_moved` runs once per move with
//! the move as its inputs; a label the lens lacks is warned of when the
//! workflow is written and fails the step, naming the labels, when it runs.

use std::sync::Arc;
use std::time::Duration;

use lf_core::{LensId, LenserId, Principal, Scopes, WorkflowId};
use lf_lens::{
    LabelName, LensUpdate, NewLens, Semver, SetLabel, TemplateBody, Title, VersionSelector, Visibility,
};
use lf_server::{Background, Database, KeySealer, RunSettings};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use lf_workflow::engine::RunStatus;
use lf_workflow::run::{Run, RunFilter, StartRun};
use lf_workflow::{IssueCode, NewWorkflow, RawBlueprint};
use serde_json::{Value, json};

fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

/// Calls `tool`, which must succeed: its structured content.
async fn ok(s: &LfServer, tool: &str, args: Value) -> Value {
    let r = s.call(tool, args.as_object().unwrap().clone()).await.expect("a known tool");
    let out = r.structured_content.clone().expect("structured content");
    assert_ne!(r.is_error, Some(true), "{tool} failed: {out}");
    out
}

async fn workflow(services: &Services, owner: LenserId, steps: Value) -> (WorkflowId, lf_workflow::Report) {
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Follow the label",
        "steps": steps,
        "connections": [{"from_step": "start", "to_step": "ask", "input_parameter": "topic", "output_key": "topic"}]
    }))
    .unwrap();
    let created =
        services.workflow.create(&lenser(owner), NewWorkflow { blueprint, owner: None }).await.unwrap();
    (created.workflow.id, created.report)
}

async fn ended(services: &Services, id: lf_workflow::run::RunId) -> Run {
    for _ in 0..1_000 {
        let run = services.runs.store().load_run(id).await.unwrap();
        if run.status().is_final() {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the run did not end");
}

async fn run(services: &Services, owner: LenserId, w: WorkflowId) -> Run {
    let inputs = json!({"topic": "otters"}).as_object().unwrap().clone();
    let start = StartRun { workflow_id: Some(w), inputs, ..StartRun::default() };
    let id = services.runs.start(&lenser(owner), start).await.unwrap().run.id;
    ended(services, id).await
}

async fn set_production(services: &Services, owner: LenserId, lens: LensId, semver: &str) {
    let set = SetLabel {
        lens_id: lens,
        label: LabelName::parse("label", "production").unwrap(),
        version: VersionSelector::Semver(Semver::parse(semver).unwrap()),
        protect: None,
    };
    services.lens.set_label(&lenser(owner), set, false).await.unwrap();
}

/// The runs of `w`, oldest first, once `n` of them have ended.
async fn runs_of(services: &Services, owner: LenserId, w: WorkflowId, n: usize) -> Vec<Run> {
    for _ in 0..1_000 {
        let filter = RunFilter { workflow_id: Some(w), status: None, ..Default::default() };
        let page = lf_core::PageRequest::new(Some(100), None).unwrap();
        let mut runs = services.runs.store().list_runs(owner, &filter, page).await.unwrap().items;
        if runs.len() >= n && runs.iter().all(|r| r.status().is_final()) {
            runs.sort_by_key(|r| r.created_at);
            return runs;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{n} runs of {w} did not end");
}

/// The servers' services on SQLite in memory with their runner started,
/// a lenser, and the catalog as that lenser calls it.
async fn started() -> (Arc<Services>, lf_server::Runner, LenserId, LfServer) {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let (services, runner) = lf_server::services(
        &db,
        Arc::new(lf_model::OfflineProvider),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(None),
        &RunSettings::default(),
    );
    runner.start();
    let alice = LenserId::new();
    let me = lenser(alice);
    let server =
        LfServer::new(Arc::new(Catalog::new()), services.clone(), CatalogOptions::default(), me.clone());
    (services, runner, alice, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lens_step_following_production_runs_the_version_the_label_points_at() {
    let (services, runner, alice, server) = started().await;
    let me = lenser(alice);

    let body = |s: &str| TemplateBody::parse(s).unwrap();
    let lens = services
        .lens
        .create(
            &me,
            NewLens {
                title: Title::parse("Otter facts").unwrap(),
                description: None,
                body: body("Write three short facts about [[Topic]] for a curious reader."),
                visibility: Visibility::Private,
                params: vec![],
            },
        )
        .await
        .unwrap()
        .lens
        .id;
    let update = LensUpdate {
        body: Some(body("Write five surprising facts about [[Topic]] for a curious reader.")),
        ..LensUpdate::new(lens)
    };
    services.lens.update(&me, update).await.unwrap();

    let trigger = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let step = json!({"key": "ask", "kind": "lens", "name": "Ask", "lens_id": lens.to_string(), "config": {"label": "production"}});
    // Written before the lens has the label: warned of, not refused.
    let (follows, report) = workflow(&services, alice, json!([trigger, step])).await;
    let warned = report.warnings.iter().find(|i| i.code == IssueCode::LensLabelMissing).expect("warned");
    assert!(warned.message.contains("no label production yet"), "{}", warned.message);
    // Run before it has it: the step fails, naming the labels the lens has.
    let run0 = run(&services, alice, follows).await;
    assert_eq!(run0.status(), RunStatus::Failed);
    let error = run0.state.slots.values().find_map(|n| n.error.clone()).unwrap();
    assert_eq!(error.code, "not_found");
    assert!(error.message.contains("has no label production: it has no labels yet"), "{}", error.message);

    let on_move = json!({"key": "start", "kind": "trigger", "name": "On", "node_type": "event_trigger", "config": {"event_type": "lens.label_moved"}});
    let noop = json!({"key": "ask", "kind": "tool", "name": "Note", "node_type": "noop"});
    let (hears, _) = workflow(&services, alice, json!([on_move, noop])).await;

    set_production(&services, alice, lens, "1.0.0").await;
    let checked = services.workflow.validate(&me, follows, lf_workflow::VersionSelector::Head).await.unwrap();
    assert!(checked.report.warnings.iter().all(|i| i.code != IssueCode::LensLabelMissing));
    let run1 = run(&services, alice, follows).await;
    set_production(&services, alice, lens, "1.0.1").await;
    let run2 = run(&services, alice, follows).await;
    assert_eq!(run1.version_id, run2.version_id, "no edit to the workflow");

    let mut ran = Vec::new();
    for r in [&run1, &run2] {
        assert_eq!(r.status(), RunStatus::Completed, "{:?}", r.state.error);
        let logs = ok(&server, "get_workflow_run_logs", json!({"run_id": r.id.to_string()})).await;
        let step = logs["node_results"].as_array().unwrap().iter().find(|n| n["step"] == "ask").unwrap();
        let version = &step["output"]["version"];
        assert_eq!(
            (version["lens_id"].as_str(), version["label"].as_str()),
            (Some(lens.to_string().as_str()), Some("production"))
        );
        assert!(step["output"]["text"].as_str().unwrap().contains("facts about otters"), "{step}");
        ran.push((
            version["semver"].as_str().unwrap().to_owned(),
            version["version_id"].as_str().unwrap().to_owned(),
        ));
        ran.push((step["output"]["text"].as_str().unwrap().to_owned(), String::new()));
    }
    assert_eq!(ran[0].0, "1.0.0");
    assert!(ran[1].0.contains("three short facts"), "{}", ran[1].0);
    assert_eq!(ran[2].0, "1.0.1");
    assert!(ran[3].0.contains("five surprising facts"), "{}", ran[3].0);

    // The follower ran once per move, with the move as its inputs.
    let heard = runs_of(&services, alice, hears, 2).await;
    assert_eq!(heard.len(), 2);
    let input = |i: usize, k: &str| heard[i].state.inputs[k].as_str().unwrap().to_owned();
    assert_eq!(input(0, "event"), "lens.label_moved");
    assert_eq!(
        (input(0, "lens_id"), input(0, "label"), input(0, "title")),
        (lens.to_string(), "production".into(), "Otter facts".into())
    );
    assert_eq!(
        (input(0, "from_semver"), input(0, "from_version_id"), input(0, "to_semver")),
        ("".into(), "".into(), "1.0.0".into())
    );
    assert_eq!(input(0, "to_version_id"), ran[0].1);
    assert_eq!((input(1, "from_semver"), input(1, "from_version_id")), ("1.0.0".into(), ran[0].1.clone()));
    assert_eq!((input(1, "to_semver"), input(1, "to_version_id")), ("1.0.1".into(), ran[2].1.clone()));
    runner.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_step_naming_a_lens_label_asks_that_versions_prompt() {
    let (services, runner, alice, server) = started().await;
    let me = lenser(alice);
    let body = |s: &str| TemplateBody::parse(s).unwrap();
    let new = NewLens {
        title: Title::parse("Otter haiku").unwrap(),
        description: None,
        body: body("Write a haiku about [[Topic]] for a reader who likes nature."),
        visibility: Visibility::Private,
        params: vec![],
    };
    let lens = services.lens.create(&me, new).await.unwrap().lens.id;
    let update = LensUpdate {
        body: Some(body("Write a limerick about [[Topic]] for a reader who likes jokes.")),
        ..LensUpdate::new(lens)
    };
    services.lens.update(&me, update).await.unwrap();

    let trigger = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let prompt = |config: Value| json!({"key": "ask", "kind": "tool", "name": "Ask", "node_type": "prompt_template", "config": config});
    // A template and a lens at once, or a label without a lens: refused.
    for (config, says) in [
        (json!({"template": "Hi [[topic]]", "lens_id": lens.to_string()}), "give one"),
        (json!({"template": "Hi [[topic]]", "label": "production"}), "name it with lens_id"),
        (json!({"system": "Be brief."}), "template is required unless lens_id"),
    ] {
        let blueprint: RawBlueprint = serde_json::from_value(
            json!({"title": "Bad", "steps": [trigger, prompt(config)], "connections": [
                {"from_step": "start", "to_step": "ask", "input_parameter": "topic", "output_key": "topic"}
            ]}),
        )
        .unwrap();
        let refused =
            services.workflow.create(&me, NewWorkflow { blueprint, owner: None }).await.unwrap_err();
        assert!(format!("{refused:?}").contains(says), "{refused:?}");
    }

    let step =
        prompt(json!({"lens_id": lens.to_string(), "label": "production", "system": "Answer in English."}));
    let (w, report) = workflow(&services, alice, json!([trigger, step])).await;
    assert!(report.warnings.iter().any(|i| i.code == IssueCode::LensLabelMissing), "{:?}", report.warnings);
    let mut ran = Vec::new();
    for semver in ["1.0.0", "1.0.1"] {
        set_production(&services, alice, lens, semver).await;
        let r = run(&services, alice, w).await;
        assert_eq!(r.status(), RunStatus::Completed, "{:?}", r.state.error);
        let logs = ok(&server, "get_workflow_run_logs", json!({"run_id": r.id.to_string()})).await;
        let step =
            logs["node_results"].as_array().unwrap().iter().find(|n| n["step"] == "ask").unwrap().clone();
        assert_eq!(step["output"]["version"]["label"], "production", "{step}");
        assert_eq!(step["output"]["version"]["semver"], semver, "{step}");
        ran.push(step["output"]["text"].as_str().unwrap().to_owned());
    }
    assert!(ran[0].contains("haiku about otters"), "{}", ran[0]);
    assert!(ran[1].contains("limerick about otters"), "{}", ran[1]);

    // A plain template keeps its output: no version.
    let step = prompt(json!({"template": "Name an otter fact about [[topic]]."}));
    let (w, _) = workflow(&services, alice, json!([trigger, step])).await;
    let r = run(&services, alice, w).await;
    let logs = ok(&server, "get_workflow_run_logs", json!({"run_id": r.id.to_string()})).await;
    let step = logs["node_results"].as_array().unwrap().iter().find(|n| n["step"] == "ask").unwrap().clone();
    assert!(step["output"]["text"].as_str().unwrap().contains("otter fact about otters"), "{step}");
    assert!(step["output"].get("version").is_none(), "{step}");
    runner.shutdown().await;
}
