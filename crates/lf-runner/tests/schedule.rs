//! The scheduler on the in-memory stores with a clock the test sets: a
//! schedule fires on the right UTC instants across DST changes, once
//! after downtime, once per tick when several schedulers fire it at once,
//! and never for a workflow that is archived or no longer scheduled.

use std::sync::{Arc, Mutex};

use chrono::DateTime;
use lf_core::{Clock, LenserId, Principal, Scopes, Timestamp, WorkflowId};
use lf_runner::Scheduler;
use lf_workflow::run::{MemoryRunStore, NoSignal, RunFilter, RunOrigin, RunService, RunStore};
use lf_workflow::{
    MemoryConnections, MemoryLenses, MemoryWorkflowStore, NewWorkflow, RawBlueprint, WorkflowService,
    WorkflowStore, WorkflowUpdate,
};
use serde_json::{Value, json};

fn utc(s: &str) -> Timestamp {
    Timestamp::from_datetime(DateTime::parse_from_rfc3339(s).unwrap().to_utc())
}

/// A clock the test moves to any instant.
struct SetClock(Mutex<Timestamp>);

impl SetClock {
    fn set(&self, t: &str) {
        *self.0.lock().unwrap() = utc(t);
    }
}

impl Clock for SetClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap()
    }
}

struct World {
    clock: Arc<SetClock>,
    workflows: Arc<MemoryWorkflowStore>,
    service: Arc<WorkflowService>,
    runs: Arc<MemoryRunStore>,
    starts: Arc<RunService>,
    owner: LenserId,
}

impl World {
    fn new(at: &str) -> Self {
        let clock = Arc::new(SetClock(Mutex::new(utc(at))));
        let workflows = Arc::new(MemoryWorkflowStore::new());
        let service = Arc::new(
            WorkflowService::new(
                workflows.clone(),
                Arc::new(MemoryLenses::new()),
                Arc::new(MemoryConnections::new()),
            )
            .with_clock(clock.clone()),
        );
        let runs = Arc::new(MemoryRunStore::new());
        let starts = Arc::new(
            RunService::new(service.clone(), runs.clone(), Arc::new(NoSignal)).with_clock(clock.clone()),
        );
        World { clock, workflows, service, runs, starts, owner: LenserId::new() }
    }

    fn me(&self) -> Principal {
        Principal::Lenser { id: self.owner, scopes: Scopes::READ_WRITE }
    }

    fn scheduler(&self) -> Scheduler {
        Scheduler::with_clock(
            self.workflows.clone() as Arc<dyn WorkflowStore>,
            self.starts.clone(),
            self.clock.clone(),
        )
    }

    async fn scheduled(&self, cron: &str, timezone: &str) -> WorkflowId {
        let blueprint: RawBlueprint = serde_json::from_value(json!({
            "title": "Digest", "visibility": "private",
            "steps": steps(json!({"cron": cron, "timezone": timezone})),
            "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
        }))
        .unwrap();
        self.service
            .create(&self.me(), NewWorkflow { blueprint, owner: None })
            .await
            .expect("created")
            .workflow
            .id
    }

    /// The `scheduled_for` of every run of `workflow`, oldest first.
    async fn fired(&self, workflow: WorkflowId) -> Vec<String> {
        let filter = RunFilter { workflow_id: Some(workflow), status: None, ..Default::default() };
        let page = self
            .runs
            .list_runs(self.owner, &filter, lf_core::PageRequest::new(Some(100), None).unwrap())
            .await
            .unwrap();
        let mut out: Vec<String> = page
            .items
            .iter()
            .map(|r| {
                assert_eq!(r.origin, RunOrigin::Schedule);
                assert_eq!(r.started_by, self.owner, "a scheduled run is its owner's");
                r.state.inputs["scheduled_for"].as_str().unwrap().to_owned()
            })
            .collect();
        out.sort();
        out
    }
}

fn steps(config: Value) -> Value {
    json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "schedule_trigger", "config": config},
        {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}
    ])
}

/// Moves the clock to each tick the schedule waits for and fires it,
/// `n` times: the instants it fired at.
async fn follow(w: &World, workflow: WorkflowId, n: usize) -> Vec<String> {
    for _ in 0..n {
        let next = w.workflows.next_schedule().await.unwrap().expect("a next tick");
        w.clock.set(&next.to_rfc3339());
        assert_eq!(w.scheduler().fire_due().await.unwrap().len(), 1, "one run at {}", next.to_rfc3339());
    }
    w.fired(workflow).await
}

#[tokio::test]
async fn a_daily_time_in_new_york_follows_the_spring_forward_and_fall_back() {
    let w = World::new("2026-03-06T12:00:00Z");
    // 02:00 does not exist on 8 March 2026 (EST → EDT): it fires just after
    // the gap, at 03:00 EDT; before it 02:00 is 07:00 UTC, after it 06:00 UTC.
    let wf = w.scheduled("0 2 * * *", "America/New_York").await;
    assert_eq!(
        follow(&w, wf, 4).await,
        ["2026-03-07T07:00:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z", "2026-03-10T06:00:00Z"]
    );

    // 01:30 happens twice on 1 November 2026 (EDT → EST): it fires once, at
    // the first, 05:30 UTC; the next day it is 06:30 UTC.
    let w = World::new("2026-10-30T12:00:00Z");
    let wf = w.scheduled("30 1 * * *", "America/New_York").await;
    assert_eq!(
        follow(&w, wf, 3).await,
        ["2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"]
    );
}

#[tokio::test]
async fn a_half_hourly_schedule_in_berlin_fires_through_the_repeated_hour() {
    // On 25 October 2026 Berlin's 02:00-03:00 runs twice (CEST, then CET):
    // a step schedule fires at each wall-clock match, every 30 minutes of
    // real time.
    let w = World::new("2026-10-24T23:40:00Z");
    let wf = w.scheduled("*/30 * * * *", "Europe/Berlin").await;
    assert_eq!(
        follow(&w, wf, 5).await,
        [
            "2026-10-25T00:00:00Z",
            "2026-10-25T00:30:00Z",
            "2026-10-25T01:00:00Z",
            "2026-10-25T01:30:00Z",
            "2026-10-25T02:00:00Z"
        ]
    );
}

#[tokio::test]
async fn after_downtime_it_fires_once_and_waits_for_the_next_tick() {
    let w = World::new("2026-06-01T00:00:00Z");
    let wf = w.scheduled("0 9 * * *", "Europe/Istanbul").await;
    w.clock.set("2026-06-01T05:59:59Z");
    assert!(w.scheduler().fire_due().await.unwrap().is_empty(), "not before its tick");
    // Down from before the first tick until five ticks later.
    w.clock.set("2026-06-05T10:00:00Z");
    let made = w.scheduler().fire_due().await.unwrap();
    assert_eq!(made.len(), 1, "once, not once per missed tick");
    assert!(w.scheduler().fire_due().await.unwrap().is_empty(), "and not again");
    assert_eq!(w.fired(wf).await, ["2026-06-01T06:00:00Z"], "for the tick it was waiting for");
    let run = w.runs.get_run(made[0]).await.unwrap();
    assert_eq!(
        run.state.inputs,
        json!({"scheduled_for": "2026-06-01T06:00:00Z", "timezone": "Europe/Istanbul"})
    );
    assert_eq!(
        w.workflows.next_schedule().await.unwrap(),
        Some(utc("2026-06-06T06:00:00Z")),
        "the next tick is the first after the present"
    );
}

#[tokio::test]
async fn schedulers_firing_one_tick_at_once_make_one_run() {
    let w = World::new("2026-06-01T00:00:00Z");
    let wf = w.scheduled("*/5 * * * *", "UTC").await;
    for minute in [5, 10, 15, 20] {
        w.clock.set(&format!("2026-06-01T00:{minute:02}:00Z"));
        let (s1, s2, s3) = (w.scheduler(), w.scheduler(), w.scheduler());
        let (a, b, c) = tokio::join!(s1.fire_due(), s2.fire_due(), s3.fire_due());
        let made = a.unwrap().len() + b.unwrap().len() + c.unwrap().len();
        assert_eq!(made, 1, "one run for the tick at minute {minute}");
    }
    assert_eq!(w.fired(wf).await.len(), 4);
}

#[tokio::test]
async fn an_archived_or_unscheduled_workflow_does_not_fire() {
    let w = World::new("2026-06-01T00:00:00Z");
    let wf = w.scheduled("0 * * * *", "UTC").await;
    w.service.archive(&w.me(), wf, true).await.unwrap();
    w.clock.set("2026-06-01T01:00:00Z");
    assert!(w.scheduler().fire_due().await.unwrap().is_empty(), "archived");

    let wf = w.scheduled("0 * * * *", "UTC").await;
    let manual = json!([
        {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
        {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}
    ]);
    let update = WorkflowUpdate {
        steps: Some(serde_json::from_value(manual).unwrap()),
        connections: Some(
            serde_json::from_value(
                json!([{"from_step": "start", "to_step": "log", "input_parameter": "input"}]),
            )
            .unwrap(),
        ),
        ..WorkflowUpdate::new(wf)
    };
    w.service.update(&w.me(), update).await.unwrap();
    w.clock.set("2026-06-01T02:00:00Z");
    assert!(w.scheduler().fire_due().await.unwrap().is_empty(), "a manual head is not scheduled");
    assert!(w.fired(wf).await.is_empty());
}

#[tokio::test]
async fn validation_refuses_a_zone_or_expression_the_scheduler_cannot_read() {
    {
        let w = World::new("2026-06-01T00:00:00Z");
        for (cron, zone, what) in [
            ("0 9 * * *", "Mars/Olympus", "timezone"),
            ("0 9 * * *", "utc+3", "timezone"),
            ("0 9 31 2 *", "UTC", "never"),
        ] {
            let blueprint: RawBlueprint = serde_json::from_value(json!({
                "title": "Bad", "steps": steps(json!({"cron": cron, "timezone": zone})),
                "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}]
            }))
            .unwrap();
            let e = w.service.create(&w.me(), NewWorkflow { blueprint, owner: None }).await.unwrap_err();
            assert!(e.message().contains(what), "{cron} {zone}: {}", e.message());
        }
    }
}
