//! Two processes' schedulers on one database (two handles, each its own
//! pool) firing the same ticks at the same moments: each tick makes one
//! run. Shared by `schedules.rs` (SQLite) and `runners_postgres.rs`.

use std::sync::Arc;

use lf_core::{Clock, LenserId, Principal, Scopes, Timestamp};
use lf_runner::Scheduler;
use lf_store::Database;
use lf_workflow::run::{NoSignal, RunFilter, RunOrigin, RunService};
use lf_workflow::{MemoryConnections, MemoryLenses, NewWorkflow, RawBlueprint, WorkflowService};
use serde_json::json;

/// A clock `ahead` microseconds past the wall clock.
struct Ahead(i64);

impl Clock for Ahead {
    fn now(&self) -> Timestamp {
        lf_core::SystemClock.now().plus_micros(self.0)
    }
}

fn services(db: &Database) -> (Arc<WorkflowService>, Arc<RunService>) {
    let workflows = Arc::new(WorkflowService::new(
        db.workflow_store(),
        Arc::new(MemoryLenses::new()),
        Arc::new(MemoryConnections::new()),
    ));
    let runs = Arc::new(RunService::new(workflows.clone(), db.run_store(), Arc::new(NoSignal)));
    (workflows, runs)
}

/// Fires `ticks` ticks of an every-minute schedule, each from both
/// processes at once (their clocks moved past the tick), and checks that
/// every tick made exactly one run.
pub async fn each_tick_fires_once(a: &Database, b: &Database, ticks: i64) {
    let owner = LenserId::new();
    let me = Principal::Lenser { id: owner, scopes: Scopes::READ_WRITE };
    let (workflows, runs) = services(a);
    let blueprint: RawBlueprint = serde_json::from_value(json!({
        "title": "Every minute",
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "schedule_trigger", "config": {"cron": "* * * * *"}},
            {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}
        ],
        "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
    }))
    .unwrap();
    let wf = workflows.create(&me, NewWorkflow { blueprint, owner: None }).await.unwrap().workflow.id;
    let (_, runs_b) = services(b);
    for minute in 1..=ticks {
        let ahead = minute * 60_000_000;
        let sa = Scheduler::with_clock(a.workflow_store(), runs.clone(), Arc::new(Ahead(ahead)));
        let sb = Scheduler::with_clock(b.workflow_store(), runs_b.clone(), Arc::new(Ahead(ahead)));
        let (x, y) = tokio::join!(
            tokio::spawn(async move { sa.fire_due().await }),
            tokio::spawn(async move { sb.fire_due().await })
        );
        let made: Vec<_> = x.unwrap().unwrap().into_iter().chain(y.unwrap().unwrap()).collect();
        // Other tests' schedules in a shared database may fire too: count ours.
        let mut ours = 0;
        for id in made {
            if runs.store().get_run(id).await.unwrap().workflow_id == wf {
                ours += 1;
            }
        }
        assert_eq!(ours, 1, "tick {minute} made one run between the two processes");
    }
    let filter = RunFilter { workflow_id: Some(wf), status: None, ..Default::default() };
    let page = lf_core::PageRequest::new(Some(100), None).unwrap();
    let all = runs.list(&me, filter, page).await.unwrap();
    assert_eq!(all.total, ticks as u64);
    let mut keys: Vec<String> = all
        .items
        .iter()
        .map(|r| {
            assert_eq!(r.origin, RunOrigin::Schedule);
            r.idempotency_key.as_ref().unwrap().as_str().to_owned()
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), ticks as usize, "one key per tick: {keys:?}");
}
