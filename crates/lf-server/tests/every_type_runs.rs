//! Every node type of the catalog that a step can be has an executor in
//! the servers' wiring: a workflow of a trigger and that step, with its
//! catalog example as config, is never refused for want of one. (What each
//! executor does is tested in lf-workflow and lf-runner; this is the walk
//! that keeps the catalog honest about the wiring.)

use std::sync::Arc;

use lf_core::{LenserId, Principal, Scopes};
use lf_server::{Background, Database, KeySealer, RunSettings};
use lf_workflow::catalog::catalog;
use lf_workflow::run::StartRun;
use lf_workflow::{NewWorkflow, RawBlueprint};
use serde_json::json;

/// Types the engine runs itself: triggers, timers, loops, try scopes.
const ENGINE_RUN: &[&str] = &["wait_delay", "loop_map", "try_catch"];

#[tokio::test]
async fn the_wiring_has_an_executor_for_every_step_type_of_the_catalog() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let (services, _runner) = lf_server::services(
        &db,
        Arc::new(lf_model::OfflineProvider),
        Background::new(tokio::runtime::Handle::current()),
        KeySealer::new(None),
        &RunSettings::default(),
    );
    let me = Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE };
    let mut walked = 0;
    for spec in catalog().entries() {
        let t = spec.node_type;
        if catalog().is_trigger(t) || ENGINE_RUN.contains(&t) || t == "lens" {
            continue;
        }
        let blueprint: RawBlueprint = serde_json::from_value(json!({
            "title": format!("One {t}"),
            "steps": [
                {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                {"key": "step", "kind": "tool", "name": "Step", "node_type": t, "config": spec.example.config}
            ],
            "connections": [{"from_step": "start", "to_step": "step", "input_parameter": "input"}]
        }))
        .unwrap();
        let created = services.workflow.create(&me, NewWorkflow { blueprint, owner: None }).await;
        // A type whose example needs a saved connection or a lens does not
        // validate here; it gets as far as the start's executor check only
        // when it does.
        let Ok(created) = created else { continue };
        let start = StartRun { workflow_id: Some(created.workflow.id), ..Default::default() };
        if let Err(e) = services.runs.start(&me, start).await {
            assert!(!e.message().contains("no executor"), "{t}: {}", e.message());
        }
        walked += 1;
    }
    assert!(walked >= 35, "the walk reached the executors of {walked} types");
}
